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
      - {a: s0, b: s1, name: "s0 [5] -- s1 [7]", ports: [5, 7], degraded: "4X SDR, both ends 4X QDR"}

A link's ports, guids and degraded and the file's source are facts about the
site's cables (cablefacts.py); the loads do not read them. Parallel cables
given as separate links between the same two vertices are routed exactly as
one link with that count (their channels are taken together, at the first
one's place in the file), so naming each cable changes no prediction.

Sizes are bounded (MAX_NODES, MAX_SWITCHES, MAX_CABLES) so that a short file
cannot ask for hours or hundreds of GB, every field's type and range is checked
before it is used or printed (checks.py), and every pair of nodes is checked for
a route when the file is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from ...errors import UsageError
from ..choices import MAX_NODES
from ...datafile import read_data_file, shown
from ..limits import EFFICIENCY, OVERHEAD_BYTES, PACKET_BYTES, PRICE, RATE_MBPS
from ..resources import MB, Sourced, TechResource
from ..routing import GraphRouter, alltoall_by_destination, check_budget, unreachable_pair
from ..switchroutes import SwitchRouter
from . import cablefacts, checks
from .base import NodeModel, Paths, ResourceClass, Topology
from .checks import check_keys, number

MAX_SWITCHES = 100_000
MAX_CABLES = 500_000             # cables over all links; 500,000 links read and build in ~20-35 s, 1-1.4 GB
PRICE_PARTS = ("adapter", "switch", "cable")
_TOP_KEYS = {"name", "nodes", "switches", "links", "routing", "transit_nodes", "default_rate_MBps", "packet",
             "prices", "source"}
_PACKET_KEYS = {"payload_B", "overhead_B", "max_payload_B"}
_LINK_KEYS = {"a", "b", "count", "rate_MBps", "efficiency", "duplex", "name", "iface"} | _PACKET_KEYS \
    | cablefacts.LINK_KEYS


def _names(value, prefix: str, what: str, where: str, limit: int) -> list:
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise UsageError(f"{where}: '{what}' must not be negative")
        if value > limit:
            raise UsageError(f"{where}: at most {limit:,} {what}, got {checks.amount(value)}")
        return [f"{prefix}{i}" for i in range(value)]
    if not isinstance(value, list):
        raise UsageError(f"{where}: '{what}' must be a count or a list of names, got {shown(value)}")
    if len(value) > limit:
        raise UsageError(f"{where}: at most {limit:,} {what}, got {len(value):,}")
    one = {"nodes": "node", "switches": "switch"}.get(what, what)
    names = [checks.name(x, f"{one} name", where) for x in value]
    if len(set(names)) < len(names):
        seen = set()
        dup = next(x for x in names if x in seen or seen.add(x))
        raise UsageError(f"{where}: '{what}' lists {dup!r} twice")
    return names


def _packet(d: dict, where: str) -> dict:
    """payload_B and overhead_B (both), optionally max_payload_B, as Sourced numbers."""
    given = _PACKET_KEYS & set(d)
    if not given:
        return {}
    if not {"payload_B", "overhead_B"} <= given:
        raise UsageError(f"{where}: a packet format needs both payload_B and overhead_B")
    src = lambda k, bounds: Sourced(number(d[k], k, where, bounds), where, "")
    out = {"payload": src("payload_B", PACKET_BYTES), "overhead": src("overhead_B", OVERHEAD_BYTES)}
    if "max_payload_B" in d:
        out["max_payload"] = src("max_payload_B", PACKET_BYTES)
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
        if part not in PRICE_PARTS:
            raise UsageError(f"{where}: prices: unknown part {shown(part)} (known: {', '.join(PRICE_PARTS)})")
        w = f"{where}: prices.{part}"
        if isinstance(item, str):
            out[part] = checks.name(item, "price item", w)
        elif isinstance(item, dict) and set(item) == {"value", "source", "date"}:
            text = lambda k: checks.name(item[k], k, w, (str, int, float, date))
            out[part] = Sourced(number(item["value"], "value", w, PRICE), text("source"), text("date"))
        else:
            raise UsageError(f"{w}: a price item name or {{value, source, date}}, got {shown(item)}")
    return out


def load_network_file(path: str, node_model: NodeModel = NodeModel()) -> "CustomNetwork":
    data = read_data_file(path, "topology file")
    return CustomNetwork.from_dict(data, where=str(path), node_model=node_model)


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
        default_rate = number(default_rate, "default_rate_MBps", where, RATE_MBPS)
    packet = data.get("packet", {})
    if not isinstance(packet, dict) or any(k not in _PACKET_KEYS for k in packet):
        raise UsageError(f"{where}: 'packet' must be a mapping of {', '.join(sorted(_PACKET_KEYS))}, "
                         f"got {shown(packet)}")
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
    rate: float                      # MB/s, per cable and direction, before efficiency
    facts: cablefacts.Facts | None


def _links(links, index: dict, default_rate: float | None, packet: dict, where: str) -> list[_Link]:
    if not isinstance(links, list) or not links:
        raise UsageError(f"{where}: 'links' must be a non-empty list, got {shown(links)}")
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
        raise UsageError(f"{w}: a link is [a, b] or a mapping with 'a' and 'b', got {shown(ln)}")
    check_keys(ln, _LINK_KEYS, ("a", "b"), w)
    ea, eb = checks.name(ln["a"], "endpoint", w), checks.name(ln["b"], "endpoint", w)
    for e in (ea, eb):
        if e not in index:
            raise UsageError(f"{w}: unknown endpoint {e!r}")
    if ea == eb:
        raise UsageError(f"{w}: a link must join two different endpoints, got {ea!r} twice")
    count = checks.positive_int(ln.get("count", 1), "count", w)
    rate = ln.get("rate_MBps", default_rate)
    if rate is None:
        raise UsageError(f"{w}: no rate_MBps and no default_rate_MBps")
    rate = number(rate, "rate_MBps", w, RATE_MBPS)
    fmt, eff = _efficiency(ln, packet, w)
    duplex = checks.choice(ln.get("duplex", "full"), "duplex", w, ("full", "half"))
    label = checks.name(ln["name"], "link name", w) if "name" in ln else f"{ea}-{eb}"
    if "iface" in ln:
        _iface(ln["iface"], w)
    facts = cablefacts.link_facts(ln, count, w)
    own = TechResource(label, f"link {label}", "link", Sourced(rate * MB, w, ""), duplex,
                       fmt.get("payload"), fmt.get("overhead"), None,
                       None if eff is None else Sourced(eff, w, ""), None, fmt.get("max_payload"))
    if duplex == "full":
        classes = [ResourceClass(f"links[{i}].ab", f"link {label} ({ea}→{eb})", "link", "link", count, own=own),
                   ResourceClass(f"links[{i}].ba", f"link {label} ({eb}→{ea})", "link", "link", count, own=own)]
    else:
        classes = [ResourceClass(f"links[{i}]", f"half-duplex link {label}", "link", "link", count, own=own)]
    return _Link((index[ea], index[eb]), count, duplex == "half", label, classes, rate, facts)


# A host's interface on a link (validate on real hosts reads its counters): a Linux
# interface name (IFNAMSIZ 16 with its NUL) or an InfiniBand port, DEVICE/PORT.
IFACE = re.compile(r"[A-Za-z0-9._-]{1,15}(/[0-9]{1,3})?")


def _iface(value, w: str) -> str:
    if not isinstance(value, str) or not IFACE.fullmatch(value):
        raise UsageError(f"{w}: iface must be an interface name (1-15 letters, digits, '._-', or DEVICE/PORT), "
                         f"got {shown(value)}")
    return value


def _iface_hosts(links: list, nodes: list, where: str) -> None:
    """A link's iface names a host's interface: one of its ends is a node."""
    names = set(nodes)
    for i, ln in enumerate(links):
        if isinstance(ln, dict) and "iface" in ln and not {str(ln["a"]), str(ln["b"])} & names:
            raise UsageError(f"{where}: links[{i}]: iface names a host's interface, and neither end is a node")


def _efficiency(ln: dict, packet: dict, w: str) -> tuple[dict, float | None]:
    """A link's packet format or its efficiency (not both); the file's packet
    format where it gives neither."""
    fmt = _packet(ln, w)
    if "efficiency" not in ln:
        return fmt or packet, None
    if fmt:
        raise UsageError(f"{w}: give efficiency or a packet format (payload_B, overhead_B), not both")
    return fmt, number(ln["efficiency"], "efficiency", w, EFFICIENCY)


def _routing(data: dict, where: str) -> tuple[bool, str]:
    transit = checks.flag(data.get("transit_nodes", False), "transit_nodes", where)
    return transit, checks.choice(data.get("routing", "d-mod-k"), "routing", where, ("d-mod-k", "ecmp"))


def _router(links: list[_Link], order: np.ndarray, nodes: list, switches: list, routing: str, transit: bool,
            where: str) -> GraphRouter:
    """The channel graph's router, once every pair of nodes is known to reach each other."""
    ch_from, ch_to, ch_res = _channels(np.array([ln.ends for ln in links], np.int64).reshape(-1, 2),
                                       np.array([ln.count for ln in links], np.int64),
                                       np.array([ln.half for ln in links], bool), order)
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
            raise UsageError(f"{where}: the top level must be a mapping with 'nodes' and 'links', "
                             f"got {shown(data)}")
        check_keys(data, _TOP_KEYS, ("nodes", "links"), where)
        nodes, switches, index = _vertices(data, where)
        default_rate, packet = _defaults(data, where)
        net = cls.__new__(cls)
        net.name = checks.name(data["name"], "name", where, (str, int, float)) if "name" in data \
            else Path(where).stem
        net.node_names, net.switch_names = nodes, switches
        net.node_model = node_model
        net.n_nodes = len(nodes)
        net.price_items = _prices(data.get("prices"), where)
        links = _links(data["links"], index, default_rate, packet, where)
        _iface_hosts(data["links"], nodes, where)
        transit, net.routing = _routing(data, where)
        net.cables, net.link_names = sum(ln.count for ln in links), [ln.label for ln in links]
        net.classes = [c for ln in links for c in ln.classes] + node_model.classes(len(nodes))
        net._finish()
        net.source = cablefacts.source(data.get("source"), where)
        net._facts = {i: ln.facts for i, ln in enumerate(links) if ln.facts is not None}
        names = nodes + switches
        cablefacts.unique_ports(net._facts, {i: (names[links[i].ends[0]], names[links[i].ends[1]])
                                              for i in net._facts}, where)
        net._ends = np.array([ln.ends for ln in links], np.int64).reshape(-1, 2)
        net._rates = np.array([ln.rate for ln in links], float)
        net._counts = np.array([ln.count for ln in links], np.int64)
        order = _pair_order(net._ends, len(names))
        net.router = _router(links, order, nodes, switches, net.routing, transit, where)
        net.fast = SwitchRouter.for_graph(net.router) if by_switch else None
        # For the testbed: the file's links, and each channel's cable (link index, which of its count).
        net.links, net.default_rate_MBps = data["links"], default_rate
        net.channel_cable = [(int(i), c) for i in order for c in range(links[i].count) for _ in (0, 1)]
        return net

    def cable_facts(self) -> list[dict]:
        """Every link of the file, in file order, as {index, name, ends: (a, b), count,
        rate_MBps, ports, guids, degraded}: ports and guids an (a, b) pair or None, degraded
        the file's reason or None. What `fabriclab topology show` and `diff` list."""
        names = self.node_names + self.switch_names
        out = []
        for i, label in enumerate(self.link_names):
            f = self._facts.get(i, _NO_FACTS)
            a, b = (names[int(v)] for v in self._ends[i])
            out.append({"index": i, "name": label, "ends": (a, b), "count": int(self._counts[i]),
                        "rate_MBps": float(self._rates[i]), "ports": f.ports, "guids": f.guids,
                        "degraded": f.degraded})
        return out

    def degraded_cables(self) -> list[dict]:
        """The links the file flags degraded, as cable_facts gives them."""
        return [c for c in self.cable_facts() if c["degraded"] is not None]

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
            check_budget(n_destinations, self.router.V + len(self.router.src), "one per destination node",
                         self.router.levels)

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


_NO_FACTS = cablefacts.Facts()


def _pair_order(ends: np.ndarray, n_vertices: int) -> np.ndarray:
    """The links in file order, except that the links between one pair of vertices
    follow each other at the first one's place: separate entries for parallel cables
    then offer D-mod-K their channels in the order one entry with a count does."""
    lo, hi = ends.min(axis=1), ends.max(axis=1)
    _, first, inverse = np.unique(lo * n_vertices + hi, return_index=True, return_inverse=True)
    return np.lexsort((np.arange(len(ends)), first[inverse.reshape(-1)])).astype(np.int64)


def _channels(ends: np.ndarray, counts: np.ndarray, half: np.ndarray, order: np.ndarray | None = None) -> tuple:
    """Two channels per cable (a->b, then b->a), cables in link `order` (file order by
    default); the resource of each: its direction's instance, or the one shared instance
    of a half-duplex cable."""
    order = np.arange(len(counts), dtype=np.int64) if order is None else order
    link = np.repeat(order, counts[order])
    first = np.repeat(np.concatenate(([0], np.cumsum(counts[order])[:-1])), counts[order]).astype(np.int64)
    cable = np.arange(len(link), dtype=np.int64) - first
    per_link = np.where(half, 1, 2) * counts           # resource instances of each link
    offset = np.concatenate(([0], np.cumsum(per_link)[:-1])).astype(np.int64)
    r_ab = offset[link] + cable
    r_ba = np.where(half[link], r_ab, r_ab + counts[link])
    a, b = ends[link, 0], ends[link, 1]
    inter = lambda x, y: np.stack((x, y), 1).reshape(-1)
    return inter(a, b), inter(b, a), inter(r_ab, r_ba)
