"""`fabriclab history` on both back ends: the same documents added to a SQLite file and to a
PostgreSQL database of the tests' own server (support/postgres.py) print the same for compare,
trend, check (with the same exit codes), export and list (but for when and from where each run
was added); an unreachable PostgreSQL is one line and exit 2 from a process, its password never
shown, and `run` launches nothing on it; two `history add` processes at once on one SQLite
store lose no run."""
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fabriclab.acceptance.check import FAIL, PASS, Attempt, Outcome, to_dict
from fabriclab.cli import main
from postgres import postgres_server  # noqa: F401  (tests/support: fixture)
from store_docs import HEADER, launched, write  # noqa: E402  (tests/support)

M = 2e-6
RUNS, STEP = 30, 19          # thirty runs of alps, from the 20th 30% slower in one variant
BASE = (1.00, 1.01, 0.99)
NEW = {"slow": (1.30, 1.31, 1.29), "same": (1.01, 1.00, 1.02), "noisy": (0.95, 1.25, 1.60)}
SECRET = "secretpw"
UNREACHABLE = f"postgresql://u:{SECRET}@127.0.0.1:1/db"


def fl(*argv, **kw) -> subprocess.CompletedProcess:
    """fabriclab as a process of its own."""
    return subprocess.run([sys.executable, "-m", "fabriclab.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=120, **kw)


def _doc(path: Path, run_id: str, start: str, records: list) -> Path:
    return write(path, records, {**HEADER, "run_id": run_id, "start_time": start}, footer={"end_time": start})


def _check(folder: Path, outcomes: list, when: float) -> None:
    """A check.json of these outcomes, dated (by its file: no runs beside it) at epoch `when`."""
    import os
    folder.mkdir()
    path = folder / "check.json"
    path.write_text(json.dumps(to_dict(outcomes, {"attempts": 1})))
    os.utime(path, (when, when))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """alps/: thirty runs of ping-pong in variants "step" (30% slower from run 20) and "flat", and two
    checks, the second failing its pairs on a cable; bern/: runs b0 and b1 whose launch medians make
    b1 slower, the same and noise in three variants."""
    top = tmp_path_factory.mktemp("docs")
    alps, bern = top / "alps", top / "bern"
    alps.mkdir()
    bern.mkdir()
    rng = np.random.default_rng(11)
    for i in range(RUNS):
        start = f"2026-10-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00"
        recs = launched("message.pingpong", M * (1.3 if i >= STEP else 1) * np.exp(rng.normal(0, 0.003, 3)),
                        variant="step")
        recs += launched("message.pingpong", 3 * M * np.exp(rng.normal(0, 0.003, 3)), variant="flat")
        _doc(alps / f"s{i:02d}.json", f"s{i:02d}", start, recs)
    _check(alps / "check-1", [Outcome("pairs", PASS, [Attempt(PASS, [], [], "pairs-1.json")])], 1_790_000_000)
    label = "link h5-s1 (h5→s1)"
    _check(alps / "check-2", [Outcome("pairs", FAIL, [Attempt(FAIL, [f"cable {label}: 7 of the 7 pairs it limits low"],
                                                              [], "pairs-1.json", named=[label])])], 1_790_100_000)
    for name, day in (("b0", "01"), ("b1", "02")):
        _doc(bern / f"{name}.json", name, f"2026-11-{day}T10:00:00+00:00",
             [r for v in NEW for r in launched("message.pingpong", [M * x for x in (BASE if name == "b0" else NEW[v])],
                                                variant=v)])
    return top


@pytest.fixture(scope="module")
def stores(folders, postgres_server, tmp_path_factory):  # noqa: F811
    """{kind: URL} of a SQLite store and a PostgreSQL one, the same documents added to each by
    `history add`, in the same order."""
    out = {"sqlite": str(tmp_path_factory.mktemp("lite") / "s.sqlite"), "postgresql": postgres_server.create_database()}
    for url in out.values():
        for cluster in ("alps", "bern"):
            assert main(["history", "add", "--quiet", "--store", url, "--cluster", cluster,
                         str(folders / cluster)]) == 0
    return out


COMMANDS = {
    "compare by uid": (["compare", "--cluster", "bern", "--baseline", "b0@2026-11-01T10:00:00+00:00"], 0),
    "compare by date, json": (["compare", "--cluster", "bern", "--baseline", "2026-11-01", "-f", "json"], 0),
    "compare two runs named": (["compare", "--baseline", "b1@2026-11-02T10:00:00+00:00",
                                "b0@2026-11-01T10:00:00+00:00", "-f", "json"], 0),
    "compare within alps": (["compare", "--cluster", "alps", "--baseline", "2026-10-01"], 0),
    "trend": (["trend", "--cluster", "alps"], 0),
    "trend json": (["trend", "--cluster", "alps", "-f", "json"], 0),
    "trend of a bench": (["trend", "--cluster", "bern", "--bench", "message.pingpong", "-f", "json"], 0),
    "check alps": (["check", "--cluster", "alps"], 1),
    "check bern": (["check", "--cluster", "bern"], 0),
    "export": (["export", "--cluster", "alps"], 0),
}


def _run(capsys, url: str, argv: list, err: bool = False) -> tuple:
    """(exit code, stdout) of `history ACTION --store URL ...` in this process; with err, its
    stderr too, the store's URL in it written STORE."""
    capsys.readouterr()
    rc = main(["history", argv[0], "--store", url, *argv[1:]])
    out, e = capsys.readouterr()
    return (rc, out, e.replace(url, "STORE")) if err else (rc, out)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_both_back_ends_print_the_same(stores, capsys, name):
    argv, code = COMMANDS[name]
    lite, pg = (_run(capsys, stores[k], argv, err=True) for k in ("sqlite", "postgresql"))
    assert lite == pg and lite[0] == code and (lite[1] + lite[2]).strip()


def test_what_both_print_is_the_history_made(stores, capsys):
    rc, out = _run(capsys, stores["postgresql"], ["trend", "--cluster", "alps", "-f", "json"])
    (step,) = json.loads(out)
    assert step["series"] == "message.pingpong|step|8|1|1||" and step["index"] == STEP and step["runs"] == RUNS
    rc, out = _run(capsys, stores["postgresql"], ["check", "--cluster", "alps"])
    assert rc == 1 and out.startswith("REGRESSION message.pingpong [step] 8: +") and "FAILING check" in out
    assert "h5-s1" in out
    rc, out = _run(capsys, stores["postgresql"], ["compare", "--cluster", "bern", "--baseline", "2026-11-01",
                                                  "-f", "json"])
    assert {p["series"].split("|")[1]: p["verdict"] for p in json.loads(out)["points"]} == {
        "slow": "slower", "same": "same", "noisy": "noise"}


@pytest.mark.parametrize("options", [[], ["--cluster", "alps", "--kind", "check"], ["--bench", "message.pingpong"],
                                     ["--since", "2026-10-02", "--until", "2026-11-01"]])
def test_both_back_ends_list_the_same_runs(stores, capsys, options):
    def runs(kind):
        rc, out = _run(capsys, stores[kind], ["list", "-f", "json", *options])
        assert rc == 0
        return [{k: v for k, v in r.items() if k not in ("added_s", "source")} for r in json.loads(out)]
    lite, pg = runs("sqlite"), runs("postgresql")
    assert lite == pg and lite
    assert all(isinstance(r["started_s"], float) for r in lite)


@pytest.mark.parametrize("argv", [["list"], ["add", "FILE"], ["trend"], ["check"], ["compare", "--baseline", "x"],
                                  ["export"], ["report", "-o", "OUT"], ["rebuild", "FOLDER"]])
def test_an_unreachable_server_is_one_line_exit_2_never_its_password(folders, tmp_path, argv):
    argv = [{"FILE": folders / "bern" / "b0.json", "OUT": tmp_path / "h.html", "FOLDER": folders / "bern"}.get(a, a)
            for a in argv]
    t = time.monotonic()
    p = fl("history", argv[0], "--store", UNREACHABLE, *argv[1:])
    assert p.returncode == 2 and p.stdout == "" and time.monotonic() - t < 30, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fabriclab: error: cannot connect to the store "), p.stderr
    assert "postgresql://u:***@127.0.0.1:1/db" in lines[0] and SECRET not in p.stderr and "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_run_on_an_unreachable_store_launches_nothing(fake_core_process, tmp_path):
    out = tmp_path / "r.json"
    p = fl("run", "message.pingpong", "-s", "8", "-L", "1", "--core", fake_core_process["core"], "--mpiexec",
           fake_core_process["mpiexec"], "-q", "--store", UNREACHABLE, "-o", out)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1, p
    assert "u:***@127.0.0.1:1/db" in p.stderr and SECRET not in p.stderr and "Traceback" not in p.stderr
    assert not out.exists() and not out.with_suffix(".ndjson").exists()


def test_two_adders_at_once_lose_no_document(tmp_path):
    """Fifty documents each, both processes started together on a store neither has made yet."""
    rng = np.random.default_rng(5)
    uids = []
    for who in ("a", "b"):
        (tmp_path / who).mkdir()
        for i in range(50):
            start = f"2026-09-{1 + i // 24:02d}T{i % 24:02d}:{0 if who == 'a' else 30:02d}:00+00:00"
            _doc(tmp_path / who / f"{who}{i:02d}.json", f"{who}{i:02d}", start,
                 launched("message.pingpong", M * np.exp(rng.normal(0, 0.01, 3))))
            uids.append(f"{who}{i:02d}@{start}")
    store = tmp_path / "s.sqlite"
    procs = [subprocess.Popen([sys.executable, "-m", "fabriclab.cli", "history", "add", "--quiet", "--store",
                               str(store), "--cluster", "c", str(tmp_path / who)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("a", "b")]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0 and "50 added, 0 already" in err, err
    listed = fl("history", "list", "--store", store, "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(r["uid"] for r in json.loads(listed.stdout)) == sorted(uids)
    import sqlite3
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT COUNT(*) FROM points").fetchone() == (100,)
        assert db.execute("SELECT COUNT(*) FROM launches").fetchone() == (300,)
    db.close()
