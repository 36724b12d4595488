"""Steps in a series of run medians (analysis/changepoints.py): found where they are with
their size and interval, none in unchanged noisy series, nothing below the factor or on
too few runs, the same answer for the same seed, and bad input refused."""

import math
import time

import numpy as np
import pytest

from fabriclab.analysis.changepoints import Change, changes

M = 2e-6  # a run median, seconds per op


def series(seed, n=60, steps=(), cv=0.03, outliers=True):
    """n run medians: lognormal noise of sigma cv, a run in 30 on average 20% slower,
    and each (index, ratio) step multiplying every run from index on."""
    rng = np.random.default_rng(seed)
    x = M * np.exp(rng.normal(0.0, cv, n))
    for i, r in steps:
        x[i:] *= r
    if outliers:
        x[rng.random(n) < 1 / 30] *= 1.2
    return x


def test_a_clean_step_is_found_at_its_index_with_its_ratio_covered():
    for seed in range(5):
        found = changes(series(seed, steps=[(40, 1.2)], outliers=False))
        assert [c.index for c in found] == [40], seed
        c = found[0]
        assert c.ci_low < 1.2 < c.ci_high and c.ci_low <= c.ratio <= c.ci_high
        assert abs(c.ratio - 1.2) < 0.03 and c.p_value < 0.01


def test_a_step_among_outlier_runs_is_found_within_a_run():
    # an outlier run (20% slow) just before a 20% step is as much "after" as "before"
    for seed in range(10):
        found = changes(series(seed, steps=[(40, 1.2)]))
        assert len(found) == 1 and abs(found[0].index - 40) <= 1, seed


def test_a_speed_up_is_a_ratio_below_one():
    (c,) = changes(series(7, steps=[(25, 0.8)]))
    assert c.index == 25 and c.ci_high < 1 / 1.05 and c.ci_low < 0.8 < c.ci_high


def test_unchanged_noisy_series_with_outliers_give_no_change():
    assert all(changes(series(100 + s, cv=0.04)) == [] for s in range(40))


def test_one_burst_of_outlier_runs_is_no_step():
    x = series(3, outliers=False)
    x[30:33] *= 1.5   # three runs slow, then back
    assert changes(x) == []


def test_two_steps_are_both_found():
    found = changes(series(11, steps=[(20, 1.15), (40, 1.3)], outliers=False))
    assert [c.index for c in found] == [20, 40]
    assert found[0].ci_low < 1.15 < found[0].ci_high and found[1].ci_low < 1.3 < found[1].ci_high
    # a step up and back down again
    found = changes(series(12, steps=[(20, 1.3), (40, 1 / 1.3)]))
    assert [c.index for c in found] == [20, 40] and found[0].ratio > 1.2 and found[1].ratio < 1 / 1.2


def test_a_significant_step_below_the_factor_is_not_reported():
    x = series(5, steps=[(30, 1.03)], cv=0.003, outliers=False)
    assert changes(x) == []
    (c,) = changes(x, factor=1.02)   # the same step is significant: a lower factor reports it
    assert c.index == 30 and c.p_value < 0.01


def test_a_small_step_does_not_hide_a_large_one_beside_it():
    # a 3% step (significant, below the factor) and a 12% step: the small one divides the
    # series, and each step's ratio is read between its neighbours, not across the other step
    found = changes(series(9, steps=[(20, 1.03), (40, 1.12)], cv=0.005, outliers=False))
    assert [c.index for c in found] == [40] and abs(found[0].ratio - 1.12) < 0.01
    found = changes(series(9, steps=[(20, 1.03), (40, 1.12)], cv=0.005, outliers=False), factor=1.02)
    assert [c.index for c in found] == [20, 40] and abs(found[0].ratio - 1.03) < 0.01


def test_a_large_step_on_too_few_runs_is_not_reported():
    x = series(4, outliers=False)
    x[57:] *= 1.5          # the last 3 runs: fewer than min_segment
    assert changes(x) == []
    x = series(4, outliers=False)
    x[54:] *= 1.5          # the last 6: enough, and located where it is
    assert [c.index for c in changes(x)] == [54]
    assert changes(x[:8] * np.r_[np.ones(4), np.full(4, 2.0)]) == []   # 8 runs: shorter than 2 min_segment
    assert changes([M, 2 * M, 3 * M]) == []


def test_the_same_seed_gives_the_same_changes_and_launch_medians_widen_the_interval():
    x = series(21, steps=[(35, 1.25)])
    assert changes(x, seed=3) == changes(x, seed=3)
    a, b = changes(x, seed=1)[0], changes(x, seed=2)[0]
    assert a.index == b.index == 35 and a.ratio == b.ratio and (a.ci_low, a.ci_high) != (b.ci_low, b.ci_high)
    rng = np.random.default_rng(0)
    launches = [list(m * np.exp(rng.normal(0.0, 0.05, 5))) for m in x]
    launches[3], launches[4] = [], None   # a run without launch medians stands for itself
    (c,) = changes(x, launch_medians=launches, seed=3)
    (d,) = changes(x, seed=3)
    assert c.index == 35 and c.ratio == a.ratio and c.ci_low < 1.25 < c.ci_high
    assert c.ci_high - c.ci_low > d.ci_high - d.ci_low   # runs, then their launches, resampled
    assert changes(x, launch_medians=launches, seed=3) == [c]
    assert isinstance(c, Change) and isinstance(c.index, int)


@pytest.mark.parametrize("bad, kw", [
    ([1.0] * 10 + [math.nan] + [1.0] * 10, {}),
    ([1.0] * 10 + [0.0] + [1.0] * 10, {}),
    ([1.0] * 10 + [-1.0] + [1.0] * 10, {}),
    ([1.0] * 10 + [math.inf] + [1.0] * 10, {}),
    ([[1.0, 2.0]] * 12, {}),
    (["x"] * 12, {}),
    ([1.0] * 20, {"factor": 1.0}),
    ([1.0] * 20, {"factor": math.nan}),
    ([1.0] * 20, {"alpha": 0}),
    ([1.0] * 20, {"alpha": 1.5}),
    ([1.0] * 20, {"min_segment": 0}),
    ([1.0] * 20, {"min_segment": 2.5}),
    ([1.0] * 20, {"launch_medians": [[1.0]] * 19}),
    ([1.0] * 20, {"launch_medians": [[1.0]] * 19 + [[0.0]]}),
    ([1.0] * 20, {"intervals": [(1.0, 1.0)] * 19}),
    ([1.0] * 20, {"intervals": [("a", 1.0)] * 20}),
    ([1.0] * 20, {"launch_medians": [["a"]] * 20}),
    ([1.0] * 20, {"factor": True}),
])
def test_bad_input_is_refused(bad, kw):
    with pytest.raises(ValueError):
        changes(bad, **kw)


def test_constant_series_and_ties_give_no_change():
    assert changes([M] * 60) == []
    assert changes([M] * 30 + [M * 1.001] * 30, factor=1.05) == []


@pytest.mark.bounds
def test_a_long_series_in_bounded_time():
    """2,000 runs within 5 s of CPU (bench/bench_changepoints.py gives the figure: about 0.12 s)."""
    x = series(31, n=2000, steps=[(700, 1.2), (1400, 0.85)], outliers=False)
    t = time.process_time()   # CPU time: the machine's other work is not ours
    found = changes(x)
    took = time.process_time() - t
    assert [c.index for c in found] == [700, 1400] and abs(found[0].ratio - 1.2) < 0.01
    assert took < 5, took
