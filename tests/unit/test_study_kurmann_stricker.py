"""Seed 000's study (kurmann-stricker): its recipe, and its findings on fixed
run documents of the fake core, scaled so that each holds or does not."""

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.studies import kurmann_stricker as ks
from fabriclab.studies.recipe import FAILS, HOLDS, UNMEASURED, Runs
from fabriclab.studies.reference import load

from fakebuild import run_study  # noqa: E402  (tests/support is on the path)

pytestmark = pytest.mark.unit

STUDY, REF = ks.STUDY, load("kurmann-stricker")


def test_the_recipe_measures_every_level_and_transfer_mode_the_seed_compares():
    args = {st.name: st.args for st in STUDY.steps}
    assert {"memory.copy", "fabric.put_bw", "message.postal_restricted", "message.postal_full",
            "tcp.stream"} <= set(args["levels"])
    strided = args["strided"]
    assert {"memory.strided_store", "deposit.strided_direct", "deposit.strided_packed",
            "deposit.strided_shm"} <= set(strided)
    assert strided[strided.index("--strides") + 1] == "1:64:x2"          # the seed's strides 1..64 (Fig. 9-11)
    assert args["blocks"][args["blocks"].index("--strides") + 1] == "1"  # contiguous blocks (Fig. 12)
    assert "mode=packed,datatype,deposit" in args["transpose"]
    assert args["levels"][args["levels"].index("--cache") + 1] == "cold"     # copies through memory (§V)
    assert STUDY.wire and STUDY.hosts == 1 and STUDY.seconds <= 600


@pytest.fixture(scope="module")
def studied(fake_core_module, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "ks"
    rc = run_study("kurmann-stricker", fake_core_module, out, "--point-time", "0.01")
    assert rc == 0
    return {st.name: docs.read(out / f"{st.name}.json") for st in STUDY.steps}


def _runs(found, scale=(), wire=None) -> Runs:
    """The study's documents; `scale`: (step, bench, test(record) -> bool, factor) multiplies the
    samples of the points the test picks (a factor of 2 halves their bandwidth)."""
    runs = Runs(wire_Bps=wire, wire="--wire-rate" if wire else "")
    for st in STUDY.steps:
        doc = found[st.name]
        for step, bench, pick, k in scale:
            if step == st.name:
                if doc is found[st.name]:     # the shared document stays as read: copy what changes
                    doc = {**doc, "records": [dict(r) for r in doc["records"]]}
                doc.pop("merged", None)
                for r in doc["records"]:
                    if r["kind"] == "point" and r["bench"] == bench and pick(r):
                        r["samples"] = [x * k for x in r["samples"]]
        runs.docs[st.name] = docs.typed(doc)         # merged when first read, as a stream is
    return runs


def _by_id(runs):
    return {f.id: f for f in STUDY.findings(runs, REF)}


def wide(r):
    return r["stride"] >= 2


def test_equal_transfers_match_blocking_mpi_and_raw_but_no_strided_collapse(studied):
    by = _by_id(_runs(studied))
    # the fake core times every benchmark alike, whatever the stride
    assert by["ks-7"].verdict == HOLDS and "(1.00x)" in by["ks-7"].measured
    assert by["ks-4"].verdict == HOLDS and "median 1.00x" in by["ks-4"].measured
    assert by["ks-2"].verdict == FAILS and "at best 1.00 of stride 1" in by["ks-2"].measured
    assert by["ks-3"].verdict == FAILS and "at 0 of 6 strides" in by["ks-3"].measured
    assert by["ks-8"].verdict == FAILS and "keep 1.00x of the restricted" in by["ks-8"].because
    # Hockney's n_1/2 of the fake core's 1 us + n / 5 GB/s is 5000 bytes: "roughly 8 KByte"
    assert by["ks-9"].verdict == HOLDS
    assert by["ks-11"].verdict == UNMEASURED and "--wire-rate" in by["ks-11"].because


def test_slower_strided_direct_deposits_collapse_and_lose_to_packing(studied):
    runs = _runs(studied, [("strided", "deposit.strided_direct", wide, 20.0),
                           ("strided", "deposit.strided_shm", wide, 20.0),
                           ("levels", "fabric.put_bw", lambda r: True, 0.5),
                           ("levels", "message.postal_full", lambda r: r["size"] >= ks.LARGE, 2.0),
                           ("levels", "memory.copy", lambda r: True, 2.0)])
    by = _by_id(runs)
    assert by["ks-2"].verdict == HOLDS and "at best 0.05 of stride 1" in by["ks-2"].measured
    assert by["ks-3"].verdict == HOLDS and "at 6 of 6 strides" in by["ks-3"].measured
    assert "from stride 2 on" in by["ks-3"].measured
    assert by["ks-7"].verdict == FAILS and "0.50x" in by["ks-7"].because
    assert by["ks-8"].verdict == HOLDS and "(0.50x)" in by["ks-8"].measured
    assert "favour packing" in by["ks-12"].measured


def test_crossover_is_the_stride_from_which_packing_stays_ahead():
    pairs = [(1, 5, 9, "d"), (2, 5, 4, "d"), (4, 3, 4, "d"), (8, 3, 2, "d"), (16, 2, 1, "d")]
    assert ks.crossover(pairs) == 8
    assert ks.crossover(pairs[:3]) is None


def test_the_efficiency_is_judged_and_drawn_only_with_a_wire_rate(studied):
    assert not any(f.id == "ks-efficiency" for f in STUDY.figures(_runs(studied), REF))
    # the fake core's raw deposit peaks near 5 GB/s: 80% of a 6.25 GB/s wire holds, 40% of 12.5 does not
    for wire, verdict in ((6.25e9, HOLDS), (12.5e9, FAILS)):
        runs = _runs(studied, wire=wire)
        assert _by_id(runs)["ks-11"].verdict == verdict
        fig = next(f for f in STUDY.figures(runs, REF) if f.id == "ks-efficiency")
        assert dict(fig.bars)["Myrinet"] == pytest.approx(126e6 / 160e6 * 100)


def test_a_skipped_step_leaves_its_findings_unmeasured_with_the_reason(studied):
    runs = _runs(studied)
    del runs.docs["strided"]
    runs.skipped["strided"] = "its run failed (exit 1)"
    by = _by_id(runs)
    assert all(by[i].verdict == UNMEASURED and by[i].because == "its run failed (exit 1)"
               for i in ("ks-2", "ks-3", "ks-4", "ks-5"))
    assert by["ks-1"].verdict != UNMEASURED


@pytest.mark.parametrize("argv,msg", [
    (["hellwagner-via", "--wire-rate", "1250"], "draws no efficiency"),
    (["kurmann-stricker", "--wire-rate", "1250", "--technology", "myrinet"], "not both"),
    (["kurmann-stricker", "--wire-rate", "-3"], "--wire-rate: -3 is not between 1e-06 and 1e+09"),
])
def test_a_wire_rate_the_study_cannot_use_is_one_line(argv, msg, capsys, tmp_path):
    assert main(["study", "run", *argv, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_wire_rate_is_taken_by_the_study_not_passed_to_run(capsys):
    assert main(["study", "run", "kurmann-stricker", "--wire-rate", "1250", "--dry-run"]) == 0
    assert "--wire-rate" not in capsys.readouterr().out
