"""Warnings at the level they belong to: the run's, or one point's.

A condition that most points of a run share (launches that disagree,
outlier samples, intervals wider than the target) describes the machine,
not any point: it is stated once, as a run-level finding with its measured
size. A point keeps only what is particular to it: its data arrived
corrupted, its interval is much wider than the run's others, its median is
off the curve its neighbours in size draw, it stopped short where more
samples would have narrowed it, or the timer biased every one of its launches.
docs/statistics.md ("Warnings at the right level") gives the rules and why.

Pure Python over merged points (schema.records.MergedPoint): a stored
document is classified without numpy."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Optional

from . import diagnostics as dg

# "Most": more than half of the points a condition could apply to. A
# condition on a minority says where to look; one on a majority says the
# machine is like that, and naming every point would hide the few that differ.
MOST = 0.5
# Per-launch conditions that measure how noisy the machine is; counted over
# the run, never named point by point.
RUN_KINDS = (dg.UNSTABLE_ACROSS_LAUNCHES, dg.OUTLIERS, dg.UNSTABLE_POINT, dg.TIME_CAP, dg.TOO_FEW_SAMPLES,
             dg.TIMER_OVERHEAD, dg.TIMER_RESOLUTION)
# Of those, the ones that are evidence of noise. A launch stopped at the
# --point-time cap, or one with few samples, is the cap ending a point whose
# ops are long: it says nothing of the machine's noise, nor does a wide
# interval on a point that stopped at the cap. The timer's cost is a
# property of the clock and the op's length.
NOISE_KINDS = (dg.UNSTABLE_ACROSS_LAUNCHES, dg.OUTLIERS, dg.UNSTABLE_POINT)
CAP_KINDS = (dg.TIME_CAP, dg.TOO_FEW_SAMPLES)
TARGET_CI = 0.025       # the sampling's default --target-ci, when a document does not say its own
# Per-launch conditions a point keeps when every one of its launches had them
# and most points of the run did not: the core sizes its batches for a timer
# cost under 1% of a sample, so a bias of the point's own shows in every
# launch, while one that comes and goes follows the machine's load.
POINT_FROM_LAUNCHES = (dg.TIMER_OVERHEAD, dg.TIMER_RESOLUTION)
# Conditions of the point itself that it keeps from any launch: its data
# arrived wrong, or its overlap's compute loop ran off its calibrated speed.
POINT_ANY_LAUNCH = (dg.VALIDATION_FAILED, dg.OVERLAP_COMPUTE)
# "Much wider": above the run's 90th percentile of relative interval
# widths, more than WIDE_FACTOR times their median, and an outlier of their
# logarithms by the modified z-score > 3.5 (Iglewicz and Hoaglin 1993, the
# rule stats.outliers applies to samples). Widths are spread over decades on
# a noisy machine, so the z-score is taken on logarithms: it then scales with
# the run's own spread of widths, and a noisy run flags only its extremes.
WIDE_QUANTILE = 0.9
WIDE_FACTOR = 2.0
WIDE_Z = 3.5
MIN_POINTS = 5          # fewer points make no distribution of widths to stand out from


def _quantile(xs: list, q: float) -> float:
    """The q-quantile of xs by the nearest-rank rule (no interpolation)."""
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def _codes(m) -> Counter:
    """How many of a point's launches had each warning kind."""
    return Counter(d["code"] for d in m.diagnostics)


def _capped(m) -> bool:
    """Every launch of the point stopped at the --point-time cap."""
    return bool(m.launches) and all(x.stop == "time_cap" for x in m.launches)


def _applies(m, code: str) -> bool:
    if code == dg.UNSTABLE_ACROSS_LAUNCHES:
        return len(m.launches) > 1
    return code != dg.UNSTABLE_POINT or not _capped(m)   # few samples, not noise, widen a capped interval


def conditions(points: list) -> dict:
    """code -> [points that had it in any launch, points it could apply to]."""
    out: dict = {}
    for m in points:
        codes = _codes(m)
        for code in RUN_KINDS:
            if _applies(m, code):
                c = out.setdefault(code, [0, 0])
                c[0] += code in codes
                c[1] += 1
    return {k: v for k, v in out.items() if v[0]}


def noise(points: list, outlier_share: Optional[float], steal: list) -> dict:
    """The run's measured noise: the between-launch spread of its points
    (launch medians' max/min) at the median and 90th percentile, the share
    of samples that are outliers, and the steal time over its launches."""
    ratios = [m.spread.max_min_ratio for m in points if len(m.launches) > 1
              and m.spread.max_min_ratio is not None and math.isfinite(m.spread.max_min_ratio)]
    stolen = [s for s in steal if s > 0]
    return {"points": len(points),
            "launch_ratio_median": statistics.median(ratios) if ratios else None,
            "launch_ratio_p90": _quantile(ratios, 0.9) if ratios else None,
            "outlier_share": outlier_share,
            "launches": len(steal), "steal_launches": len(stolen), "steal_max": max(stolen, default=0.0)}


def _run_findings(held: dict, size: dict, capped: tuple) -> list:
    """The run-level findings: one about a noisy machine (the conditions of
    noise most points share, with the run's measured noise), steal time if
    any, one about the --point-time cap where most points reached it
    (capped: the points that did and how many of them met the target
    interval anyway), and one per timer condition most points share."""
    most = {k: v for k, v in held.items() if v[0] > MOST * v[1]}
    noise = {k: v for k, v in most.items() if k in NOISE_KINDS}
    out = []
    if noise or size["steal_launches"] > MOST * max(size["launches"], 1):
        out.append(dg.noisy_machine(noise, size).to_dict())
    elif size["steal_launches"]:
        out.append(dg.steal_launches(size["steal_launches"], size["launches"], size["steal_max"]).to_dict())
    cap = {k: v for k, v in most.items() if k in CAP_KINDS}
    if cap:
        out.append(dg.capped_run(cap, *capped).to_dict())
    out += [dg.run_condition(k, *v).to_dict() for k, v in most.items() if k not in NOISE_KINDS + CAP_KINDS]
    return out


def classify(points: list, outlier_share: Optional[float] = None, steal: Optional[list] = None,
             target_ci: float = TARGET_CI) -> dict:
    """The run's findings; each measured point's diagnostics replaced by its
    point-level warnings (their `launches`: how many of its launches had it).

    points: merged points whose diagnostics are every launch's (merge.merge);
    outlier_share: outlier samples over all samples of the run's launches;
    steal: the steal fraction of every launch; target_ci: the run's --target-ci."""
    measured = [m for m in points if not m.is_imported]
    held = conditions(measured)
    size = noise(measured, outlier_share, steal or [])
    run_wide = {k for k, v in held.items() if v[0] > MOST * v[1]}
    flags = {id(m): _from_launches(m, run_wide) for m in measured}
    typical = _median_width(measured)
    for m in _wide(measured):
        flags[id(m)].append(dg.wide_interval(m.summary.ci_rel, typical))
    for m, lo, hi in _off_trend(measured):
        flags[id(m)].append(dg.off_trend(m.summary.median, lo, hi))
    if dg.TIME_CAP not in run_wide:
        for m in measured:
            if _not_converged(m, typical):
                flags[id(m)].append(dg.not_converged(sum(x.stop != "converged" for x in m.launches),
                                                     len(m.launches), m.spread.within_rel, m.spread.between_rel))
    for m in measured:
        where = {"bench": m.bench, "size": m.size, "stride": m.stride}
        m.diagnostics = [d if isinstance(d, dict) else {**d.to_dict(), **where} for d in flags[id(m)]]
    capped = [m for m in measured if _capped(m)]
    # narrow: an interval within the target from enough samples to have one (one sample's is [x, x])
    narrow = sum(m.summary.ci_rel is not None and m.summary.ci_rel <= target_ci
                 and (m.summary.n or 0) >= dg.MIN_SAMPLES for m in capped)
    return {"noise": size, "conditions": held, "run": _run_findings(held, size, (len(capped), narrow, target_ci)),
            "flagged": sum(bool(m.diagnostics) for m in measured)}


def _from_launches(m, run_wide: set) -> list:
    """A point's own warnings among its launches': a failed validation or an
    overlap's compute loop off its speed in any launch; a timer bias in every
    one of its launches, unless the run shares it."""
    codes, n = _codes(m), max(len(m.launches), 1)
    out, seen = [], set()
    for d in m.diagnostics:
        code = d["code"]
        keep = code in POINT_ANY_LAUNCH or (
            code in POINT_FROM_LAUNCHES and code not in run_wide and codes[code] >= n)
        if keep and code not in seen:
            seen.add(code)
            out.append({**d, "launches": codes[code]})
    return out


def _width(m) -> Optional[float]:
    c = m.summary.ci_rel
    return c if c is not None and math.isfinite(c) and c > 0 else None


def _median_width(points: list) -> float:
    ws = [w for w in map(_width, points) if w is not None]
    return statistics.median(ws) if ws else math.inf


def _wide(points: list) -> list:
    """Points whose interval is much wider than the run's (WIDE_* above)."""
    ws = [(m, w) for m in points if (w := _width(m)) is not None]
    if len(ws) < MIN_POINTS:
        return []
    logs = [math.log(w) for _, w in ws]
    mid = statistics.median(logs)
    mad = statistics.median(abs(x - mid) for x in logs)
    top, typical = _quantile([w for _, w in ws], WIDE_QUANTILE), math.exp(mid)
    out = []
    for (m, w), x in zip(ws, logs):
        z = 0.6745 * (x - mid) / mad if mad > 0 else (math.inf if x > mid else 0.0)
        if w > top and w > WIDE_FACTOR * typical and z > WIDE_Z:
            out.append(m)
    return out


def sweeps(points: list) -> list:
    """The run's size sweeps: points of one benchmark variant on every other
    axis (stride, connections, active ranks, cache state), in size order."""
    by: dict = {}
    for m in points:
        by.setdefault((m.bench, m.variant, m.stride, m.conns, m.active, m.cache), []).append(m)
    return [sorted(g, key=lambda m: m.size) for g in by.values()]


def _off_trend(points: list) -> list:
    """(point, lo, hi): points whose interval lies wholly above both size
    neighbours' intervals or wholly below both. The time of an op does not
    fall as its size grows, so a point outside its neighbours' envelope is a
    spike or a dip; a step (a protocol switch, a cache edge) lies between its
    neighbours and is no such point. The farthest one is taken first and set
    aside, so that a spike does not make its neighbour look like a dip.
    lo, hi: the neighbours' envelope."""
    out = []
    for g in sweeps(points):
        g = [m for m in g if None not in (m.summary.ci_low, m.summary.ci_high)]
        while (found := _farthest(g)) is not None:
            i, lo, hi = found
            out.append((g.pop(i), lo, hi))
    return out


def _farthest(g: list):
    """(index, lo, hi) of the interior point of a sweep farthest outside its
    neighbours' envelope (relative to the envelope), or None."""
    best, far = None, 0.0
    for i in range(1, len(g) - 1):
        s, a, b = g[i].summary, g[i - 1].summary, g[i + 1].summary
        lo, hi = min(a.ci_low, b.ci_low), max(a.ci_high, b.ci_high)
        gap = (s.ci_low - hi) / max(hi, 1e-300) if s.ci_low > hi else (lo - s.ci_high) / lo if s.ci_high < lo else 0.0
        if gap > far:
            best, far = (i, lo, hi), gap
    return best


def _not_converged(m, typical: float) -> bool:
    """Most launches stopped before their interval reached the target, the
    point's interval is more than WIDE_FACTOR times the run's median, and its samples, not
    the launch-to-launch spread, limit it (within_rel > between_rel): more
    time per point would narrow it, more launches would not."""
    stopped = sum(x.stop != "converged" for x in m.launches)
    w, within, between = _width(m), m.spread.within_rel, m.spread.between_rel
    return (stopped > MOST * len(m.launches) and w is not None and w > WIDE_FACTOR * typical
            and within is not None and between is not None and within > between)
