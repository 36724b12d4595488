"""Single-op percentiles (`run --per-op`, analysis/tails.py): read from the core's log buckets
within half a bucket of the op's time, summed over the ranks, medians over launches with a
bootstrap interval, the timer's share flagged; the histogram checked whole where a document
is read; bad --per-op values refused in one line."""
import math

import numpy as np
import pytest

from fabriclab.analysis import tails
from fabriclab.cli import main
from fabriclab.schema.records import Point, RecordError, Summary

BASE, ERR, NB = 1e-9, 0.01, 2800


def _hist(times_by_rank: list, cost: float = 30e-9) -> dict:
    """The core's histogram of these ops (csrc/per_op.c's buckets), per rank."""
    ranks = []
    for q, ts in enumerate(times_by_rank):
        idx = np.minimum(np.floor(np.log(np.asarray(ts) / BASE) / np.log1p(ERR)).astype(int), NB - 1)
        ids, counts = np.unique(idx, return_counts=True)
        ranks.append({"rank": q, "n": len(ts), "min_s": float(min(ts)), "max_s": float(max(ts)),
                      "buckets": [[int(i), int(c)] for i, c in zip(ids, counts)]})
    return {"base_s": BASE, "error": ERR, "buckets": NB, "timer_cost_s": cost, "ranks": ranks}


def test_percentiles_are_within_half_a_bucket_of_the_ops():
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(math.log(2e-6), 0.3, 40000), rng.lognormal(math.log(3e-6), 0.3, 60000)
    q = tails.quantiles(_hist([a, b]))
    both = np.concatenate([a, b])
    assert q["n"] == 100000 and q["max"] == both.max()
    for name, p in tails.QUANTILES:
        assert q[name] == pytest.approx(np.quantile(both, p), rel=0.006), name


def _point(launch: int, hist: dict, legs: int = 2) -> Point:
    return Point(bench="message.pingpong", size=8, bytes_per_op=8, summary=Summary(median=4e-6), launch=launch,
                 legs_per_op=legs, op_histogram=hist)


def test_launches_give_a_median_an_interval_and_the_largest_op():
    rng = np.random.default_rng(2)
    pts = [_point(k, _hist([rng.normal(4e-6 * (1 + 0.02 * k), 1e-7, 5000)])) for k in range(5)]
    (t,) = tails.tails(pts)
    m, lo, hi = t.estimates["p50"]
    assert m == pytest.approx(4.16e-6 / 2, rel=0.01)                  # per transfer: a ping-pong's half op
    assert lo < m < hi and t.launches == 5 and t.ops == 25000
    assert t.estimates["max"][0] == max(max(r["max_s"] for r in p.op_histogram["ranks"]) for p in pts) / 2
    assert t.timer_share == pytest.approx(30e-9 / 4.16e-6, rel=0.02) and not t.flagged


def test_a_timer_above_a_twentieth_of_the_op_is_flagged():
    (t,) = tails.tails([_point(0, _hist([np.full(100, 400e-9)], cost=30e-9), legs=1)])
    assert t.flagged and math.isnan(t.estimates["p50"][1])            # one launch: no interval


def test_points_without_a_histogram_have_no_tails():
    assert tails.tails([_point(0, None)]) == []


def _record(hist) -> dict:
    return {"bench": "message.pingpong", "size": 8, "bytes_per_op": 8, "summary": {"median": 1e-6},
            "samples": [1e-6], "op_histogram": hist}


@pytest.mark.parametrize("bad", [
    {"base_s": 0, "error": 0.01, "buckets": 10, "ranks": []},
    {"base_s": 1e-9, "error": 0.01, "buckets": 10, "ranks": [{"rank": 0, "n": 1, "min_s": 1, "max_s": 1,
                                                              "buckets": [[10, 1]]}]},
    {"base_s": 1e-9, "error": 0.01, "buckets": 10, "ranks": [{"rank": 0, "n": 1, "min_s": 1, "max_s": 1,
                                                              "buckets": [[1, -1]]}]},
    {"base_s": 1e-9, "error": 0.01, "buckets": 10 ** 9, "ranks": []},
    "histogram",
])
def test_a_wrong_histogram_is_refused_when_read(bad):
    with pytest.raises(RecordError, match="op_histogram"):
        Point.from_dict(_record(bad))


def test_a_histogram_survives_a_round_trip():
    h = _hist([[1e-6, 2e-6, 2e-6]])
    assert Point.from_dict(Point.from_dict(_record(h)).to_dict()).op_histogram == h


@pytest.mark.parametrize("value", ["-1", "1e9", "nan"])
def test_bad_per_op_is_one_line(value, capsys):
    assert main(["run", "message.pingpong", "--per-op", value, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "--per-op" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_compare_reads_each_percentile_over_both_runs_launches():
    rng = np.random.default_rng(3)
    base = [_point(k, _hist([rng.normal(4e-6, 5e-8, 4000)])) for k in range(5)]
    slow = [_point(k, _hist([rng.normal(6e-6, 5e-8, 4000)])) for k in range(5)]
    got = {c.quantile: c for c in tails.compare(base, slow)}
    assert set(got) == set(tails.COMPARED)
    p50 = got["p50"]
    assert p50.ratio == pytest.approx(1.5, rel=0.02) and p50.ratio_ci_low > 1.4 and p50.verdict == "slower"
    assert p50.base_s == pytest.approx(4e-6, rel=0.01)                 # per operation, as compare's table
    assert [c.verdict for c in tails.compare(base, base)] == ["same"] * 3
    assert tails.compare(base, [_point(0, None)]) == []


def test_the_report_draws_the_fraction_of_ops_slower_than_each_time():
    from types import SimpleNamespace
    from fabriclab.report import tail_views
    ts = np.linspace(1e-6, 2e-6, 1000)
    run = SimpleNamespace(name="r", doc=SimpleNamespace(points=[_point(0, _hist([ts]), legs=1),
                                                               _point(1, _hist([ts]), legs=1)]))
    (fig,) = tail_views.distribution([run], "message.pingpong")
    (s,) = fig.series
    assert s.y == sorted(s.y, reverse=True) and 0 < s.y[-1] < 0.03 and s.y[0] > 0.9    # 1% buckets: ~1/70 each
    assert s.x[0] == pytest.approx(1.0, rel=0.011) and s.x[-1] < 2.0     # microseconds, bucket upper edges
    assert tail_views.distribution([run], "coll.allreduce") == []


def test_a_windowed_kernels_timings_say_so_and_share_the_timer_over_the_window():
    h = {**_hist([np.full(100, 1e-6)], cost=32e-9), "ops_per_timing": 64}
    (t,) = tails.tails([_point(0, h, legs=1)])
    assert t.ops_per_timing == 64 and t.timer_share == pytest.approx(32e-9 / (1e-6 * 64), rel=0.02)
