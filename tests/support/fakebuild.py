"""The fake core as a run finds it: an executable beside the levels.json a real build writes."""
import sys
from pathlib import Path

FAKES = Path(__file__).resolve().parents[1] / "fakes"


def fake_core(folder: Path) -> dict:
    """An executable fake core (runs with this Python) in `folder`, and the fake launcher."""
    exe = folder / "fakecore"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKES / 'fakecore.py'} \"$@\"\n")
    exe.chmod(0o755)
    # as a real core built with libfabric and UCX records beside itself (measure/build.py)
    (folder / "levels.json").write_text(
        '{"fabric": {"available": true, "source": "mpi"}, "ucx": {"available": true, "source": "mpi"}}')
    return {"core": str(exe), "mpiexec": str(FAKES / "mpiexec")}


def run_study(name: str, fake: dict, out: Path, *extra: str) -> int:
    """`fabriclab study run NAME` on the fake core into `out`, one launch per point."""
    from fabriclab.cli import main
    return main(["study", "run", name, "-o", str(out), "--core", fake["core"], "--mpiexec", fake["mpiexec"],
                 "-L", "1", "-q", *extra])
