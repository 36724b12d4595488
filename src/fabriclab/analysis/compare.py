"""`fabriclab compare BASE NEW`: what changed between two runs, point by point.

For every point measured in both runs (benchmark, variant and every axis):
the ratio NEW/BASE of the point estimates (the median of launch medians;
above 1: NEW is slower) with a two-level bootstrap interval that resamples
launches and then samples within them (analysis/launches.py). A verdict is
called only when the whole interval lies beyond 1 +- threshold, so
launch-to-launch noise and trivial shifts both read as "same". Runs of a
single launch still compare, but their intervals then ignore launch-to-launch
variation, and the output says so.

An imported point (another tool's printed figure, no samples) has no
distribution to resample: where either side is imported the ratio of the two
point figures is given, with no interval and the verdict `no-interval`
(never faster or slower)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, fields

from ..errors import UsageError
from ..schema.records import KEY_FIELDS, Point
from . import launches

FIELDS = KEY_FIELDS + ("base_median_s", "new_median_s", "ratio", "ratio_ci_low", "ratio_ci_high", "base_launches",
                       "new_launches", "verdict")
NAN = float("nan")


@dataclass(frozen=True)
class Change:  # fields: FIELDS (the point's key, then the comparison)
    bench: str
    variant: str
    size: int
    stride: int
    conns: int
    active: int | None
    base_median_s: float
    new_median_s: float
    ratio: float          # new / base point estimate of the time per operation
    ratio_ci_low: float
    ratio_ci_high: float
    base_launches: int
    new_launches: int
    verdict: str          # faster | slower | same | no-interval | only-in-base | only-in-new


class Pooled:
    """Documents of one configuration measured in several runs (the tuner's
    rounds, alternated with another configuration's), read as one by
    `compare`: each point's launches are those of every run."""

    def __init__(self, docs):
        self.docs = list(docs)

    def groups(self) -> dict:
        out: dict = {}
        for doc in self.docs:
            for key, ps in doc.groups().items():
                out.setdefault(key, []).extend(ps)
        return out


def _estimate(ps: list[Point]) -> float:
    """The point estimate: the median of the launch medians (launches.hierarchical_ci's)."""
    return statistics.median(p.summary.median for p in ps)


def layout_differences(base, new) -> list[tuple]:
    """(key, base's buffers, new's buffers) of the points both runs measured with a different
    number of buffers a side: a warm window from one buffer or from a buffer per op moves the
    same bytes at other rates (window_buffers, suite/buffers.py), and a run of an older
    fabriclab whose default was the other layout pairs with a newer one under one key."""
    a, b = base.groups(), new.groups()
    out = []
    for key in a.keys() & b.keys():
        x = {p.buffers for p in a[key] if p.buffers is not None}
        y = {p.buffers for p in b[key] if p.buffers is not None}
        if x and y and x != y:
            out.append((key, sorted(x), sorted(y)))
    return sorted(out, key=lambda t: tuple((v is None, v) for v in t[0]))


def compare(base, new, alpha: float = 0.05, threshold: float = 0.02) -> list[Change]:
    """Changes point by point; the intervals' confidence is 1 - alpha."""
    if not 0 < alpha < 1 or not 0 <= threshold < 1:
        raise UsageError("--alpha must be in (0, 1) and --threshold in [0, 1)")
    a, b = base.groups(), new.groups()
    out = []
    for key in sorted(a.keys() | b.keys(), key=lambda k: tuple((x is None, x) for x in k)):
        pa, pb = a.get(key, []), b.get(key, [])
        xs, ys = [p.samples for p in pa], [p.samples for p in pb]
        if not xs or not ys:
            med = _estimate(pa or pb)
            out.append(Change(*key, med if xs else NAN, med if ys else NAN, NAN, NAN, NAN, len(xs), len(ys),
                              "only-in-base" if xs else "only-in-new"))
            continue
        if any(p.is_imported for p in pa + pb):
            mx, my = _estimate(pa), _estimate(pb)
            out.append(Change(*key, mx, my, my / mx if mx > 0 else NAN, NAN, NAN, len(xs), len(ys),
                              "no-interval"))
            continue
        ratio, lo, hi = launches.ratio_ci(xs, ys, confidence=1 - alpha)
        mx = launches.hierarchical_ci(xs, resamples=200)[0]
        out.append(Change(*key, mx, mx * ratio, ratio, lo, hi, len(xs), len(ys),
                          launches.verdict(lo, hi, threshold)))
    return out


assert tuple(f.name for f in fields(Change)) == FIELDS
