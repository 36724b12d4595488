"""The noise analysis on synthetic records (analysis/noise.py): FWQ's figures,
detours joined into episodes, a disturbance's period among random detours,
the threshold's rule before launch, and the record's checks (point_fields.py _noise)."""
import math

import numpy as np
import pytest

from fabriclab.analysis import noise
from fabriclab.cli.main import main
from fabriclab.errors import UsageError
from fabriclab.schema import Point
from fabriclab.schema.fields import RecordError
from fabriclab.suite import noise as facts

SPAN = 2e9                     # 2 s in ns
PERIOD, LENGTH = 20e6, 1e6     # 1 ms every 20 ms


def _train(period=PERIOD, length=LENGTH, skip=0, phase=3.3e6, jitter=20e3, seed=1):
    """A disturbance's detours: every period from `phase`, each `skip`-th missing, jittered."""
    rng = np.random.default_rng(seed)
    k = np.arange(int((SPAN - phase) // period))
    if skip:
        k = k[k % skip != skip - 1]
    return list(phase + k * period + rng.uniform(-jitter, jitter, k.size)), [length] * k.size


def _random(n, lo, hi, seed=2):
    rng = np.random.default_rng(seed)
    return list(rng.uniform(0, SPAN - hi, n)), list(rng.uniform(lo, hi, n))


def _period(starts, lengths, band=(0.5e6, 2.5e6)):
    order = np.argsort(starts)
    return noise.find_period(np.asarray(starts)[order], np.asarray(lengths)[order], SPAN, *band)


def test_fwq_figures_of_a_core():
    f = noise.fwq([100, 100, 100, 150, 100, 300], rank=1, cpu=1)
    assert (f.min_s, f.max_s, f.median_s) == pytest.approx((100e-9, 300e-9, 100e-9))
    assert f.spread == 2.0 and f.slow_share == pytest.approx(2 / 6)
    assert f.lost_share == pytest.approx(250 / 850)
    with pytest.raises(ValueError):
        noise.fwq([])


def test_detours_closer_than_the_merge_gap_are_one_episode():
    s, n = noise.episodes([0, 1_000, 200_000, 210_000], [500, 600, 5_000, 1_000])
    assert list(s) == [0, 200_000] and list(n) == [1_600, 11_000]


def test_a_periodic_disturbance_is_found_among_random_detours():
    s, n = _train()
    rs, rn = _random(150, 0.3e6, 3e6)
    p = _period(s + rs, n + rn)
    assert p.found and math.isclose(p.period_s, PERIOD * 1e-9, rel_tol=0.01) and p.strength > 0.9


def test_random_detours_alone_have_no_period():
    rs, rn = _random(150, 0.3e6, 3e6)
    p = _period(rs, rn)
    assert p is None or not p.found


def test_so_many_detours_that_every_period_holds_one_by_chance_have_no_period():
    # 5,000 episodes in 2 s: a lag's chance of a start near any phase rounds to 1, which
    # once divided by zero in `doctor --machine` on a loaded machine
    rng = np.random.default_rng(0)
    starts = np.sort(rng.uniform(0, SPAN - 1e5, 5000))
    p = noise.find_period(starts, np.full(starts.size, 2e4), SPAN)
    assert p is None or not p.found


def test_the_periods_counted_hold_every_hit():
    """A span of 249.6 periods holds 250 at an early phase: never 'in 250 of 249 periods'."""
    period, span = 4e6, 998.4e6                      # ns: every 4 ms, a record of 998.4 ms
    starts = 0.1e6 + period * np.arange(250)         # at 0.1 ms of each period: the last at 996.1 ms
    p = noise.find_period(starts, np.full(starts.size, 4e4), span)
    assert p.found and (p.hits, p.periods) == (250, 250)
    late = 3.0e6 + period * np.arange(249)           # at 3 ms: 249 fit, as floor(span / period)
    q = noise.find_period(late, np.full(late.size, 4e4), span)
    assert (q.hits, q.periods) == (249, 249)


def test_a_disturbance_missing_every_fifth_period_is_not_taken_for_five_times_its_period():
    s, n = _train(skip=5)
    p = _period(s, n, (0, math.inf))
    assert p.found and math.isclose(p.period_s, PERIOD * 1e-9, rel_tol=0.01)


def test_the_length_band_keeps_a_disturbance_of_another_length_out():
    s, n = _train(length=4e6, period=8e6)
    p = _period(s, n)           # 0.5-2.5 ms: the 4 ms detours are outside
    assert p is None
    assert math.isclose(_period(s, n, (3e6, 5e6)).period_s, 8e-3, rel_tol=0.01)


def test_a_core_record_reads_as_figures():
    s, n = _train()
    r = {"rank": 0, "cpu": 1, "gap_min_ns": 20, "loops": 10**8, "span_ns": int(SPAN), "detours": len(s),
         "start_ns": [int(x) for x in s], "length_ns": [int(x) for x in n]}
    d = noise.detour(r, 9.0, 0.5e6, 2.5e6)
    assert d.cpu == 1 and d.detours == len(s) and d.rate_per_s == pytest.approx(len(s) / 2)
    assert d.cpu_share == pytest.approx(len(s) * (LENGTH - 20) / SPAN) and d.max_s == pytest.approx(1e-3)
    assert d.period.found
    with pytest.raises(ValueError):
        noise.find_period([1, 2, 3], [1, 1, 1], 0)


@pytest.mark.parametrize("text", ["0.5", "0", "-3", "nan", "inf", "abc", "2e6"])
def test_a_threshold_below_1_or_not_a_number_is_refused(text):
    with pytest.raises(UsageError, match="threshold"):
        facts.threshold(text)
    assert facts.threshold("1") == 1 and facts.threshold("9") == 9


@pytest.mark.parametrize("named", ["noise.detour", "noise"])
def test_a_threshold_below_1_ends_in_one_line_before_launch(fake_core, capsys, named):
    rc = main(["run", named, "-p", "threshold=0.5", "--core", fake_core["core"], "--mpiexec",
               fake_core["mpiexec"], "-L", "1", "-q", "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "threshold must be a number from 1" in err and len(err.splitlines()) == 1, err


def _point(rec: dict) -> dict:
    return {"bench": "noise.detour", "size": 0, "bytes_per_op": 0, "samples": [1e-8], "summary": {"median": 1e-8},
            "noise": rec}


def test_the_record_is_checked_when_read():
    good = {"method": "detour", "threshold": 9.0, "ranks": [
        {"rank": 0, "cpu": 0, "gap_min_ns": 20, "loops": 5, "span_ns": 100, "detours": 1, "start_ns": [3],
         "length_ns": [40]}]}
    assert Point.from_dict(_point(good)).to_dict()["noise"] == good
    bad = {**good, "ranks": [{**good["ranks"][0], "length_ns": [40, 50]}]}
    with pytest.raises(RecordError, match="one entry per detour"):
        Point.from_dict(_point(bad))
    with pytest.raises(RecordError, match="method"):
        Point.from_dict(_point({**good, "method": "ftq"}))


def test_the_view_sets_each_core_s_noise_beside_a_small_collective():
    import docs
    import fakenoise
    from fabriclab.report import figures, noise_views
    params = {"threshold": "9", "record_ms": "1000", "work": "65536", "quanta": "300"}
    pts = [Point.from_dict({**_point(fakenoise.record(b, 2, params)), "bench": b}) for b in ("noise.detour",
                                                                                              "noise.fwq")]
    pts.append(Point.from_dict({"bench": "coll.barrier", "size": 0, "bytes_per_op": 0, "summary": {"median": 5e-6},
                                "samples": [5e-6] * 99 + [1.2e-3]}))
    figs = {f.id: dict(f.bars) for f in noise_views.view([figures.RunView("r", docs.of(pts))])}
    lost, coll = figs["noise-lost"], figs["noise-collective"]
    assert lost["cpu 0 detours"] > 5 > lost["cpu 1 detours"] and lost["cpu 0 FWQ"] > lost["cpu 1 FWQ"]
    assert coll["barrier p50"] == pytest.approx(5) and coll["detour longest"] == pytest.approx(1000)
    assert "noise" in {v.key for v in figures.VIEWS}


def test_plot_of_size_0_only_says_the_log_axis_leaves_it_out(tmp_path, capsys):
    import docs
    import fakenoise
    params = {"threshold": "9", "record_ms": "1000", "work": "65536", "quanta": "300"}
    pts = [Point.from_dict({**_point(fakenoise.record(b, 2, params)), "bench": b}) for b in ("noise.detour",
                                                                                              "noise.fwq")]
    run = tmp_path / "n.json"
    docs.of(pts).write(run)
    assert main(["plot", str(run), "-o", str(tmp_path / "n.svg")]) == 2
    err = capsys.readouterr().err
    assert "nothing to draw on a log axis" in err and "--xscale linear draws them" in err
    assert main(["plot", str(run), "-o", str(tmp_path / "n.svg"), "--xscale", "linear"]) == 0
    empty = tmp_path / "e.json"
    docs.of([]).write(empty)
    capsys.readouterr()
    assert main(["plot", str(empty), "-o", str(tmp_path / "e.svg")]) == 2
    assert f"nothing to draw: {empty} holds no measured point" in capsys.readouterr().err
