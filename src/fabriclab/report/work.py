"""The applications' work, rates and phase split, as tables and figures read them.

An app's op is one whole run of the application on ACTIVE ranks
(measure/apps.py): its rate is the work it does per second at the median
time of an op, in the unit the seeds used: GFLOP/s for the matrix multiply
(2 n^3 floating-point operations, seed 003 Fig. 12), keys per second for
the bucket sort (seed 003 Fig. 13), the array's bytes per second for the
transpose (seed 000). Its phases (docs/core-protocol.md) are the mean active
rank's seconds per op in each part; against the op's time, the slowest
rank's, the rest is `other`: imbalance and waits outside the phases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..measure import apps
from ..schema.records import Point


@dataclass(frozen=True)
class Rate:
    """How an app's work rate reads: a label, its unit and the factor to it."""
    label: str
    unit: str
    scale: float

    @property
    def axis(self) -> str:
        return f"{self.label} ({self.unit})"

    def text(self, per_s: Optional[float]) -> str:
        return "-" if per_s is None else f"{per_s * self.scale:.4g}"


RATES = {
    "app.matmul": Rate("GFLOP/s", "10^9 floating-point operations/s", 1e-9),
    "app.sort": Rate("Mkeys/s", "10^6 keys sorted/s", 1e-6),
    "app.transpose": Rate("array GB/s", "10^9 bytes of the array transposed/s", 1e-9),
}


def scale_of(p: Point) -> str:
    """"strong" (a fixed problem) or "weak" (a fixed problem per rank)."""
    return p.params.get("scale", "strong")


def app_work(p: Point) -> Optional[float]:
    """The work of an app's op: the multiply's floating-point operations
    (2 n^3), the keys sorted, the transpose's array bytes; None for other
    benchmarks. From the point's `info` where the core says it, else from the
    problem's arithmetic."""
    active = p.active or 1
    if p.bench == "app.matmul":
        return float(p.info.get("flops") or apps.flops(apps.matmul_side(p.size, active, scale_of(p))))
    if p.bench == "app.sort":
        return float(p.info.get("keys") or apps.sort_keys(p.size, active, scale_of(p)))
    if p.bench == "app.transpose":
        return float(p.bytes_per_op)
    return None


def work_rate(p: Point) -> Optional[float]:
    """An app's work per second at its median time."""
    work = app_work(p)
    return work / p.median_s if work and p.median_s > 0 else None


def speedups(pts: list) -> dict:
    """id(point) -> its work rate over the rate of the same problem (bench,
    variant, size) on one rank. For a fixed problem (strong scaling) that is
    t(1) / t(N); for a problem that grows with N (weak scaling) it is the
    scaled speedup (Gustafson 1988). No entry without a 1-rank point."""
    base = {(p.bench, p.variant, p.size): work_rate(p) for p in pts if p.active == 1 and work_rate(p)}
    out = {}
    for p in pts:
        one, rate = base.get((p.bench, p.variant, p.size)), work_rate(p)
        if one and rate:
            out[id(p)] = rate / one
    return out


@dataclass(frozen=True)
class Part:
    """One part of an op: a phase, or `other` (the op's time beyond its phases)."""
    name: str
    seconds: float
    share: float               # of the op's median time


def phase_split(phases_s: Optional[dict], op_s: float) -> list[Part]:
    """The phases' medians as shares of the op's median, then `other` when the
    op took longer than its phases (a negative rest, from medians taken
    apart, is left out)."""
    if not phases_s or not op_s or op_s <= 0:
        return []
    parts = [Part(k, v, v / op_s) for k, v in phases_s.items()]
    rest = op_s - sum(phases_s.values())
    if rest > 0:
        parts.append(Part("other", rest, rest / op_s))
    return parts
