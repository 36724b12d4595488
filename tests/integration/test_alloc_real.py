"""Every benchmark's declared allocation against what the core reports it allocated.

The core counts, per rank and point, what the kernel allocates from setup
through verify (fl_alloc, MPI windows, UCX's mapped regions: util.c) and
prints it as `rank_alloc_bytes`; each benchmark's footprint declares it
(suite/footprint.py, `alloc`). Every registered benchmark runs here under
real MPICH at a small and a large size (64 KiB and 1 MiB; the scatter kernels
and the applications at their own sweeps' ends), each level in one run of all
its benchmarks and the patterns once more on 4 ranks, so that a hotspot
target serves several senders; every rank's declaration must be within 15% of
the core's figure."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
from mpihome import mpi_home  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
TOLERANCE = 0.15
QUICK = ["-L", "1", "--point-time", "0.02", "--min-samples", "2", "--warmup", "2", "--validate", "-q"]
STRIDES = ["--strides", "1,8"]
CONNS = ["--conns", "1,8"]

# (benchmarks, ranks, options): one run each.
RUNS = [
    (["memory"], 2, ["-s", "64K,1M", *STRIDES]),
    (["deposit"], 2, ["-s", "64K,1M", *STRIDES]),
    ([b for b in REGISTRY if b.startswith("message.") and b != "message.scatter" and not REGISTRY[b].min_ranks > 2],
     2, ["-s", "64K,1M", *CONNS]),
    ([b for b in REGISTRY if b.startswith("tcp.") and b != "tcp.scatter"], 2, ["-s", "64K,1M", *CONNS]),
    ([b for b in REGISTRY if b.startswith("fabric.") and b != "fabric.scatter"], 2, ["-s", "64K,1M", *CONNS]),
    (["ucx"], 2, ["-s", "64K,1M"]),
    (["udp"], 2, ["-s", "1K,32K"]),      # a datagram carries 65,507 bytes at most
    # the atomics update one 8-byte word; the message rate over four endpoints
    (["fabric.atomic", "ucx.atomic", "fabric.msg_rate", "ucx.msg_rate"], 2, ["-s", "8", "-p", "endpoints=4"]),
    # deposit's atomics of one element (the level's run above has acc and get_acc), per op and aggregated
    (["deposit.fop", "deposit.cas"], 2, ["-s", "8", "-p", "mode=osu,aggregate"]),
    (["message.scatter", "tcp.scatter", "fabric.scatter"], 2, ["-s", "8,1K", "-p", "mode=copy"]),
    (["message.scatter", "tcp.scatter", "fabric.scatter"], 2, ["-s", "8,1K"]),
    (["app.transpose"], 2, ["-s", "256,1K"]),
    (["app.matmul"], 2, ["-s", "256,512"]),
    (["app.sort"], 2, ["-s", "64K,1M"]),
    # the noise records: a few and many quanta; the detours' fixed store
    (["noise"], 2, ["-p", "quanta=500,20000", "-p", "record_ms=50"]),
    # every collective on 3 ranks (blocks that are not a power of two), in place and not; in the
    # persistent form, whose buffers are the blocking form's and a request per root besides
    # (a launch a variant: 3 ranks on 2 cores take a second each)
    (["coll"], 3, ["-s", "64K,1M", "--active", "3", "-p", "form=persistent", "-p", "in_place=no,yes",
                   "-p", "root_shift=on"]),
    (["message.hotspot", "deposit.hotspot_put", "deposit.hotspot_get", "fabric.hotspot_put", "message.alltoall"],
     4, ["-s", "64K,1M", "--active", "3", "-p", "variant=collective,concurrent"]),
    # the congestion benchmarks: victims, and aggressors in every kind of role (alltoall's a, a
    # pattern's s r b t, a one-sided origin a and hotspot t), isolated and congested
    # IMB-P2P's stencils: a 4 x 2 grid and a 2 x 2 x 2 one
    (["message.stencil2d", "message.stencil3d"], 8, ["-s", "64K,1M"]),
    ([b for b in REGISTRY if REGISTRY[b].pattern == "congestion"], 6,
     ["-s", "64K,1M", "-p", "victims=2", "-p", "aggressor=alltoall,incast,pairs,bipairs,put_incast,get_bcast"]),
]


def _job(header: dict, point: dict) -> dict:
    return next(j for j in header["plan"]["jobs"] if j["bench"] == point["bench"] and j["variant"] == point["variant"])


def _roles(point: dict, nranks: int) -> str:
    return point.get("roles") or ("sr" + "i" * nranks)[:nranks]


def _at(header: dict, point: dict) -> At:
    """The point as the kernel saw it: the plan's buffers for its size (the
    point records the slots a kernel kept), its layout and parameters."""
    job, n = _job(header, point), header["nranks"]
    buffers = job.get("buffers") or [1] * len(job["sizes"])
    roles = _roles(point, n)
    return At(point["size"], buffers[job["sizes"].index(point["size"])], point["stride"], point["conns"], n,
              roles.count("s"), point["active"] if point.get("active") is not None else n, point["params"])


def _deviations(doc: dict) -> list:
    """(benchmark, where, rank, role, declared, reported) of every rank of every point."""
    out = []
    for p in docs.points(doc):
        at, fp = _at(doc["header"], p), REGISTRY[p["bench"]].footprint
        where = f"{p['size']} stride {p['stride']} conns {p['conns']} active {p.get('active')} {p['variant']}"
        for q, (role, got) in enumerate(zip(_roles(p, doc["header"]["nranks"]), p["rank_alloc_bytes"])):
            out.append((p["bench"], where, q, role, fp.allocated(role, at), got))
    return out


def test_every_benchmark_declares_what_the_core_allocates(tmp_path, capsys):
    home = mpi_home("mpich")
    rows = []
    for i, (names, n, opts) in enumerate(RUNS):
        out = tmp_path / f"r{i}.json"
        assert main(["run", *names, *opts, "-n", str(n), "--mpi-home", home, *QUICK, "-o", str(out)]) == 0, names
        rows += _deviations(docs.read(out))
    ran = {r[0] for r in rows}
    assert ran == set(REGISTRY), f"not measured: {sorted(set(REGISTRY) - ran)}"
    worst: dict = {}
    for bench, where, q, role, declared, got in rows:
        dev = abs(declared - got) / got if got else (0.0 if declared == 0 else float("inf"))
        if dev >= worst.get(bench, (-1.0,))[0]:
            worst[bench] = (dev, where, q, role, declared, got)
    with capsys.disabled():
        print("\nlargest deviation of the declared allocation from the core's, per benchmark:")
        for bench in REGISTRY:
            dev, where, q, role, declared, got = worst[bench]
            print(f"  {bench:26} {dev:6.1%}  rank {q} ({role}) at {where}: declared {declared}, core {got}")
    bad = {b: w for b, w in worst.items() if w[0] > TOLERANCE}
    assert not bad, "\n".join(f"{b}: {w}" for b, w in bad.items())

