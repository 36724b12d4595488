"""Seed 004's study (petrini-quadrics): its recipe, and its findings on fixed
run documents of the fake core, scaled to hold or not."""
import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import study as cli_study
from fabriclab import schema
from fabriclab.studies.recipe import FAILS, HOLDS, UNMEASURED, Runs
from fabriclab.studies.reference import load
from fabriclab.studies.registry import STUDIES

from fakebuild import run_study  # noqa: E402  (tests/support is on the path)

pytestmark = pytest.mark.unit
STUDY = STUDIES["petrini-quadrics"]


def test_the_recipe_runs_every_level_and_the_hotspots_at_four_ranks():
    args = {st.name: st.args for st in STUDY.steps}
    for step, kind in (("ping", "pingpong"), ("stream", "stream"), ("bibw", "bibw"), ("bibw-latency", "bibw")):
        assert {f"fabric.{kind}", f"ucx.{kind}", f"message.{kind}"} <= set(args[step]), step
    assert "window=1" in args["bibw-latency"]
    hot = STUDY.step("hotspot")
    assert hot.ranks == 4 and {"deposit.hotspot_get", "deposit.hotspot_put", "message.hotspot"} <= set(hot.args)
    assert cli_study._argv(hot, [])[-4:-2] == ["-n", "4"]


def test_device_memory_is_declared_and_always_skipped_with_the_reason():
    dev = STUDY.step("device-memory")
    assert dev.gpu and dev.seconds == 0
    why = cli_study._skip_reason(dev, hosts=8)
    assert "cannot place buffers in device memory" in why


@pytest.fixture(scope="module")
def studied(fake_core_module, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "pq"
    rc = run_study("petrini-quadrics", fake_core_module, out)
    return rc, out


def test_a_study_run_writes_its_runs_its_skipped_step_and_its_report(studied):
    rc, out = studied
    assert rc == 0
    manifest = json.loads((out / "study.json").read_text())
    steps = {x["step"]: x for x in manifest["steps"]}
    assert "device memory" in steps["device-memory"]["skipped"]
    assert docs.read(out / "hotspot.json")["header"]["nranks"] == 4
    html = (out / "report.html").read_text()
    assert html.count("<figure") == 5 and 'id="skipped"' in html
    assert "335" in html and "314" in html                  # the seed's peak and read hotspot, drawn


def _runs(out, scale: dict = {}, oversubscribed: tuple = ()) -> Runs:
    """The study's documents, samples of (step, bench) scaled; the named steps marked oversubscribed."""
    runs = Runs(skipped={"device-memory": cli_study._skip_reason(STUDY.step("device-memory"), 1)})
    for st in STUDY.steps:
        if not (out / f"{st.name}.json").exists():
            continue
        doc = docs.read(out / f"{st.name}.json")       # new dicts on every read: ours to change
        doc["header"].setdefault("placement", {})["oversubscribed"] = st.name in oversubscribed
        for (step, bench), k in scale.items():
            if step == st.name:
                doc.pop("merged", None)
                for r in doc["records"]:
                    if r["kind"] == "point" and r["bench"] == bench:
                        r["samples"] = [x * k for x in r["samples"]]
                        for rs in filter(None, r.get("rank_samples") or []):
                            rs[:] = [x * k for x in rs]
        runs.docs[st.name] = docs.typed(doc)
    return runs


def _found(runs) -> dict:
    return {f.id: f for f in STUDY.findings(runs, load("petrini-quadrics"))}


def test_findings_hold_or_not_by_the_numbers(studied):
    _, out = studied
    by = _found(_runs(out))
    # the fake core times every level alike: latency under 2 us holds, an MPI cost of 1x does not
    assert by["pq-1"].verdict == HOLDS and "1.0 us" in by["pq-1"].measured
    assert by["pq-4"].verdict == FAILS and "1.0x" in by["pq-4"].because
    assert by["pq-3"].verdict == FAILS and by["pq-5"].verdict == HOLDS
    assert by["pq-8"].verdict == UNMEASURED and "device memory" in by["pq-8"].because
    by = _found(_runs(out, {("ping", "fabric.pingpong"): 3.0, ("ping", "message.pingpong"): 3.0,
                            ("bibw", "fabric.bibw"): 2.0, ("hotspot", "deposit.hotspot_put"): 2.0}))
    assert by["pq-1"].verdict == FAILS and "3.0 us" in by["pq-1"].because
    assert by["pq-4"].verdict == HOLDS and "3.0x" in by["pq-4"].measured
    assert by["pq-3"].verdict == HOLDS and "(50%)" in by["pq-3"].measured
    assert by["pq-7"].verdict == FAILS and "2.00x" in by["pq-7"].because


def test_a_falling_hotspot_does_not_hold(studied):
    _, out = studied
    runs = _runs(out)
    by = _found(runs)
    assert by["pq-6"].verdict == HOLDS
    doc = runs.docs["hotspot"].to_dict()
    doc.pop("merged", None)
    for r in doc["records"]:          # the aggregate at 3 processes down to a third of the fake's
        if r["kind"] == "point" and r["bench"] == "message.hotspot" and r["active"] == 3:
            r["samples"] = [x * 9 for x in r["samples"]]
    runs.docs["hotspot"] = docs.typed(doc)
    by = _found(runs)
    assert by["pq-6"].verdict == FAILS and "message.hotspot keeps only" in by["pq-6"].because


def test_runs_with_more_ranks_than_cpus_are_not_judged(studied):
    _, out = studied
    by = _found(_runs(out, oversubscribed=("ping", "stream", "hotspot")))
    for fid in ("pq-1", "pq-2", "pq-3", "pq-4", "pq-5", "pq-6", "pq-7"):
        assert by[fid].verdict == UNMEASURED and "CPUs" in by[fid].because, fid
