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

from .choices import METHODS
MAX_ENUMERATED_FLOWS = 40_000_000


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
    if c.rate is not None or rates is None or c.tech not in rates.resources:
        return c.label or c.key
    tech = rates.label(c.tech)
    return f"{tech}, {c.label}" if c.label else tech


def class_rates(topo, rates: Optional[Rates]) -> tuple:
    """(rate, nominal rate, calibrated?) per class of the topology."""
    out = []
    cal = rates.calibrated if rates is not None else {}
    for c in topo.classes:
        if c.rate is not None:
            nominal = c.rate
        elif rates is None:
            raise UsageError(f"resource {c.label!r} needs a technology to give it a rate")
        else:
            nominal = rates.nominal(c.tech)
        if c.key in cal:
            out.append((float(cal[c.key]), nominal, True))
        elif c.rate is None and c.tech in cal:
            out.append((float(cal[c.tech]), nominal, True))
        else:
            out.append((nominal, nominal, False))
    return out


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
        hint = ("use --method auto (this family has an aggregated solver) or fewer nodes"
                if type(topo).alltoall_class_loads is not Topology.alltoall_class_loads
                else "this topology family has no aggregated solver, use fewer nodes")
        raise UsageError(f"{n} nodes make {n * (n - 1):,} all-to-all flows, too many to enumerate; {hint}")
    loads = np.zeros(topo.n_resources)
    per = max(1, batch // max(n - 1, 1))
    for s0 in range(0, n, per):
        s1 = min(n, s0 + per)
        src = np.repeat(np.arange(s0, s1, dtype=np.int64), n - 1)
        k = np.tile(np.arange(n - 1, dtype=np.int64), s1 - s0)
        dst = k + (k >= src)
        p = topo.paths(src, dst)
        loads += np.bincount(p.res, weights=p.weight, minlength=topo.n_resources)
    return loads


def solve(topo, rates: Optional[Rates], traffic: Traffic = Traffic(), method: str = "auto") -> LoadResult:
    if method not in METHODS:
        raise UsageError(f"unknown solver method {method!r}: choose auto or enumerate")
    per_res = None
    if traffic.kind == "all-to-all":
        demand = float(topo.n_nodes - 1)
        agg = topo.alltoall_class_loads() if method == "auto" else None
        if agg is not None:
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
        loads = np.zeros(len(topo.classes))
        for i in range(len(topo.classes)):
            seg = per_res[topo.offsets[i]:topo.offsets[i + 1]]
            if len(seg):
                j = int(np.argmax(seg))
                loads[i] = seg[j]
                argmax[i] = topo.instance_label(int(topo.offsets[i]) + j)
    classes = []
    for i, (c, (rate, nominal, cal)) in enumerate(zip(topo.classes, class_rates(topo, rates))):
        if rate <= 0:
            raise UsageError(f"resource {c.label!r} has a non-positive rate {rate / MB:g} MB/s")
        bound = demand * rate / loads[i] if loads[i] > 1e-12 else float("inf")
        classes.append(ClassLoad(c.key, display_label(c, rates), c.kind, c.count, float(loads[i]), rate, nominal,
                                 cal, bound, argmax[i]))
    if demand <= 0 or not classes:
        raise UsageError("the traffic pattern sends nothing on this topology")
    best = min(classes, key=lambda c: c.bound)
    return LoadResult(topo.describe(), topo.n_nodes, traffic.describe(), used, demand,
                      best.bound, best, classes)


def alltoall_time(topo, rates: Optional[Rates], message_bytes: float) -> float:
    """Completion time of an all-to-all of `message_bytes` messages: the busiest
    resource's work, max over ℓ of load_ℓ × size / rate_ℓ (exact under max-min
    sharing when every flow starts at once; see maxmin.py)."""
    return solve(topo, rates).time_for(message_bytes)


__all__ = ["ClassLoad", "LoadResult", "solve", "enumerate_loads", "enumerate_alltoall",
           "alltoall_time", "class_rates", "all_pairs", "METHODS"]
