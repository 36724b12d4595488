"""Statistics on fixed arrays: known answers, edge cases and bad input."""

import dataclasses
import math

import numpy as np
import pytest

from fabriclab.analysis import stats
from fabriclab.analysis.stats import Summary, mad, median_ci, median_ci_ranks, outliers, percentile, summarize


# Order-statistic ranks of the 95% CI of the median: Conover (1999) Table A3,
# Le Boudec (2010) Table A.1; n <= 5 has no 95% interval and gives min..max.
@pytest.mark.parametrize("n, ranks", [
    (1, (1, 1)), (2, (1, 2)), (5, (1, 5)), (6, (1, 6)), (9, (2, 8)),
    (10, (2, 9)), (20, (6, 15)), (100, (40, 61)), (1000, (469, 532)),
])
def test_median_ci_ranks_match_tables(n, ranks):
    assert median_ci_ranks(n) == ranks


def test_median_ci_ranks_normal_approximation_beyond_1000():
    # Le Boudec Theorem 2.1: j = floor(n/2 - 0.98 sqrt(n)), k = ceil(n/2 + 1 + 0.98 sqrt(n))
    assert median_ci_ranks(2000) == (956, 1045)
    assert median_ci_ranks(1001) == (469, 533)


def test_median_ci_ranks_other_confidence():
    assert median_ci_ranks(10, 0.99) == (1, 10)
    assert median_ci_ranks(100, 0.99) == (37, 64)  # Le Boudec Table A.1
    assert median_ci_ranks(10, 0.5)[0] > median_ci_ranks(10)[0]


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_confidence_out_of_range(bad):
    with pytest.raises(ValueError):
        median_ci_ranks(10, bad)
    with pytest.raises(ValueError):
        summarize([1.0, 2.0], confidence=bad)


def test_median_ci_order_statistics():
    x = [7.0, 3.0, 10.0, 1.0, 5.0, 2.0, 9.0, 4.0, 8.0, 6.0]  # 1..10 shuffled
    assert median_ci(x) == (2.0, 9.0)


def test_median_ci_small_and_degenerate():
    assert median_ci([4e-6]) == (4e-6, 4e-6)
    assert median_ci([3.0, 1.0]) == (1.0, 3.0)
    assert median_ci([2.5] * 50) == (2.5, 2.5)


def test_median_ci_coverage_simulated():
    # [x_(2), x_(9)] covers the true median with probability 1 - 2 * 11/1024 = 97.85%
    rng = np.random.default_rng(12345)
    true_median = math.log(2.0)  # Exp(1)
    hits = 0
    trials = 4000
    for _ in range(trials):
        lo, hi = median_ci(rng.exponential(1.0, 10))
        hits += lo <= true_median <= hi
    assert 0.97 <= hits / trials <= 0.99


def test_percentile_linear_method():
    x = [4.0, 1.0, 3.0, 2.0]
    assert percentile(x, 50) == 2.5
    assert percentile(x, 25) == 1.75
    assert percentile(x, 0) == 1.0 and percentile(x, 100) == 4.0
    np.testing.assert_allclose(percentile(x, [25, 75]), [1.75, 3.25])
    with pytest.raises(ValueError):
        percentile(x, 101)


def test_mad_known_answer():
    x = [1.0, 1.0, 2.0, 2.0, 4.0, 6.0, 9.0]  # deviations from 2: 1 1 0 0 2 4 7
    assert mad(x) == 1.0
    assert mad(x, scaled=True) == pytest.approx(1.4826)
    assert mad([3.0] * 4) == 0.0


def test_outliers_modified_z():
    x = [10.0, 11.0, 12.0, 12.0, 13.0, 14.0, 35.0]  # median 12, MAD 1
    assert outliers(x).tolist() == [False] * 6 + [True]
    z = stats.modified_z_scores(x)
    assert z[-1] == pytest.approx(23 / 1.4826)
    assert z[0] == pytest.approx(-2 / 1.4826)


def test_outliers_threshold_is_3_5():
    base = [10.0, 11.0, 12.0, 12.0, 13.0, 14.0]  # median 12, MAD 1 with one more sample
    assert not outliers(base + [17.0]).any()  # z = 5 / 1.4826 = 3.37
    assert outliers(base + [17.4]).tolist() == [False] * 6 + [True]  # z = 3.64


def test_outliers_mad_zero_falls_back_to_mean_absolute_deviation():
    # MAD = 0; MeanAD = 3/5, scale 1.253314 * 0.6: z = 1.33 and 2.66, no outliers
    x = [5.0, 5.0, 5.0, 6.0, 7.0]
    assert stats.mad(x) == 0.0
    np.testing.assert_allclose(stats.modified_z_scores(x), [0, 0, 0, 1 / 0.7519884, 2 / 0.7519884])
    assert not outliers(x).any()
    # MAD = 0 and a far sample: MeanAD = 1/6, z = 6 / 1.253314 = 4.79 > 3.5
    y = [5.0] * 5 + [6.0]
    assert outliers(y).tolist() == [False] * 5 + [True]


def test_outliers_all_equal():
    assert not outliers([1e-6] * 20).any()
    assert stats.modified_z_scores([1e-6] * 3).tolist() == [0.0, 0.0, 0.0]


def test_summarize_known_answer():
    s = summarize([float(v) for v in range(10, 0, -1)])  # 1..10
    assert s.n == 10
    assert s.median == 5.5
    assert (s.ci_low, s.ci_high) == (2.0, 9.0)
    assert s.ci_rel == pytest.approx(3.5 / 5.5)
    assert s.p5 == pytest.approx(1.45)
    assert s.p25 == pytest.approx(3.25)
    assert s.p75 == pytest.approx(7.75)
    assert s.p95 == pytest.approx(9.55)
    assert s.p99 == pytest.approx(9.91)
    assert (s.min, s.max, s.mean) == (1.0, 10.0, 5.5)
    assert s.stdev == pytest.approx(3.0276503540974917)
    assert s.mad == 2.5
    assert s.outliers == 0
    assert s.confidence == 0.95


def test_summarize_single_sample():
    s = summarize([3e-6])
    assert (s.n, s.median, s.ci_low, s.ci_high, s.ci_rel) == (1, 3e-6, 3e-6, 3e-6, 0.0)
    assert s.stdev == 0.0 and s.mad == 0.0 and s.outliers == 0
    assert s.p5 == s.p99 == 3e-6


def test_summarize_two_samples():
    s = summarize([1.0, 3.0])
    assert (s.median, s.ci_low, s.ci_high) == (2.0, 1.0, 3.0)
    assert s.ci_rel == 0.5
    assert s.stdev == pytest.approx(math.sqrt(2.0))


def test_summarize_all_equal_and_zero_median():
    s = summarize([2e-6] * 30)
    assert s.ci_rel == 0.0 and s.stdev == 0.0 and s.outliers == 0
    assert s.mean == 2e-6
    assert summarize([0.0, 0.0, 0.0]).ci_rel == 0.0
    assert summarize([0.0, 0.0, 0.0, 1.0, 1.0]).ci_rel == math.inf


def test_summarize_counts_outliers():
    x = [1.0] * 4 + [1.1] * 4 + [0.9] * 4 + [50.0, 60.0]
    assert summarize(x).outliers == 2


def test_summary_round_trip():
    s = summarize([1e-6, 1.2e-6, 0.9e-6, 1.1e-6, 5e-6, 1.05e-6])
    d = s.to_dict()
    assert set(d) == {f.name for f in dataclasses.fields(Summary)}
    assert Summary.from_dict(d) == s
    inf = summarize([0.0, 0.0, 0.0, 1.0, 1.0])
    assert inf.to_dict()["ci_rel"] is None
    assert Summary.from_dict(inf.to_dict()) == inf


def test_summary_from_dict_rejects_missing_or_bad_fields():
    d = summarize([1.0, 2.0, 3.0]).to_dict()
    del d["median"]
    with pytest.raises(ValueError):
        Summary.from_dict(d)
    d = summarize([1.0, 2.0, 3.0]).to_dict()
    d["p95"] = "fast"
    with pytest.raises(ValueError):
        Summary.from_dict(d)


@pytest.mark.parametrize("bad", [
    [], [1.0, float("nan")], [float("inf")], [1.0, -1e-9], [[1.0, 2.0], [3.0, 4.0]], ["a"],
])
def test_bad_samples_raise(bad):
    for fn in (summarize, median_ci, mad, outliers):
        with pytest.raises(ValueError):
            fn(bad)
