"""The fake core as a run finds it: an executable beside the levels.json a real build writes."""
import sys
from pathlib import Path

FAKES = Path(__file__).resolve().parents[1] / "fakes"
if str(FAKES) not in sys.path:       # fakecore.py and fakeapps.py, for the launches in this process
    sys.path.insert(0, str(FAKES))


def fake_core(folder: Path, process: bool = False) -> dict:
    """An executable fake core (runs with this Python) in `folder`, and the fake launcher.

    Unit tests launch it in their own process (fakeexec.py) unless `process`:
    then every launch is a process (a shell, the launcher, this Python), for
    what only a process shows (signals, a killed rank's report, a real hang)."""
    exe = folder / "fakecore"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKES / 'fakecore.py'} \"$@\"\n")
    exe.chmod(0o755)
    # as a real core built with libfabric and UCX records beside itself (measure/build.py)
    (folder / "levels.json").write_text(
        '{"fabric": {"available": true, "source": "mpi"}, "ucx": {"available": true, "source": "mpi"}}')
    if not process:
        import fakeexec
        fakeexec.IN_PROCESS.add(str(exe.resolve()))
    return {"core": str(exe), "mpiexec": str(FAKES / "mpiexec")}


def run_study(name: str, fake: dict, out: Path, *extra: str) -> int:
    """`fabriclab study run NAME` on the fake core into `out`, one launch per point."""
    from fabriclab.cli import main
    return main(["study", "run", name, "-o", str(out), "--core", fake["core"], "--mpiexec", fake["mpiexec"],
                 "-L", "1", "-q", *extra])
