"""The memory estimate against what real ranks hold, and the limits against the core's skips.

Each case runs one point under a stand-in core (tests/fakes/psscore.py) that
samples every rank's proportional set size; the host's peak (all ranks at
one instant) must stay within the estimate, and the estimate within 1.5
times it: an upper bound that is not loose. TCP points count the kernel's
socket queues too, which no process's set size shows."""
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.suite import buffers
from fabriclab.measure import build as corebuild, capacity as resources, mpi
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
from fabriclab.measure.launch import make_spec
from fabriclab.measure.plan import Sampling, build
from fabriclab.host.sysinfo import cache_sizes
from mpihome import mpi_home  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
PSS_CORE = REPO / "tests" / "fakes" / "psscore.py"


# (ranks, benchmark, options): one point each, its buffers large beside the MPI library's own.
CASES = [
    (1, "memory.memcpy", ["-s", "64M"]),
    (2, "message.pingpong", ["-s", "64M"]),
    (2, "message.stream", ["-s", "1M", "--cache", "cold"]),
    (2, "message.postal_full", ["-s", "1M", "--cache", "cold"]),
    (2, "message.conns", ["-s", "64K", "--cache", "cold", "--conns", "64"]),
    (2, "message.scatter", ["-s", "32K", "--cache", "cold"]),
    (4, "message.alltoall", ["-s", "16M"]),
    (4, "message.hotspot", ["-s", "256K", "--cache", "cold", "--active", "3"]),
    (2, "deposit.put_bw", ["-s", "1M"]),
    (2, "deposit.strided_packed", ["-s", "2M", "--strides", "64"]),
    (4, "deposit.hotspot_put", ["-s", "256K", "--cache", "cold", "--active", "3"]),
    (2, "tcp.stream", ["-s", "64M"]),
    (2, "tcp.scatter", ["-s", "256K", "--cache", "cold", "-p", "mode=copy"]),
]
OPEN_MPI = ("message.pingpong", "message.alltoall", "deposit.put_bw", "deposit.strided_packed")


def _host_peak(folder: Path) -> int:
    """The largest sum over ranks read in one pass (tests/fakes/psscore.py)."""
    totals = [int(line.split()[1]) for f in folder.glob("rank*")
              for line in f.read_text().splitlines() if line.strip()]
    assert totals, "no rank wrote its samples"
    return max(totals)


def _estimate(n: int, bench: str, opts: list[str], flavour: str) -> int:
    o = dict(zip(opts[::2], opts[1::2]))
    p = build([bench], o["-s"], o.get("--strides"), [o["-p"]] if "-p" in o else None, Sampling(point_time=0.2),
              False, n, conns=o.get("--conns"), active=o.get("--active"), cache=o.get("--cache", "warm"),
              llc_bytes=max(cache_sizes().values(), default=None))
    return resources.estimate(p, make_spec("mpiexec", "mpiexec", flavour, n)).peak.host_bytes


@pytest.mark.parametrize("flavour,n,bench,opts", [("mpich", *c) for c in CASES] + [
    ("openmpi", *c) for c in CASES if c[1] in OPEN_MPI], ids=lambda x: x if isinstance(x, str) else None)
def test_estimate_bounds_what_the_ranks_hold(flavour, n, bench, opts, tmp_path, monkeypatch):
    home = mpi_home(flavour)
    core = corebuild.ensure_core(mpi.discover(home=home))
    folder = tmp_path / "pss"
    folder.mkdir()
    monkeypatch.setenv("PSS_CORE", core.path)
    monkeypatch.setenv("PSS_DIR", str(folder))
    out = tmp_path / "r.json"
    assert main(["run", bench, *opts, "-n", str(n), "--core", str(PSS_CORE), "--mpi-home", home, "-L", "1",
                 "--point-time", "0.2", "-q", "-o", str(out)]) == 0
    assert len(docs.points(docs.read(out))) == 1
    held, est = _host_peak(folder), _estimate(n, bench, opts, flavour)
    assert held <= est <= 1.5 * held, (bench, resources.amount(held), resources.amount(est))


@pytest.mark.parametrize("bench,size,opts", [
    ("message.pingpong", 1 << 31, []), ("message.alltoall", 1 << 31, ["-n", "2"]),
    ("deposit.put_lat", 1 << 31, []), ("deposit.hotspot_get", 1 << 31, ["-n", "2"]),
    ("deposit.strided_direct", 12, ["--strides", "1"]), ("deposit.strided_shm", 64 << 20, ["--strides", "64"]),
    ("message.scatter", 1 << 20, ["-p", "segments=1024"]), ("tcp.stream", 0, []),
    ("tcp.conns", 0, ["--conns", "1"]), ("tcp.scatter", 1 << 20, ["-p", "segments=1024"])])
def test_limits_are_the_points_the_core_skips(bench, size, opts, tmp_path, capsys):
    """The core skips what the footprint's limit names, with the same reason
    (one size it carries beside it, so the run has something to measure)."""
    home = mpi_home("mpich")
    out = tmp_path / "r.json"
    assert main(["run", bench, "-s", f"{size},8", *opts, "--mpi-home", home, "-L", "1", "--point-time", "0.05",
                 "-q", "-o", str(out)]) == 0
    skips = [r for r in docs.read(out)["records"] if r["kind"] == "skip"]
    b = REGISTRY[bench]
    o = dict(zip(opts[::2], opts[1::2]))
    params = {**b.defaults, **dict([o["-p"].split("=")] if "-p" in o else [])}
    nbuf = buffers.count(size, "warm", buffers.DEFAULT_LLC, b.own_buffers(params))   # as the plan gives the core
    reason = b.footprint.limit(At(size, nbuf, stride=int(o.get("--strides", 1)), params=params))
    assert reason and [(s["size"], s["reason"]) for s in skips] == [(size, reason)]
    assert f"{bench} skips" in capsys.readouterr().err
