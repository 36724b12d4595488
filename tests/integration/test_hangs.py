"""A run whose ranks go silent, with the fake core as real processes: the run
names the benchmark, the point and the phase, keeps the points it completed,
and asks the watch what it sees before the ranks are stopped."""
from pathlib import Path

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.measure.runner import Watch, ranks_on


def run_args(fake, tmp_path, *extra):
    return ["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(tmp_path / "r.json"),
            "-q", *extra]


def test_hang_names_bench_point_and_phase(fake_core_process, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_MODE", "hang:2")
    rc = main(run_args(fake_core_process, tmp_path, "message.pingpong", "-s", "1:64:x2", "-t", "1", "--point-time", "0.25"))
    assert rc == 1
    err = capsys.readouterr().err
    assert "message.pingpong" in err and "no output for 1.5 s" in err and "phase: measuring" in err
    doc = docs.read(tmp_path / "r.json")
    assert doc["footer"]["status"] == "failed"
    assert len(docs.points(doc)) == 2


class _Looking(Watch):
    """A watch that notes, when asked after a hang, whether the fake core (its
    processes carry `tag` in their environment) still runs."""

    def __init__(self, tag: str):
        self.tag, self.running = tag.encode(), None

    def stopped(self, rank_hosts):
        self.running = False
        for p in Path("/proc").iterdir():
            try:
                self.running |= self.tag in (p / "environ").read_bytes()
            except OSError:
                continue
        return f"{ranks_on(rank_hosts, ['h0'])} looked at"

    def cleanup(self):
        pass


def test_the_watch_looks_while_the_ranks_still_run(fake_core_process, tmp_path, monkeypatch):
    """A hang is diagnosed before the launch is stopped: counters can still move, the ranks are still there."""
    from fabriclab.measure.session import Site
    tag = f"FABRICLAB_TEST_TAG={tmp_path}"
    watch = _Looking(tag)
    monkeypatch.setattr(Site, "watch", lambda self, spec, counters: watch)
    monkeypatch.setenv("FAKECORE_MODE", "hang:1")
    monkeypatch.setenv(*tag.split("=", 1))
    assert main(["run", "message.pingpong", "-s", "8:64:x2", "-L", "1", "-q", "-t", "1", "--point-time", "0.1", "--core", fake_core_process["core"],
                 "--mpiexec", fake_core_process["mpiexec"], "-o", str(tmp_path / "h.json")]) == 1
    assert watch.running is True
    err = docs.read(tmp_path / "h.ndjson")["footer"]["error"]
    assert "no output for" in err and err.endswith("Ranks 0, 1 on h0 looked at")
