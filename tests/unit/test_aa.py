"""The A/A reading (analysis/aa.py): false-verdict rate, between-launch
spread and the threshold that would have called every point the same."""

import math

from fabriclab.analysis import aa
from fabriclab.analysis.compare import Change
from fabriclab.measure.runner import derive

import docs  # noqa: E402  (tests/support)


def _change(size, verdict, lo, hi):
    return Change("message.pingpong", "", size, 1, 1, None, 1e-6, 1e-6, (lo + hi) / 2, lo, hi, 5, 5, verdict)


def _doc(medians_by_size):
    recs = []
    for size, medians in medians_by_size.items():
        for k, m in enumerate(medians):
            recs.append(derive({"bench": "message.pingpong", "size": size, "stride": 1, "bytes_per_op": size,
                                "legs_per_op": 2, "samples": [m] * 11, "launch": k}))
    return docs.of(recs)


def test_rate_counts_only_compared_points():
    changes = [_change(0, "same", 0.97, 1.04), _change(8, "slower", 1.05, 1.2), _change(64, "same", 0.9, 1.01),
               _change(128, "faster", 0.5, 0.9), _change(256, "only-in-base", math.nan, math.nan)]
    r = aa.read(changes, [])
    assert r.points == 4 and r.false_rate == 0.5
    assert r.verdicts == {"same": 2, "slower": 1, "faster": 1, "only-in-base": 1}
    # 'slower' needs lo > 1 + t: t = 0.05 makes it same; 'faster' needs hi < 1 - t: t = 0.1 does
    assert math.isclose(r.threshold_all_same, 0.1)
    assert math.isnan(r.spread_median)


def test_all_same_needs_no_threshold():
    r = aa.read([_change(0, "same", 0.99, 1.01)], [])
    assert r.false_rate == 0 and r.threshold_all_same == 0


def test_spread_is_max_over_min_of_launch_medians():
    doc = _doc({0: [1e-6, 1.5e-6, 1.2e-6], 8: [2e-6, 2e-6], 16: [3e-6]})
    assert sorted(aa.spreads(doc)) == [1.0, 1.5]
    r = aa.read([_change(0, "same", 0.9, 1.1)], [doc, doc])
    assert r.spread_median == 1.25 and r.spread_p90 == 1.5
