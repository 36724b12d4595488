"""Percentiles of single operations (`run --per-op`): each launch's point
carries a log-bucketed histogram of every single op its timing ranks ran
(the core's per_op.c: bucket i spans [base (1+e)^i, base (1+e)^(i+1)), e =
1%). Each percentile is read from the ranks' histograms summed, as the
geometric middle of the bucket that holds it (within e/2 of the op's
time), clamped to the ops' extremes. Over launches, a percentile's estimate
is the median of the launches' values and its interval the percentile
bootstrap of that median over launches; the maximum is the largest op any
launch saw. Estimates are in the point table's unit (records.Point.per_transfer:
a ping-pong's time per transfer, half its op). The timer's cost is read beside the median, and a point whose
timer takes more than TIMER_SHARE of its median op is flagged: its single
ops carry the timer's cost (docs/statistics.md, "Per-operation timing")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999))
TIMER_SHARE = 0.05
RESAMPLES = 2000


def counts(hist: dict) -> tuple[np.ndarray, float, float]:
    """(counts per bucket over every rank, the smallest op, the largest)."""
    out = np.zeros(int(hist["buckets"]), dtype=np.int64)
    lo, hi = math.inf, 0.0
    for r in hist.get("ranks") or []:
        for i, c in r.get("buckets") or []:
            out[int(i)] += int(c)
        if r.get("n"):
            lo, hi = min(lo, float(r["min_s"])), max(hi, float(r["max_s"]))
    return out, lo, hi


def quantiles(hist: dict) -> dict:
    """{name: seconds} of one histogram, with "max" and "n" (the ops counted)."""
    c, lo, hi = counts(hist)
    n = int(c.sum())
    if n == 0:
        return {}
    cum = np.cumsum(c)
    base, e = float(hist["base_s"]), float(hist["error"])
    out = {}
    for name, q in QUANTILES:
        i = int(np.searchsorted(cum, math.ceil(q * n)))
        out[name] = min(max(base * (1 + e) ** (i + 0.5), lo), hi)
    return {**out, "max": hi, "n": n}


@dataclass(frozen=True)
class Tails:
    """A point's single-op percentiles over its launches."""
    key: tuple                  # the point's key (records.Point.key)
    estimates: dict             # name -> (median of launches, ci low, ci high); "max" -> (max, nan, nan)
    ops: int                    # single ops counted over every launch
    launches: int
    timer_cost_s: float
    timer_share: float          # the timer's cost over p50
    ops_per_timing: int = 1     # a windowed kernel's: each timing spans a window, counted once per window

    @property
    def flagged(self) -> bool:
        return self.timer_share > TIMER_SHARE


def _interval(values: list) -> tuple:
    """(median, lo, hi): the median of launch values and its 95% percentile bootstrap over launches."""
    x = np.asarray(values, dtype=float)
    med = float(np.median(x))
    if len(x) < 2:
        return med, math.nan, math.nan
    rng = np.random.default_rng(0)
    boot = np.median(x[rng.integers(0, len(x), size=(RESAMPLES, len(x)))], axis=1)
    return med, float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


def tails(points) -> list[Tails]:
    """One Tails per point key whose launches carry a histogram, in the points' order."""
    groups: dict = {}
    for p in points:
        if p.op_histogram and p.op_histogram.get("ranks"):
            groups.setdefault(p.key, []).append(p)
    out = []
    for key, ps in groups.items():
        qs = [q for q in (quantiles(p.op_histogram) for p in ps) if q]
        if not qs:
            continue
        unit = ps[0].per_transfer
        est = {name: tuple(unit(x) for x in _interval([q[name] for q in qs])) for name, _ in QUANTILES}
        est["max"] = (unit(max(q["max"] for q in qs)), math.nan, math.nan)
        cost = float(np.median([p.op_histogram.get("timer_cost_s") or 0.0 for p in ps]))
        p50 = float(np.median([q["p50"] for q in qs]))       # the op's, as the timer wraps it
        unit = max(int(p.op_histogram.get("ops_per_timing") or 1) for p in ps)
        share = cost / (p50 * unit) if p50 > 0 else math.inf      # one clock pair per timing
        out.append(Tails(key, est, sum(q["n"] for q in qs), len(qs), cost, share, unit))
    return out


COMPARED = ("p50", "p99", "p99.9")


@dataclass(frozen=True)
class TailChange:
    """One percentile of one point, NEW against BASE."""
    key: tuple
    quantile: str
    base_s: float               # the median over BASE's launches, per operation (as compare's table)
    new_s: float
    ratio: float                # new / base
    ratio_ci_low: float
    ratio_ci_high: float
    verdict: str                # analysis/launches.verdict's: faster | slower | same


def _launch_values(points) -> dict:
    """{key: {quantile: [one value per launch]}} of the points that carry a histogram."""
    out: dict = {}
    for p in points:
        q = quantiles(p.op_histogram) if p.op_histogram else {}
        if q:
            for name in COMPARED:
                out.setdefault(p.key, {}).setdefault(name, []).append(q[name])
    return out


def compare(base_points, new_points, alpha: float = 0.05, threshold: float = 0.02) -> list[TailChange]:
    """Each compared percentile of each point both runs timed op by op: the ratio of the
    launches' medians, and its percentile bootstrap interval resampling each side's
    launches (compare's verdict rule)."""
    from .launches import ratio_ci, verdict
    a, b = _launch_values(base_points), _launch_values(new_points)
    out = []
    for key in [k for k in a if k in b]:
        for name in COMPARED:
            x, y = a[key][name], b[key][name]
            ratio = float(np.median(y) / np.median(x))
            lo = hi = math.nan
            if len(x) > 1 and len(y) > 1:   # compare's bootstrap, each launch one value
                _, lo, hi = ratio_ci([[v] for v in x], [[v] for v in y], confidence=1 - alpha)
            out.append(TailChange(key, name, float(np.median(x)), float(np.median(y)), ratio, lo, hi,
                                  verdict(lo, hi, threshold)))
    return out
