"""The CLI in-process, end to end through the fake core and fake launcher."""
import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main


def run_args(fake, tmp_path, *extra):
    return ["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(tmp_path / "r.json"),
            "-q", *extra]


def test_run_writes_valid_document(fake_core, tmp_path, capsys):
    rc = main(run_args(fake_core, tmp_path, "message.pingpong", "message.stream", "-s", "0:1K:x4", "--validate"))
    assert rc == 0
    doc = docs.read(tmp_path / "r.json")
    assert doc["footer"]["status"] == "complete"
    pts = docs.points(doc)
    k = doc["header"]["plan"]["launches"]
    assert k == 5  # the default
    for launch in range(k):  # every launch measures every point, in its own shuffled order
        mine = [p for p in pts if p["launch"] == launch]
        assert sorted((p["bench"], p["size"]) for p in mine) == sorted(
            (b, s) for b in ("message.pingpong", "message.stream") for s in [0, 1, 4, 16, 64, 256, 1024])
    assert all(p["validation"]["errors"] == 0 for p in pts)
    assert doc["header"]["mpi"]["library"] == "FakeMPI 1.0"
    assert doc["header"]["argv"][:2] == ["fabriclab", "run"]
    launches = [r for r in doc["records"] if r["kind"] == "launch"]
    assert len(launches) == 2 * k and launches[0]["command"][0] == fake_core["mpiexec"]
    ends = [r for r in doc["records"] if r["kind"] == "launch_end"]
    assert len(ends) == 2 * k and all("steal_fraction" in r["noise"] for r in ends)
    # The fake core follows Hockney with 1 us latency and 5 GB/s: the fit must find them.
    main(["show", str(tmp_path / "r.json"), "-f", "json", "-o", str(tmp_path / "s.json")])
    shown = json.loads((tmp_path / "s.json").read_text())
    h = shown["derived"]["message.pingpong"]
    assert h["hockney_latency_s"] == pytest.approx(1e-6, rel=0.01)
    assert h["hockney_rinf_Bps"] == pytest.approx(5e9, rel=0.01)


@pytest.fixture(scope="module")
def pingpong(fake_core_module, tmp_path_factory):
    """One run of message.pingpong, shown in every format."""
    d = tmp_path_factory.mktemp("pp")
    assert main(run_args(fake_core_module, d, "message.pingpong", "-s", "1:64:x8")) == 0
    return d / "r.json"


@pytest.mark.parametrize("fmt,marker", [("table", "median"), ("md", "| size |"), ("csv", "bench,variant,size,stride,conns,active"),
                                        ("json", '"rows"')])
def test_show_formats(pingpong, capsys, fmt, marker):
    capsys.readouterr()
    assert main(["show", str(pingpong), "-f", fmt]) == 0
    assert marker in capsys.readouterr().out


def test_dead_rank_keeps_completed_points(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_MODE", "die:3")
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "1:64:x2")) == 1
    assert "ended early" in capsys.readouterr().err
    stream = docs.read(tmp_path / "r.ndjson")
    assert len(docs.points(stream)) == 3 and stream["footer"]["points"] == 3
    launch = next(r for r in stream["records"] if r["kind"] == "launch")
    assert launch["hello"]["mpi_library"] == "FakeMPI 1.0"  # streamed, not only in RUN.json


def test_point_without_samples_fails_cleanly(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_MODE", "nosamples:1")
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "1:8:x2")) == 1
    assert "unusable point" in capsys.readouterr().err
    doc = docs.read(tmp_path / "r.json")
    assert doc["footer"]["status"] == "failed" and doc["footer"]["points"] == 1


def test_core_error_line_is_reported(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_MODE", "error")
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "8")) == 1
    assert "fake kernel failure" in capsys.readouterr().err


def test_separate_one_rank_jobs_stop_before_any_point(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_RANKS", "1")  # what a launcher of another MPI gives: rank 0 of 1, twice
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "8")) == 1
    err = capsys.readouterr().err
    assert "mpiexec started 2 separate MPI jobs of 1 rank each, not one job of 2 ranks" in err
    doc = docs.read(tmp_path / "r.json")
    assert doc["footer"]["status"] == "failed" and not docs.points(doc)
    assert next(r for r in doc["records"] if r["kind"] == "launch")["hello"]["ranks"] == 1  # the evidence


def test_dry_run_prints_commands(fake_core, tmp_path, capsys):
    assert main(run_args(fake_core, tmp_path, "tcp", "--dry-run")) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    from fabriclab.suite.benchmarks import select
    assert len(lines) == len(select(["tcp"])) and all(fake_core["core"] in ln and "-n 2" in ln for ln in lines)
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("argv,msg", [
    (["run", "nosuch"], "unknown benchmark"),
    (["run", "-s", "1:x"], "malformed size"),
    (["run", "memory.strided_load", "--strides", "0"], "stride 0"),
    (["run", "--target-ci", "2"], "--target-ci"),
    (["show", "/nonexistent.json"], "cannot read"),
    (["run", "--mpiexec", "/nonexistent/mpiexec"], "not found"),
    (["frobnicate"], "invalid choice"),
    (["run", "--ranks", "x"], "'x' is not a whole number"),
    # a network file is read before launch even where no job models it and the run has one host
    (["run", "message.pingpong", "--network", "/nonexistent/net.yaml", "--dry-run"], "cannot read topology file"),
    (["run", "-o", "-"], "a run's document and its stream cannot go to stdout ('-')"),
    (["run", "-o", "r.ndjson", "--dry-run"], "-o r.ndjson names the stream: give the document, r.json"),
    (["run", "-o", ".", "--dry-run"], "cannot write .: it is a directory"),
    (["run", "-o", "/", "--dry-run"], "cannot write /: it is a directory"),
    (["run", "message.pingpong", "-o", "/tmp/", "--dry-run"], "cannot write /tmp/: it is a directory"),
    (["congestion", "-n", "4", "-o", "/proc", "--dry-run"], "cannot write /proc: it is a directory"),
    (["check", "-o", "-"], "the check's folder cannot go to stdout"),
    (["study", "run", "millich-george-oral", "-o", "-"], "the study's folder cannot go to stdout"),
    # argparse's parse grows as the square of the options: 5,000 flows are refused at once
    (["model", "--topology-file", "n.yaml", *["--flow", "tcp:a:b"] * 5000], "5,001 options on one command line"),
])
def test_bad_input_is_one_line_exit_2(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_mpi_home_outranks_environment(fake_core, tmp_path, monkeypatch):
    from fabriclab.measure.mpi import discover
    home = tmp_path / "mpi"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "mpiexec").symlink_to(fake_core["mpiexec"])
    monkeypatch.setenv("FABRICLAB_MPIEXEC", "/nonexistent/mpiexec")
    assert discover(home=str(home), need_compiler=False).mpiexec == str(home / "bin" / "mpiexec")
    with pytest.raises(Exception, match="not found"):
        discover(need_compiler=False)


def test_unwritable_outputs_are_one_line(fake_core, tmp_path, capsys):
    assert main(["run", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-q",
                 "-o", "/proc/nope/r.json", "message.pingpong", "-s", "8"]) == 2
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "8")) == 0
    assert main(["show", str(tmp_path / "r.json"), "-o", "/proc/nope/x.csv"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("cannot write") == 2


def test_list_names_every_benchmark(capsys):
    from fabriclab.suite.benchmarks import REGISTRY
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in REGISTRY)


def test_run_ends_with_a_one_screen_summary(fake_core, default_suite, tmp_path, capsys):
    from fabriclab.suite.benchmarks import suite
    from fabriclab.measure.plan import Sampling, build
    out = default_suite["printed"]          # what `fabriclab run` printed after the default suite (unit/conftest.py)
    lines = out.strip().splitlines()
    variants = build(None, None, None, None, Sampling(), False).jobs
    assert len(lines) <= 2 * len(variants) + 15  # a row per benchmark variant (two for a long name), a few more
    assert max(map(len, lines)) <= 100          # it fits a 100-column terminal, prose wrapped
    assert "latency" in out and "peak bandwidth" in out and all(b.name in out for b in suite())
    assert f"fabriclab show {default_suite['path']}" in out
    assert main(["run", "message.pingpong", "-s", "8,64", "--core", fake_core["core"], "--mpiexec",
                 fake_core["mpiexec"], "-o", str(tmp_path / "t.json"), "--tables", "-L", "1"]) == 0
    out = capsys.readouterr().out
    assert "95% CI" in out and "latency" in out and "peak bandwidth" in out


def test_progress_in_a_log_is_a_few_lines():
    """Not a terminal: a line at the start and at every tenth, not one per point or benchmark."""
    import io
    from fabriclab.cli.progress import Progress
    out = io.StringIO()
    p = Progress(1905, stream=out)
    for i in range(1905):
        p.advance(f"bench{i // 70}", None)
    lines = out.getvalue().splitlines()
    assert len(lines) == 11 and lines[0].startswith("fabriclab: 1905 points to measure")
    assert lines[-1].startswith("fabriclab: 100% (1905/1905 points")


@pytest.mark.parametrize("argv", [
    ["run", "message.pingpong", "-s", "8,1K", "-n", "4", "-p", "window=8", "--validate"],
    ["show", "r.json", "-f", "csv"], ["compare", "a.json", "b.json", "-a", "0.01"],
    ["model", "--system", "sci-ring", "--nodes", "8"], ["study", "run", "petrini-quadrics", "--dry-run"],
    ["testbed", "up", "net.yaml", "--name", "x"], ["doctor", "--aa"], ["reproduce", "sci-myrinet-2002"],
])
def test_a_command_line_parses_the_same_with_only_its_subcommand_built(argv):
    from fabriclab.cli.main import COMMANDS, parser
    full = parser()
    whole, only = full.parse_args(argv), parser(argv[0]).parse_args(argv)
    assert {k: v for k, v in vars(whole).items() if k != "func"} == {k: v for k, v in vars(only).items() if k != "func"}
    assert whole.func.__qualname__ == only.func.__qualname__
    assert set(full._subparsers._group_actions[0].choices) == COMMANDS


def test_the_streamed_header_is_the_final_header(fake_core, tmp_path):
    """RUN.ndjson's first line is the header as RUN.json has it: the hosts, the MPI
    library and the launcher are known when it is first streamed, not patched after."""
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "8", "-L", "1")) == 0
    first = json.loads((tmp_path / "r.ndjson").read_text().splitlines()[0])
    final = docs.read(tmp_path / "r.json")["header"]
    assert first["kind"] == "header"
    line = ("kind", "schema", "schema_version")   # what a line of the stream says of itself
    assert {k: v for k, v in first.items() if k not in line} == {k: v for k, v in final.items() if k not in line}
    assert final["mpi"]["library"] == "FakeMPI 1.0" and "hosts" in final["launcher"]
