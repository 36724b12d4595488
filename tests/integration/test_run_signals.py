"""A run ended by a signal, in a real process with the fake core: SIGTERM (as
`timeout`, Slurm's time limit or a preemption sends) ends it as Ctrl-C does,
with status `interrupted`, RUN.json written and every completed point kept."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema


@pytest.mark.parametrize("sig,code,said", [(signal.SIGTERM, 143, "terminated (SIGTERM) during message.pingpong"),
                                           (signal.SIGINT, 130, "interrupted during message.pingpong")])
def test_signal_ends_the_run_as_interrupted(fake_core_process, tmp_path, sig, code, said):
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "fabriclab.cli", "run", "message.pingpong", "-s", "1:64:x2", "-L", "1",
           "--core", fake_core_process["core"], "--mpiexec", fake_core_process["mpiexec"], "-q", "-o", str(out)]
    # SIGINT as an interactive shell leaves it: a shell that starts the tests in the
    # background hands them SIGINT ignored, and Python then leaves it ignored too
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env={**os.environ, "FAKECORE_MODE": "hang:3"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    stream = out.with_suffix(".ndjson")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (stream.exists() and stream.read_text().count('"kind":"point"') == 3):
        time.sleep(0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert f"fabriclab: {said}, launch 1 of 1; the completed points are saved" in err
    doc = docs.read(out)
    assert doc["footer"]["status"] == "interrupted" and doc["footer"]["error"].startswith(said.split(" during")[0])
    assert len(docs.points(doc)) == doc["footer"]["points"] == 3
    assert docs.read(stream)["footer"]["status"] == "interrupted"


@pytest.mark.parametrize("sig,code,said", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                           (signal.SIGINT, 130, "interrupted")])
def test_an_interrupted_study_writes_what_it_completed(fake_core_process, tmp_path, sig, code, said):
    """A study stopped in its first step: the step's completed points, the later steps skipped
    as not run, study.json and the report written, and a line that says so."""
    out = tmp_path / "hv"
    cmd = [sys.executable, "-m", "fabriclab.cli", "study", "run", "hellwagner-via", "-o", str(out), "-L", "1", "-q",
           "--core", fake_core_process["core"], "--mpiexec", fake_core_process["mpiexec"]]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "FAKECORE_MODE": "hang:3"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    streams = lambda: list(out.glob("*.ndjson")) if out.exists() else []  # noqa: E731
    # the first step's launches have 3 points each and end (hang:3 stops a 4th): signal once the
    # first has, while the step runs on; waiting for exactly 3 could miss that moment and signal
    # a later step
    while time.monotonic() < deadline and not any(s.read_text().count('"kind":"point"') >= 3 for s in streams()):
        time.sleep(0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert err.strip().splitlines()[-1].startswith(f"fabriclab: study hellwagner-via {said}: study.json and the "
                                                   "report hold the steps it completed"), err
    manifest = json.loads((out / "study.json").read_text())
    assert manifest["ended"] == said and manifest["steps"][0]["exit"] == code
    assert all(st["skipped"] == f"not run: the study was {said} before it" for st in manifest["steps"][1:])
    assert (out / "report.html").exists()


def test_sigterm_before_any_launch_says_so():
    """SIGTERM while a command is still being prepared (here: a run's command held before it
    plans anything) ends in a line and exit 143, not in silence."""
    code = ("import importlib, sys, time\n"
            "m, r = importlib.import_module('fabriclab.cli.main'), importlib.import_module('fabriclab.cli.run')\n"
            "def held(args):\n    print('ready', flush=True)\n    time.sleep(30)\n"
            "r.cmd_run = held\n"
            "sys.exit(m.main(['run', 'message.pingpong']))\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 143 and err.strip() == "fabriclab: terminated (SIGTERM)", err
