"""Congestion impact on one host (suite/congestion.py, families/message_congestion.c): every
victim test under every aggressor under both MPIs, each point's received data checked, the run
ending with every flow's end message (no rank left waiting), and the impact factors printed.
The testbed's measured factor against the model is in test_testbed.py."""
import os

import pytest

from fabriclab.cli import main
from fabriclab.suite import congestion
from fabriclab.verdicts import congestion as judged
from fabriclab import schema
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("mpi, aggressors", [("mpich", "alltoall,incast,put_incast,get_bcast"),
                                             ("openmpi", "alltoall,put_incast")])
def test_every_victim_under_every_aggressor(mpi, aggressors, tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["congestion", "-n", "4", "--aggressor", aggressors, "--draws", "2", "--validate",
                 "--mpi-home", mpi_home(mpi), "-o", str(out), *FAST, "--point-time", "0.1",
                 "--sample-time", "0.002"]) == 0
    printed = capsys.readouterr().out
    doc = schema.load(out)
    assert doc.footer.status == "complete"
    kinds = aggressors.split(",")
    assert len(doc.points) == 3 * len(kinds) * 2 * 2          # tests x aggressors x draws x (isolated, congested)
    for p in doc.points:
        assert p.validation == {"checked_bytes": p.validation["checked_bytes"], "errors": 0}
        assert p.validation["checked_bytes"] > 0
        assert p.roles.count("v") == 2 and sum(x not in "vi" for x in p.roles) == (2 if p.active else 0)
        assert p.info["waiting"] == ("sleep" if 4 > os.cpu_count() else "spin")
        assert p.info["aggressor"] == p.params["aggressor"]
    found = judged.impacts(doc.points)
    assert {(m.bench, m.aggressor) for m in found} == {(b, k) for b in congestion.TESTS.values() for k in kinds}
    for m in found:
        assert len(m.draws) == 2 and all(x > 0 for x in m.draws) and m.median[0] > 0
        assert m.tail[1] <= m.tail[0] <= m.tail[2]
    def rows(text):
        return [ln for ln in text.splitlines() if ln.split(" ", 1)[0] in congestion.TESTS]
    assert len(rows(printed)) == len(found)
    assert main(["show", str(out)]) == 0
    assert len(rows(capsys.readouterr().out)) >= len(found)      # show prints the factors too


@pytest.mark.parametrize("mpi, victims", [("mpich", "coll.allreduce,message.pingpong,deposit.put_lat,app.sort"),
                                         ("openmpi", "coll.allreduce,message.stream")])
def test_any_registered_benchmark_as_the_victim(mpi, victims, tmp_path, capsys):
    """message.victim: the victims run each benchmark named among themselves, its own verify
    checking what they received, under an all-to-all, and time their single ops while the
    aggressors keep loading (measure_each); the factors are printed by its name, the p99's of
    single ops."""
    out = tmp_path / "v.json"
    assert main(["congestion", "-n", "5", "--victim", victims, "--draws", "2", "--validate", "--sizes", "64",
                 "--mpi-home", mpi_home(mpi), "-o", str(out), *FAST, "--point-time", "0.1",
                 "--sample-time", "0.002", "--per-op", "0.02"]) == 0
    printed = capsys.readouterr().out
    doc = schema.load(out)
    names = victims.split(",")
    assert doc.footer.status == "complete" and len(doc.points) == len(names) * 2 * 2
    for p in doc.points:
        assert p.bench == "message.victim" and p.info["victim"] == p.params["victim"]
        assert p.validation["errors"] == 0 and p.validation["checked_bytes"] > 0
        assert p.roles.count("v") == 2 and p.bytes_per_op > 0
        timed = [r for r in p.op_histogram["ranks"]]
        assert timed and all(r["n"] > 0 and sum(c for _, c in r["buckets"]) == r["n"] for r in timed)
        assert {r["rank"] for r in timed} <= {q for q, x in enumerate(p.roles) if x == "v"}
    found = judged.impacts(doc.points)
    assert sorted(m.test for m in found) == sorted(names)
    for m in found:
        assert len(m.draws) == 2 and m.median[0] > 0 and m.tail[1] <= m.tail[0] <= m.tail[2]
        assert m.tail_of == "ops"
        assert any(line.startswith(m.test) for line in printed.splitlines())


def test_check_on_one_host_reports_what_it_cannot_judge_and_judges_against_a_baseline(tmp_path, capsys):
    """Without a network the congestion and the collectives are measured and reported, not
    judged; a baseline then judges the collectives (the bound is wide: four ranks share two CPUs)."""
    assert main(["check", "-n", "4", "--tests", "congestion,collectives", "--attempts", "1", "-q",
                 "-o", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "REPORTED congestion" in out and "REPORTED collectives" in out and out.rstrip().endswith("check passed")
    (t := tmp_path / "t.yaml").write_text("collectives: {tolerance: 2}\n")
    assert main(["check", "-n", "4", "--tests", "collectives", "--thresholds", str(t), "-q",
                 "--baseline", str(tmp_path / "a" / "collectives-1.json"), "-o", str(tmp_path / "b")]) == 0
    assert "PASS     collectives" in capsys.readouterr().out


def test_a_dry_run_of_check_prints_every_tests_run_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["check", "-n", "4", "--dry-run", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    for bench in ("message.shift", "message.victim_bandwidth", "coll.allreduce"):
        assert f"fabriclab-core {bench} " in printed
    assert not out.exists()


def test_the_registered_patterns_load_as_aggressors(tmp_path):
    """Four aggressors in each two-sided pattern's roles stream to their peers until the victims
    are done; the victims' data checked."""
    out = tmp_path / "p.json"
    assert main(["congestion", "-n", "6", "--victims", "2", "--victim", "bandwidth", "--draws", "1",
                 "--aggressor", "pairs,bipairs,shift,bisection", "--validate", "-o", str(out), *FAST,
                 "--point-time", "0.1", "--sample-time", "0.002"]) == 0
    doc = schema.load(out)
    roles = {p.params["aggressor"]: p.roles for p in doc.points if p.active}
    assert sorted(roles) == ["bipairs", "bisection", "pairs", "shift"]
    assert sorted(roles["pairs"].replace("v", "")) == list("rrss") and set(roles["shift"].replace("v", "")) == {"b"}
    assert all(p.validation["errors"] == 0 for p in doc.points)
    assert len(judged.impacts(doc.points)) == 4
