"""Inputs a hostile user gives: each ends in one line and exit code 2 before any work,
quickly and within a bounded memory: a number of ranks no machine has, a hostfile that
is no file (a device that never ends, a pipe nobody writes to, a directory) or names no
host, for `run` and for `study run` alike."""
import os
import resource
import time

import pytest

from fabriclab.cli import main

HUGE = "99999999999999999999"


def _within_bounds(argv, capsys, *says):
    t0, rss0 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("fabriclab: error: ") and all(s in err for s in says), err
    assert time.monotonic() - t0 < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 500 << 10      # KiB: under 500 MB more


@pytest.mark.parametrize("cmd", [["run", "message.pingpong", "-s", "8", "--dry-run"], ["run", "app.sort", "--dry-run"],
                                 ["study", "run", "petrini-quadrics", "--dry-run"], ["doctor"]])
@pytest.mark.parametrize("n,says", [(HUGE, "is not between 1 and 16,777,216"), ("0", "0 is not between 1"),
                                    ("-3", "-3 is not between 1"), ("2.5", "'2.5' is not a whole number"),
                                    ("100000000", "100000000 is not between 1")])
def test_a_number_of_ranks_no_machine_has_is_one_line(fake_core, cmd, n, says, capsys):
    extra = ["--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"]] if cmd[0] == "run" else []
    _within_bounds([*cmd, "-n", n, *extra], capsys, "-n/--ranks: ", says)


@pytest.mark.bounds
def test_the_most_ranks_are_planned_in_bounded_time_and_memory(fake_core, capsys):
    """16,777,216 ranks on hosts that wrap around: placement and the memory check count the
    ranks' roles by ranges, not rank by rank."""
    t0 = time.monotonic()
    main(["run", "message.pingpong", "-s", "8", "-n", "16777216", "--hosts", "a,b,a", "--dry-run",
          "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"]])
    assert time.monotonic() - t0 < 5
    assert "16777216" in capsys.readouterr().out


@pytest.fixture
def hostfiles(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    empty = tmp_path / "empty"
    empty.write_text("# only a comment\n\n")
    return {"/dev/zero": "it is a device, not a file", str(fifo): "it is a pipe, not a file",
            str(tmp_path): "it is a directory, not a file", str(empty): "names no host",
            str(tmp_path / "none"): "No such file or directory"}


@pytest.mark.parametrize("cmd", [["run", "message.pingpong", "-s", "8", "--dry-run"],
                                 ["study", "run", "kurmann-stricker", "--dry-run"]])
def test_a_hostfile_that_is_no_file_or_names_no_host_is_one_line(fake_core, hostfiles, cmd, capsys):
    extra = ["--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"]] if cmd[0] == "run" else []
    for path, says in hostfiles.items():
        _within_bounds([*cmd, "--hostfile", path, *extra], capsys, f"hostfile {path}", says)
    big = os.path.join(os.path.dirname(next(iter(p for p in hostfiles if p.endswith("empty")))), "big")
    with open(big, "w") as f:
        f.write("h\n" * (3 << 20))          # 6 MiB: more than a hostfile may be
    _within_bounds([*cmd, "--hostfile", big, *extra], capsys, "larger than 4 MiB")


@pytest.mark.parametrize("argv", [["import", "--from", "osu", "{f}", "-o", "{tmp}/o.json"], ["show", "{f}"],
                                  ["compare", "{f}", "{f}"], ["report", "{f}", "-o", "{tmp}/r.html"],
                                  ["calibrate", "{f}"], ["model", "--topology-file", "{f}", "--no-plot"]])
def test_every_reader_of_an_outside_file_refuses_what_is_no_file_unread(argv, tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for f, kind in (("/dev/zero", "a device"), ("/dev/urandom", "a device"), (str(fifo), "a pipe"),
                    (str(tmp_path), "a directory")):
        _within_bounds([a.format(f=f, tmp=tmp_path) for a in argv], capsys, f"{f}: it is {kind}, not a file")


def test_an_import_longer_than_any_tool_output_is_refused_before_parsing(tmp_path, capsys):
    big = tmp_path / "big.txt"
    big.write_text("# OSU MPI Latency Test v5.6.3\n# Size Latency (us)\n" + "".join(f"{i} 1.5\n" for i in range(101_000)))
    _within_bounds(["import", "--from", "osu", str(big), "-o", str(tmp_path / "o.json")], capsys,
                   "has more than 101,000 lines")


@pytest.mark.parametrize("option", ["--mpi-home", "--mpiexec", "--hostfile"])
def test_a_path_longer_than_any_file_system_takes_is_one_line(option, tmp_path, capsys):
    _within_bounds(["run", "message.pingpong", "-s", "8", "--dry-run", option, "x" * 5000], capsys)


# nine levels of nine aliases in 310 bytes: 9^9 strings once expanded (as the error line
# that shows the value of `attempts` would, before any reader refused aliases)
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefg", "bcdefgh")) + \
    f"attempts: [{','.join(['*h'] * 9)}]\n"


@pytest.mark.parametrize("text,says", [(ALIAS_BOMB, "YAML anchors and aliases"),
                                       ("[" * 30_000 + "]" * 30_000, "nesting depth"),
                                       ("attempts: " + "9" * 5000 + "\n", "an integer of more than 4,300 digits")])
@pytest.mark.parametrize("argv", [["check", "-n", "4", "-o", "{tmp}/c", "--thresholds", "{f}"],
                                  ["model", "--topology-file", "{f}", "--no-plot"],
                                  ["model", "-C", "{f}", "--no-plot"],
                                  ["model", "--prices", "{f}", "--cost", "--no-plot"]])
def test_every_reader_of_a_data_file_refuses_a_hostile_one_in_one_line(argv, text, says, tmp_path, capsys):
    """Every YAML or JSON file goes through one bounded reader (datafile.py)."""
    f = tmp_path / "hostile.yaml"
    f.write_text(text)
    _within_bounds([a.format(f=f, tmp=tmp_path) for a in argv], capsys, str(f), says)


@pytest.mark.parametrize("option,value,says", [
    ("-t", "nan", "-t/--timeout: nan is not a finite number"), ("-t", "1e300", "1e300 is not between 0.001 and 1e+06"),
    ("--point-time", "nan", "--point-time: nan is not a finite"), ("--point-time", "1e308", "1e308 is not between"),
    ("--sample-time", "inf", "--sample-time: inf is not a finite"), ("--per-op", "1e400", "--per-op: 1e400 is not a finite"),
    ("--target-ci", "nan", "--target-ci: nan"), ("--max-samples", "4294967296", "is not between 1 and"),
    ("--warmup", HUGE, "--warmup: "), ("-L", "0", "-L/--launches: 0 is not between 1"), ("--seed", "1e3", "whole number")])
def test_a_number_no_launch_can_take_is_refused_before_the_launch(option, value, says, fake_core, tmp_path, capsys):
    """Not a dry run: the launch is reached only with numbers that are finite and in range."""
    out = tmp_path / "r.json"
    _within_bounds(["run", "message.pingpong", "-s", "8", "-L", "1", "-o", str(out), "--core", fake_core["core"],
                    "--mpiexec", fake_core["mpiexec"], option, value], capsys, says)
    assert not out.exists() and not out.with_suffix(".ndjson").exists()


@pytest.mark.parametrize("cmd", [["tune", "allreduce"], ["congestion"], ["check", "-o", "{tmp}/c"]])
@pytest.mark.parametrize("option,value", [("-t", "nan"), ("-t", "1e300"), ("--point-time", "inf")])
def test_the_commands_that_launch_runs_refuse_them_too(cmd, option, value, fake_core, tmp_path, capsys):
    if cmd[0] == "check" and option == "--point-time":
        option, value = "--attempts", "nan"       # check has no sampling options
    _within_bounds([*(a.format(tmp=tmp_path) for a in cmd), "--dry-run", "--core", fake_core["core"],
                    "--mpiexec", fake_core["mpiexec"], option, value], capsys, option)


def test_a_request_built_in_code_checks_its_numbers_too():
    """tune, congestion and check build their runs' requests and sampling themselves."""
    from fabriclab.errors import UsageError
    from fabriclab.measure.plan import Sampling
    from fabriclab.measure.session import Request
    for bad in (dict(timeout=float("nan")), dict(timeout=1e300), dict(launches=0), dict(seed=True)):
        with pytest.raises(UsageError, match="must be from"):
            Request(**bad).check()
    for bad in (dict(point_time=float("nan")), dict(sample_time=float("inf")), dict(point_time=1e308),
                dict(target_ci=float("nan")), dict(warmup=-1), dict(per_op=float("nan"))):
        with pytest.raises(UsageError, match="must be from"):
            Sampling(**bad).check()
    assert Request().check() and Sampling().check()


@pytest.mark.parametrize("hostile", ["device", "[" * 100_000, '{"fabric": 5, "ucx": [1]}', "[1, 2]"])
def test_a_prebuilt_core_s_levels_file_is_read_bounded(hostile, fake_core, capsys):
    """--core may be anyone's, and so may the levels.json beside it: read as a data file, and
    what is no record of levels is none."""
    levels = os.path.join(os.path.dirname(fake_core["core"]), "levels.json")
    os.unlink(levels)
    if hostile == "device":
        os.symlink("/dev/zero", levels)
    else:
        with open(levels, "w") as f:
            f.write(hostile)
    t0 = time.monotonic()
    assert main(["run", "message.pingpong", "-s", "8", "--dry-run", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"]]) == 0, capsys.readouterr().err
    assert time.monotonic() - t0 < 5
    assert main(["run", "fabric.stream", "-s", "8", "--dry-run", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "fabric" in err, err
