"""The atomics of the deposit level (deposit.fop, cas, acc, get_acc): OSU's
sync modes per test, IMB's aggregate mode, the rules that refuse what MPI does
not define before anything launches, their footprint, the import of OSU's
outputs and the report's view of latency per sync mode."""
from pathlib import Path

import pytest

from fabriclab import imports
from fabriclab.analysis import merge
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.measure.plan import Sampling, build
from fabriclab.report import atomic_views
from fabriclab.report.curves import RunView
from fabriclab.suite import atomics, footprint as fp
from fabriclab.suite.benchmarks import REGISTRY

DATA = Path(__file__).parents[1] / "data" / "imports"
NAMES = ("deposit.fop", "deposit.cas", "deposit.acc", "deposit.get_acc")


def test_each_test_offers_osus_six_syncs_with_its_default():
    """osu_util_mpi.c accepts six -s values for an ALL_SYNC test; osu_get_acc_latency sets no
    default, so its enum's first (LOCK) runs; the others set FLUSH."""
    for name in NAMES:
        assert set(REGISTRY[name].params["sync"].choices) == set(atomics.SYNCS), name
    assert {n: REGISTRY[n].defaults["sync"] for n in NAMES} == {
        "deposit.fop": "flush", "deposit.cas": "flush", "deposit.acc": "flush", "deposit.get_acc": "lock"}
    assert "op" not in REGISTRY["deposit.cas"].params          # compare-and-swap takes no reduction
    assert "no_op" in REGISTRY["deposit.fop"].params["op"].choices
    assert "no_op" not in REGISTRY["deposit.acc"].params["op"].choices   # MPI_NO_OP: fetching calls only
    assert "double" not in REGISTRY["deposit.cas"].params["type"].choices


@pytest.mark.parametrize("args, says", [
    (["deposit.fop", "-p", "op=band", "-p", "type=double"], "op band is not defined for double"),
    (["deposit.acc", "-s", "64", "-p", "op=bxor", "-p", "type=double"], "op bxor is not defined for double"),
    (["deposit.acc", "-s", "64", "-p", "op=no_op"], "parameter op must be one of"),
    (["deposit.cas", "-p", "type=double"], "parameter type must be one of int64, uint64"),
    (["deposit.fop", "-p", "sync=active"], "parameter sync must be one of"),
    (["deposit.fop", "-p", "sync=pscw", "-p", "mode=aggregate"], "mode=aggregate applies only with sync=flush"),
    (["deposit.get_acc", "-s", "64", "-p", "mode=aggregate"], "not sync=lock"),
    (["deposit.cas", "-p", "ops_per_flush=8"], "ops_per_flush=8 applies only with mode=aggregate"),
    (["deposit.fop", "-p", "mode=aggregate", "-p", "clock=per-op"], "clock=per-op applies only with mode=osu"),
    (["deposit.fop", "-s", "16"], "moves one 8-byte int64; size 16 is not 8"),
    (["deposit.acc", "-s", "12"], "size 12 is not a positive whole number of int64 elements"),
])
def test_what_mpi_does_not_define_is_refused_in_one_line_before_launch(fake_core, capsys, args, says):
    rc = main(["run", *args, "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-L", "1", "-q",
               "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and says in err and len(err.splitlines()) == 1, err


def test_a_level_run_leaves_out_the_sizes_an_atomic_cannot_take():
    plan = build(["deposit"], "8,64", None, None, Sampling(), False)
    sizes = {j.bench.name: j.sizes for j in plan.jobs}
    assert sizes["deposit.fop"] == sizes["deposit.cas"] == (8,)
    assert sizes["deposit.acc"] == (8, 64) and sizes["deposit.put_lat"] == (8, 64)
    assert "deposit.fop" not in {j.bench.name for j in build(["deposit"], "64", None, None, Sampling(), False).jobs}
    with pytest.raises(UsageError, match="size 64 is not 8"):
        build(["deposit.fop"], "8,64", None, None, Sampling(), False)
    assert build(["deposit.acc"], "3", None, ["type=int8"], Sampling(), False).jobs[0].sizes == (3,)


def test_aggregate_ops_per_flush_are_imbs_n_sample():
    """IMB_mem_manager.c: n_sample = max(1, min(OVERALL_VOL / size, MSGSPERSAMPLE)), 40 MiB and 1000."""
    assert atomics.window(8, 1000) == 1000
    assert atomics.window(1 << 20, 1000) == 40
    assert atomics.window(64 << 20, 1000) == 1
    assert atomics.window(8, 16) == 16


def test_footprint_counts_a_window_and_one_block_with_a_result_slot_per_aggregate_op():
    def at(size, **params):
        return fp.At(size, params={**REGISTRY["deposit.get_acc"].defaults, **params})
    f = REGISTRY["deposit.get_acc"].footprint
    # window of one page; operand, scratch, one result and CAS's 32 bytes in one page (a real run: 8192)
    assert f.allocated("s", at(8)) == f.allocated("r", at(8)) == 8192
    assert f.allocated("s", at(8, sync="flush", mode="aggregate")) == 4096 + 8192     # 1002 x 8 B + 32
    assert f.allocated("s", at(1 << 20, sync="flush", mode="aggregate")) == (1 << 20) + fp.page(42 * (1 << 20) + 32)
    assert f.allocated("i", at(8)) == 0


def _imported():
    doc = imports.load(DATA / "osu_atomics_v7.txt", "osu")
    merge.analysed(doc)
    return doc


def test_osus_atomic_outputs_are_imported_with_their_sync_and_datatype():
    """Real osu_*_latency outputs (OMB 7.4 under MPICH): the sync in the header becomes the
    variant where it is not the test's default; OSU's MPI_CHAR is type=int8 beside fabriclab's int64."""
    pts = {(p.bench, p.variant, p.size): p for p in _imported().points}
    assert pts[("deposit.fop", "type=int8", 1)].summary.median == pytest.approx(0.15e-6)
    assert pts[("deposit.fop", "sync=lock,type=int8", 1)].summary.median == pytest.approx(2.65e-6)
    assert pts[("deposit.cas", "sync=fence,type=int8", 1)].summary.median == pytest.approx(2.15e-6)  # as printed
    assert pts[("deposit.acc", "sync=pscw,type=int32", 64)].summary.median == pytest.approx(0.62e-6)
    # osu_get_acc_latency: MPI_Win_create and lock/unlock unless told, no Datatype line
    assert ("deposit.get_acc", "type=int8,win=create", 8) in pts
    assert ("deposit.get_acc", "sync=fence,type=int8,win=create", 64) in pts
    assert all(p.legs_per_op == 1 and p.bytes_per_op == p.size for p in pts.values())


def test_the_view_draws_a_bar_per_benchmark_and_sync_and_a_line_per_sync_of_the_vector_ops():
    assert atomic_views.settings("deposit.get_acc", "") == ("lock", "")
    assert atomic_views.settings("deposit.fop", "mode=aggregate,ops_per_flush=64,sync=flush") == ("flush", "aggregate=64")
    assert atomic_views.settings("deposit.acc", "sync=pscw,type=int32") == ("pscw", "type=int32")
    figs = atomic_views.atomics([RunView.of("osu", _imported())])
    bars = figs[0].bars
    assert [b[0] for b in bars] == ["fop flush [type=int8] @1 B", "fop lock [type=int8] @1 B",
                                    "cas fence [type=int8] @1 B", "acc flush [type=int8] @1 B",
                                    "acc pscw [type=int32] @4 B", "get_acc lock [type=int8,win=create] @1 B",
                                    "get_acc fence [type=int8,win=create] @1 B"]
    assert bars[1][1] == pytest.approx(2.65)
    lines = {f.id: [s.label for s in f.series] for f in figs[1:]}
    assert lines == {"atomics-acc": ["acc flush [type=int8]", "acc pscw [type=int32]"],
                     "atomics-get_acc": ["get_acc fence [type=int8,win=create]",
                                         "get_acc lock [type=int8,win=create]"]}


def test_imb_rma_atomic_outputs_are_imported_in_both_modes():
    """IMB-RMA 2021.11 under MPICH: a flush per op (NON-AGGREGATE) and n ops per flush (AGGREGATE);
    IMB's reductions run on MPI_FLOAT, its Compare_and_swap on MPI_INT; 0-byte rows have no element."""
    doc = imports.load(DATA / "imb_rma_atomics_2021.txt", "imb")
    merge.analysed(doc)
    pts = {(p.bench, p.variant, p.size): p.summary.median for p in doc.points}
    assert pts[("deposit.fop", "type=float", 4)] == pytest.approx(0.63e-6)
    assert pts[("deposit.fop", "mode=aggregate,type=float", 4)] == pytest.approx(1.48e-6)
    assert pts[("deposit.cas", "mode=aggregate,type=int32", 4)] == pytest.approx(15.53e-6)
    assert pts[("deposit.get_acc", "sync=flush,type=float", 16)] == pytest.approx(0.63e-6)  # get_acc's own is lock
    assert not any(size == 0 for _, _, size in pts) and len(pts) == 12
