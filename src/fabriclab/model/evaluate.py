"""Per-node bandwidth (and cost) of systems over a range of sizes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..errors import UsageError
from .calibration import Calibration
from .cost import network_cost
from .loads import class_rates, resource_capacity, solve
from .maxmin import max_min
from .resources import MB
from .traffic import Traffic

from .choices import MAX_NODES


@dataclass
class Prediction:
    n: int
    per_node: float                 # bytes/s, calibrated when a calibration applies
    nominal: float                  # bytes/s from the packet formats
    bottleneck: str
    bottleneck_kind: str
    nominal_bottleneck: str
    method: str
    topology: str
    cost: Optional[float] = None
    cost_per_mbps: Optional[float] = None
    result: object = None

    def to_dict(self) -> dict:
        return {"n": self.n, "per_node_bytes_per_s": self.per_node, "nominal_bytes_per_s": self.nominal,
                "bottleneck": self.bottleneck, "bottleneck_kind": self.bottleneck_kind,
                "nominal_bottleneck": self.nominal_bottleneck, "method": self.method,
                "topology": self.topology, "cost_usd": self.cost, "usd_per_MBps": self.cost_per_mbps}


@dataclass
class Curve:
    key: str
    label: str
    calibrated: bool
    points: list = field(default_factory=list)

    def at(self, n: int) -> Optional[Prediction]:
        for p in self.points:
            if p.n == n:
                return p
        return None

    def to_dict(self) -> dict:
        return {"system": self.key, "label": self.label, "calibrated": self.calibrated,
                "points": [p.to_dict() for p in self.points]}


def evaluate(system, n: int, calibration: Optional[Calibration] = None, traffic: Traffic = Traffic(),
             method: str = "auto", prices: Optional[dict] = None, payload: Optional[float] = None,
             with_cost: bool = True) -> Optional[Prediction]:
    """One point, or None when the system has no configuration of n nodes."""
    if not 2 <= n <= MAX_NODES:
        raise UsageError(f"system sizes must be between 2 and {MAX_NODES:,} nodes, got {n}")
    topo = system.build(n)
    if topo is None:
        return None
    cal = system.calibrated(calibration)
    nominal = solve(topo, system.rates(topo, None, payload), traffic, method)
    res = solve(topo, system.rates(topo, cal, payload), traffic, method) if cal else nominal
    name = lambda r: (r.bottleneck.instance if topo.bottleneck_instances and r.bottleneck.instance
                      else r.bottleneck.label)
    p = Prediction(n, res.per_node, nominal.per_node, name(res), res.bottleneck.kind, name(nominal), res.method,
              topo.describe(), result=res)
    if with_cost:
        c = network_cost(system, topo, prices)
        if c is not None:
            p.cost = c.total
            p.cost_per_mbps = c.per_mbps(n, res.per_node)
    return p


def maxmin_rates(system, n: int, calibration: Optional[Calibration] = None, traffic: Traffic = Traffic(),
                 payload: Optional[float] = None, max_flows: int = 4_000_000) -> Optional[dict]:
    """Steady-state max-min fair rates of the pattern's flows: per-node totals
    (bytes/s) as min, median and max over the sending nodes."""
    if traffic.count(n) > max_flows:      # refused before its flows' arrays are made (n = 100,000: 75 GiB)
        raise UsageError(f"{traffic.count(n):,} flows at {n:,} nodes are too many for the max-min solver (at most "
                         f"{max_flows:,}); use fewer nodes")
    topo = system.build(n)
    if topo is None:
        return None
    src, dst = traffic.flows(topo)
    if len(src) > max_flows:
        raise UsageError(f"{len(src):,} flows at {n:,} nodes are too many for the max-min solver (at most "
                         f"{max_flows:,}); use fewer nodes")
    cal = system.calibrated(calibration)
    cap = resource_capacity(topo, class_rates(topo, system.rates(topo, cal, payload)))
    res = max_min(topo.paths(src, dst), cap)
    per = res.per_source(src)[np.unique(src)]
    return {"min": float(per.min()), "median": float(np.median(per)), "max": float(per.max()),
            "levels": res.levels}


def curve(system, ns, calibration: Optional[Calibration] = None, traffic: Traffic = Traffic(),
          method: str = "auto", prices: Optional[dict] = None, payload: Optional[float] = None,
          with_cost: bool = True) -> Curve:
    cal = bool(system.calibrated(calibration))
    c = Curve(system.key, system.label, cal)
    for n in ns:
        p = evaluate(system, n, calibration, traffic, method, prices, payload, with_cost)
        if p is not None:
            c.points.append(p)
    return c


def cheapest(systems, n: int, target_mbps: float, calibration: Optional[Calibration] = None,
             prices: Optional[dict] = None, traffic: Traffic = Traffic(), method: str = "auto",
             payload: Optional[float] = None, curves: Optional[list] = None) -> list:
    """Systems that give every node at least `target_mbps` at n nodes, cheapest first,
    under the same traffic, method and payload as the main table. `curves`
    (one per system, already evaluated with cost) are reused when given."""
    rows = []
    for i, s in enumerate(systems):
        if curves is not None:
            p = curves[i].at(n)
        else:
            p = evaluate(s, n, calibration, traffic, method, prices, payload)
        if p is None or p.cost is None:
            continue
        if p.per_node >= target_mbps * MB:
            rows.append((p.cost, s, p))
    rows.sort(key=lambda r: r[0])
    return rows
