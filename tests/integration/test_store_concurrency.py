"""The store under processes: two adders racing from the store's creation on lose no run, on
SQLite and on PostgreSQL; an adder killed (SIGKILL) in the middle of its transaction leaves no
part of its run behind (SQLite passing its integrity check) and no lock that stops the next add."""
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import store_rows  # noqa: E402  (tests/support)
from fabriclab.store.add import add
from fabriclab.store.backend import open_store
from postgres import postgres_server, postgres_url  # noqa: F401  (tests/support: fixtures)

SUPPORT = str(Path(__file__).parents[1] / "support")
BACKENDS = ["sqlite", "postgresql"]

ADDER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
import store_rows
from fabriclab.store.add import add
from fabriclab.store.backend import open_store
url, cluster, n, go = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
while not os.path.exists(go):          # both start together, creating the store at once
    time.sleep(0.002)
with open_store(url) as s:
    for i in range(n):
        assert add(s, store_rows.rows(i, points=20, cluster=cluster)).added
"""

STALLED = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
import store_rows
from fabriclab.store.add import add
from fabriclab.store.backend import open_store
url, table = sys.argv[2], sys.argv[3]
s = open_store(url)
add(s, store_rows.rows(0, points=20))
if s.kind == "sqlite":                 # a small page cache: the open transaction's pages reach the WAL
    s.execute("PRAGMA cache_size = 5")
    print(os.path.getsize(url + "-wal"), flush=True)
insert = s.insert

def stalled(name, columns, rows):      # the second run's transaction stops after this table
    insert(name, columns, rows)
    if name == table:
        print("inside", flush=True)
        time.sleep(300)

s.insert = stalled
add(s, store_rows.rows(1, points=200, samples=10))
"""


def _url(kind, tmp_path, postgres_url) -> str:  # noqa: F811
    return str(tmp_path / "s.sqlite") if kind == "sqlite" else postgres_url


def _counts(s) -> dict:
    return {t: s.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in ("runs", "points", "launches", "samples", "tails")}


@pytest.mark.parametrize("kind", BACKENDS)
def test_two_adders_at_once_lose_no_run(kind, tmp_path, postgres_url):  # noqa: F811
    url, go = _url(kind, tmp_path, postgres_url), tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", ADDER, SUPPORT, url, name, "100", str(go)],
                              stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    time.sleep(0.5)
    go.touch()
    for p in procs:
        assert p.wait(timeout=240) == 0, p.stderr.read()
    with open_store(url, create=False) as s:
        assert _counts(s) == {"runs": 200, "points": 4000, "launches": 12000, "samples": 0, "tails": 24000}
        assert s.query("SELECT cluster, COUNT(*) FROM runs GROUP BY cluster ORDER BY cluster") == [("a", 100), ("b", 100)]
        assert s.query("SELECT MIN(n), MAX(n) FROM (SELECT COUNT(*) AS n FROM points GROUP BY run_id) c") == [(20, 20)]
        assert s.query("SELECT COUNT(*) FROM launches l LEFT JOIN points p ON p.id = l.point_id WHERE p.id IS NULL") \
            == [(0,)]
    if kind == "sqlite":
        with sqlite3.connect(url) as c:
            assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.mark.parametrize("table", ["points", "tails"])
@pytest.mark.parametrize("kind", BACKENDS)
def test_an_adder_killed_mid_add_leaves_no_partial_run(kind, table, tmp_path, postgres_url):  # noqa: F811
    url = _url(kind, tmp_path, postgres_url)
    p = subprocess.Popen([sys.executable, "-c", STALLED, SUPPORT, url, table], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        wal = int(p.stdout.readline()) if kind == "sqlite" else 0
        assert p.stdout.readline() == "inside\n", p.stderr.read()
        os.kill(p.pid, signal.SIGKILL)
        assert p.wait(timeout=30) == -signal.SIGKILL
    finally:
        if p.poll() is None:
            p.kill()
    if kind == "sqlite":
        assert Path(url + "-wal").stat().st_size > wal        # the killed transaction's pages were written
        with sqlite3.connect(url) as c:
            assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with open_store(url, create=False) as s:
        assert _counts(s) == {"runs": 1, "points": 20, "launches": 60, "samples": 0, "tails": 120}
        t = time.monotonic()
        again = add(s, store_rows.rows(1, points=200, samples=10))      # no lock left behind
        assert again.added and time.monotonic() - t < 10
        assert _counts(s) == {"runs": 2, "points": 220, "launches": 660, "samples": 2000, "tails": 1320}
