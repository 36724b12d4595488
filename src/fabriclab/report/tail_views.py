"""The latency distribution of single ops (`run --per-op`): for each point
timed op by op, the fraction of its ops slower than each time, on log axes
(the complementary distribution, where a tail reads as a slope and p99,
p99.9 as the heights 1e-2 and 1e-3), one curve per run and size. The
launches' histograms are pooled for the curve; the percentiles with their
intervals over launches are `show`'s per-op lines (analysis/tails.py)."""

from __future__ import annotations

import numpy as np

from ..analysis.tails import counts
from ..units import fmt_bytes
from .curves import MAX_SERIES
from .figure import Axis, Figure, Series
from .tables import group_name


def _curve(points) -> tuple[list, list]:
    """(upper bucket edges per transfer, fraction of ops above each) of the points' pooled histograms."""
    total = None
    h0 = points[0].op_histogram
    for p in points:
        c, _, _ = counts(p.op_histogram)
        total = c if total is None else total + c
    n = int(total.sum())
    nz = np.nonzero(total)[0]
    if n == 0 or not len(nz):
        return [], []
    above = n - np.cumsum(total)[nz]
    edges = float(h0["base_s"]) * (1 + float(h0["error"])) ** (nz + 1)
    keep = above > 0
    unit = points[0].per_transfer
    return [unit(float(x)) * 1e6 for x in edges[keep]], [float(a) / n for a in above[keep]]


def distribution(runs: list, bench: str) -> list[Figure]:
    fig = Figure(f"{bench.replace('.', '-')}-per-op", f"{bench}: single ops slower than each time",
                 Axis("time per transfer (us)"), Axis("fraction of single ops slower"),
                 note="`run --per-op`: every single op of the point, pooled over launches and timing ranks; "
                      "the heights 1e-2 and 1e-3 read p99 and p99.9 (show's per-op lines give them with intervals)")
    for run in runs:
        groups: dict = {}
        for p in run.doc.points:
            if p.bench == bench and p.op_histogram and p.op_histogram.get("ranks"):
                groups.setdefault(p.key, []).append(p)
        for key, ps in groups.items():
            x, y = _curve(ps)
            if x:
                name = f"{run.name} " if len(runs) > 1 else ""
                label = f"{name}{group_name(bench, key[1])} {fmt_bytes(key[2])}"
                fig.series.append(Series(label, x, y, markers=False))
    fig.series = fig.series[:MAX_SERIES]
    return [] if fig.empty() else [fig]
