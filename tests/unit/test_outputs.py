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
    (tmp_path / "r.json.tmp").mkdir()           # not in the way: a temporary file takes a new name
    assert outputs.file(tmp_path / "r.json") == tmp_path / "r.json"
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


# ---- names taken exclusively, links never followed ------------------------------------------

def test_two_runs_in_one_second_keep_both(tmp_path, fake_core, monkeypatch):
    from datetime import datetime, timezone
    from fabriclab.measure import session
    from fabriclab.schema import load

    class Frozen(datetime):             # the clock stands still: both runs start in one second
        @classmethod
        def now(cls, tz=None):
            return datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
    monkeypatch.setattr(session, "datetime", Frozen)
    monkeypatch.chdir(tmp_path)
    opts = ["--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-L", "1", "-q"]
    assert main(["run", "message.pingpong", "-s", "1", *opts]) == 0
    assert main(["run", "message.pingpong", "-s", "2", *opts]) == 0
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert names == ["fabriclab-20240501-120000-2.json", "fabriclab-20240501-120000-2.ndjson",
                     "fabriclab-20240501-120000.json", "fabriclab-20240501-120000.ndjson"]
    for stem, size in (("fabriclab-20240501-120000", 1), ("fabriclab-20240501-120000-2", 2)):
        for ext in (".json", ".ndjson"):
            assert {p.size for p in load(tmp_path / "results" / (stem + ext)).points} == {size}


def test_a_default_name_held_by_a_running_stream_is_passed_over(tmp_path):
    (tmp_path / "r.ndjson").write_text("")            # a run that started and has no document yet
    assert outputs.unique(tmp_path / "r.json") == tmp_path / "r-2.json"
    assert (tmp_path / "r-2.ndjson").is_file()       # taken at once: the next caller passes it over
    assert outputs.unique(tmp_path / "r.json") == tmp_path / "r-3.json"
    assert outputs.new_directory(tmp_path / "d") == tmp_path / "d"
    assert outputs.new_directory(tmp_path / "d") == tmp_path / "d-2"


@pytest.mark.parametrize("link", ["X.json", "X.ndjson"])
def test_run_refuses_a_link_in_place_of_its_document_or_stream(link, tmp_path, untouched, capsys):
    opts, mark = untouched
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    (tmp_path / link).symlink_to(elsewhere)
    assert main(["run", "message.pingpong", *opts, "-o", str(tmp_path / "X.json")]) == 2
    line = _one_line(capsys)
    assert f"cannot write {tmp_path / link}: it is a symbolic link (to {elsewhere})" in line
    assert elsewhere.read_text() == "keep" and not mark.exists()


def test_writers_replace_a_file_and_never_follow_a_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    (tmp_path / "f").write_text("old")
    assert outputs.write(tmp_path / "f", "new").read_text() == "new"
    (tmp_path / "l").symlink_to(elsewhere)
    for write in (lambda: outputs.write(tmp_path / "l", b"x"), lambda: outputs.stream(tmp_path / "l"),
                  lambda: outputs.file(tmp_path / "l", stream=True)):
        with pytest.raises(UsageError, match="it is a symbolic link"):
            write()
    with pytest.raises(UsageError, match="it is a symbolic link"):   # a link made while it was written
        with outputs.replacing(tmp_path / "g") as f:
            f.write("x")
            (tmp_path / "g").symlink_to(elsewhere)
    assert elsewhere.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "f", "g", "l"]   # no temporary left
    (tmp_path / "null").symlink_to("/dev/null")          # a link to a device is written in place
    assert outputs.write(tmp_path / "null", "x", stream=True) == tmp_path / "null"


def test_text_outputs_refuse_a_link_before_any_work(run_doc, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    (tmp_path / "t.txt").symlink_to(elsewhere)
    capsys.readouterr()
    assert main(["show", run_doc, "-o", str(tmp_path / "t.txt")]) == 2
    assert "t.txt: it is a symbolic link" in _one_line(capsys)
    assert elsewhere.read_text() == "keep"


def test_a_named_pipe_no_process_reads_is_waited_for_then_one_line(tmp_path, monkeypatch):
    """Writing into a FIFO without a reader would block for ever: it waits PIPE_WAIT_S for one."""
    monkeypatch.setattr(outputs, "PIPE_WAIT_S", 0.2)
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="a named pipe no process read within 0.2 s"):
        outputs.write(fifo, "text\n", stream=True)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)      # a reader: the text goes through
    try:
        outputs.write(fifo, "text\n", stream=True)
        assert os.read(reader, 100) == b"text\n"
    finally:
        os.close(reader)


def test_own_descriptors_take_text_appended_whatever_they_are_open_on(tmp_path):
    """/dev/stdout redirected to a file (`> out.txt`, `>> log`) is /proc/self/fd/1, a link to that
    file: the user's own descriptor, written in place and appended to, not refused as a link."""
    log = tmp_path / "log.txt"
    log.write_text("before\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        own = Path(f"/proc/self/fd/{fd}")
        outputs.file(own, stream=True)
        outputs.write(own, "after\n", stream=True)
    finally:
        os.close(fd)
    assert log.read_text() == "before\nafter\n"
    with pytest.raises(UsageError, match="symbolic link"):         # another link to that file stays refused
        (tmp_path / "ln").symlink_to(log)
        outputs.file(tmp_path / "ln", stream=True)
