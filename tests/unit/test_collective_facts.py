"""The collectives' facts and their refusals: what an op's bytes and bus bandwidth are at N
ranks (nccl-tests' factors), the rank counts a run sweeps, the parameters each operation
takes, and bad input (a size that is not whole elements, a bitwise reduction of a floating
type, a root outside the ranks) ending in one line and exit 2 before anything launches."""
import pytest

from fabriclab.cli import main
from fabriclab.suite import patterns
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.collectives import COLLECTIVES
from fabriclab.schema.records import Point, Summary

COLL = [b for b in REGISTRY if b.startswith("coll.") and not b.startswith("coll.neighbor_")]


def test_one_entry_per_operation_and_a_benchmark_each():
    assert COLL == [f"coll.{op}" for op in COLLECTIVES]
    assert len(COLL) == 16 and all(REGISTRY[b].coll is COLLECTIVES[b[5:]] for b in COLL)
    # the fifteen MPI collectives, and MPI_Reduce_local: one form, one rank is enough
    assert [b for b in COLL if COLLECTIVES[b[5:]].local] == ["coll.reduce_local"]
    local = REGISTRY["coll.reduce_local"]
    assert set(local.params) == {"dtype", "reduce", "sync"} and local.min_ranks == 1
    assert COLLECTIVES["reduce_local"].bus_factor(4) is None
    assert COLLECTIVES["reduce_local"].bytes_per_op(4096, 4, 8) == 4096


@pytest.mark.parametrize("op,n,factor", [("allreduce", 2, 1.0), ("allreduce", 8, 1.75), ("allgather", 4, 0.75),
                                         ("reduce_scatter", 4, 0.75), ("alltoall", 8, 0.875),
                                         ("gather", 2, 0.5), ("bcast", 16, 1.0), ("reduce", 3, 1.0),
                                         ("scan", 4, None), ("barrier", 4, None)])
def test_bus_factors_are_nccl_tests(op, n, factor):
    assert COLLECTIVES[op].bus_factor(n) == (pytest.approx(factor) if factor else None)


@pytest.mark.parametrize("op,size,n,esize,nbytes", [("allreduce", 4096, 4, 4, 4096), ("allgather", 4096, 4, 4, 16384),
                                                    ("alltoallv", 8, 3, 8, 24), ("reduce_scatter", 4096, 3, 4, 4096),
                                                    ("reduce_scatter_block", 40, 3, 4, 36), ("barrier", 0, 4, 1, 0)])
def test_an_ops_bytes_follow_its_convention(op, size, n, esize, nbytes):
    assert COLLECTIVES[op].bytes_per_op(size, n, esize) == nbytes


def test_bus_bandwidth_is_the_points_own_from_the_factor_the_run_recorded():
    p = Point("coll.allreduce", 1 << 20, 1 << 20, Summary(median=1e-3), info={"bus_factor": 1.5})
    assert p.bandwidth_Bps == pytest.approx(1.048576e9) and p.bus_bandwidth_Bps == pytest.approx(1.572864e9)
    assert p.to_dict()["bus_bandwidth_Bps"] == pytest.approx(1.572864e9)
    assert "bus_bandwidth_Bps" not in Point("message.stream", 8, 8, Summary(median=1e-6)).to_dict()


def test_a_run_sweeps_two_four_eight_ranks_and_all():
    assert patterns.default_actives("group", 2) == [2]
    assert patterns.default_actives("group", 12) == [2, 4, 8, 12]
    assert patterns.layout("group", 4, 3).roles == "bbbi"


def test_each_operation_takes_the_parameters_it_has():
    assert "reduce" in REGISTRY["coll.allreduce"].params and "root" not in REGISTRY["coll.allreduce"].params
    assert {"root", "root_shift", "reduce", "in_place"} <= set(REGISTRY["coll.reduce"].params)
    assert "in_place" not in REGISTRY["coll.bcast"].params and "reduce" not in REGISTRY["coll.bcast"].params
    assert set(REGISTRY["coll.barrier"].params) == {"form", "sync", "algorithm", "overlap", "progress"}


@pytest.mark.parametrize("argv,says", [
    (["coll.allreduce", "-s", "6"], "coll.allreduce: size 6 is not a whole number of float elements (4 bytes each)"),
    (["coll.allgather", "-s", "8,12", "-p", "dtype=double"], "size 12 is not a whole number of double elements"),
    (["coll.allreduce", "-s", "8", "-p", "dtype=double", "-p", "reduce=band"],
     "reduction band is not defined for double; it takes int8, int32, int64"),
    (["coll.bcast", "-s", "8", "-p", "root=2"], "root 2 is not one of the 2 ranks taking part (roots are 0..1)"),
    (["coll.gather", "-s", "8", "-n", "4", "-p", "root=3"], "root 3 is not one of the 2 ranks taking part"),
    (["coll.allreduce", "-s", "8", "-p", "form=eager"], "parameter form must be one of blocking, nonblocking"),
])
def test_bad_input_is_one_line_and_launches_nothing(fake_core, argv, says, capsys):
    assert main(["run", *argv, "--dry-run", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


def _overlapped(median, lo, hi, t_pure=1e-3, t_cpu=1e-3, compute=1e-3):
    return Point("coll.allreduce", 1 << 22, 1 << 22, Summary(median=median, n=20, ci_low=lo, ci_high=hi, ci_rel=0.01,
                                                            outliers=0),
                 info={"overlap": {"t_pure_s": t_pure, "t_cpu_s": t_cpu, "compute_steps": 1000}},
                 phases={"post": [1e-5] * 3, "compute": [compute] * 3, "wait": [1e-5] * 3})


def test_overlap_is_imb_nbcs_with_its_interval_from_the_ops():
    o = _overlapped(1.2e-3, 1.1e-3, 1.3e-3).overlap
    assert (o["percent"], o["low"], o["high"]) == pytest.approx((80.0, 70.0, 90.0))
    assert o["compute_slowdown"] == pytest.approx(1.0) and o["cpu_over_pure"] == pytest.approx(1.0)
    # none hidden (the op and the loop add up), all hidden, and clipped at both ends
    assert _overlapped(2.0e-3, 2e-3, 2e-3).overlap["percent"] == 0.0
    assert _overlapped(1.0e-3, 1e-3, 1e-3).overlap["percent"] == 100.0
    assert _overlapped(3.0e-3, 3e-3, 3e-3).overlap["percent"] == 0.0
    assert _overlapped(0.9e-3, 0.9e-3, 0.9e-3).overlap["percent"] == 100.0
    assert Point("coll.allreduce", 8, 8, Summary(median=1e-6)).overlap is None
    assert _overlapped(1.2e-3, 1.1e-3, 1.3e-3).to_dict()["overlap"]["percent"] == pytest.approx(80.0)


def test_a_compute_loop_off_its_speed_is_named_on_the_point():
    from fabriclab.analysis import diagnostics as dg
    ok = _overlapped(1.2e-3, 1.1e-3, 1.3e-3)
    assert dg.check_point(ok, ok.summary, 1.0) == []
    slow = _overlapped(1.2e-3, 1.1e-3, 1.3e-3, t_cpu=2e-3, compute=0.5e-3)
    (d,) = [d for d in dg.check_point(slow, slow.summary, 1.0)]
    assert d.code == "overlap-compute" and "0.25x its time alone" in d.message and "2.00x the time it was " \
        "calibrated to" in d.message and "progress thread" in d.advice


def test_the_tables_overlap_cells_give_the_interval_and_the_compute_loops_speed():
    from fabriclab.report import tables
    assert tables._overlap_cells(_overlapped(1.2e-3, 1.1e-3, 1.3e-3).overlap) == ["80 (70..90)", "1.00x"]
    assert tables._overlap_cells(None) == ["-", "-"]
