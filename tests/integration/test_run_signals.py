"""A run ended by a signal, in a real process with the fake core: SIGTERM (as
`timeout`, Slurm's time limit or a preemption sends) ends it as Ctrl-C does,
with status `interrupted`, RUN.json written and every completed point kept."""
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
