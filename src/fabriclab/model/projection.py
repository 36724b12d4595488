"""What `fabriclab model` computes, as one typed result: the per-node bandwidth
curves of chosen systems (and of a network file) under one traffic pattern,
which is best where and which is cheapest per MB/s, the cheapest system that
reaches a target, the spread of max-min fair rates, and the plot.

The seed's formulas "as published" belong to a study (studies/), which the
model does not import: a question may carry them as a function of
(system, node counts, calibrated rates) that returns a curve or None."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..errors import UsageError
from . import crossover as X
from .calibration import Calibration
from .catalog import system, technologies
from .choices import DEFAULT_SYSTEMS
from .cost import price_list
from .evaluate import Curve, cheapest, curve, maxmin_rates
from .netfile import NetworkFile
from .loads import METHODS
from .resources import MB
from .traffic import Traffic

SCHEMA = "fabriclab.model/1"


@dataclass(frozen=True)
class Question:
    """What to project. With no systems and no file, the seed's six systems;
    a file alone is not set against them."""

    systems: tuple = ()                      # catalog names or TECHNOLOGY:TOPOLOGY[:key=value,...]
    topology_file: Optional[str] = None      # a network evaluated at its own size
    nodes: tuple = tuple(range(2, 129))      # node counts of the catalog systems
    traffic: Traffic = field(default_factory=Traffic)
    calibration: Calibration = field(default_factory=Calibration)
    prices_file: Optional[str] = None        # None: the shipped example prices
    method: str = "auto"
    payload: Optional[float] = None          # packet payload in bytes, instead of the catalog's
    cost: bool = False                       # say which system is cheapest per MB/s where
    target_MBps: Optional[float] = None      # find the cheapest system giving every node this much
    maxmin: bool = False                     # solve the max-min fair rates too
    published: Optional[Callable] = None     # (system, nodes, calibrated rates) -> Curve | None
    plot: Optional[Path] = None              # draw the curves here (.png or .svg)


@dataclass
class MaxMin:
    """Steady-state max-min fair per-node totals of one system at one size (bytes/s)."""

    system: str
    label: str
    n: int
    min: float
    median: float
    max: float
    levels: int

    def to_dict(self) -> dict:
        return {"system": self.system, "n": self.n, "min": self.min, "median": self.median, "max": self.max,
                "levels": self.levels}


@dataclass
class Cheapest:
    """The cheapest system giving every node at least target_MBps at n nodes, or none."""

    n: int
    target_MBps: float
    system: object = None
    cost: Optional[float] = None
    per_node: Optional[float] = None         # bytes/s

    def to_dict(self) -> dict:
        return {"n": self.n, "target_MBps": self.target_MBps,
                "cheapest": None if self.system is None else {
                    "system": self.system.key, "cost_usd": self.cost, "per_node_bytes_per_s": self.per_node}}


@dataclass
class Projection:
    traffic: str                              # the pattern in words
    calibrated: bool
    curves: list                              # Curve per system, the network file's last
    published: list = field(default_factory=list)           # "as published" curves
    no_published_form: list = field(default_factory=list)   # labels of systems the seed has no formula for
    custom: list = field(default_factory=list)              # the network file's load result
    segments: list = field(default_factory=list)            # crossover.Segment: best per-node bandwidth
    best: str = ""                                          # the segments in words
    cost_effectiveness: Optional[str] = None                # best $ per MB/s in words
    maxmin: list = field(default_factory=list)              # MaxMin
    target: Optional[list] = None                           # Cheapest per size
    plot: Optional[Path] = None

    @property
    def drawn(self) -> list:
        """The curves that have a point in the size range."""
        return [c for c in self.curves if c.points]

    @property
    def empty(self) -> list:
        """Labels of the systems with no configuration in the size range."""
        return [c.label for c in self.curves if not c.points]

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "traffic": self.traffic, "calibrated": self.calibrated,
                "systems": [c.to_dict() for c in self.curves], "published": [c.to_dict() for c in self.published],
                "no_published_form": self.no_published_form,
                "custom": self.custom, "best": self.best, "segments": [s.__dict__ for s in self.segments],
                "cost_effectiveness": self.cost_effectiveness, "plot": str(self.plot) if self.plot else None,
                "maxmin": [m.to_dict() for m in self.maxmin],
                "target": None if self.target is None else [t.to_dict() for t in self.target]}


def project(q: Question) -> Projection:
    """The curves, crossovers, costs and plot that answer the question."""
    if q.method not in METHODS:
        raise UsageError(f"unknown method {q.method!r}")
    if q.published is not None and q.traffic.kind != "all-to-all":
        raise UsageError("--published applies to all-to-all traffic only (the seed's formulas)")
    prices = price_list(q.prices_file)
    systems, sizes = _systems(q)
    curves = [curve(s, sizes[s.key], q.calibration, q.traffic, q.method, prices, q.payload, with_cost=True)
              for s in systems]
    p = Projection(q.traffic.describe(), bool(q.calibration), curves)
    p.custom = [_custom(c) for s, c in zip(systems, curves) if isinstance(s, NetworkFile)]
    p.published, p.no_published_form = _published(q, systems)
    p.segments = X.segments(p.drawn)
    p.best = X.sentence(p.segments)
    if q.cost:
        costed = [c for c in p.drawn if any(pt.cost_per_mbps is not None for pt in c.points)]
        p.cost_effectiveness = X.sentence(X.segments(costed, attr="cost_per_mbps", lower_better=True)) \
            if costed else None
    if q.target_MBps is not None:
        p.target = [_cheapest(q, systems, n, prices, curves) for n in sorted({n for v in sizes.values() for n in v})]
    if q.maxmin:
        p.maxmin = _maxmin(q, systems, sizes)
    if q.plot is not None and p.drawn:
        p.plot = draw(p, q.plot)
    return p


def _systems(q: Question) -> tuple:
    """The systems (catalog ones first, the file last) and each one's node counts;
    the calibration checked against what they have."""
    named = q.systems or (() if q.topology_file else DEFAULT_SYSTEMS)
    catalog = [system(k) for k in named]
    files = [NetworkFile(q.topology_file)] if q.topology_file else []
    q.calibration.check([s.tech for s in catalog], technologies(),
                        frozenset().union(*(f.resource_names() for f in files)))
    sizes = {s.key: list(q.nodes) for s in catalog} | {f.key: [f.n_nodes] for f in files}
    return catalog + files, sizes


def _published(q: Question, systems: list) -> tuple:
    """(the "as published" curves, labels of the systems that have none)."""
    if q.published is None:
        return [], []
    pubs = [None if isinstance(s, NetworkFile) else q.published(s, list(q.nodes), s.calibrated(q.calibration))
            for s in systems]
    return [c for c in pubs if c is not None], [s.label for s, c in zip(systems, pubs) if c is None]


def _custom(c: Curve) -> dict:
    """The load result of a network file's one point, with its bottleneck's name."""
    pt = c.points[0]
    d = pt.result.to_dict()
    d["bottleneck"] = pt.bottleneck
    return d


def _cheapest(q: Question, systems: list, n: int, prices: dict, curves: list) -> Cheapest:
    rows = cheapest(systems, n, q.target_MBps, q.calibration, prices, q.traffic, q.method, q.payload, curves)
    if not rows:
        return Cheapest(n, q.target_MBps)
    cost, s, pt = rows[0]
    return Cheapest(n, q.target_MBps, s, cost, pt.per_node)


MAXMIN_TOTAL_FLOWS = 8_000_000   # over every system and size: each million flows is some 10 s on a 2-core VM


def _maxmin(q: Question, systems: list, sizes: dict) -> list:
    total = sum(q.traffic.count(n) for s in systems for n in sizes[s.key])
    if total > MAXMIN_TOTAL_FLOWS:
        raise UsageError(f"--maxmin over these systems and node counts solves {total:,} flows in all, more than "
                         f"{MAXMIN_TOTAL_FLOWS:,} (minutes of work): give fewer node counts or systems")
    out = []
    for s in systems:
        for n in sizes[s.key]:
            r = maxmin_rates(s, n, q.calibration, q.traffic, q.payload)
            if r is not None:
                out.append(MaxMin(s.key, s.label, n, r["min"], r["median"], r["max"], r["levels"]))
    return out


def draw(p: Projection, path: Path) -> Path:
    """The curves in MB/s per node: calibrated solid, nominal and "as published" dashed."""
    from .plot import Series, figure        # matplotlib loads only when a plot is drawn
    drawn = p.drawn
    series = [Series(c.label + (" (calibrated)" if c.calibrated else ""), [pt.n for pt in c.points],
                     [pt.per_node / MB for pt in c.points], group=g) for g, c in enumerate(drawn)]
    if p.calibrated:
        series += [Series(c.label + " (nominal)", [pt.n for pt in c.points], [pt.nominal / MB for pt in c.points],
                          dashed=True, group=g) for g, c in enumerate(drawn) if c.calibrated]
    series += [Series(c.label, [pt.n for pt in c.points], [pt.per_node / MB for pt in c.points], dashed=True,
                      group=g) for g, c in enumerate(p.published)]
    ys = [y for sr in series for y in sr.ys if y > 0]
    xs = [x for sr in series for x in sr.xs]
    return figure(series, path, f"Per-node bandwidth, {p.traffic}", "Bandwidth per node (MB/s)",
                  logx=max(xs) / min(xs) > 64, logy=bool(ys) and max(ys) / min(ys) > 100,
                  note="dashed: nominal (uncalibrated) or as published" if (p.calibrated or p.published) else None)
