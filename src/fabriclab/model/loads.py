"""The exact load solver: packets per resource, per-node bandwidth, bottleneck.

For a traffic pattern in which every flow carries one equal-size message and
all flows run at the same rate, resource ℓ needs load_ℓ / rate_ℓ seconds per
message, so (seed 001 Eq. 4-5, generalised to every resource)::

    B_node = demand × min over ℓ of rate_ℓ / load_ℓ

with demand the number of messages a node sends (N-1 for all-to-all). The
resource attaining the minimum is the bottleneck. Loads are counted from the
routing: by symmetry or aggregation where the family provides it (no N² flow
list), else by enumerating every flow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..errors import UsageError
from .resources import MB, Rates
from .topologies.base import Topology
from .traffic import Traffic, all_pairs

from .choices import MAX_ENUMERATED_FLOWS, METHODS
TIE = 1e-12          # loads and bounds this close are equal (sums of ECMP fractions differ in rounding)


@dataclass
class ClassLoad:
    key: str
    label: str
    kind: str
    count: int
    load: float            # messages crossing the most loaded instance
    rate: float            # bytes/s used (calibrated or nominal)
    nominal_rate: float    # bytes/s from the packet format
    calibrated: bool
    bound: float           # per-node bandwidth this class alone allows, bytes/s
    instance: Optional[str] = None

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["bound"] = None if not np.isfinite(self.bound) else self.bound
        return d


@dataclass
class LoadResult:
    topology: str
    n_nodes: int
    traffic: str
    method: str
    demand: float
    per_node: float                      # bytes/s
    bottleneck: ClassLoad
    classes: list = field(default_factory=list)

    def time_for(self, message_bytes: float) -> float:
        """Completion time of the pattern with messages of this size, seconds."""
        return self.demand * message_bytes / self.per_node

    def to_dict(self) -> dict:
        return {"topology": self.topology, "n_nodes": self.n_nodes, "traffic": self.traffic,
                "method": self.method, "messages_per_node": self.demand,
                "per_node_bytes_per_s": self.per_node,
                "bottleneck": {"key": self.bottleneck.key, "label": self.bottleneck.label,
                               "kind": self.bottleneck.kind, "instance": self.bottleneck.instance},
                "resources": [c.to_dict() for c in self.classes]}


def display_label(c, rates: Optional[Rates]) -> str:
    """'SCI link, dimension 1, + direction', 'B-Link', 'PCI 64-bit/66 MHz, transmit'."""
    if c.rate is not None or c.own is not None or rates is None or c.tech not in rates.resources:
        return c.label or c.key
    tech = rates.label(c.tech)
    return f"{tech}, {c.label}" if c.label else tech


def class_rates(topo, rates: Optional[Rates]) -> tuple:
    """(rate, nominal rate, calibrated?) per class of the topology."""
    out = []
    cal = rates.calibrated if rates is not None else {}
    payload = rates.payload if rates is not None else None
    for c in topo.classes:
        if c.own is not None:
            nominal = c.own.effective(0, payload)
        elif c.rate is not None:
            nominal = c.rate
        elif rates is None:
            raise UsageError(f"resource {c.label!r} needs a technology to give it a rate")
        else:
            nominal = rates.nominal(c.tech)
        if c.key in cal:
            out.append((float(cal[c.key]), nominal, True))
        elif c.rate is None and c.own is None and c.tech in cal:
            out.append((float(cal[c.tech]), nominal, True))
        else:
            out.append((nominal, nominal, False))
    return out


def resource_capacity(topo, by_class) -> np.ndarray:
    """Bytes/s of every resource instance, from class_rates' (rate, nominal, calibrated) per class."""
    return np.array([r for r, _, _ in by_class])[topo.class_of(np.arange(topo.n_resources))]


def enumerate_loads(topo, src: np.ndarray, dst: np.ndarray, batch: int = 2_000_000) -> np.ndarray:
    """Load of every resource instance from an explicit flow list."""
    loads = np.zeros(topo.n_resources)
    for a in range(0, len(src), batch):
        p = topo.paths(src[a:a + batch], dst[a:a + batch])
        loads += np.bincount(p.res, weights=p.weight, minlength=topo.n_resources)
    return loads


def enumerate_alltoall(topo, batch: int = 2_000_000) -> np.ndarray:
    n = topo.n_nodes
    if n * (n - 1) > MAX_ENUMERATED_FLOWS:
        aggregated = (type(topo).alltoall_class_loads is not Topology.alltoall_class_loads
                      or type(topo).alltoall_resource_loads is not Topology.alltoall_resource_loads)
        hint = ("use --method auto (this family has an aggregated solver) or fewer nodes" if aggregated
                else "this topology family has no aggregated solver, use fewer nodes")
        raise UsageError(f"{n} nodes make {n * (n - 1):,} all-to-all flows, too many to enumerate; {hint}")
    topo.check_routing(n)
    loads = np.zeros(topo.n_resources)
    per = max(1, batch // max(n - 1, 1))
    for d0 in range(0, n, per):        # by destination: a per-destination router builds each table once
        d1 = min(n, d0 + per)
        dst = np.repeat(np.arange(d0, d1, dtype=np.int64), n - 1)
        k = np.tile(np.arange(n - 1, dtype=np.int64), d1 - d0)
        src = k + (k >= dst)
        p = topo.paths(src, dst)
        loads += np.bincount(p.res, weights=p.weight, minlength=topo.n_resources)
    return loads


def class_maxima(per_res: np.ndarray, offsets: np.ndarray) -> tuple:
    """Per class (instances offsets[i]..offsets[i+1]-1): the largest load and the index
    of the first instance within TIE of it (-1 for an empty class), so that counting
    flows one by one or aggregated, whose sums differ in rounding, names the same one."""
    C = len(offsets) - 1
    counts = np.diff(offsets)
    cls = np.repeat(np.arange(C), counts)
    top = np.full(C, -np.inf)
    np.maximum.at(top, cls, per_res)
    hit = np.nonzero(per_res >= np.repeat(top, counts) * (1 - TIE))[0]
    first = np.full(C, -1, np.int64)
    c_hit, at = np.unique(cls[hit], return_index=True)
    first[c_hit] = hit[at] - offsets[c_hit]
    return np.where(counts > 0, top, 0.0), first


def class_loads(topo, traffic: Traffic = Traffic(), method: str = "auto") -> tuple:
    """(per-class maximum loads, the most loaded instance of each class in words or
    None, how the loads were counted, messages per sending node) of a pattern on a
    topology. Loads depend on the routes, not on the rates: they are counted once per
    topology object, pattern and method, and kept on the object (a nominal and a
    calibrated solve of one topology, or a curve's points evaluated twice, count once)."""
    if method not in METHODS:
        raise UsageError(f"unknown solver method {method!r}: choose auto or enumerate")
    memo = topo.__dict__.setdefault("_class_loads", {})
    if (traffic, method) in memo:
        return memo[(traffic, method)]
    per_res = None
    if traffic.kind == "all-to-all":
        demand = float(topo.n_nodes - 1)
        whole = topo.alltoall_resource_loads() if method == "auto" else None
        agg = topo.alltoall_class_loads() if method == "auto" and whole is None else None
        if whole is not None:
            per_res, used = whole
        elif agg is not None:
            loads = np.array([agg.get(c.key, 0.0) for c in topo.classes])
            used = "symmetry" if topo.family == "torus" else "aggregation"
        else:
            per_res = enumerate_alltoall(topo)
            used = "enumeration"
    else:
        src, dst = traffic.flows(topo)
        demand = traffic.per_source(src)
        per_res = enumerate_loads(topo, src, dst)
        used = "enumeration"
    argmax = [None] * len(topo.classes)
    if per_res is not None:
        loads, first = class_maxima(per_res, topo.offsets)
        for i in np.nonzero(first >= 0)[0].tolist():
            argmax[i] = topo.label_of(i, int(first[i]))
    memo[(traffic, method)] = loads, argmax, used, demand
    return memo[(traffic, method)]


def solve(topo, rates: Optional[Rates], traffic: Traffic = Traffic(), method: str = "auto") -> LoadResult:
    loads, argmax, used, demand = class_loads(topo, traffic, method)
    classes = []
    for i, (c, (rate, nominal, cal)) in enumerate(zip(topo.classes, class_rates(topo, rates))):
        if rate <= 0:
            raise UsageError(f"resource {c.label!r} has a non-positive rate {rate / MB:g} MB/s")
        bound = demand * rate / loads[i] if loads[i] > 1e-12 else float("inf")
        classes.append(ClassLoad(c.key, display_label(c, rates), c.kind, c.count, float(loads[i]), rate, nominal,
                                 cal, bound, argmax[i]))
    if demand <= 0 or not classes:
        raise UsageError("the traffic pattern sends nothing on this topology")
    low = min(c.bound for c in classes)
    best = next(c for c in classes if c.bound <= low * (1 + TIE))
    return LoadResult(topo.describe(), topo.n_nodes, traffic.describe(), used, demand,
                      best.bound, best, classes)


def alltoall_time(topo, rates: Optional[Rates], message_bytes: float) -> float:
    """Completion time of an all-to-all of `message_bytes` messages: the busiest
    resource's work, max over ℓ of load_ℓ × size / rate_ℓ (exact under max-min
    sharing when every flow starts at once; see maxmin.py)."""
    return solve(topo, rates).time_for(message_bytes)


__all__ = ["ClassLoad", "LoadResult", "solve", "class_loads", "enumerate_loads", "enumerate_alltoall",
           "alltoall_time", "class_rates", "resource_capacity", "all_pairs", "METHODS"]
