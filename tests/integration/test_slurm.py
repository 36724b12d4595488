"""fabriclab under a real Slurm (tests/support/slurmbed.py: two slurmd nodes n1 and n2
on this machine), with MPICH and Open MPI from PyPI, run as a user would:
`salloc -N 2 -n 2 fabriclab run ...`.

A missing Slurm or MPI is a failure here, never a skip: `make test` installs them."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from slurmbed import slurm  # noqa: F401  (the fixture)
from mpihome import mpi_home
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def short_cache():
    """The session's core cache by a short path (a link in a fresh folder under /tmp): MPICH's
    ranks under srun --mpi=pmi2 fail in MPI_Init, in UCX's address exchange, once the core's
    command line passes about 240 bytes (docs/mpi.md), and the tests' numbered temporary
    folders (/tmp/pytest-of-root/pytest-NNNN/cache) make it that long."""
    d, cache = Path(tempfile.mkdtemp(prefix="fl", dir="/tmp")), Path(os.environ["FABRICLAB_CACHE"])
    cache.mkdir(parents=True, exist_ok=True)
    (d / "c").symlink_to(cache)
    yield str(d / "c")
    shutil.rmtree(d)


def _run(cluster, out: Path, home: str, *argv: str, cache: str) -> subprocess.CompletedProcess:
    """fabriclab run inside a fresh two-node allocation."""
    cmd = ["salloc", "-N", "2", "-n", "2", "--quiet", sys.executable, "-m", "fabriclab.cli", "run",
           "--mpi-home", home, "-q", "-o", str(out), *FAST, *argv]
    return subprocess.run(cmd, env={**cluster.environ(), "FABRICLAB_CACHE": cache}, capture_output=True,
                          text=True, timeout=180)


def _one_job_on_both_nodes(doc: dict, plugin: str) -> None:
    launches = [r for r in doc["records"] if r["kind"] == "launch"]
    assert launches
    for r in launches:
        assert r["hello"]["ranks"] == 2 and sorted(r["hello"]["hosts"]) == ["n1", "n2"], r["hello"]
        assert r["command"][0].endswith("srun") and f"--mpi={plugin}" in r["command"]
    assert doc["header"]["hosts"] and sorted(doc["header"]["hosts"]) == ["n1", "n2"]


@pytest.mark.parametrize("flavour,plugin", [("mpich", "pmi2"), ("openmpi", "pmix")])
def test_pingpong_under_srun(slurm, short_cache, flavour, plugin, tmp_path):  # noqa: F811
    home = mpi_home(flavour)
    out = tmp_path / f"{flavour}.json"
    p = _run(slurm, out, home, "message.pingpong", "coll.allreduce", "-s", "8,4K", "--validate", "--launcher", "srun",
             cache=short_cache)
    assert p.returncode == 0, p.stderr
    doc = docs.read(out)
    assert doc["footer"]["status"] == "complete"
    launcher = doc["header"]["launcher"]
    assert (launcher["launcher"], launcher["flavour"]) == ("srun", flavour)
    assert (launcher["mpi_plugin"], launcher["mpi_plugin_from"]) == (plugin, "fabriclab")
    if flavour == "openmpi":
        assert launcher["env"] == {"OPAL_PREFIX": home, "PMIX_MCA_psec": "native"}
    else:
        assert launcher["env"] == {}
    _one_job_on_both_nodes(doc, plugin)
    pts = docs.points(doc)
    assert sorted((p["bench"], p["size"]) for p in pts) == [("coll.allreduce", 8), ("coll.allreduce", 4096),
                                                          ("message.pingpong", 8), ("message.pingpong", 4096)]
    for pt in pts:                  # a collective runs under srun as the other levels do
        assert all(0 < s < 1 for s in pt["samples"])
        assert pt["validation"]["errors"] == 0 and pt["validation"]["checked_bytes"] > 0


def test_the_apps_run_across_both_nodes(slurm, short_cache, tmp_path):  # noqa: F811
    """The three apps in one allocation of two nodes: 1 and 2 active ranks, every result checked."""
    out = tmp_path / "apps.json"
    p = _run(slurm, out, mpi_home("mpich"), "app", "-s", "97", "--validate", "--launcher", "srun",
             cache=short_cache)
    assert p.returncode == 0, p.stderr
    doc = docs.read(out)
    _one_job_on_both_nodes(doc, "pmi2")
    pts = docs.points(doc)
    assert {(pt["bench"], pt["active"]) for pt in pts} == {(b, a) for b in ("app.transpose", "app.matmul", "app.sort")
                                                         for a in (1, 2)}
    assert all(pt["validation"]["errors"] == 0 and pt["validation"]["checked_bytes"] > 0 for pt in pts)
    assert all(sum(pt["rank_sent_bytes"]) > 0 for pt in pts if pt["active"] == 2)


def test_auto_picks_srun_inside_an_allocation(slurm, short_cache, tmp_path):  # noqa: F811
    out = tmp_path / "auto.json"
    p = _run(slurm, out, mpi_home("mpich"), "message.pingpong", "-s", "8", cache=short_cache)
    assert p.returncode == 0, p.stderr
    doc = docs.read(out)
    assert doc["header"]["launcher"]["launcher"] == "srun"
    _one_job_on_both_nodes(doc, "pmi2")


# A wrong plugin starts two 1-rank jobs. message.pingpong needs 2 ranks, so
# each singleton stops at its option check (an error line with ranks 1);
# memory.memcpy runs on 1, so each prints a hello with ranks 1 and would measure.
@pytest.mark.parametrize("flavour,wrong,hint,bench", [
    ("mpich", ["--launcher-arg=--mpi=none"], "use --srun-mpi pmi2 in place of --launcher-arg=--mpi=none",
     "message.pingpong"),
    ("mpich", ["--launcher-arg=--mpi=none"], "use --srun-mpi pmi2 in place of --launcher-arg=--mpi=none",
     "memory.memcpy"),
    ("openmpi", ["--srun-mpi", "pmi2"], "use --srun-mpi pmix", "message.pingpong"),
])
def test_singletons_stop_the_run_with_the_plugin_to_use(slurm, short_cache, flavour, wrong, hint, bench,
                                                      tmp_path):  # noqa: F811
    out = tmp_path / "single.json"
    p = _run(slurm, out, mpi_home(flavour), bench, "-s", "8", "--launcher", "srun", *wrong, cache=short_cache)
    assert p.returncode == 1, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("fabriclab: error:")]
    assert len(errors) == 1, p.stderr
    assert "srun started 2 separate MPI jobs of 1 rank each, not one job of 2 ranks" in errors[0]
    assert errors[0].endswith(hint), errors[0]
    doc = docs.read(out)
    assert doc["footer"]["status"] == "failed" and doc["footer"]["points"] == 0
    assert not docs.points(doc)


def test_check_runs_on_the_allocation_it_is_given(slurm, tmp_path):  # noqa: F811
    """fabriclab check inside an allocation: its runs take the allocation's two nodes through
    srun; without a network file the collectives are measured and reported, not judged."""
    cmd = ["salloc", "-N", "2", "-n", "2", "--quiet", sys.executable, "-m", "fabriclab.cli", "check",
           "--mpi-home", mpi_home("mpich"), "-q", "--tests", "collectives", "--attempts", "1",
           "-o", str(tmp_path / "c")]
    p = subprocess.run(cmd, env=slurm.environ(), capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    assert "REPORTED collectives" in p.stdout and p.stdout.rstrip().endswith("check passed")
    _one_job_on_both_nodes(docs.read(tmp_path / "c" / "collectives-1.json"), "pmi2")
