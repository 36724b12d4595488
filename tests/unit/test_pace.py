"""The run's time budget (measure/pace.py): each launch's point-time cap, lowered when the launches fall behind."""
import argparse
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.cli.run import budget
from fabriclab import schema
from fabriclab.report.html import run_facts
from fabriclab.report.summary import budget_line
from fabriclab.measure.pace import AIM, FLOOR_S, MIN_KNOWN, Pace
from fabriclab.measure.plan import Sampling
from fabriclab.measure.session import DEFAULT_BUDGET_PER_POINT_S, Request, Session

pytestmark = pytest.mark.unit


def finished(pace: Pace, n: int, wall: float, capped: int) -> None:
    """n launches, each `wall` seconds with `capped` points at its cap."""
    for i in range(n):
        cap = pace.cap(i, 0.0)
        pace.done(i, wall, capped, cap)


def test_no_budget_keeps_the_cap():
    pace = Pace(0.5, None, ["a"] * 20)
    finished(pace, 10, 100.0, 10)
    assert pace.cap(10, 1e6) == 0.5 and pace.summary(1.0) is None


def test_a_budget_that_holds_keeps_the_cap():
    pace = Pace(0.5, 1000.0, [f"j{k % 10}" for k in range(50)])
    finished(pace, 10, 2.0, 2)                      # 2 s a launch: 100 s in all
    assert pace.cap(10, 20.0) == 0.5
    assert pace.summary(100.0) == {"budget_s": 1000.0, "point_time_s": 0.5, "launches": 11, "launches_lowered": 0,
                                   "lowest_point_time_s": 0.5, "launches_s": 100.0, "met": True}


def test_a_run_behind_gets_the_cap_that_fits_what_is_left():
    keys = [f"j{k % 10}" for k in range(50)]
    pace = Pace(0.5, 100.0, keys)
    finished(pace, 10, 2.0, 2)                      # each launch: 1 s fixed + 2 capped points x 0.5 s
    # 40 launches left with 40 s of fixed time and 80 capped points in AIM x 100 - 20 s
    assert pace.cap(10, 20.0) == pytest.approx((AIM * 100 - 20 - 40) / 80, abs=1e-3)   # to the millisecond
    assert pace.cap(11, 30.0) == pytest.approx((AIM * 100 - 30 - 39) / 78, abs=1e-3)
    assert FLOOR_S < pace.caps[-1] < 0.5


def test_the_cap_never_goes_below_the_floor_nor_above_the_base():
    pace = Pace(0.5, 10.0, ["a", "b"] * 10)
    finished(pace, 2, 5.0, 5)
    assert pace.cap(2, 9.0) == FLOOR_S             # hopelessly behind: the floor, nothing left out
    assert pace.cap(3, -1e6) == 0.5                  # far ahead: never above --point-time
    assert Pace(0.1, 1.0, ["a"] * 20).cap(0, 1e6) == 0.1   # a cap at or below the floor stays


def test_the_cap_stays_until_enough_launches_are_known():
    keys = [f"j{k}" for k in range(40)]
    pace = Pace(0.5, 1.0, keys)
    finished(pace, MIN_KNOWN - 1, 5.0, 5)
    assert pace.cap(MIN_KNOWN - 1, 100.0) == 0.5
    pace.done(MIN_KNOWN - 1, 5.0, 5, 0.5)
    assert pace.cap(MIN_KNOWN, 100.0) == FLOOR_S


def test_jobs_not_run_yet_are_projected_from_the_mean_of_those_run():
    pace = Pace(0.5, 60.0, ["a", "b", "c", "d"])
    pace.done(0, 3.0, 2, pace.cap(0, 0.0))        # fixed 2, 2 capped
    pace.done(1, 7.0, 4, pace.cap(1, 3.0))        # fixed 5, 4 capped
    pace.finished = MIN_KNOWN        # as if a and b had run several launches each
    # c and d unknown: each the mean of a and b, 3.5 s fixed and 3 capped: (AIM x 60 - now - 7) / 6
    assert pace._cap(49.0) == 0.5                    # _cap: what cap() would give, nothing counted
    assert pace._cap(50.0) == pytest.approx((AIM * 60 - 57) / 6, abs=1e-3)
    assert pace._cap(51.5) == FLOOR_S              # 0.15 s would be below the floor



def run(fake, tmp_path, *extra):
    return main(["run", "message.pingpong", "memory.copy", "-s", "64,1K", "-L", "3", "--core", fake["core"],
                 "--mpiexec", fake["mpiexec"], "-o", str(tmp_path / "r.json"), "-q", *extra])


def caps(doc) -> list:
    """Each launch's --point-time, in the order they ran."""
    return [float(r["command"][r["command"].index("--point-time") + 1])
            for r in doc["records"] if r["kind"] == "launch"]


def test_a_run_that_falls_behind_its_budget_lowers_later_caps_and_says_so(fake_core, tmp_path, monkeypatch,
                                                                           capsys):
    monkeypatch.setenv("FAKECORE_MODE", "capped")        # every point runs to its cap
    assert run(fake_core, tmp_path, "--budget", "0.001") == 0
    doc = docs.read(tmp_path / "r.json")
    assert caps(doc) == [0.5, 0.5] + [FLOOR_S] * 4        # two jobs known, then behind for good
    assert doc["header"]["plan"]["budget_s"] == 0.001
    b = doc["footer"]["budget"]
    assert b["launches_lowered"] == 4 and b["lowest_point_time_s"] == FLOOR_S and b["met"] is False
    assert all(p["stop"] == "time_cap" for p in docs.points(doc))   # every point kept, none left out
    assert len(docs.points(doc)) == 2 * 2 * 3
    err = capsys.readouterr().err
    lines = err.splitlines()
    at = next(k for k, ln in enumerate(lines) if "time budget" in ln)
    assert lines[at + 1].startswith("  --point-time") and all(len(ln) <= 100 for ln in lines[at:])   # wrapped
    err = " ".join(err.split())
    assert "to keep the 0.001 s time budget, 4 of 6 launches capped points at 0.2-0.5 s" in err
    assert ", over the budget (--budget 0: no budget)" in err
    facts = dict(run_facts("r", schema.load(tmp_path / "r.json")))       # the report's facts of the run
    assert facts["time budget"].startswith("to keep the 0.001 s time budget, 4 of 6 launches")


def test_a_budget_kept_changes_nothing_and_says_nothing(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_MODE", "capped")
    assert run(fake_core, tmp_path, "--budget", "1e6") == 0
    doc = docs.read(tmp_path / "r.json")
    assert caps(doc) == [0.5] * 6 and doc["footer"]["budget"]["met"] is True
    assert dict(run_facts("r", schema.load(tmp_path / "r.json")))["time budget"].endswith("no cap lowered")
    err = capsys.readouterr().err
    assert "time budget" not in err


def test_the_default_suite_has_a_budget_per_point_and_named_benchmarks_none():
    args = lambda bench, given, point_time=Sampling().point_time: argparse.Namespace(bench=bench, budget=given,
                                                                                       point_time=point_time)
    assert budget(args([], None)) == {"budget_per_point": DEFAULT_BUDGET_PER_POINT_S}
    assert budget(args(["message"], None)) == {}
    assert budget(args([], None, 2.0)) == {}        # a cap of the user's own: no budget unless asked
    assert budget(args([], 0.0)) == {"budget": None} and budget(args(["tcp"], 40.0)) == {"budget": 40.0}
    # the default suite's points on two ranks, five launches: its budget in seconds
    request = Request(budget_per_point=DEFAULT_BUDGET_PER_POINT_S)
    plan = Session(request).check(force=True).plan
    assert request.budget_for(plan) == pytest.approx(DEFAULT_BUDGET_PER_POINT_S * plan.npoints)
    assert 120 < request.budget_for(plan) < 170 and Request(budget=40.0).budget_for(plan) == 40.0


def test_the_docs_state_the_constants():
    text = (Path(__file__).resolve().parents[2] / "docs" / "statistics.md").read_text()
    assert f"{DEFAULT_BUDGET_PER_POINT_S:g} s a point" in text and f"never below {FLOOR_S:g} s" in text
    assert f"only once {MIN_KNOWN} launches" in text and f"{AIM:.0%} of the budget" in text


def test_budget_line_only_when_the_budget_did_something():
    assert budget_line(None) is None
    assert budget_line({"launches_lowered": 0, "met": True}) is None          # malformed: nothing said
    kept = {"budget_s": 150.0, "point_time_s": 0.5, "launches": 225, "launches_lowered": 0,
            "lowest_point_time_s": 0.5, "launches_s": 120.4, "met": True}
    assert budget_line(kept) is None
    assert budget_line(kept, always=True) == "the launches took 120.4 s of the 150 s time budget; no cap lowered"
    line = budget_line({"budget_s": 150.0, "point_time_s": 0.5, "launches": 225, "launches_lowered": 0,
                        "lowest_point_time_s": 0.5, "launches_s": 160.2, "met": False})
    assert line == "the launches took 160.2 s, over the 150 s time budget (--budget 0: no budget)"
    line = budget_line({"budget_s": 150.0, "point_time_s": 0.5, "launches": 225, "launches_lowered": 210,
                        "lowest_point_time_s": 0.2, "launches_s": 149.7, "met": True})
    assert line == ("to keep the 150 s time budget, 210 of 225 launches capped points at 0.2-0.5 s instead of "
                    "--point-time 0.5 s; the launches took 149.7 s (--budget 0: no budget)")


@pytest.mark.parametrize("value,says", [("-1", "-1 is not between 0 and"), ("nan", "nan is not a finite number"),
                                        ("0.0001", "--budget must be from 0.001")])
def test_a_budget_no_run_can_keep_is_one_line_and_exit_2(fake_core, tmp_path, capsys, value, says):
    assert run(fake_core, tmp_path, "--budget", value) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists()
