"""Steps in one figure's history: where a series of run medians moved, by how much, and how sure.

Input: one figure's run medians (time per operation, positive) in time order.
The method works on their logarithms, so a step is a ratio and a slowdown and
the speed-up that undoes it weigh the same.

Binary segmentation (Scott & Knott 1974; Vostrikova 1981): in a segment, every
split k (the first k runs against the rest) is scored by the standardised
Mann-Whitney statistic of the two sides,

    z_k = (S_k - k (n + 1) / 2) / sqrt(k (n - k) (n + 1) / 12),

S_k the sum of the first k runs' ranks within the segment (Lehmann 1975;
the ties' correction scales every z_k alike, so it changes neither the split
nor the test and is left out). The split with the largest |z_k| is taken.
Why Mann-Whitney rather than the difference of the two sides' medians: ranks
make it blind to how far an outlier run lies (one run in 30 at 20% slower
moves it by one rank), every split of a segment comes from one cumulative sum
of ranks (O(n)), and so do the permuted ones, which keeps the test exact and
cheap; the step's size is then read from the medians, below.

A split is significant when a permutation test of that maximum gives
p < alpha: the runs of the segment are shuffled PERMUTATIONS times and the
maximum of |z_k| over all splits is recomputed on each, so the choice among
n - 1 candidate splits is paid for (p = (1 + #{max* >= max}) / (1 + B);
Good 2005; Pettitt 1979 for the rank statistic of one change). Every
split of the segment is a candidate, not only those leaving min_segment runs a
side, so that a step near either end is located where it is rather than pulled
inward; a maximum that leaves fewer than min_segment runs on a side stops the
search in that segment (too few runs to tell a step from a burst).

Where exactly: rank sums place a step that cuts a segment unevenly a run or
two off, so the step's run is the split within LOCATE runs of the rank
statistic's with the least absolute deviations of each side from its own
median (_located). A significant split divides the segment and both sides are
searched again (recursion ends at segments shorter than 2 min_segment). Then
each split is moved the same way between its two neighbouring splits until
none moves (_refined), and tested again there: the first split of a segment
with three levels sees all of them, its final neighbours one step.

A split is reported as a Change only when, between its neighbouring splits,
it is still significant and its size clears the factor: the ratio r of the two
sides' medians (after / before, above 1 slower) with r > factor or
r < 1 / factor (the factor's bound taken symmetrically in logs, as the
verdicts of analysis/history.py take it). A significant step below the factor
still divides the segment, so that it cannot hide a larger step beside it.

Each reported ratio has a 95% percentile bootstrap interval (Efron &
Tibshirani 1993 §13.3) drawn from the two sides of its split (between its
neighbouring splits) independently:
each side's runs resampled with replacement, and with `launch_medians` given,
each drawn run's launches resampled in turn (the two-level scheme of
analysis/launches.py, one level up: runs, then launches). Everything is
seeded by `seed` (numpy's Generator), so the same series gives the same
changes.

References
- A. J. Scott and M. Knott, A cluster analysis method for grouping means in
  the analysis of variance, Biometrics 30, 1974 (binary segmentation).
- L. Ju. Vostrikova, Detecting "disorder" in multidimensional random
  processes, Soviet Mathematics Doklady 24, 1981.
- A. N. Pettitt, A non-parametric approach to the change-point problem,
  Applied Statistics 28(2), 1979.
- E. L. Lehmann, Nonparametrics: Statistical Methods Based on Ranks,
  Holden-Day 1975 (the Wilcoxon-Mann-Whitney statistic's mean and variance).
- P. Good, Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed.,
  Springer 2005.
- B. Efron and R. J. Tibshirani, An Introduction to the Bootstrap, Chapman &
  Hall 1993.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .launches import _percentile_interval, _resampled_medians

PERMUTATIONS = 499   # p resolution 1/500: p < 0.01 needs at most 3 shuffles as extreme
RESAMPLES = 999      # bootstrap draws of each change's ratio
CONFIDENCE = 0.95
LOCATE = 10          # runs either side of the rank statistic's split searched for the step's run


@dataclass(frozen=True)
class Change:
    index: int        # the first run after the step (0-based, in the series given)
    ratio: float      # median after / median before; above 1: slower
    ci_low: float
    ci_high: float
    p_value: float    # the permutation test of the segment's largest |z_k|


def changes(medians: Sequence[float], intervals=None, launch_medians=None, factor: float = 1.05,
            alpha: float = 0.01, min_segment: int = 5, seed: int = 0) -> list[Change]:
    """The steps of a series of run medians (time order), as Changes sorted by index.

    intervals: each run's own (ci_low, ci_high), checked for shape; the method
    does not use them (the scatter between run medians already holds each
    run's own estimation noise). launch_medians: each run's launch medians
    (an empty list or None for a run without them); given, the ratio intervals
    resample the runs and then their launches. A series shorter than
    2 min_segment has no step that could be reported: []. ValueError for
    NaN, infinite or non-positive medians and for settings out of range."""
    y = _validated(medians, intervals, launch_medians, factor, alpha, min_segment)
    rng = np.random.default_rng(seed)
    x = np.asarray(medians, dtype=float)
    runs = None if launch_medians is None else [np.sort(np.asarray(m if m is not None and len(m) else [x[i]],
                                                                   dtype=float)) for i, m in enumerate(launch_medians)]
    cuts = _refined(y, _segmented(y, alpha, min_segment, rng), min_segment)
    found = []
    for i, cut in enumerate(cuts):
        lo, hi = ([0] + cuts)[i], (cuts + [y.size])[i + 1]
        _, p = _best_split(y[lo:hi], rng)
        ratio = float(np.median(x[cut:hi]) / np.median(x[lo:cut]))
        if p < alpha and (ratio > factor or ratio < 1.0 / factor):
            found.append(Change(cut, ratio, *_ratio_interval(x, runs, lo, cut, hi, rng), p))
    return found


def _segmented(y: np.ndarray, alpha: float, min_segment: int, rng: np.random.Generator) -> list[int]:
    """Binary segmentation: the significant splits of y (module docstring), sorted."""
    cuts = []
    todo = [(0, y.size)]
    while todo:  # segments in a fixed order (a stack), so the draws are reproducible
        lo, hi = todo.pop()
        if hi - lo < 2 * min_segment:
            continue
        k, p = _best_split(y[lo:hi], rng)
        k = _located(y[lo:hi], k)
        if k < min_segment or hi - lo - k < min_segment or p >= alpha:
            continue
        cuts.append(lo + k)
        todo += [(lo + k, hi), (lo, lo + k)]
    return sorted(cuts)


def _located(y: np.ndarray, k0: int) -> int:
    """The split within LOCATE runs of k0 with the least absolute deviations of each side
    from its median (sum |y_i - median| of both sides, the L1 cost).

    Rank sums misplace a step by a run or two when it cuts a segment unevenly:
    a run just before the step that ranks above the segment's middle rank adds
    to |z_k| when moved to the other side, though it belongs to the level
    before. The deviations from each side's own median do not (and, like the
    medians, ignore how far an outlier run lies)."""
    n = y.size
    ks = np.arange(max(1, k0 - LOCATE), min(n - 1, k0 + LOCATE) + 1)
    left = np.arange(n) < ks[:, None]          # one row per candidate split
    row = np.arange(ks.size)
    # each side's values first in its row's sort, the other side's pushed past them as inf
    a, b = np.sort(np.where(left, y, np.inf), axis=1), np.sort(np.where(left, np.inf, y), axis=1)
    med_a = (a[row, (ks - 1) // 2] + a[row, ks // 2]) / 2
    med_b = (b[row, (n - ks - 1) // 2] + b[row, (n - ks) // 2]) / 2
    cost = np.abs(y - np.where(left, med_a[:, None], med_b[:, None])).sum(axis=1)
    return int(ks[np.argmin(cost)])


def _refined(y: np.ndarray, cuts: list[int], min_segment: int, passes: int = 3) -> list[int]:
    """Each split moved to the largest |z_k| between its neighbours (then _located), until none moves.

    A segment's first split sees the segments beyond its neighbours too, and
    with three levels the rank statistic can peak a run or two past the true
    step; between its final neighbours each split sees one step."""
    cuts = list(cuts)
    for _ in range(passes):
        moved = False
        for i, cut in enumerate(cuts):
            lo, hi = ([0] + cuts)[i], (cuts + [y.size])[i + 1]
            k, _ = _max_z(_ranks(y[lo:hi]))
            k = _located(y[lo:hi], int(k))
            if min_segment <= k <= hi - lo - min_segment and lo + int(k) != cut:
                cuts[i], moved = lo + int(k), True
        if not moved:
            break
    return cuts


def _validated(medians, intervals, launch_medians, factor, alpha, min_segment) -> np.ndarray:
    """The series' logarithms, after checking every argument."""
    try:
        x = np.asarray(medians, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("medians must be numbers") from None
    if x.ndim != 1:
        raise ValueError(f"medians must be a flat sequence, got shape {x.shape}")
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise ValueError("medians must be finite and positive (times per operation)")
    if not (_real(factor) and math.isfinite(factor) and factor > 1):
        raise ValueError(f"factor must be a number above 1, got {factor!r}")
    if not (_real(alpha) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(min_segment, bool) or not isinstance(min_segment, int) or min_segment < 1:
        raise ValueError(f"min_segment must be a positive integer, got {min_segment!r}")
    if intervals is not None:
        try:
            iv = np.asarray(intervals, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("intervals must be one (ci_low, ci_high) pair of numbers per run") from None
        if iv.shape != (x.size, 2):
            raise ValueError(f"intervals must be one (ci_low, ci_high) per run, got shape {iv.shape}")
    if launch_medians is not None:
        if len(launch_medians) != x.size:
            raise ValueError(f"launch_medians must be one list per run: {len(launch_medians)} for {x.size} runs")
        for i, m in enumerate(launch_medians):
            try:
                a = np.asarray([] if m is None else m, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"run {i}: launch medians must be numbers") from None
            if a.ndim != 1 or not np.all(np.isfinite(a)) or np.any(a <= 0):
                raise ValueError(f"run {i}: launch medians must be finite and positive")
    return np.log(x)


def _real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _ranks(y: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given their mean rank."""
    order = np.argsort(y, kind="stable")
    s = y[order]
    first = np.r_[True, s[1:] != s[:-1]]
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], s.size]
    r = np.empty(y.size)
    r[order] = ((starts + ends + 1) / 2.0)[group]
    return r


def _max_z(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(argmax k, max |z_k|) over the splits k = 1..n-1, per row of ranks (module docstring)."""
    n = ranks.shape[-1]
    k = np.arange(1, n)
    s = np.cumsum(ranks, axis=-1)[..., :-1]
    z = np.abs(s - k * (n + 1) / 2.0) / np.sqrt(k * (n - k) * (n + 1) / 12.0)
    return np.argmax(z, axis=-1) + 1, np.max(z, axis=-1)


def _best_split(y: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
    """(k, p): the split of the segment with the largest |z_k| and the permutation p-value of that maximum."""
    r = _ranks(y)
    k, top = _max_z(r)
    shuffled = rng.permuted(np.broadcast_to(r, (PERMUTATIONS, r.size)), axis=1)
    _, tops = _max_z(shuffled)
    # a shuffle as extreme counts; the relative slack keeps equal maxima (ties of
    # floating-point sums in another order) from reading as less extreme
    beyond = int(np.count_nonzero(tops >= top * (1 - 1e-12)))
    return int(k), (1 + beyond) / (1 + PERMUTATIONS)


def _side_medians(x: np.ndarray, runs, rng: np.random.Generator) -> np.ndarray:
    """RESAMPLES bootstrap medians of one side's runs x (and, given, their sorted launch medians)."""
    if runs is None:
        return _resampled_medians(np.sort(x), RESAMPLES, rng)
    k = x.size
    drawn = rng.integers(0, k, RESAMPLES * k)
    order = np.argsort(drawn, kind="stable")
    counts = np.bincount(drawn, minlength=k)
    values = np.empty(drawn.size)
    pos = 0
    for j, c in enumerate(counts):  # each drawn run: the median of its launches, resampled
        if c:
            values[order[pos:pos + c]] = _resampled_medians(runs[j], int(c), rng)
            pos += c
    return np.median(values.reshape(RESAMPLES, k), axis=1)


def _ratio_interval(x: np.ndarray, runs, lo: int, cut: int, hi: int, rng: np.random.Generator) -> tuple[float, float]:
    before = _side_medians(x[lo:cut], None if runs is None else runs[lo:cut], rng)
    after = _side_medians(x[cut:hi], None if runs is None else runs[cut:hi], rng)
    return _percentile_interval(after / before, CONFIDENCE)
