"""`fabriclab history` through main(), in this process, on SQLite stores in a temporary folder:
add and list with their filters; a folder's documents (a stream beside its document added once,
a file that is no document left out with a note, a named bad file refusing the whole add);
rebuild; compare by a run's uid and by a date; trend and check on sixty runs with a 30% step
from run 40; report and export; the one-line refusals (several clusters, a missing store, a bad
--store on `run`); and `run --store` adding its document. The documents are made once."""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from fabriclab.analysis.history import ratio_verdict
from fabriclab.cli import main
from store_docs import HEADER, launched, stream, write  # noqa: E402  (tests/support)

M = 2e-6                # a ping-pong's time per op
RUNS, STEP = 60, 39     # sixty runs; from the 40th (index 39) 30% slower
STEPPED = "message.pingpong||8|1|1||"
BASE = (1.00, 1.01, 0.99)
NEW = {"slow": (1.30, 1.31, 1.29), "same": (1.01, 1.00, 1.02), "noisy": (0.95, 1.25, 1.60)}
EXPECTED = {"slow": "slower", "same": "same", "noisy": "noise"}


def _doc(path: Path, run_id: str, start: str, records: list) -> Path:
    return write(path, records, {**HEADER, "run_id": run_id, "start_time": start}, footer={"end_time": start})


def _uid(run_id: str, start: str) -> str:
    return f"{run_id}@{start}"


def _hour(i: int, day: str = "2026-10") -> str:
    """Run i's start: hourly from the first day of the month."""
    return f"{day}-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00"


def fl(*argv) -> int:
    return main([str(a) for a in argv])


def run(capsys, *argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `fabriclab ARGV`."""
    capsys.readouterr()
    rc = fl(*argv)
    out, err = capsys.readouterr()
    return rc, out, err


def listed(capsys, store, *options) -> list[str]:
    rc, out, _ = run(capsys, "history", "list", "--store", store, "-f", "json", *options)
    assert rc == 0
    return [r["uid"] for r in json.loads(out)]


def one_line_error(err: str, *says: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fabriclab: error: "), err
    assert "Traceback" not in err and all(s in lines[0] for s in says), err


@pytest.fixture(autouse=True)
def _no_users_store(tmp_path, monkeypatch):
    """The default store a file in this test's own folder, never the user's."""
    for name in ("FABRICLAB_STORE", "SLURM_CLUSTER_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The documents and two stores.

    small/ (store small.sqlite): run p1 (ping-pong, 11-05), p2 (ping-ping, 11-06) with its stream
    p2.ndjson beside it, p3's stream alone (cut short, 11-07), a tune.json (11-08) and notes.json
    that is no document. big.sqlite: cluster alps, sixty runs of one ping-pong with a 30% step
    from run 40; cluster bern, runs b0 (11-01) and b1 (11-02) of three variants whose launch
    medians make b1 slower, the same and noise; cluster geneva, six runs of an unchanged series."""
    top = tmp_path_factory.mktemp("history")
    small, series, pair, flat = (top / n for n in ("small", "series", "pair", "flat"))
    for d in (small, series, pair, flat):
        d.mkdir()
    rng = np.random.default_rng(7)
    starts = {n: f"2026-11-{d}T10:00:00+00:00" for n, d in (("p1", "05"), ("p2", "06"), ("p3", "07"))}
    _doc(small / "p1.json", "p1", starts["p1"], launched("message.pingpong", [M] * 3))
    p2 = launched("message.pingping", [M] * 3)
    _doc(small / "p2.json", "p2", starts["p2"], p2)
    stream(small / "p2.ndjson", "p2", starts["p2"], p2)
    stream(small / "p3.ndjson", "p3", starts["p3"], launched("message.pingpong", [M] * 3))
    (small / "notes.json").write_text('{"tests": 3}')
    tune = small / "tune.json"
    tune.write_text(json.dumps({"op": "allreduce", "library": "mpich", "ranks": 4, "measured": [],
                                "choices": [{"size": 8, "algorithm": "ring", "fastest": "ring", "ratio": 0.8,
                                             "ratio_ci_low": 0.7, "ratio_ci_high": 0.9, "verdict": "faster",
                                             "medians_s": {}}], "measure": "gone.json", "check_runs": []}))
    os.utime(tune, (1_794_132_000, 1_794_132_000))          # 2026-11-08T10:00Z: a tune is dated by its file

    for i in range(RUNS):
        level = M * (1.3 if i >= STEP else 1.0)
        _doc(series / f"s{i:02d}.json", f"s{i:02d}", _hour(i),
             launched("message.pingpong", level * np.exp(rng.normal(0, 0.003, 3))))
    b = {}
    for name, day in (("b0", "01"), ("b1", "02")):
        b[name] = f"2026-11-{day}T10:00:00+00:00"
        _doc(pair / f"{name}.json", name, b[name],
             [r for v in NEW for r in launched("message.pingpong", [M * x for x in (BASE if name == "b0" else NEW[v])],
                                                variant=v)])
    for i in range(6):
        _doc(flat / f"g{i}.json", f"g{i}", _hour(i, "2026-12"),
             launched("message.pingpong", M * np.exp(rng.normal(0, 0.003, 3))))

    stores = {"small": top / "small.sqlite", "big": top / "big.sqlite"}
    assert fl("history", "add", "--quiet", "--store", stores["small"], small) == 0
    for cluster, folder in (("alps", series), ("bern", pair), ("geneva", flat)):
        assert fl("history", "add", "--quiet", "--store", stores["big"], "--cluster", cluster, folder) == 0
    return {"top": top, "small": small, "series": series, "stores": stores, "starts": starts, "b": b,
            "tune": tune}


def _copy(made, name: str, to: Path) -> Path:
    out = to / f"{name}.sqlite"
    shutil.copyfile(made["stores"][name], out)
    return out


# ---- add, list, rebuild ------------------------------------------------------------------------


def test_a_folder_is_added_once_per_run_and_listed_by_kind_bench_and_date(made, capsys):
    store, s = str(made["stores"]["small"]), made["starts"]
    p1, p2, p3 = (_uid(n, s[n]) for n in ("p1", "p2", "p3"))
    everything = listed(capsys, store)
    assert len(everything) == 4 and everything[:3] == [p1, p2, p3] and everything[3].startswith("tune-")
    rc, out, _ = run(capsys, "history", "list", "--store", store, "-f", "json")
    status = {r["uid"]: r["status"] for r in json.loads(out)}
    assert status[p2] == "complete" and status[p3] == "incomplete"     # p2's document, not its stream
    assert listed(capsys, store, "--kind", "tune") == everything[3:]
    assert listed(capsys, store, "--kind", "run") == [p1, p2, p3]
    assert listed(capsys, store, "--bench", "message.pingping") == [p2]
    assert listed(capsys, store, "--bench", "message.pingpong") == [p1, p3]
    assert listed(capsys, store, "--since", "2026-11-06", "--until", "2026-11-07") == [p2, p3]
    assert listed(capsys, store, "--since", "2026-11-07T10:00:01") == everything[3:]
    assert listed(capsys, store, "--until", "2026-11-05") == [p1]
    rc, out, err = run(capsys, "history", "list", "--store", store)
    assert rc == 0 and len(out.splitlines()) == 5 and all(u in out for u in everything) and "4 runs" in err


def test_adding_a_folder_says_what_it_left_out_and_what_was_there_already(made, tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    rc, _, err = run(capsys, "history", "add", "--store", store, made["small"])
    assert rc == 0 and "4 added, 0 already" in err
    assert "left out 1 file" in err and "notes.json" in err and "not a fabriclab document" in err
    rc, _, err = run(capsys, "history", "add", "--store", store, made["small"] / "p1.json")
    assert rc == 0 and "0 added, 1 already" in err
    before = store.read_bytes()
    rc, _, err = run(capsys, "history", "add", "--store", store, made["small"] / "p2.ndjson")   # named: refused
    assert rc == 2 and store.read_bytes() == before
    one_line_error(err, _uid("p2", made["starts"]["p2"]), "stored already")


def test_a_named_bad_file_is_one_line_and_adds_nothing(made, tmp_path, capsys):
    store = _copy(made, "small", tmp_path)
    before = store.read_bytes()
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "fabriclab.run", "schema_version": 15, "header": {')
    rc, out, err = run(capsys, "history", "add", "--store", store, made["series"] / "s00.json", bad)
    assert rc == 2 and out == ""
    one_line_error(err, str(bad))
    rc, out, err = run(capsys, "history", "add", "--store", store, made["series"] / "s00.json", tmp_path / "gone.json")
    assert rc == 2 and out == ""
    one_line_error(err, str(tmp_path / "gone.json"), "no such file")
    assert store.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "small.sqlite"]


def _runs_json(capsys, store) -> list[dict]:
    rc, out, _ = run(capsys, "history", "list", "--store", store, "-f", "json")
    assert rc == 0
    return [{k: v for k, v in r.items() if k not in ("id", "added_s")} for r in json.loads(out)]


def test_rebuild_from_a_folder_equals_adding_it(made, tmp_path, capsys):
    store = _copy(made, "big", tmp_path)       # other runs first: rebuild keeps only the folder's
    rc, _, err = run(capsys, "history", "rebuild", "--store", store, made["small"])
    assert rc == 0 and "4 runs" in err
    assert _runs_json(capsys, store) == _runs_json(capsys, made["stores"]["small"])
    s = made["starts"]
    a, b = (run(capsys, "history", "compare", "--store", x, "--cluster", "n2", "--baseline", _uid("p1", s["p1"]),
                _uid("p3", s["p3"]), "-f", "json") for x in (store, made["stores"]["small"]))
    assert a == b and a[0] == 0 and len(json.loads(a[1])["points"]) == 1


# ---- compare ------------------------------------------------------------------------------------


@pytest.mark.parametrize("baseline", ["uid", "date"])
def test_compare_gives_each_points_verdict_from_the_launch_medians(made, capsys, baseline):
    b = made["b"]
    ref = _uid("b0", b["b0"]) if baseline == "uid" else "2026-11-01"
    rc, out, err = run(capsys, "history", "compare", "--store", made["stores"]["big"], "--cluster", "bern",
                       "--baseline", ref, "-f", "json")
    assert rc == 0
    got = json.loads(out)
    assert (got["base"], got["new"]) == (_uid("b0", b["b0"]), _uid("b1", b["b1"]))
    verdicts = {p["series"].split("|")[1]: p for p in got["points"]}
    assert {v: p["verdict"] for v, p in verdicts.items()} == EXPECTED
    for v, p in verdicts.items():
        want = ratio_verdict([M * x for x in BASE], [M * x for x in NEW[v]], factor=1.05)
        assert (p["ratio"], p["ci_low"], p["ci_high"], p["verdict"]) == pytest.approx(
            (want.ratio, want.ci_low, want.ci_high, want.verdict))
        assert p["base_launches"] == p["new_launches"] == 3
    assert verdicts["slow"]["ratio"] == pytest.approx(1.30)


def test_compare_as_a_table_and_against_a_named_run(made, capsys):
    b = made["b"]
    rc, out, _ = run(capsys, "history", "compare", "--store", made["stores"]["big"], "--baseline",
                     _uid("b1", b["b1"]), _uid("b0", b["b0"]))
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith(f"base {_uid('b1', b['b1'])}") and len(lines) == 5          # the line of runs, the heading, three points
    verdicts = {ln.split()[-2]: ln.split()[-4] for ln in lines[2:]}     # ... verdict bench [variant] size
    assert verdicts == {"[slow]": "faster", "[same]": "same", "[noisy]": "noise"}


def test_compare_with_the_previous_or_the_first_run(made, capsys):
    store, b = made["stores"]["big"], made["b"]
    for ref, base, new in (("previous", "s58", "s59"), ("first", "s00", "s59")):
        rc, out, _ = run(capsys, "history", "compare", "--store", store, "--cluster", "alps", "--baseline", ref,
                         "-f", "json")
        got = json.loads(out)
        assert rc == 0 and (got["base"], got["new"]) == (_uid(base, _hour(int(base[1:]))), _uid(new, _hour(RUNS - 1)))
    rc, out, _ = run(capsys, "history", "compare", "--store", store, "--cluster", "bern", "--baseline", "previous",
                     "-f", "json")
    assert rc == 0 and {p["verdict"] for p in json.loads(out)["points"]} == set(EXPECTED.values())
    rc, out, err = run(capsys, "history", "compare", "--store", store, "--cluster", "bern", "--baseline", "previous",
                       _uid("b0", b["b0"]))
    assert rc == 2 and out == ""
    one_line_error(err, _uid("b0", b["b0"]), "first")


# ---- trend, check --------------------------------------------------------------------------------


def test_trend_finds_the_step_at_run_40_of_60(made, capsys):
    rc, out, err = run(capsys, "history", "trend", "--store", made["stores"]["big"], "--cluster", "alps", "-f", "json")
    assert rc == 0
    (step,) = json.loads(out)
    assert step["series"] == STEPPED and step["index"] == STEP and step["runs"] == RUNS and step["last"]
    assert step["run"] == _uid("s39", _hour(STEP)) and step["ratio"] == pytest.approx(1.3, rel=0.01)
    assert step["ci_low"] > 1.25 and step["ci_high"] < 1.35 and step["p_value"] < 0.01
    rc, out, err = run(capsys, "history", "trend", "--store", made["stores"]["big"], "--cluster", "alps")
    assert rc == 0 and out.startswith("message.pingpong 8: +") and "alps: 1 step" in err
    assert f"from run 40 of 60 ({step['run']}, 2026-10-02 15:00)" in out


def test_check_fails_on_the_step_naming_its_series_and_passes_an_unchanged_one(made, capsys):
    store = made["stores"]["big"]
    rc, out, err = run(capsys, "history", "check", "--store", store, "--cluster", "alps")
    assert rc == 1 and out.startswith("REGRESSION message.pingpong 8: +") and "1 regression" in err
    assert "from run 40 of 60" in out
    assert len(out.splitlines()) == 1
    rc, out, err = run(capsys, "history", "check", "--store", store, "--cluster", "geneva")
    assert rc == 0 and out == "" and "passed" in err
    rc, out, _ = run(capsys, "history", "check", "--store", store, "--cluster", "alps", "--threshold", "1.5")
    assert rc == 0 and out == ""


# ---- report, export ------------------------------------------------------------------------------


def test_report_writes_one_page_with_every_series(made, tmp_path, capsys):
    out = tmp_path / "page" / "h.html"
    out.parent.mkdir()
    rc, _, err = run(capsys, "history", "report", "--store", made["stores"]["big"], "--cluster", "bern",
                     "--output", out)
    assert rc == 0 and list(out.parent.iterdir()) == [out]
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") or html.lstrip().lower().startswith("<!doctype html>")
    for v in NEW:
        assert f"message.pingpong [{v}] 8" in html
    assert "3 series" in err


def test_report_refuses_an_output_through_a_link_and_makes_a_missing_folder(made, tmp_path, capsys):
    """A link as the output is refused (outputs.py: never a file written through a link, here one
    to a file not yet there); a folder that does not exist is made, as for a run's document."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "h.html").symlink_to(real / "h.html")
    rc, out, err = run(capsys, "history", "report", "--store", made["stores"]["big"], "--cluster", "bern",
                       "--output", tmp_path / "h.html")
    assert rc == 2 and out == ""
    one_line_error(err, str(tmp_path / "h.html"), "symbolic link")
    assert list(real.iterdir()) == []
    rc, out, err = run(capsys, "history", "report", "--store", made["stores"]["big"], "--cluster", "bern",
                       "--output", tmp_path / "missing" / "h.html")
    assert rc == 0 and (tmp_path / "missing" / "h.html").read_text().startswith("<!DOCTYPE html>")


def test_export_is_read_by_prometheus(made, capsys):
    rc, out, _ = run(capsys, "history", "export", "--store", made["stores"]["big"], "--cluster", "alps")
    assert rc == 0
    families = {f.name: f for f in text_string_to_metric_families(out)}
    samples = [s for f in families.values() for s in f.samples]
    assert samples and any(s.labels.get("bench") == "message.pingpong" for s in samples)
    latest = [s for s in samples if s.labels.get("bench") == "message.pingpong" and s.value == pytest.approx(
        M * 1.3, rel=0.02)]
    assert latest, out
    assert any("regression" in name for name in families), sorted(families)


# ---- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["trend", "check", "report", "export"])
def test_several_clusters_without_cluster_is_one_line(made, capsys, tmp_path, action):
    rc, out, err = run(capsys, "history", action, "--store", made["stores"]["big"],
                       *(["--output", tmp_path / "x"] if action in ("report", "export") else []))
    assert rc == 2 and out == ""
    one_line_error(err, "3 clusters", "alps", "bern", "geneva", "--cluster")
    assert not (tmp_path / "x").exists()


READING = {"list": [], "compare": ["--baseline", "2026-11-01"], "trend": [], "check": [], "report": [],
           "export": []}


@pytest.mark.parametrize("where", ["option", "env", "default"])
def test_a_reading_command_on_a_missing_store_is_one_line_and_creates_nothing(capsys, tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "nowhere" / "s.sqlite" if where != "default" else tmp_path / "xdg" / "fabriclab" / "store.sqlite"
    given = ["--store", store] if where == "option" else []
    if where == "env":
        monkeypatch.setenv("FABRICLAB_STORE", str(store))
    for action, options in READING.items():
        rc, out, err = run(capsys, "history", action, *given, *options)
        assert rc == 2 and out == "", action
        one_line_error(err, str(store))
        assert list(tmp_path.iterdir()) == [], action


@pytest.mark.parametrize("action", [*READING, "compare-first"])
def test_a_cluster_the_store_does_not_hold_is_one_line(made, capsys, tmp_path, action):
    """A misspelt --cluster fails every reading command: a nightly check must not pass on nothing."""
    argv = ["compare", "--baseline", "first"] if action == "compare-first" else [action, *READING[action]]
    out_file = tmp_path / "x"
    rc, out, err = run(capsys, "history", *argv, "--store", made["stores"]["big"], "--cluster", "alsp",
                       *(["--output", out_file] if action in ("report", "export") else []))
    assert rc == 2 and out == ""
    one_line_error(err, "no run of cluster 'alsp'", "alps, bern, geneva")
    assert not out_file.exists()


STORED_VALUES = [("points", "median", "'abc'", "points.median holds 'abc', not a number"),
                 ("points", "ci_low", "'x'", "points.ci_low holds 'x', not a number"),
                 ("runs", "started_s", "'x'", "runs.started_s holds 'x', not a number"),
                 ("launches", "median", "'x'", "launches.median holds 'x', not a number"),
                 ("points", "unit", "x'00ff'", "not a text")]


@pytest.mark.parametrize("table, column, value, says", STORED_VALUES)
def test_a_value_another_program_wrote_into_the_store_is_one_line(made, capsys, tmp_path, table, column, value,
                                                                 says):
    """SQLite keeps text in a number's column: every reader names the column, no traceback."""
    import sqlite3
    store = _copy(made, "big", tmp_path)
    with sqlite3.connect(store) as db:
        db.execute(f"UPDATE {table} SET {column} = {value} WHERE rowid IN (SELECT MIN(rowid) FROM {table})")
    for argv in (["trend"], ["check"], ["compare", "--baseline", "first"], ["export"], ["report", "-o", tmp_path / "h.html"]):
        rc, out, err = run(capsys, "history", *argv, "--store", store, "--cluster", "alps")
        assert rc == 2, (argv, err)
        one_line_error(err, f"{table}.{column} holds", says, "history rebuild")


def _damage(path: Path) -> None:
    """200 bytes of noise in every 4 KiB page after the first two: the file opens, its pages do not read."""
    rng = np.random.default_rng(3)
    data = bytearray(path.read_bytes())
    for at in range(8192, len(data), 4096):
        data[at:at + 200] = rng.integers(0, 256, 200, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))


def test_a_store_damaged_past_its_first_pages_is_one_line_on_every_command(made, capsys, tmp_path):
    store = _copy(made, "big", tmp_path)
    _damage(store)
    for argv in (["list"], ["trend"], ["compare", "--baseline", "first"], ["export"],
                 ["add", made["series"] / "s00.json"]):
        rc, out, err = run(capsys, "history", *argv, "--store", store, "--cluster", "alps")
        assert rc == 2, (argv, err)
        one_line_error(err, f"the store {store} is damaged", "history rebuild")


@pytest.mark.parametrize("says", ["unable to open database file", "attempt to write a readonly database"])
def test_a_store_in_a_folder_that_takes_no_file_is_read(made, capsys, tmp_path, monkeypatch, says):
    """A reading command opens a WAL store whose -shm file cannot be made beside it (a read-only
    mount: "unable to open"; another user's folder: "readonly") as immutable; a write to it is
    one line, and so is a read while a -wal file beside it holds commits immutable cannot see."""
    import sqlite3
    from fabriclab.store import backend
    store = _copy(made, "small", tmp_path)
    before = listed(capsys, store)
    real = backend._connect

    def no_shm(path, mode):          # root reads past a folder's permissions: fail as SQLite does there
        if "immutable" not in mode:
            raise sqlite3.OperationalError(says)
        return real(path, mode)
    monkeypatch.setattr(backend, "_connect", no_shm)
    assert listed(capsys, store) == before
    rc, out, err = run(capsys, "history", "add", made["series"] / "s00.json", "--store", store)
    assert rc == 2
    one_line_error(err, f"cannot open the store {store}", says)
    Path(f"{store}-wal").write_bytes(b"\0" * 32)
    rc, out, err = run(capsys, "history", "list", "--store", store)
    assert rc == 2 and out == ""
    one_line_error(err, f"cannot read the store {store} here", f"{store.name}-wal")


@pytest.mark.parametrize("action", ["report", "export"])
def test_an_output_over_the_store_is_refused(made, capsys, tmp_path, action):
    store = _copy(made, "big", tmp_path)
    before = store.read_bytes()
    rc, out, err = run(capsys, "history", action, "--store", store, "--cluster", "alps", "-o", store)
    assert rc == 2
    one_line_error(err, f"cannot write {store}: this command reads it")
    assert store.read_bytes() == before


def test_a_document_whose_start_is_no_time_is_refused(made, capsys, tmp_path):
    """Undated, it would sort after every run (by the time it was added) and be compared as the latest."""
    doc = json.loads((made["series"] / "s00.json").read_text())
    doc["header"]["start_time"] = "yesterday"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    store = _copy(made, "small", tmp_path)
    rc, out, err = run(capsys, "history", "add", tmp_path / "bad.json", "--store", store)
    assert rc == 2
    one_line_error(err, "bad.json: its start time 'yesterday' is not an ISO-8601 time")
    doc["header"]["start_time"] = "2026-10-01T00:00:00Z"          # UTC as Z, which Python 3.10 reads only so
    (tmp_path / "z.json").write_text(json.dumps(doc))
    assert run(capsys, "history", "add", tmp_path / "z.json", "--store", store)[0] == 0
    assert listed(capsys, store, "--since", "2026-10-01", "--until", "2026-10-01") == ["s00@2026-10-01T00:00:00Z"]


# ---- --store on run -------------------------------------------------------------------------------


def _run_args(fake, out: Path, *extra) -> list:
    return ["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", out, "-q", "--launches", "2",
            "message.pingpong", "-s", "8", *extra]


@pytest.mark.parametrize("bad", ["folder", "text", "foreign"])
def test_run_refuses_a_bad_store_before_launching(fake_core_module, tmp_path, capsys, bad):
    store = tmp_path / "store"
    if bad == "folder":
        store.mkdir()
    elif bad == "text":
        store.write_text("a list of runs\n" * 100)
    else:
        import sqlite3
        with sqlite3.connect(store) as db:
            db.execute("CREATE TABLE t (x)")
        db.close()
    before = store.read_bytes() if store.is_file() else None
    rc, out, err = run(capsys, *_run_args(fake_core_module, tmp_path / "r.json", "--store", store))
    assert rc == 2
    one_line_error(err, str(store))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]          # no document, no stream
    assert before is None or store.read_bytes() == before


def test_run_with_a_store_adds_its_document(fake_core_module, tmp_path, capsys, monkeypatch):
    store = tmp_path / "s.sqlite"
    rc, _, err = run(capsys, *_run_args(fake_core_module, tmp_path / "r.json", "--store", store,
                                        "--cluster", "zurich"))
    assert rc == 0 and "1 document added" in err
    from fabriclab import schema
    header = schema.load(tmp_path / "r.json").header
    (r,) = json.loads(run(capsys, "history", "list", "--store", store, "-f", "json")[1])
    assert r["uid"] == f"{header.run_id}@{header.start_time}" and r["cluster"] == "zurich" and r["kind"] == "run"
    assert r["source"] == str(tmp_path / "r.json")
    monkeypatch.setenv("FABRICLAB_STORE", str(store))            # the store named by the environment
    rc, _, err = run(capsys, *_run_args(fake_core_module, tmp_path / "r2.json"))
    assert rc == 0 and len(listed(capsys, store)) == 2
