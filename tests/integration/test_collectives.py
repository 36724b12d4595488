"""The collectives on real ranks under MPICH and Open MPI: every operation on three ranks (blocks
that do not halve), in place and not, validated element by element; the bytes of an op and its bus
bandwidth as suite/collectives.py states them; element types with every reduction they take; a
root other than 0, moving every op, in the non-blocking and persistent forms.

A missing MPI is a failure here, never a skip. (Every operation in every form at two ranks is the
coll level's run, tests/integration/test_integration.py.)"""
import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.collectives import DTYPES

pytestmark = pytest.mark.integration


def _points(doc: dict) -> list:
    pts = docs.points(doc)
    assert pts and not [r for r in doc["records"] if r["kind"] == "skip"]
    for p in pts:
        assert p["validation"]["errors"] == 0, (p["bench"], p["variant"], p["size"], p["info"])
        # every rank's result is checked, but a barrier has none, and reduce_scatter_block of one
        # element over three ranks gives each an empty block
        assert (p["validation"]["checked_bytes"] > 0) == (p["bytes_per_op"] > 0), p
    return pts


# Three ranks share this machine's two cores, and an oversubscribed Open MPI takes milliseconds an
# op: under it the in-place forms (the longer paths) and the non-blocking one alone (its level run
# has every form, not in place, at two ranks).
IN_PLACE = {"mpich": "no,yes", "openmpi": "yes"}
FORMS = {"mpich": "nonblocking,persistent", "openmpi": "nonblocking"}


def test_every_operation_on_three_ranks_validates_with_its_bytes_and_bus_bandwidth(flavour, tmp_path):
    doc = realrun.run(tmp_path / "c3.json", "coll", "-n", "3", "--active", "3", "-s", "4,4K",
                      "-p", f"in_place={IN_PLACE[flavour[0]]}", mpi=flavour[0])
    # the neighbourhood collectives (no bus bandwidth, every rank: test_halo_real.py) validate in _points
    pts = [p for p in _points(doc) if REGISTRY[p["bench"]].coll]
    assert {p["bench"] for p in pts} == {b for b in REGISTRY if REGISTRY[b].coll}
    for p in pts:
        c = REGISTRY[p["bench"]].coll
        assert p["active"] == 3 and p["roles"] == "bbb" and p["info"]["ranks"] == 3
        assert p["bytes_per_op"] == c.bytes_per_op(p["size"], 3, DTYPES[p["params"].get("dtype", "int8")])
        assert p["info"]["call"] == c.call and p["info"]["in_place"] == (p["params"].get("in_place") == "yes")
        factor = c.bus_factor(3)
        if factor is None or not p["bandwidth_Bps"]:
            assert "bus_bandwidth_Bps" not in p
        else:
            assert p["bus_bandwidth_Bps"] == pytest.approx(p["bandwidth_Bps"] * factor)


def test_every_operation_with_a_rank_sitting_out_completes(flavour, tmp_path):
    """Three ranks launched, the default sweep of two active ranks, then three: at the first
    point rank 2 sits out, and with sync=barrier (the default) the barrier before each op is the
    active ranks' own, which the idle rank never enters (and the runner puts none of its own on
    every rank before a round: each op already has one). Every collective's every point
    completes, validated; a rank waiting in a barrier the others never enter hangs the launch
    until the silence limit (-t), which fails the run."""
    doc = realrun.run(tmp_path / "idle.json", "coll", "-n", "3", "-s", "8", mpi=flavour[0],
                      after=("-t", "30"))
    pts = [p for p in _points(doc) if REGISTRY[p["bench"]].coll]
    colls = {b for b in REGISTRY if REGISTRY[b].coll}
    got = {(p["bench"], p["active"], p["roles"]) for p in pts}
    assert got == {(b, n, roles) for b in colls for n, roles in ((2, "bbi"), (3, "bbb"))}, got
    for p in pts:
        assert p["samples"] and p["info"]["ranks"] == p["active"] and p["info"]["sync"] == "barrier", p


def test_every_type_with_every_reduction_it_takes(tmp_path):
    ints = realrun.run(tmp_path / "i.json", "coll.allreduce", "coll.scan", "coll.reduce_scatter", "-s", "64,4K",
                       "-p", "dtype=int8,int32,int64", "-p", "reduce=sum,max,min,band,bor,bxor")
    floats = realrun.run(tmp_path / "f.json", "coll.allreduce", "coll.reduce", "-s", "64,4K",
                         "-p", "dtype=float,double", "-p", "reduce=sum,max,min")
    seen = {(p["info"]["dtype"], p["info"]["reduce"]) for p in _points(ints) + _points(floats)}
    assert len(seen) == 3 * 6 + 2 * 3


def test_a_root_other_than_zero_moving_every_op_in_every_form(flavour, tmp_path):
    doc = realrun.run(tmp_path / "r.json", "coll.bcast", "coll.reduce", "coll.gatherv", "coll.scatter", "-n", "3",
                      "--active", "3", "-s", "8,4K", "-p", "root=2", "-p", "root_shift=off,on",
                      "-p", f"form={FORMS[flavour[0]]}", mpi=flavour[0])
    pts = _points(doc)
    forms = FORMS[flavour[0]].split(",")
    assert len(pts) == 4 * 2 * 2 * len(forms)
    assert {(p["info"]["root"], p["info"]["root_shift"], p["info"]["form"]) for p in pts} == {
        (2, shift, form) for shift in (False, True) for form in forms}


def test_open_mpi_takes_its_tuned_and_nonblocking_algorithms(tmp_path):
    doc = realrun.run(tmp_path / "o.json", "coll.allreduce", "-s", "4K", "-p", "algorithm=ring",
                      "-p", "form=blocking,nonblocking", mpi="openmpi")
    got = {(p["info"]["form"], p["info"]["algorithm_control"], p["info"]["algorithm_in_force"]) for p in _points(doc)}
    assert got == {("blocking", "coll_tuned_allreduce_algorithm", "ring"),
                   ("nonblocking", "coll_libnbc_iallreduce_algorithm", "ring")}


def test_an_unknown_algorithm_exits_2_before_launch_with_the_names(tmp_path, capsys):
    from fabriclab.cli import main
    out = tmp_path / "x.json"
    assert main(["run", "coll.bcast", "-p", "algorithm=fastest", "--mpi-home", realrun.mpi_home("mpich"),
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'fastest' is not one MPIR_CVAR_BCAST_INTRA_ALGORITHM accepts" in err and "binomial" in err
    assert len(err.strip().splitlines()) == 1 and not list(tmp_path.iterdir())
    assert main(["list", "--mpi-home", realrun.mpi_home("openmpi")]) == 0
    assert "coll.bcast blocking (coll_tuned_bcast_algorithm): ignore basic_linear" in capsys.readouterr().out


def test_overlap_with_and_without_the_librarys_progress_thread(tmp_path):
    """IMB-NBC's overlap of a 4 MiB non-blocking allreduce: calibrated t_pure and t_cpu in the
    info, the op's post, compute and wait as phases, the figure on the point, in the table and
    in the report; progress=thread starts MPICH's progress thread for its job alone."""
    from fabriclab.cli import main
    out = tmp_path / "ov.json"
    doc = realrun.run(out, "coll.allreduce", "-s", "4M", "-p", "form=nonblocking", "-p", "overlap=on",
                      "-p", "progress=library,thread")
    pts = _points(doc)
    assert {p["params"]["progress"] for p in pts} == {"library", "thread"}
    for p in pts:
        assert set(p["phases"]) == {"post", "compute", "wait"}
        cal = p["info"]["overlap"]
        assert cal["t_pure_s"] > 0 and cal["t_cpu_s"] > 0 and cal["compute_steps"] > 0
        o = p["overlap"]
        assert 0 <= o["low"] <= o["percent"] <= o["high"] <= 100 and o["compute_slowdown"] > 0
    env = {j["variant"]: j["env"] for j in doc["header"]["levels"]["coll"]["jobs"]}
    assert env == {"form=nonblocking,overlap=on,progress=thread": {"MPIR_CVAR_ASYNC_PROGRESS": "1"}}
    assert main(["report", str(out), "-o", str(tmp_path / "ov.html")]) == 0
    assert "MPI_Allreduce: overlap with computation vs size" in (tmp_path / "ov.html").read_text()


def test_show_report_and_compare_against_an_osu_import(tmp_path, capsys):
    """A run of two collectives shows (bus bandwidth columns), reports (their figures) and
    compares with OSU's real output of the same operations imported at the same rank count."""
    from pathlib import Path
    from fabriclab.cli import main
    out = tmp_path / "c.json"
    realrun.run(out, "coll.allreduce", "coll.barrier", "-s", "4,64K", validate=False)
    data = Path(__file__).parents[1] / "data" / "imports" / "osu_barrier_allreduce_v5.txt"
    assert main(["import", str(data), "--from", "osu", "--ranks", "2", "-o", str(tmp_path / "osu.json")]) == 0
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    assert "busbw MB/s" in capsys.readouterr().out
    assert main(["report", str(out), "-o", str(tmp_path / "c.html")]) == 0
    html = (tmp_path / "c.html").read_text()
    assert "MPI_Allreduce: bus bandwidth vs size" in html and "MPI_Barrier: time per op vs ranks" in html
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "osu.json"), str(out)]) == 0
    text = capsys.readouterr().out
    assert "coll.allreduce" in text and "coll.barrier" in text


# A PMPI layer preloaded into the ranks: it counts MPI_Barrier calls, and the 1 MiB float
# allreduces that are the measured op (the runner's own reductions carry 1 to 3 elements).
COUNTER = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static long barriers, ops;
int MPI_Barrier(MPI_Comm c) { barriers++; return PMPI_Barrier(c); }
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
    ops += n == 262144;
    return PMPI_Allreduce(s, r, n, t, o, c);
}
int MPI_Finalize(void)
{
    int rank;
    char path[4096];
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s/rank%d", getenv("FL_COUNT_DIR"), rank);
    FILE *f = fopen(path, "w");
    if (f)
        fprintf(f, "%ld %ld\n", barriers, ops), fclose(f);
    return PMPI_Finalize();
}
"""


# How each MPI's launcher puts a variable in the ranks' environment alone.
PRELOAD = {"mpich": ["-genv", "LD_PRELOAD", "{}"], "openmpi": ["-x", "LD_PRELOAD={}"]}


@pytest.mark.parametrize("sync", ["barrier", "none"])
def test_one_barrier_before_each_op_as_imb_and_osu(sync, flavour, tmp_path, monkeypatch):
    """sync=barrier puts exactly one barrier before each op (IMB's and OSU's convention): the
    runner adds none before a sample, where a second barrier just before the op made MPICH's
    64 KiB allgather read 5% faster. Free-running ops (sync=none) still start each sample
    together, a barrier each."""
    import os
    import subprocess
    name, home = flavour
    src, lib = tmp_path / "count.c", tmp_path / "count.so"
    src.write_text(COUNTER)
    subprocess.run([f"{home}/bin/mpicc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True,
                   env={**os.environ, "OPAL_PREFIX": home} if name == "openmpi" else None)
    monkeypatch.setenv("FL_COUNT_DIR", str(tmp_path))
    samples = 30
    preload = [f"--launcher-arg={a.format(lib)}" for a in PRELOAD[name]]
    doc = realrun.run(tmp_path / "b.json", "coll.allreduce", "-n", "2", "-s", "1M", "-p", f"sync={sync}",
                      *preload, mpi=name, validate=False,
                      after=("--min-samples", str(samples), "--max-samples", str(samples), "--point-time", "10"))
    (p,) = docs.points(doc)
    assert p["batch"] == 1 and len(p["samples"]) == samples, p["batch"]
    for rank in (0, 1):
        barriers, ops = map(int, (tmp_path / f"rank{rank}").read_text().split())
        assert ops >= samples
        if sync == "barrier":
            assert barriers - ops <= 3, (barriers, ops)      # a barrier per op, and one at the start
        else:
            assert samples <= barriers <= samples + 5, (barriers, ops)
