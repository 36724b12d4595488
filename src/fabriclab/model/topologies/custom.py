"""A network read from a YAML or JSON file (see docs/model.md, "Custom networks").

Example::

    name: two switches, two cables
    nodes: 8                     # a count (names n0..n7) or a list of names
    switches: [s0, s1]           # a count (names s0..) or a list of names
    routing: d-mod-k             # or ecmp
    default_rate_MBps: 160       # for links that give no rate
    links:
      - [n0, s0]                 # short form: one full-duplex cable
      - {a: s0, b: s1, count: 2, rate_MBps: 160, efficiency: 0.9}
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...errors import UsageError
from ..datafile import read_data_file
from ..resources import MB
from ..routing import GraphRouter
from .base import NodeModel, Paths, ResourceClass, Topology

_TOP_KEYS = {"name", "nodes", "switches", "links", "routing", "transit_nodes", "default_rate_MBps"}
_LINK_KEYS = {"a", "b", "count", "rate_MBps", "efficiency", "duplex", "name"}


def _names(value, prefix: str, what: str, where: str) -> list:
    if value is None:
        return []
    if isinstance(value, bool):
        raise UsageError(f"{where}: '{what}' must be a count or a list of names")
    if isinstance(value, int):
        if value < 0:
            raise UsageError(f"{where}: '{what}' must not be negative")
        return [f"{prefix}{i}" for i in range(value)]
    if isinstance(value, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in value):
        names = [str(x) for x in value]
        dup = {x for x in names if names.count(x) > 1}
        if dup:
            raise UsageError(f"{where}: '{what}' lists {sorted(dup)[0]!r} twice")
        return names
    raise UsageError(f"{where}: '{what}' must be a count or a list of names")


def _number(value, what: str, where: str, lo: float = 0.0, strict: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: {what} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise UsageError(f"{where}: {what} must be a finite number, got {value}")
    if value < lo or (strict and value == lo):
        raise UsageError(f"{where}: {what} must be {'greater than' if strict else 'at least'} {lo}, got {value}")
    return float(value)


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


class CustomNetwork(Topology):
    """Any network of nodes and switches given as a list of links."""

    family = "custom"

    @classmethod
    def from_dict(cls, data, where: str = "topology", node_model: NodeModel = NodeModel()) -> "CustomNetwork":
        if not isinstance(data, dict):
            raise UsageError(f"{where}: the top level must be a mapping with 'nodes' and 'links'")
        _check_keys(data, _TOP_KEYS, ("nodes", "links"), where)
        nodes = _names(data["nodes"], "n", "nodes", where)
        switches = _names(data.get("switches"), "s", "switches", where)
        if len(nodes) < 2:
            raise UsageError(f"{where}: a network needs at least 2 nodes, got {len(nodes)}")
        index = {}
        for i, nm in enumerate(nodes + switches):
            if nm in index:
                raise UsageError(f"{where}: name {nm!r} is used for a node and a switch")
            index[nm] = i
        default_rate = data.get("default_rate_MBps")
        if default_rate is not None:
            default_rate = _number(default_rate, "default_rate_MBps", where)
        links = data["links"]
        if not isinstance(links, list) or not links:
            raise UsageError(f"{where}: 'links' must be a non-empty list")
        net = cls.__new__(cls)
        net.name = str(data.get("name", Path(where).stem))
        net.node_names, net.switch_names = nodes, switches
        net.node_model = node_model
        net.n_nodes = len(nodes)
        classes, ch_from, ch_to, ch_res, ch_cable, cables = [], [], [], [], [], 0
        offset = 0
        for i, ln in enumerate(links):
            w = f"{where}: links[{i}]"
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
            eff = _number(ln.get("efficiency", 1.0), "efficiency", w)
            if eff > 1:
                raise UsageError(f"{w}: efficiency must be at most 1, got {eff}")
            duplex = ln.get("duplex", "full")
            if duplex not in ("full", "half"):
                raise UsageError(f"{w}: duplex must be 'full' or 'half', got {duplex!r}")
            label = str(ln.get("name", f"{ea}-{eb}"))
            ia, ib = index[ea], index[eb]
            if duplex == "full":
                classes.append(ResourceClass(f"links[{i}].ab", f"link {label} ({ea}→{eb})", "link", "link",
                                             count, rate * MB * eff))
                classes.append(ResourceClass(f"links[{i}].ba", f"link {label} ({eb}→{ea})", "link", "link",
                                             count, rate * MB * eff))
                for c in range(count):
                    ch_from += [ia, ib]
                    ch_to += [ib, ia]
                    ch_res += [offset + c, offset + count + c]
                    ch_cable += [(i, c), (i, c)]
                offset += 2 * count
            else:
                classes.append(ResourceClass(f"links[{i}]", f"half-duplex link {label}", "link", "link",
                                             count, rate * MB * eff))
                for c in range(count):
                    ch_from += [ia, ib]
                    ch_to += [ib, ia]
                    ch_res += [offset + c, offset + c]
                    ch_cable += [(i, c), (i, c)]
                offset += count
            cables += count
        transit = data.get("transit_nodes", False)
        if not isinstance(transit, bool):
            raise UsageError(f"{where}: transit_nodes must be true or false")
        routing = data.get("routing", "d-mod-k")
        if routing not in ("d-mod-k", "ecmp"):
            raise UsageError(f"{where}: routing must be 'd-mod-k' or 'ecmp', got {routing!r}")
        net.routing = routing
        net.classes = classes + node_model.classes(len(nodes))
        net._finish()
        net.cables = cables
        net.links = links
        net.default_rate_MBps = default_rate
        net.channel_cable = ch_cable        # channel -> (link index, cable of its count): the testbed's veths
        net.router = GraphRouter(len(nodes) + len(switches), len(nodes), ch_from, ch_to, ch_res,
                                 routing, transit)
        # every node must reach every other node
        for d in range(len(nodes)):
            dist = net.router.table(d)[0]
            miss = np.nonzero(dist[: len(nodes)] < 0)[0]
            if len(miss):
                raise UsageError(f"{where}: node {nodes[int(miss[0])]!r} cannot reach node {nodes[d]!r}")
            if d >= 64:
                break  # connectivity of the first 64 destinations suffices to catch islands cheaply
        return net

    def describe(self) -> str:
        return (f"{self.name}: {self.n_nodes} nodes, {len(self.switch_names)} switches, "
                f"{self.cables} cables, {self.routing} routing")

    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        cols = self.node_columns(flow, src, dst) + self.router.paths(src, dst)
        return Paths.from_columns(cols, len(src))

    def inventory(self) -> dict:
        return {"adapters": self.n_nodes, "switches": len(self.switch_names), "enclosures": 0,
                "cables": self.cables}
