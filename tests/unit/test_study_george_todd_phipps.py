"""Seed 003's study (george-todd-phipps): its recipe, and its findings on fixed
run documents of the fake core, whose samples are scaled so that a finding
holds or does not by the numbers."""
import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.studies import george_todd_phipps as gtp
from fabriclab.studies.recipe import FAILS, HOLDS, UNMEASURED, Runs
from fabriclab.studies.reference import load

from fakebuild import run_study  # noqa: E402  (tests/support is on the path)

pytestmark = pytest.mark.unit

NAME = "george-todd-phipps"


def test_the_recipe_runs_the_seeds_layers_and_applications():
    benches = {a for st in gtp.STEPS for a in st.args if a.count(".") == 1 and a[0].isalpha()}
    assert {"memory.copy", "memory.memcpy", "fabric.put_bw", "fabric.put_lat", "fabric.stream", "fabric.pingpong",
            "message.stream", "message.pingpong", "tcp.stream", "tcp.rr_poll", "app.matmul", "app.sort"} <= benches
    raw = gtp.STUDY.step("io-raw").args
    assert raw[raw.index("-p") + 1] == "complete=transmit,delivery"       # the I/O side and the raw network
    sort = gtp.STUDY.step("sort").args
    assert "elem=4,8,16,32,64" in sort and str(gtp.SORT_KEYS) in sort
    assert "--active" not in gtp.STUDY.step("matmul").args                 # 1, 2, 4 .. N from the user's -n
    # the TCP step's socket buffers are netperf's in the seed, as the published value records them
    tcp = gtp.STUDY.step("tcp").args
    socket = load(NAME).get("myrinet-tcp").at["socket_buffer"]
    assert socket == 64 * 1024 and {"sndbuf=64K", "rcvbuf=64K"} <= set(tcp)


@pytest.fixture(scope="module")
def studied(fake_core_module, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "gtp"
    rc = run_study(NAME, fake_core_module, out)
    return rc, out


def test_a_study_run_writes_every_run_and_its_report(studied):
    rc, out = studied
    assert rc == 0
    for st in gtp.STEPS:
        assert docs.read(out / f"{st.name}.json")["footer"]["status"] == "complete"
    manifest = json.loads((out / "study.json").read_text())
    assert [f["id"] for f in manifest["findings"]] == [f"gtp-{i}" for i in range(1, 11)]
    html = (out / "report.html").read_text()
    assert html.count("<figure") == 6 and "376" in html and "ideal (speedup = N)" in html


def _runs(out, scale: dict = {}) -> Runs:
    """The study's documents, with the samples of the points of (step, bench) whose
    fields or parameters have the given values scaled by k."""
    runs = Runs()
    for st in gtp.STEPS:
        doc = docs.read(out / f"{st.name}.json")       # new dicts on every read: ours to change
        for (step, bench, where), k in scale.items():
            if step != st.name:
                continue
            doc.pop("merged", None)
            for r in doc["records"]:
                if r["kind"] == "point" and r["bench"] == bench and all(
                        str(r.get(key, r["params"].get(key))) == v for key, v in where):
                    r["samples"] = [x * k for x in r["samples"]]
                    if r.get("rank_samples"):
                        r["rank_samples"] = [s and [x * k for x in s] for s in r["rank_samples"]]
                    r["phases"] = {p: [x * k for x in xs] for p, xs in (r.get("phases") or {}).items()}
        runs.docs[st.name] = docs.typed(doc)       # merged when first read, where the samples changed
    return runs


def _found(runs: Runs) -> dict:
    return {f.id: f for f in gtp.STUDY.findings(runs, load(NAME))}


def test_findings_on_fixed_documents_hold_or_not_by_the_numbers(studied):
    _, out = studied
    by = _found(_runs(out))
    # the fake core times every layer alike: TCP is no slower, the I/O side keeps pace with memory
    assert by["gtp-5"].verdict == FAILS and "1.0x" in by["gtp-5"].because
    assert by["gtp-2"].verdict == FAILS and by["gtp-1"].verdict == HOLDS
    # and it speeds every app up on two ranks
    assert by["gtp-7"].verdict == HOLDS and by["gtp-8"].verdict == HOLDS
    slower = _runs(out, {("tcp", "tcp.rr_poll", ()): 20.0,
                         ("io-raw", "fabric.put_bw", (("complete", "transmit"),)): 2.0,
                         ("memory", "memory.copy", ()): 4.0, ("memory", "memory.memcpy", ()): 4.0,
                         ("matmul", "app.matmul", (("active", "2"),)): 2.0,
                         ("sort", "app.sort", (("active", "2"), ("elem", "4"))): 4.0})
    by = _found(slower)
    assert by["gtp-5"].verdict == HOLDS and "(20.0x)" in by["gtp-5"].measured
    # a memory four times slower no longer bounds the layers, and the I/O side is no longer behind it
    assert by["gtp-1"].verdict == FAILS and "fabric send/receive" in by["gtp-1"].because
    assert by["gtp-2"].verdict == FAILS
    assert by["gtp-7"].verdict == FAILS and "of the ideal 2" in by["gtp-7"].because
    assert by["gtp-8"].verdict == FAILS and by["gtp-8"].because.startswith("the rate did not rise for 4 B")
    io_only = _found(_runs(out, {("io-raw", "fabric.put_bw", (("complete", "transmit"),)): 2.0}))
    assert io_only["gtp-2"].verdict == HOLDS and "(2.0x)" in io_only["gtp-2"].measured


def test_a_skipped_step_leaves_its_findings_unmeasured_with_the_reason(studied):
    _, out = studied
    runs = _runs(out)
    del runs.docs["tcp"]
    runs.skipped["tcp"] = "its run failed (exit 1); the points it completed are used"
    by = _found(runs)
    assert by["gtp-5"].verdict == by["gtp-6"].verdict == UNMEASURED
    assert by["gtp-5"].because == runs.skipped["tcp"]
    assert by["gtp-3"].verdict != UNMEASURED                             # the other layers still judged


def test_the_speedup_figure_draws_the_ideal_line_and_the_seeds_best(studied):
    _, out = studied
    fig = next(f for f in gtp.STUDY.figures(_runs(out), load(NAME)) if f.id == "gtp-matmul")
    ideal = next(s for s in fig.series if s.label.startswith("ideal"))
    best = next(s for s in fig.series if "seed's best" in s.label)
    assert ideal.dashed and ideal.x == ideal.y == [1, 16] and best.x == [16] and best.y == [14.0]
    assert {s.label for s in fig.series if not s.dashed} == {"256 x 256", "512 x 512", "1024 x 1024"}
