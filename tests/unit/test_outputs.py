"""Output paths checked whole before any work: a directory, a device or a pipe
where a document goes, a parent that is a file or cannot be made, each one
line and exit code 2, through every command that writes a file."""
import os
from pathlib import Path

import pytest

from fabriclab import outputs
from fabriclab.cli import main
from fabriclab.errors import UsageError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def untouched(tmp_path, fake_core):
    """Run options with a core that leaves a mark if it is ever launched."""
    mark = tmp_path / "launched"
    exe = tmp_path / "core"
    exe.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    exe.chmod(0o755)
    return ["--core", str(exe), "--mpiexec", fake_core["mpiexec"], "-L", "1", "-s", "1"], mark


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fabriclab: error: cannot "), err
    return err[0]


def test_run_into_a_directory_named_like_the_document(tmp_path, untouched, capsys):
    opts, mark = untouched
    (tmp_path / "X.json").mkdir()
    assert main(["run", "message.pingpong", *opts, "-o", str(tmp_path / "X.json")]) == 2
    assert f"cannot write {tmp_path / 'X.json'}: it is a directory; name a file inside it" in _one_line(capsys)
    assert not mark.exists() and not (tmp_path / "X.json.tmp").exists() and not (tmp_path / "X.ndjson").exists()


def test_run_into_a_directory_writes_nothing_beside_it(tmp_path, untouched, capsys):
    opts, mark = untouched
    (tmp_path / "DIR").mkdir()
    assert main(["run", "message.pingpong", *opts, "-o", str(tmp_path / "DIR")]) == 2
    assert "DIR: it is a directory" in _one_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DIR", "core", "fakecore", "levels.json"]


def test_run_into_a_pipe_or_under_a_file(tmp_path, untouched, capsys):
    opts, mark = untouched
    os.mkfifo(tmp_path / "pipe")
    assert main(["run", "message.pingpong", *opts, "-o", str(tmp_path / "pipe")]) == 2
    assert "pipe: it is a pipe, not a file" in _one_line(capsys)
    (tmp_path / "plain").write_text("x")
    assert main(["run", "message.pingpong", *opts, "-o", str(tmp_path / "plain" / "r.json")]) == 2
    assert f"{tmp_path / 'plain'} is not a directory" in _one_line(capsys)
    assert main(["run", "message.pingpong", *opts, "-o", "/proc/fabriclab-check/r.json"]) == 2
    assert "cannot create directories in /proc" in _one_line(capsys)
    assert not mark.exists()


def test_run_makes_a_missing_parent(tmp_path, fake_core, capsys):
    out = tmp_path / "a" / "b" / "r.json"
    assert main(["run", "message.pingpong", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"],
                 "-L", "1", "-s", "1", "-q", "-o", str(out)]) == 0
    assert out.is_file() and out.with_suffix(".ndjson").is_file()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".fabriclab-check")]


def test_devices_take_text_but_not_documents(tmp_path):
    with pytest.raises(UsageError, match="cannot write /dev/full: it is a device, not a file"):
        outputs.file("/dev/full")
    assert outputs.file("/dev/null", stream=True) == Path("/dev/null")
    with pytest.raises(UsageError, match="it is a directory"):
        outputs.file(tmp_path, stream=True)
    (tmp_path / "r.json.tmp").mkdir()
    with pytest.raises(UsageError, match="its temporary file .*r.json.tmp is a directory"):
        outputs.file(tmp_path / "r.json")
    with pytest.raises(UsageError, match="cannot create plots .*README.md: it is not a directory"):
        outputs.directory(REPO / "README.md", "plots")
    assert outputs.directory(tmp_path / "new" / "plots") == tmp_path / "new" / "plots"
    assert not (tmp_path / "new").exists()          # checked, not made


@pytest.fixture
def run_doc(tmp_path, fake_core):
    out = tmp_path / "r.json"
    assert main(["run", "message.saturation", "-n", "4", "--core", fake_core["core"], "--mpiexec",
                 fake_core["mpiexec"], "-L", "1", "-s", "1K", "-q", "-o", str(out)]) == 0
    return str(out)


@pytest.mark.parametrize("argv", [
    ["show", "{doc}", "-o", "{dir}"],
    ["compare", "{doc}", "{doc}", "-o", "{dir}"],
    ["report", "{doc}", "-o", "{dir}"],
    ["plot", "{doc}", "-o", "{dir}.svg"],
    ["calibrate", "{doc}", "-o", "{dir}"],
    ["import", str(REPO / "tests" / "data" / "imports" / "osu_bibw_v5.txt"), "--from", "osu", "-o", "{dir}"],
    ["model", "--nodes", "2:4", "--output", "{file}"],
    ["reproduce", "sci-myrinet-2002", "--output", "{file}"],
    ["testbed", "validate", str(REPO / "examples" / "testbeds" / "ring.yaml"), "--hosts",
     "a,b,c,d,e,f,g,h", "-o", "{dir}"],
], ids=lambda a: a[0] if a[0] != "testbed" else "testbed-validate")
def test_every_command_that_writes_checks_its_path_first(argv, run_doc, tmp_path, capsys):
    (tmp_path / "d").mkdir()
    (tmp_path / "d.svg").mkdir()
    (tmp_path / "f").write_text("x")
    args = [a.format(doc=run_doc, dir=tmp_path / "d", file=tmp_path / "f") for a in argv]
    capsys.readouterr()
    assert main(args) == 2
    line = _one_line(capsys)
    assert "it is a directory" in line or "it is not a directory" in line, line
