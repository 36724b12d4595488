"""A network read from a YAML or JSON file (see docs/model.md, "Networks from a file").

Example::

    name: two switches, two cables
    nodes: 8                     # a count (names n0..n7) or a list of names
    switches: [s0, s1]           # a count (names s0..) or a list of names
    routing: d-mod-k             # or ecmp
    default_rate_MBps: 160       # for links that give no rate
    packet: {payload_B: 4096, overhead_B: 6}   # for links that give no efficiency
    prices: {adapter: myrinet-nic, switch: myrinet-switch16, cable: myrinet-cable}
    links:
      - [n0, s0]                 # short form: one full-duplex cable
      - {a: s0, b: s1, count: 2, rate_MBps: 160, efficiency: 0.9}

Sizes are bounded (MAX_NODES, MAX_SWITCHES, MAX_CABLES) so that a short file
cannot ask for hours or hundreds of GB; every pair of nodes is checked for a
route when the file is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import UsageError
from ..choices import MAX_NODES
from ..datafile import read_data_file
from ..resources import MB, Sourced, TechResource
from ..routing import GraphRouter, alltoall_by_destination, check_budget, unreachable_pair
from ..switchroutes import SwitchRouter
from .base import NodeModel, Paths, ResourceClass, Topology

MAX_SWITCHES = 100_000
MAX_CABLES = 500_000             # cables over all links; a file at the limit reads in ~10 s and ~1 GB
PRICE_PARTS = ("adapter", "switch", "cable")
_TOP_KEYS = {"name", "nodes", "switches", "links", "routing", "transit_nodes", "default_rate_MBps", "packet",
             "prices"}
_PACKET_KEYS = {"payload_B", "overhead_B", "max_payload_B"}
_LINK_KEYS = {"a", "b", "count", "rate_MBps", "efficiency", "duplex", "name"} | _PACKET_KEYS


def _names(value, prefix: str, what: str, where: str, limit: int) -> list:
    if value is None:
        return []
    if isinstance(value, bool):
        raise UsageError(f"{where}: '{what}' must be a count or a list of names")
    if isinstance(value, int):
        if value < 0:
            raise UsageError(f"{where}: '{what}' must not be negative")
        if value > limit:
            raise UsageError(f"{where}: at most {limit:,} {what}, got {value:,}")
        return [f"{prefix}{i}" for i in range(value)]
    if isinstance(value, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in value):
        if len(value) > limit:
            raise UsageError(f"{where}: at most {limit:,} {what}, got {len(value):,}")
        one = {"nodes": "node", "switches": "switch"}.get(what, what)
        names = [_printable(str(x), one, where) for x in value]
        if len(set(names)) < len(names):
            seen = set()
            dup = next(x for x in names if x in seen or seen.add(x))
            raise UsageError(f"{where}: '{what}' lists {dup!r} twice")
        return names
    raise UsageError(f"{where}: '{what}' must be a count or a list of names")


def _printable(name: str, what: str, where: str) -> str:
    """A name as the file gives it, refused when empty or holding a character
    that does not print (str.isprintable: Unicode categories C and Z but the
    space; a newline, NUL, a zero-width or direction-changing character):
    names reach tables, reports and commands."""
    if not name or not name.isprintable():
        raise UsageError(f"{where}: {what} name {name!r} is empty or holds a character that does not print")
    return name


def _number(value, what: str, where: str, lo: float = 0.0, strict: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: {what} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise UsageError(f"{where}: {what} must be a finite number, got {value}")
    if value < lo or (strict and value == lo):
        raise UsageError(f"{where}: {what} must be {'greater than' if strict else 'at least'} {lo}, got {value}")
    return float(value)


def _packet(d: dict, where: str) -> dict:
    """payload_B and overhead_B (both), optionally max_payload_B, as Sourced numbers."""
    given = _PACKET_KEYS & set(d)
    if not given:
        return {}
    if not {"payload_B", "overhead_B"} <= given:
        raise UsageError(f"{where}: a packet format needs both payload_B and overhead_B")
    src = lambda k, strict: Sourced(_number(d[k], k, where, 0.0, strict), where, "")
    out = {"payload": src("payload_B", True), "overhead": src("overhead_B", False)}
    if "max_payload_B" in d:
        out["max_payload"] = src("max_payload_B", True)
    return out


def _prices(value, where: str) -> dict:
    """Part -> price item name (of the price list) or an inline {value, source, date}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where}: 'prices' must map {', '.join(PRICE_PARTS)} to a price item or "
                         "{value, source, date}")
    out = {}
    for part, item in value.items():
        w = f"{where}: prices.{part}"
        if part not in PRICE_PARTS:
            raise UsageError(f"{w}: unknown part (known: {', '.join(PRICE_PARTS)})")
        if isinstance(item, str):
            out[part] = item
        elif isinstance(item, dict) and set(item) == {"value", "source", "date"}:
            out[part] = Sourced(_number(item["value"], "value", w, 0.0, strict=False), str(item["source"]),
                                str(item["date"]))
        else:
            raise UsageError(f"{w}: a price item name or {{value, source, date}}, got {item!r}")
    return out


def load_network_file(path: str, node_model: NodeModel = NodeModel()) -> "CustomNetwork":
    data = read_data_file(path, "topology file")
    return CustomNetwork.from_dict(data, where=str(path), node_model=node_model)


def _check_keys(d: dict, known: set, required: tuple, where: str) -> None:
    """Refuse unknown keys (typos) and missing required ones, naming the first."""
    unknown = set(d) - known
    if unknown:
        raise UsageError(f"{where}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(known))})")
    if any(k not in d for k in required):
        raise UsageError(f"{where}: {' and '.join(repr(k) for k in required)} are required")


def _vertices(data: dict, where: str) -> tuple[list, list, dict]:
    """Node names, switch names, and every name's vertex index (nodes first)."""
    nodes = _names(data["nodes"], "n", "nodes", where, MAX_NODES)
    switches = _names(data.get("switches"), "s", "switches", where, MAX_SWITCHES)
    if len(nodes) < 2:
        raise UsageError(f"{where}: a network needs at least 2 nodes, got {len(nodes)}")
    index = {nm: i for i, nm in enumerate(nodes)}
    for i, nm in enumerate(switches):
        if nm in index:
            raise UsageError(f"{where}: name {nm!r} is used for a node and a switch")
        index[nm] = len(nodes) + i
    return nodes, switches, index


def _defaults(data: dict, where: str) -> tuple[float | None, dict]:
    """The rate and packet format of links that give none."""
    default_rate = data.get("default_rate_MBps")
    if default_rate is not None:
        default_rate = _number(default_rate, "default_rate_MBps", where)
    packet = data.get("packet", {})
    if not isinstance(packet, dict) or set(packet) - _PACKET_KEYS:
        raise UsageError(f"{where}: 'packet' must be a mapping of {', '.join(sorted(_PACKET_KEYS))}")
    return default_rate, _packet(packet, f"{where}: packet")


@dataclass(slots=True)
class _Link:
    """One entry of 'links', read: its ends (vertex indices), cables, duplex,
    label and resource classes (one per direction, or one shared when half-duplex)."""
    ends: tuple[int, int]
    count: int
    half: bool
    label: str
    classes: list


def _links(links, index: dict, default_rate: float | None, packet: dict, where: str) -> list[_Link]:
    if not isinstance(links, list) or not links:
        raise UsageError(f"{where}: 'links' must be a non-empty list")
    out, cables = [], 0
    for i, ln in enumerate(links):
        w = f"{where}: links[{i}]"
        out.append(_link(i, ln, index, default_rate, packet, w))
        cables += out[-1].count
        if cables > MAX_CABLES:
            raise UsageError(f"{w}: more than {MAX_CABLES:,} cables in all (the model's limit for a file)")
    return out


def _link(i: int, ln, index: dict, default_rate: float | None, packet: dict, w: str) -> _Link:
    if isinstance(ln, list):
        if len(ln) != 2:
            raise UsageError(f"{w}: the short form is [endpoint, endpoint]")
        ln = {"a": ln[0], "b": ln[1]}
    if not isinstance(ln, dict):
        raise UsageError(f"{w}: a link is [a, b] or a mapping with 'a' and 'b'")
    _check_keys(ln, _LINK_KEYS, ("a", "b"), w)
    ea, eb = str(ln["a"]), str(ln["b"])
    for e in (ea, eb):
        if e not in index:
            raise UsageError(f"{w}: unknown endpoint {e!r}")
    if ea == eb:
        raise UsageError(f"{w}: a link must join two different endpoints, got {ea!r} twice")
    count = ln.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise UsageError(f"{w}: count must be a positive integer, got {count!r}")
    rate = ln.get("rate_MBps", default_rate)
    if rate is None:
        raise UsageError(f"{w}: no rate_MBps and no default_rate_MBps")
    rate = _number(rate, "rate_MBps", w)
    fmt, eff = _efficiency(ln, packet, w)
    duplex = ln.get("duplex", "full")
    if duplex not in ("full", "half"):
        raise UsageError(f"{w}: duplex must be 'full' or 'half', got {duplex!r}")
    label = _printable(str(ln["name"]), "link", w) if "name" in ln else f"{ea}-{eb}"
    own = TechResource(label, f"link {label}", "link", Sourced(rate * MB, w, ""), duplex,
                       fmt.get("payload"), fmt.get("overhead"), None,
                       None if eff is None else Sourced(eff, w, ""), None, fmt.get("max_payload"))
    if duplex == "full":
        classes = [ResourceClass(f"links[{i}].ab", f"link {label} ({ea}→{eb})", "link", "link", count, own=own),
                   ResourceClass(f"links[{i}].ba", f"link {label} ({eb}→{ea})", "link", "link", count, own=own)]
    else:
        classes = [ResourceClass(f"links[{i}]", f"half-duplex link {label}", "link", "link", count, own=own)]
    return _Link((index[ea], index[eb]), count, duplex == "half", label, classes)


def _efficiency(ln: dict, packet: dict, w: str) -> tuple[dict, float | None]:
    """A link's packet format or its efficiency (not both); the file's packet
    format where it gives neither."""
    fmt = _packet(ln, w)
    if "efficiency" not in ln:
        return fmt or packet, None
    if fmt:
        raise UsageError(f"{w}: give efficiency or a packet format (payload_B, overhead_B), not both")
    eff = _number(ln["efficiency"], "efficiency", w)
    if eff > 1:
        raise UsageError(f"{w}: efficiency must be at most 1, got {eff}")
    return fmt, eff


def _routing(data: dict, where: str) -> tuple[bool, str]:
    transit = data.get("transit_nodes", False)
    if not isinstance(transit, bool):
        raise UsageError(f"{where}: transit_nodes must be true or false")
    routing = data.get("routing", "d-mod-k")
    if routing not in ("d-mod-k", "ecmp"):
        raise UsageError(f"{where}: routing must be 'd-mod-k' or 'ecmp', got {routing!r}")
    return transit, routing


def _router(links: list[_Link], nodes: list, switches: list, routing: str, transit: bool,
            where: str) -> GraphRouter:
    """The channel graph's router, once every pair of nodes is known to reach each other."""
    ch_from, ch_to, ch_res = _channels(np.array([ln.ends for ln in links], np.int64).reshape(-1, 2),
                                       np.array([ln.count for ln in links], np.int64),
                                       np.array([ln.half for ln in links], bool))
    n_vertices = len(nodes) + len(switches)
    pair = unreachable_pair(n_vertices, len(nodes), ch_from[::2], ch_to[::2], transit)
    if pair is not None:
        a, b = (nodes[x] for x in pair)
        lonely = [nodes[x] for x in pair if not np.any(ch_from == x)]
        raise UsageError(f"{where}: node {a!r} cannot reach node {b!r}"
                         + (f" ({lonely[0]!r} has no links)" if lonely else ""))
    return GraphRouter(n_vertices, len(nodes), ch_from, ch_to, ch_res, routing, transit, names=nodes + switches)


class CustomNetwork(Topology):
    """Any network of nodes and switches given as a list of links."""

    family = "custom"
    bottleneck_instances = True      # a class is one link of the file: name its cable

    @classmethod
    def from_dict(cls, data, where: str = "topology", node_model: NodeModel = NodeModel(),
                  by_switch: bool = True) -> "CustomNetwork":
        """The network; `by_switch=False` routes per destination node even where the
        per-switch decomposition applies (the reference it is tested against)."""
        if not isinstance(data, dict):
            raise UsageError(f"{where}: the top level must be a mapping with 'nodes' and 'links'")
        _check_keys(data, _TOP_KEYS, ("nodes", "links"), where)
        nodes, switches, index = _vertices(data, where)
        default_rate, packet = _defaults(data, where)
        net = cls.__new__(cls)
        net.name = str(data.get("name", Path(where).stem))
        net.node_names, net.switch_names = nodes, switches
        net.node_model = node_model
        net.n_nodes = len(nodes)
        net.price_items = _prices(data.get("prices"), where)
        links = _links(data["links"], index, default_rate, packet, where)
        transit, net.routing = _routing(data, where)
        net.cables, net.link_names = sum(ln.count for ln in links), [ln.label for ln in links]
        net.classes = [c for ln in links for c in ln.classes] + node_model.classes(len(nodes))
        net._finish()
        net.router = _router(links, nodes, switches, net.routing, transit, where)
        net.fast = SwitchRouter.for_graph(net.router) if by_switch else None
        # For the testbed: the file's links, and each channel's cable (link index, which of its count).
        net.links, net.default_rate_MBps = data["links"], default_rate
        net.channel_cable = [(i, c) for i, ln in enumerate(links) for c in range(ln.count) for _ in (0, 1)]
        return net

    def describe(self) -> str:
        return (f"{self.name}: {self.n_nodes} nodes, {len(self.switch_names)} switches, "
                f"{self.cables} cables, {self.routing} routing")

    def label_of(self, ci: int, k: int) -> str:
        c = self.classes[ci]
        return c.label if c.count == 1 else f"{c.label}, cable {k + 1} of {c.count}"

    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        router = self.fast or self.router
        cols = self.node_columns(flow, src, dst) + router.paths(src, dst)
        return Paths.from_columns(cols, len(src))

    def check_routing(self, n_destinations: int) -> None:
        if self.fast is None:
            check_budget(n_destinations, self.router.V + len(self.router.src), "one per destination node")

    def alltoall_resource_loads(self):
        """Aggregated per attachment switch (switchroutes.py) when every node hangs off one
        switch; otherwise every flow, one destination (one routing table) at a time."""
        n, R = self.n_nodes, self.n_resources
        if self.fast is not None:
            loads, used = self.fast.alltoall_loads(R), "aggregation"
        else:
            loads, used = alltoall_by_destination(self.router, R), "aggregation per destination"
        for key, load in self.node_loads_alltoall(n).items():
            i = self._class_index[key]
            loads[self.offsets[i]:self.offsets[i + 1]] = load
        return loads, used

    def inventory(self) -> dict:
        return {"adapters": self.n_nodes, "switches": len(self.switch_names), "enclosures": 0,
                "cables": self.cables}


def _channels(ends: np.ndarray, counts: np.ndarray, half: np.ndarray) -> tuple:
    """Two channels per cable (a->b, then b->a), cables in file order; the resource
    of each: its direction's instance, or the one shared instance of a half-duplex cable."""
    link = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    first = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    cable = np.arange(len(link), dtype=np.int64) - first[link]
    per_link = np.where(half, 1, 2) * counts           # resource instances of each link
    offset = np.concatenate(([0], np.cumsum(per_link)[:-1])).astype(np.int64)
    r_ab = offset[link] + cable
    r_ba = np.where(half[link], r_ab, r_ab + counts[link])
    a, b = ends[link, 0], ends[link, 1]
    inter = lambda x, y: np.stack((x, y), 1).reshape(-1)
    return inter(a, b), inter(b, a), inter(r_ab, r_ba)
