"""Each collective point against the model of the network the run crossed
(verdicts/coll_prediction.py): ranks placed by host, the library's algorithm
timed where the model has it (else the fastest of the model's), alpha and
gamma from the calibration file, and the block a run with --network stores,
which show prints."""
from pathlib import Path

import pytest

from fabriclab import schema
from fabriclab.analysis import merge
from fabriclab.cli import main
from fabriclab.verdicts.coll_prediction import TOLERANCE, modelled, predictor, rows
from fabriclab.model.netfile import NetworkFile
from fabriclab.model.schedule_time import Network
from fabriclab.model.schedules import schedule
from fabriclab.schema.records import MergedPoint, Summary

TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")
HOSTS = ["h0", "h1", "h4", "h5"]          # two on each side of the 20 MB/s trunk
ALPHA, GAMMA = 2e-6, 0.25e-9


def _point(bench: str, size: int, seconds: float, algorithm: str = "auto", in_force: str = "") -> MergedPoint:
    return MergedPoint(bench=bench, size=size, active=4, bytes_per_op=size, summary=Summary(median=seconds),
                       roles="bbbb", params={"algorithm": algorithm},
                       info={"algorithm_in_force": in_force} if in_force else {})


def test_the_librarys_algorithm_is_timed_where_the_model_has_it():
    net = NetworkFile(TWO)
    size = 1 << 20
    ring = Network(net).time(schedule("allreduce", "ring", 4, size), ALPHA, GAMMA, [0, 1, 4, 5]).seconds
    pts = [_point("coll.allreduce", size, 1.05 * ring, "ring", "ring"),
           _point("coll.allreduce", size, ring, "auto", "smp"),          # no schedule: the fastest of the model's
           _point("coll.allreduce", size, ring, "reduce_scatter_allgather", "reduce_scatter_allgather")]
    got = rows(pts, HOSTS, net, ALPHA, GAMMA)
    assert [r["algorithm"] for r in got] == ["ring", min(got[1]["predictions"], key=got[1]["predictions"].get),
                                             "rabenseifner"]
    assert [r["as"] for r in got] == ["the library's", "fastest of the model's", "the library's"]
    r = got[0]
    assert r["predicted_s"] == pytest.approx(ring) and r["ratio"] == pytest.approx(1.05)
    assert TOLERANCE == 0.10 and r["verdict"] == "agrees" and "trunk" in r["bottleneck"]
    assert set(r["predictions"]) == {"ring", "recursive_doubling", "rabenseifner"}


def test_points_the_model_cannot_place_are_left_out():
    net = NetworkFile(TWO)
    pts = [_point("coll.scan", 4096, 1e-3), _point("coll.barrier", 0, 1e-5), _point("coll.allgatherv", 4096, 1e-3)]
    assert [r["bench"] for r in rows(pts, HOSTS, net, ALPHA, GAMMA)] == ["coll.allgatherv"]   # as allgather
    assert rows(pts, ["x0", "x1", "h4", "h5"], net, ALPHA, GAMMA) == []     # hosts the file does not know
    assert modelled("coll.reduce_scatter_block") == "reduce_scatter" and modelled("coll.scan") is None
    assert modelled("message.pingpong") is None


def test_alpha_and_gamma_come_from_the_calibration_file(tmp_path):
    cal = tmp_path / "cal.yaml"
    cal.write_text("alpha_s: 1.0e-5\ngamma_s_per_byte: 1.0e-9\nlinks[8]: 10\n")
    doc = type("D", (), {"analysed": ([_point("coll.bcast", 4096, 1e-3, "binomial", "binomial")], {}),
                         "header": type("H", (), {"hosts": HOSTS})()})()
    block = predictor(TWO, str(cal))(doc)["coll_model"]
    assert block["alpha_s"] == 1e-5 and block["costs_from"] == {"alpha": "calibrated", "gamma": "calibrated"}
    (r,) = block["rows"]
    # binomial bcast on h0 h1 h4 h5, as MPICH sends it: 0 -> 2 (across the trunk, recalibrated to
    # 10 MB/s), then 0 -> 1 and 2 -> 3, each on its own switch (60 MB/s cables)
    assert r["predicted_s"] == pytest.approx(2 * 1e-5 + 4096 / 10e6 + 4096 / 60e6)
    plain = predictor(TWO)(doc)["coll_model"]
    assert plain["costs_from"] == {"alpha": "assumed", "gamma": "assumed"}


def test_a_run_with_its_network_stores_the_block_and_show_prints_it(fake_core, tmp_path, capsys, monkeypatch):
    out = tmp_path / "c.json"
    monkeypatch.setenv("FAKECORE_RANKS", "4")
    assert main(["run", "coll.allreduce", "coll.scan", "-n", "4", "--active", "4", "-s", "64K", "--hosts",
                 ",".join(HOSTS), "--network", TWO, "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"],
                 "-q", "-L", "1", "-o", str(out)]) == 0
    doc = schema.load(out)
    (r,) = doc.coll_predictions
    assert r["bench"] == "coll.allreduce" and r["network"].endswith("two-switches.yaml")
    assert r["measured_s"] == pytest.approx(merge.merged(doc)[0].summary.median) and r["predicted_s"] > 0
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "coll.allreduce at 64K on 4 ranks: measured" in text and "x the model's" in text
    page = tmp_path / "c.html"
    assert main(["report", str(out), "-o", str(page)]) == 0
    html = page.read_text()
    assert "Collectives: measured vs the network&#x27;s model" in html or \
        "Collectives: measured vs the network's model" in html
    assert "MPI_Allreduce: measured vs the network" in html and "model: ring" in html


def test_validate_names_the_busiest_cable_beside_the_models_bottleneck():
    """testbed/coll_check.py: the cable direction measured busiest over a point (the median over
    its launches), labelled as the model labels its resources, and whether the model's was as busy."""
    from fabriclab.schema.run_records import LaunchEnd
    from fabriclab.testbed.coll_check import busiest
    cables = [{"label": "link h0-s0"}, {"label": "link trunk"}]

    def end(launch, trunk, host, variant="algorithm=ring"):
        return LaunchEnd("coll.allreduce", variant, launch, extra={"spans": [{"size": 4096, "cables": [
            {"cable": 1, "from": "s0", "to": "s1", "util": trunk, "p90_util": trunk + 0.1},
            {"cable": 0, "from": "h0", "to": "s0", "util": host, "p90_util": host}]}]})
    doc = type("D", (), {"launch_ends": [end(0, 0.9, 0.5), end(1, 0.8, 0.6), end(2, 0.7, 0.95),
                                         end(3, 0.0, 1.0, "algorithm=recursive_doubling")]})()
    row = {"bench": "coll.allreduce", "variant": "algorithm=ring", "size": 4096, "busiest": "link trunk (s0→s1)"}
    got = busiest(doc, row, cables)
    assert got == {"busiest_cable": "link trunk (s0→s1)", "busiest_util": 0.8, "model_busiest_util": 0.8,
                   "busiest_agrees": True, "model_busiest_p90": 0.9}
    other = busiest(doc, {**row, "busiest": "link h0-s0 (h0→s0)"}, cables)
    assert other["model_busiest_util"] == 0.6 and not other["busiest_agrees"]
    assert busiest(doc, {**row, "size": 8}, cables) == {}
    # the cables of one link are one resource of the model: its busiest cable stands for it
    two = [{"label": "link s0-s1, cable 1 of 2"}, {"label": "link s0-s1, cable 2 of 2"}]
    pair = type("D", (), {"launch_ends": [LaunchEnd("coll.bcast", "", 0, extra={"spans": [{"size": 8, "cables": [
        {"cable": 0, "from": "s0", "to": "s1", "util": 0.3}, {"cable": 1, "from": "s0", "to": "s1", "util": 0.7}]}]})]})()
    got = busiest(pair, {"bench": "coll.bcast", "variant": "", "size": 8, "busiest": "link s0-s1 (s0→s1)"}, two)
    assert got["busiest_cable"] == "link s0-s1 (s0→s1)" and got["busiest_util"] == 0.7 and got["busiest_agrees"]
