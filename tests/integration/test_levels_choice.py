"""How a run of the levels below MPI chooses and records its provider or transports, on the real
core and libraries: the default and why, bad names refused before launching, a capability the
provider lacks skipped with the reason, a level the machine cannot build named with its fix."""
import subprocess
import sys
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
FABRICLAB = str(Path(sys.executable).parent / "fabriclab")


def test_one_host_runs_on_shm_and_the_header_says_why(tmp_path):
    out = tmp_path / "r.json"
    assert main(["run", "fabric.pingpong", "ucx.pingpong", "-s", "8", "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    levels = doc["header"]["levels"]
    job = levels["fabric"]["jobs"][0]
    assert job["provider"] == "shm" and "one host" in job["why"] and job["answer"]["inject_size"] > 0
    assert levels["fabric"]["library"]["name"] == "libfabric" and Path(levels["fabric"]["library"]["path"]).exists()
    assert levels["ucx"]["jobs"][0]["tls"].startswith("default") and levels["ucx"]["library"]["name"] == "UCX"
    info = {p["bench"]: p["info"] for p in docs.points(doc)}
    assert info["fabric.pingpong"]["provider"] == "shm" and info["ucx.pingpong"]["lanes"]


@pytest.mark.parametrize("argv, line", [
    (["fabric.stream", "-p", "provider=nosuch"], "libfabric has no provider 'nosuch' here; available: tcp"),
    (["ucx.stream", "-p", "tls=nosuch"], "UCX has no transport 'nosuch' here; available: self"),
])
def test_bad_names_are_one_line_and_exit_2_before_launching(argv, line, tmp_path):
    p = subprocess.run([FABRICLAB, "run", *argv, "-o", str(tmp_path / "r.json"), *FAST],
                       capture_output=True, text=True, timeout=300)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("fabriclab: error: "), p.stderr
    assert line in lines[0] and not (tmp_path / "r.json").exists()


def test_a_provider_without_rma_skips_the_puts_with_the_reason(tmp_path):
    out = tmp_path / "r.json"
    assert main(["run", "fabric.put_bw", "-s", "8", "-p", "provider=sm2", "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    skips = [r for r in doc["records"] if r["kind"] == "skip"]
    assert not docs.points(doc) and skips and "sm2" in skips[0]["reason"], skips


def test_doctor_lists_providers_and_transports(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "ok    fabric     libfabric 2." in out and "ok    ucx        UCX 1." in out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("      ")]
    assert ["shm", "rdm"] == rows[[r[0] for r in rows].index("shm")][:2]
    assert any(r[0] == "posix" for r in rows)


def test_a_level_that_cannot_be_built_is_named_with_its_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FABRICLAB_LIBFABRIC", str(tmp_path))     # a directory without the library
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "holds no libfabric.so.1; `apt-get install libfabric-dev" in listing
    assert "fabric.pingpong " in listing and "[unavailable]" in listing.split("fabric.pingpong ")[1].splitlines()[0]
    assert main(["run", "fabric.pingpong", "-s", "8", "-o", str(tmp_path / "f.json"), *FAST]) == 2
    assert "the fabric level is not available" in capsys.readouterr().err
    # the rest works unchanged, from a core built without the level
    assert main(["run", "message.pingpong", "ucx.pingpong", "-s", "8", "-o", str(tmp_path / "m.json"), *FAST]) == 0
    assert {p["bench"] for p in docs.points(docs.read(tmp_path / "m.json"))} == {"message.pingpong", "ucx.pingpong"}
