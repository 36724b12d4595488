"""The applications' work, rates and phase split, as tables and figures read them.

An app's op is one whole run of the application on ACTIVE ranks
(suite/apps.py): its rate is the work it does per second at the median
time of an op, in the unit its registry facts give (the seeds' units:
GFLOP/s, keys per second, the array's bytes per second). Its phases
(docs/core-protocol.md) are the mean active rank's seconds per op in each
part; against the op's time, the slowest rank's, the rest is `other`:
imbalance and waits outside the phases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..suite.benchmarks import REGISTRY
from ..schema.records import Point


def app_of(bench: str):
    """The app facts of a benchmark (suite/apps.py), or None for a transfer."""
    b = REGISTRY.get(bench)
    return b.app if b else None


def app_work(p: Point) -> Optional[float]:
    """The work of an app's op (its registry facts: flops, keys, array bytes); None for other benchmarks."""
    app = app_of(p.bench)
    return app.work(p) if app else None


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
