"""Seed 001's study (millich-george-oral): its findings on fixed run documents
of the fake core, shaped as a saturation across the two-switches testbed's
trunk and an all-to-all over its 8 hosts, and its report end to end."""
import copy
import json
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.model import validate
from fabriclab.model.topologies.custom import load_network_file
from fabriclab.studies.recipe import FAILS, HOLDS, UNMEASURED, Runs
from fabriclab.studies.reference import load
from fabriclab.studies.registry import STUDIES

from fakebuild import run_study  # noqa: E402  (tests/support is on the path)

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("seed_model_once")]

NAME = "millich-george-oral"
NET = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")
HOSTS = [f"h{i}" for i in range(8)]
TRUNK_MBPS = 20.0              # two-switches.yaml's trunk


@pytest.fixture(scope="module")
def studied(fake_core_module, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "mgo"
    rc = run_study(NAME, fake_core_module, out, "--hosts", ",".join(HOSTS), "--network", NET, "-n", "8")
    return rc, out


def _scaled(doc: dict, bench: str, factor) -> dict:
    """The document with its points' samples of `bench` times factor(point record)."""
    doc = copy.deepcopy(doc)
    doc.pop("merged", None)
    for r in doc["records"]:
        if r["kind"] == "point" and r["bench"] == bench:
            k = factor(r)
            r["samples"] = [x * k for x in r["samples"]]
    return doc


def _mbps(r: dict) -> float:
    """A point record's payload per second at its median sample, MB/s (the fake core's times are even)."""
    s = sorted(r["samples"])
    return r["bytes_per_op"] / s[len(s) // 2] / 1e6


def _predicted_MBps(sat_MBps: float) -> float:
    net = load_network_file(NET)
    return validate.predict(net, NET, validate.cable_class(net, validate.trunks(net)[0]), sat_MBps * 1e6)[0] / 1e6


def _runs(out, senders: dict, alltoall: float, hosts=HOSTS, network=NET) -> Runs:
    """The study's documents on the 8 hosts of two-switches.yaml: `senders` the aggregate MB/s by
    active senders at every size, `alltoall` the per-node all-to-all MB/s."""
    runs = Runs()
    sat = docs.read(out / "saturation.json")
    runs.docs["saturation"] = _scaled(sat, "message.saturation", lambda r: _mbps(r) / senders[r["active"]])
    a2a = docs.read(out / "alltoall.json")
    runs.docs["alltoall"] = _scaled(a2a, "message.alltoall", lambda r: _mbps(r) / 8 / alltoall)
    for step, doc in runs.docs.items():
        doc["header"].update(hosts=hosts, network=network)
        runs.docs[step] = docs.typed(doc)
    return runs


def _findings(runs: Runs) -> dict:
    return {f.id: f for f in STUDIES[NAME].findings(runs, load(NAME))}


def test_a_study_run_records_the_network_and_writes_every_figure(studied):
    rc, out = studied
    assert rc == 0
    for step in ("saturation", "alltoall"):
        doc = docs.read(out / f"{step}.json")
        assert doc["footer"]["status"] == "complete" and doc["header"]["network"] == NET
    manifest = json.loads((out / "study.json").read_text())
    assert [s["step"] for s in manifest["steps"]] == ["saturation", "alltoall"]
    html = (out / "report.html").read_text()
    assert html.count("<figure") == 6 and "five nodes or less" in html      # Fig. 4's mark, from the seed


def test_the_seed_saturation_and_a_prediction_within_tolerance_hold(studied):
    _, out = studied
    pred = _predicted_MBps(18.6)
    by = _findings(_runs(out, {1: 9.3, 2: 18.6, 3: 18.5, 4: 18.6}, 0.97 * pred))
    assert by["mgo-1"].verdict == HOLDS and "(2.00x)" in by["mgo-1"].measured
    assert by["mgo-2"].verdict == HOLDS and "(+1%)" in by["mgo-2"].measured
    assert by["mgo-3"].verdict == HOLDS and "93% of its nominal 20 MB/s" in by["mgo-3"].measured
    assert by["mgo-4"].verdict == HOLDS and "ratio 0.97" in by["mgo-4"].measured
    assert f"predicts {pred:.2f}" in by["mgo-4"].measured and "trunk" in by["mgo-4"].measured


def test_one_sender_filling_the_cable_and_a_missed_prediction_do_not_hold(studied):
    _, out = studied
    by = _findings(_runs(out, {1: 12.0, 2: 12.2, 3: 12.1, 4: 12.2}, 0.7 * _predicted_MBps(12.2)))
    assert by["mgo-1"].verdict == FAILS and "only 1.02x one" in by["mgo-1"].because
    assert by["mgo-2"].verdict == HOLDS
    assert by["mgo-3"].verdict == FAILS and "61% of its nominal rate" in by["mgo-3"].because
    assert by["mgo-4"].verdict == FAILS and "0.70x the calibrated prediction" in by["mgo-4"].because


def test_a_cable_not_yet_saturated_does_not_level_off(studied):
    _, out = studied
    by = _findings(_runs(out, {1: 5.0, 2: 10.0, 3: 15.0, 4: 20.0}, 5.0))
    assert by["mgo-2"].verdict == FAILS and "not saturated by 3" in by["mgo-2"].because


def test_without_the_network_or_on_the_wrong_hosts_the_model_steps_are_unmeasured(studied):
    _, out = studied
    by = _findings(_runs(out, {1: 9.0, 2: 18.0, 3: 18.0, 4: 18.0}, 5.0, network=None))
    assert by["mgo-1"].verdict == HOLDS                                      # needs no network
    assert by["mgo-3"].verdict == UNMEASURED and "--network FILE" in by["mgo-3"].because
    runs = _runs(out, {1: 9.0, 2: 18.0, 3: 18.0, 4: 18.0}, 5.0)
    runs.docs["alltoall"].header.hosts = HOSTS[:4]
    by = _findings(runs)
    assert by["mgo-3"].verdict == HOLDS
    assert by["mgo-4"].verdict == UNMEASURED and "give -n 8" in by["mgo-4"].because
    side = _runs(out, {1: 9.0, 2: 18.0, 3: 18.0, 4: 18.0}, 5.0, hosts=["h0", "h1", "h4", "h5", "h2", "h3", "h6", "h7"])
    assert "share no cable" in _findings(side)["mgo-3"].because             # pairs h0->h2, h1->h3 stay on s0


def test_skipped_steps_say_how_to_run_them_on_one_machine():
    runs = Runs(skipped={"saturation": "needs 4 hosts", "alltoall": "needs 4 hosts"})
    by = _findings(runs)
    assert all(f.verdict == UNMEASURED for f in by.values())
    assert "testbed up examples/testbeds/two-switches.yaml" in by["mgo-1"].because
    assert by["mgo-4"].because.startswith("needs 4 hosts")


def test_the_projections_are_drawn_without_measurements():
    figs = {f.id: f for f in STUDIES[NAME].figures(Runs(), load(NAME))}
    proj = [figs[f"mgo-projection-{n}"] for n in ("4", "10", "13")]
    assert all(not f.empty() and all(s.dashed for s in f.series) for f in proj)
    assert [m.x for m in figs["mgo-projection-13"].marks] == [4, 9, 25]      # §5's crossovers
    assert figs["mgo-saturation"].empty() and figs["mgo-alltoall"].empty()
