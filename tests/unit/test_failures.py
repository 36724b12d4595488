"""A killed rank named from its launcher's report: the texts MPICH 5.0.2 and
Open MPI 5.0.11 printed when a rank of a real run was killed
(tests/data/killed/, named MPI-ranks-signal-rankN-pidP), and the error line
of a run through main()."""
import re
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.measure import failures

KILLED = Path(__file__).resolve().parents[1] / "data" / "killed"
SIGNALS = {"sigkill": (9, "Killed"), "sigterm": (15, "Terminated"), "sigsegv": (11, "Segmentation fault")}


@pytest.mark.parametrize("path", sorted(KILLED.iterdir()), ids=lambda p: p.stem)
def test_recorded_reports_name_the_signal_host_and_process(path):
    mpi, ranks, sig, rank, pid = re.match(r"(\w+)-[\d.]+-(\d)ranks-(\w+)-rank(\d)-pid(\d+)", path.name).groups()
    text = path.read_text()
    death = failures.parse(text, "") if path.suffix == ".stdout" else failures.parse("", text)
    assert (death.signal, death.how, death.host) == (*SIGNALS[sig], "vm")
    if mpi == "openmpi":            # Open MPI names the rank and its process
        assert (death.rank, death.pid) == (int(rank), int(pid))
    else:                           # Hydra a process only: with 2 ranks the one killed, with 4 maybe another
        assert death.rank is None and (death.pid == int(pid) if ranks == "2" else death.pid > 0)


def test_older_hydra_and_srun_wordings():
    old = ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 1 PID 65033 RUNNING AT node7\n"
           "=   KILLED BY SIGNAL: 9 (Killed)\n")
    assert failures.killed(old, "").startswith("the launcher reports rank 1 (PID 65033) on node7 killed by signal 9")
    srun = "srun: error: nid002: task 3: Killed\nsrun: Terminating StepId=7.0\n"
    assert failures.killed("", srun).startswith("the launcher reports rank 3 on nid002 killed by signal 9 (Killed)")
    assert failures.killed("", "srun: error: c12: tasks 0,4-5: Bus error") == (
        "the launcher reports rank 0 on c12 ended (Bus error)")
    assert failures.killed("nothing to see", "MPI_ABORT was invoked") is None


def test_a_host_of_one_rank_names_it():
    text = (KILLED / "mpich-5.0.2-2ranks-sigkill-rank1-pid16480.stdout").read_text()
    assert failures.killed(text, "", ["a", "vm"]).startswith("the launcher reports rank 1 (PID 16480) on vm killed")
    assert failures.killed(text, "", ["vm", "vm"]).startswith("the launcher reports a rank (PID 16480) on vm killed")


@pytest.mark.parametrize("report", ["mpich-5.0.2-2ranks-sigkill-rank1-pid16480.stdout",
                                    "openmpi-5.0.11-2ranks-sigkill-rank1-pid18447.stderr"])
def test_error_line_names_the_killed_rank(fake_core_process, tmp_path, monkeypatch, capsys, report):
    monkeypatch.setenv("FAKECORE_MODE", "killed:2")
    monkeypatch.setenv("FAKECORE_REPORT", str(KILLED / report))
    out = tmp_path / "r.json"
    assert main(["run", "message.pingpong", "-s", "1:64:x2", "-L", "1", "--core", fake_core_process["core"],
                 "--mpiexec", fake_core_process["mpiexec"], "-q", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("fabriclab: error:"))
    assert "the MPI job ended early" in line and "killed by signal 9 (Killed)" in line, line
    assert "out-of-memory killer" in line and "stderr: (empty)" not in line
    assert ("rank 1 (PID 18447) on vm" if "openmpi" in report else "a rank (PID 16480) on vm") in line
    doc = docs.read(out)
    assert doc["footer"]["status"] == "failed" and "killed by signal 9" in doc["footer"]["error"]
    assert len(docs.points(doc)) == 2
