"""The results store at a site's scale (docs/history.md, "The store at a site's scale"), on
both back ends: a SQLite file and a PostgreSQL server the bench starts itself
(tests/support/postgres.py), stopped at the end.

The store is filled with --runs runs (default 10,000) of one cluster, each of 500 points
(50 benchmarks x 10 sizes: 500 series of --runs points), each point with 3 launch medians
and 6 tails. Run medians scatter lognormally (sigma 0.03, launches 0.01 about their run);
four of the first benchmark's ten series (the one --bench reads) step 20% slower 300 runs
before the last (within the last runs `history` searches for steps, store/trend.py's LAST). The fill is bulk: --batch runs per transaction through Store.insert (executemany on
SQLite, COPY on PostgreSQL), ids given, foreign keys not checked on the filling connection. Then, each timed --reps times (default 5), the back
ends alternating (A B, B A, ...), the median reported:

- adding one more run (store.add.add of one Rows of 500 points; the run deleted again after,
  untimed): target under 0.5 s;
- one point's trend (store.queries.series of one key, then analysis.changepoints.changes on
  its last LAST runs, as `history trend` does): target under 0.5 s; the read and the analysis
  shown apart;
- `fabriclab history report --bench BENCH`, timed as a process over BENCH's 10 series x
  --runs runs: target under 5 s; its store reads (series keys, each series twice: with its
  launch medians for the steps, without for the figure; the events) shown apart, timed in
  this process;
- what --store adds to `fabriclab run`: store.add.add(store, store.ingest.rows(doc)) for the
  document `fabriclab run` writes with its default suite (--doc, else one made here with the
  fake core of the unit tests), the run deleted again after: target under 1 s;

and, once, the store's bytes per point: SQLite's file size, PostgreSQL's pg_database_size,
over the points stored; and the same without the launches and tails tables and their indexes
(SQLite's dbstat, PostgreSQL's pg_total_relation_size). The plans of the series reads are
printed (EXPLAIN QUERY PLAN, EXPLAIN ANALYZE).

Everything is written under a temporary folder, removed at the end (or under --out DIR, kept).

Usage: python bench/bench_store.py [--runs 10000] [--batch 100] [--reps 5] [--doc RUN.json]
                                   [--out DIR]"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _common as c
from fabriclab.analysis.changepoints import changes
from fabriclab.store import ingest, queries, trend
from fabriclab.store.add import add
from fabriclab.store.backend import open_store
from fabriclab.store.rows import Rows
from fabriclab.store.tables import COLUMNS

SUPPORT = c.REPO / "tests" / "support"
sys.path.insert(0, str(SUPPORT))
from postgres import Server  # noqa: E402  (tests/support: the tests' own PostgreSQL server)

BENCHES, SIZES = 50, 10
POINTS = BENCHES * SIZES
LAUNCHES = 3
PCTS = (50.0, 90.0, 99.0, 99.9, 99.99, 100.0)
TAIL_FACTORS = (1.0, 1.1, 1.5, 2.0, 3.0, 5.0)
CLUSTER = "site"
T0 = 1_780_000_000.0                   # run i starts an hour after run i-1
STEP, STEP_BACK, STEPPED = 1.2, 0.3, 4  # the first benchmark's last 4 sizes: 20% slower 30% of LAST before the end
SIGMA_RUN, SIGMA_LAUNCH = 0.03, 0.01
FACTOR, ALPHA = 1.05, 0.01             # history's defaults (cli/history.py)
TARGETS = {"add": 0.5, "trend": 0.5, "report": 5.0, "run --store": 1.0}
BACKENDS = ("SQLite", "PostgreSQL")

BENCH_NAMES = [f"site.b{b:02d}" for b in range(BENCHES)]
SIZE_LIST = [8 * 4 ** k for k in range(SIZES)]                # 8 B .. 2 MiB
STATIC = []                                                  # per point j: series .. unit, in column order
for _b in BENCH_NAMES:
    for _s in SIZE_LIST:
        _row = {"bench": _b, "variant": "", "size": _s, "stride": 1, "conns": 1, "active": None, "params": ""}
        STATIC.append((ingest.series_key(_row), _b, "", _s, 1, 1, None, "", "warm", "s"))
BASE = np.array([1e-6 + s / 1e10 for _ in BENCH_NAMES for s in SIZE_LIST])   # 1 us + size at 10 GB/s
ONE = BENCH_NAMES[0]
TREND_KEY = STATIC[SIZES - 1][0]                              # the first benchmark's largest size: it steps
PCOLS = COLUMNS["points"]
RCOLS = tuple(col for col in COLUMNS["runs"] if col != "id")


# ---- the generated history ----------------------------------------------------------------------

def figures(i: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """Run i's 500 medians and their (500, 3) launch medians, the same for every caller."""
    rng = np.random.default_rng([7, i])
    med = BASE * np.exp(rng.normal(0.0, SIGMA_RUN, POINTS))
    if i >= runs - STEP_BACK * min(runs, trend.LAST):
        med[SIZES - STEPPED:SIZES] *= STEP
    return med, med[:, None] * np.exp(rng.normal(0.0, SIGMA_LAUNCH, (POINTS, LAUNCHES)))


def run_row(i: int) -> dict:
    started = T0 + 3600 * i
    return {"uid": f"run-{CLUSTER}-{i:06d}", "digest": f"sha256:bench-store:{i:06d}", "kind": "run",
            "cluster": CLUSTER, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "started_s": started, "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started + 1800)),
            "ended_s": started + 1800, "status": "complete", "nranks": 64,
            "hosts": ",".join(f"n{h:03d}" for h in range(16)), "mpi": "openmpi", "mpi_version": "5.0.3",
            "fabriclab_version": "0.3.0", "network": "site.yaml", "network_digest": "ab" * 32,
            "source": f"/data/site/run-{i:06d}.json", "added_s": started + 1900}


def rows(i: int, runs: int) -> Rows:
    """Run i as the Rows store.add takes (what ingest.rows makes of a document)."""
    med, lau = figures(i, runs)
    points = []
    for j, static in enumerate(STATIC):
        p = dict(zip(PCOLS[2:12], static))
        m = float(med[j])
        p.update(median=m, ci_low=m * 0.99, ci_high=m * 1.01, launches=LAUNCHES, samples=300, bytes_per_op=p["size"],
                 imported=None,
                 children={"launches": [{"launch": k, "median": float(lau[j, k]), "n": 100} for k in range(LAUNCHES)],
                           "tails": [{"pct": q, "value": m * f} for q, f in zip(PCTS, TAIL_FACTORS)]})
        points.append(p)
    return Rows(run=run_row(i), versions=[{"component": "mpi", "version": "5.0.3"},
                                          {"component": "libfabric", "version": "1.21.0"}], points=points)


def fill(store, runs: int, batch: int, name: str) -> float:
    """runs runs in transactions of `batch` runs through Store.insert, ids given; seconds taken."""
    t0 = time.perf_counter()
    ks = list(range(LAUNCHES)) * POINTS
    pcts = list(PCTS) * POINTS
    factors = np.array(TAIL_FACTORS)
    for lo in range(0, runs, batch):
        hi = min(lo + batch, runs)
        run_rows, versions, points, launches, tails = [], [], [], [], []
        for i in range(lo, hi):
            r = run_row(i)
            run_rows.append((i + 1, *(r[col] for col in RCOLS)))
            versions += [(i + 1, "mpi", "5.0.3"), (i + 1, "libfabric", "1.21.0")]
            med, lau = figures(i, runs)
            pids = range(i * POINTS + 1, (i + 1) * POINTS + 1)
            ml = med.tolist()
            points += [(pid, i + 1, *s, m, m * 0.99, m * 1.01, LAUNCHES, 300, s[3], None)
                       for pid, s, m in zip(pids, STATIC, ml)]
            pid3 = np.repeat(np.arange(i * POINTS + 1, (i + 1) * POINTS + 1), LAUNCHES).tolist()
            launches += zip(pid3, ks, lau.ravel().tolist(), [100] * len(pid3))
            pid6 = np.repeat(np.arange(i * POINTS + 1, (i + 1) * POINTS + 1), len(PCTS)).tolist()
            tails += zip(pid6, pcts, (med[:, None] * factors).ravel().tolist())
        with store.transaction():
            store.insert("runs", ("id",) + RCOLS, run_rows)
            store.insert("versions", COLUMNS["versions"], versions)
            store.insert("points", PCOLS, points)
            store.insert("launches", COLUMNS["launches"], launches)
            store.insert("tails", COLUMNS["tails"], tails)
        if hi == runs or hi % (batch * 10) == 0:
            dt = time.perf_counter() - t0
            print(f"  {name}: {hi:,}/{runs:,} runs stored, {dt:.0f} s, about {dt / hi * (runs - hi):.0f} s to go",
                  flush=True)
    if store.kind == "postgresql":        # the identities past the ids given; the planner's statistics
        store.query("SELECT setval(pg_get_serial_sequence('runs', 'id'), ?)", (runs,))
        store.query("SELECT setval(pg_get_serial_sequence('points', 'id'), ?)", (runs * POINTS,))
        store.execute("VACUUM ANALYZE")   # autovacuum's work at a site: statistics, the visibility map
    return time.perf_counter() - t0


# ---- the figures ----------------------------------------------------------------------------------

def sizes(store, runs: int) -> tuple[float, float]:
    """Bytes per point: the whole store, and without the launches and tails tables and indexes."""
    points = runs * POINTS
    children = ("launches", "tails", "launches_point", "tails_point")
    if store.kind == "sqlite":
        store.query("PRAGMA wal_checkpoint(TRUNCATE)")
        total = os.path.getsize(store.url)
        part = store.query(f"SELECT SUM(pgsize) FROM dbstat WHERE name IN ({', '.join('?' * len(children))})",
                           children)[0][0]
    else:
        total = store.query("SELECT pg_database_size(current_database())")[0][0]
        part = store.query("SELECT pg_total_relation_size('launches') + pg_total_relation_size('tails')")[0][0]
    return total / points, (total - part) / points


def delete_run(store, uid: str) -> None:
    with store.transaction():
        store.execute("DELETE FROM runs WHERE uid = ?", (uid,))


def time_add(url: str, i: int, runs: int) -> float:
    r = rows(i, runs)
    with open_store(url, create=False) as store:
        t = time.perf_counter()
        assert add(store, r).added
        dt = time.perf_counter() - t
        delete_run(store, r.run["uid"])
    return dt


def time_trend(url: str) -> tuple[float, float]:
    """(seconds reading the series, seconds finding its change points)."""
    with open_store(url, create=False) as store:
        t = time.perf_counter()
        pts = queries.series(store, TREND_KEY, cluster=CLUSTER, last=trend.LAST)   # as store/trend.py reads it
        read = time.perf_counter() - t
    t = time.perf_counter()
    window = pts[-trend.LAST:]           # the runs history searches (store/trend.py, --last)
    found = changes([p.median for p in window], launch_medians=[list(p.launch_medians) for p in window],
                    factor=FACTOR, alpha=ALPHA)
    assert len(found) == 1 and all(len(p.launch_medians) == LAUNCHES for p in window), found
    return read, time.perf_counter() - t


def time_report(url: str, out: Path, env: dict) -> float:
    argv = [sys.executable, "-m", "fabriclab.cli", "history", "report", "--bench", ONE, "--store", url,
            "--output", str(out / "history.html")]
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise c.BenchError(f"history report exit {p.returncode}: {p.stderr.strip()[-500:]}")
    return dt


def time_report_reads(url: str) -> float:
    """The store reads `history report --bench` makes: the keys, each series twice (its steps, with
    the launch medians of its last runs; its figure, without), the events."""
    with open_store(url, create=False) as store:
        t = time.perf_counter()
        store.query("SELECT DISTINCT cluster FROM runs ORDER BY cluster")
        keys = queries.series_keys(store, bench=ONE, cluster=CLUSTER)
        assert len(keys) == SIZES, keys
        for launches in (True, False):
            for key in keys:
                queries.series(store, key, cluster=CLUSTER, launches=launches, last=trend.LAST)
        queries.events(store, CLUSTER)
        return time.perf_counter() - t


def time_run_store(url: str, doc: Path) -> float:
    with open_store(url, create=False) as store:
        t = time.perf_counter()
        r = add(store, ingest.rows(str(doc)))
        dt = time.perf_counter() - t
        assert r.added, r
        (uid,), = store.query("SELECT uid FROM runs WHERE id = ?", (r.run_pk,))
        delete_run(store, uid)
    return dt


MAKE_DOC = """import sys
sys.path.insert(0, sys.argv[1])
import pytest, fakebuild, fakeexec
from pathlib import Path
from fabriclab.cli import main
from fabriclab.host import machine
mp = pytest.MonkeyPatch()
fakeexec.install(mp)
mp.setattr(machine, "RUN_WINDOW_S", 0.0)
d = Path(sys.argv[2])
fake = fakebuild.fake_core(d)
sys.exit(main(["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(d / "run.json"), "-q"]))
"""


def default_document(folder: Path, env: dict) -> Path:
    """`fabriclab run` with its default suite on the unit tests' fake core (launches in process)."""
    folder.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([sys.executable, "-c", MAKE_DOC, str(SUPPORT), str(folder)], capture_output=True, text=True,
                       env=env, timeout=600)
    if p.returncode != 0 or not (folder / "run.json").is_file():
        raise c.BenchError(f"the default-suite run on the fake core failed ({p.returncode}): {p.stderr[-500:]}")
    return folder / "run.json"


def plans(store) -> None:
    """How each back end reads one series and its launch medians."""
    series_sql = ("SELECT p.id, r.uid, r.started_s, p.median, p.ci_low, p.ci_high, p.unit FROM points p "
                  "JOIN runs r ON r.id = p.run_id WHERE p.series = ? AND r.cluster = ? "
                  f"ORDER BY {queries.WHEN}, r.id, p.id")
    launch_sql = ("SELECT l.point_id, l.median FROM launches l JOIN points p ON p.id = l.point_id "
                  "JOIN runs r ON r.id = p.run_id WHERE p.series = ? AND r.cluster = ? ORDER BY l.point_id, l.launch")
    for name, sql in (("series", series_sql), ("launch medians", launch_sql)):
        explain = "EXPLAIN QUERY PLAN " if store.kind == "sqlite" else "EXPLAIN (ANALYZE, COSTS OFF, BUFFERS) "
        lines = store.query(explain + sql, (TREND_KEY, CLUSTER))
        print(f"  {store.kind} plan of the {name} read:")
        for line in lines:
            print(f"    {line[-1]}")


# ---- the bench ------------------------------------------------------------------------------------

def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000, help="runs stored (default 10000)")
    ap.add_argument("--batch", type=int, default=100, help="runs per transaction of the fill (default 100)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each timing (default 5)")
    ap.add_argument("--doc", help="a run document of the default suite (default: made on the fake core)")
    ap.add_argument("--out", help="keep the stores and the PostgreSQL server's files here (default: a temporary "
                                  "folder, removed)")
    o = ap.parse_args()
    if o.runs < 20 or o.batch < 1 or o.reps < 1:
        raise c.BenchError("--runs at least 20, --batch and --reps at least 1")
    c.header("the results store at a site's scale: SQLite and PostgreSQL",
             commands=[f"python bench/bench_store.py --runs {o.runs} --batch {o.batch} --reps {o.reps}"
                       + (f" --doc {o.doc}" if o.doc else "")],
             method=f"{o.runs:,} runs x {POINTS} points ({BENCHES} benchmarks x {SIZES} sizes), {LAUNCHES} launch "
                    f"medians and {len(PCTS)} tails a point, one cluster; timings: median of {o.reps}, "
                    "the back ends alternating")
    root = Path(o.out) if o.out else Path(tempfile.mkdtemp(prefix="fl-bench-store-"))
    root.mkdir(parents=True, exist_ok=True)
    if not o.out:
        root.chmod(0o711)                 # the server's folder below it is the postgres user's when run as root
    env = {**os.environ, "HOME": str(root / "home"), "XDG_DATA_HOME": str(root / "home"),
           "XDG_CACHE_HOME": str(root / "home" / "cache"),
           "PYTHONPATH": os.pathsep.join([str(c.REPO / "src")] + os.environ.get("PYTHONPATH", "").split(os.pathsep))}
    env.pop("FABRICLAB_STORE", None)      # the default-suite run adds to no store
    pg_root = root / "pg"
    if pg_root.exists():
        shutil.rmtree(pg_root)
    pg_root.mkdir()
    server = None
    try:
        doc = Path(o.doc) if o.doc else None
        if doc is None:
            t = time.perf_counter()
            doc = default_document(root / "doc", env)
            print(f"default-suite document on the fake core: {doc} ({time.perf_counter() - t:.0f} s)", flush=True)
        print(f"the document's rows: {len(ingest.rows(str(doc)).points)} points", flush=True)
        server = Server(pg_root).start()
        lite = root / "store.sqlite"
        for f in (lite, lite.with_name(lite.name + "-wal"), lite.with_name(lite.name + "-shm")):
            f.unlink(missing_ok=True)
        urls = {"SQLite": str(lite), "PostgreSQL": server.create_database()}
        import psycopg
        with psycopg.connect(server.url(), autocommit=True) as conn:    # fewer checkpoints during the fill
            conn.execute("ALTER SYSTEM SET max_wal_size = '8GB'")
            conn.execute("SELECT pg_reload_conf()")
        got: dict = {name: {} for name in BACKENDS}
        for name in BACKENDS:
            with open_store(urls[name]) as store:
                # this connection's settings only, for the fill: its rows refer to each other by
                # construction, so the foreign keys are not checked row by row (PostgreSQL's check is
                # a trigger per row: 3-4 times the COPY itself)
                if store.kind == "sqlite":
                    store.execute("PRAGMA foreign_keys = OFF")
                    store.execute("PRAGMA synchronous = OFF")
                    store.execute("PRAGMA cache_size = -400000")
                else:
                    store.execute("SET session_replication_role = replica")
                got[name]["fill"] = fill(store, o.runs, o.batch, name)
                got[name]["bytes"], got[name]["bytes lean"] = sizes(store, o.runs)
                plans(store)
        jobs = {"add": lambda url, k: time_add(url, o.runs + k, o.runs),
                "trend": lambda url, k: time_trend(url),
                "report": lambda url, k: time_report(url, root, env),
                "report reads": lambda url, k: time_report_reads(url),
                "run --store": lambda url, k: time_run_store(url, doc)}
        for job, fn in jobs.items():
            print(f"{job}:", flush=True)
            for k in range(o.reps):
                order = BACKENDS if k % 2 == 0 else BACKENDS[::-1]
                cells = []
                for name in order:
                    value = fn(urls[name], k)
                    got[name].setdefault(job, []).append(value)
                    shown = "+".join(f"{v:.3f}" for v in value) if isinstance(value, tuple) else f"{value:.3f}"
                    cells.append(f"{name} {shown} s")
                print(f"  round {k + 1}/{o.reps}: " + "; ".join(cells), flush=True)
        summary(got, o)
    finally:
        if server is not None and (server.data / "postmaster.pid").exists():
            server.stop()
        if not o.out:
            shutil.rmtree(root, ignore_errors=True)


def summary(got: dict, o) -> None:
    def med(name, job, part=None):
        xs = got[name][job]
        return statistics.median(sum(x) if part is None and isinstance(x, tuple) else
                                 (x[part] if part is not None else x) for x in xs)

    rows = [("fill, once; PostgreSQL's with VACUUM (s)", lambda n: got[n]["fill"], None),
            ("add one run of 500 points (s)", lambda n: med(n, "add"), TARGETS["add"]),
            ("one point's trend: series + changes (s)", lambda n: med(n, "trend"), TARGETS["trend"]),
            ("  of which queries.series (s)", lambda n: med(n, "trend", 0), None),
            ("  of which changepoints.changes (s)", lambda n: med(n, "trend", 1), None),
            (f"history report --bench {ONE}, process (s)", lambda n: med(n, "report"), TARGETS["report"]),
            ("  its store reads, in process (s)", lambda n: med(n, "report reads"), None),
            ("run --store: ingest.rows + add (s)", lambda n: med(n, "run --store"), TARGETS["run --store"]),
            ("bytes per point", lambda n: got[n]["bytes"], None),
            ("bytes per point without launches, tails", lambda n: got[n]["bytes lean"], None)]
    print("-" * 78)
    print(f"{o.runs:,} runs x {POINTS} points stored; medians of {o.reps} (the machine's load average: "
          f"{os.getloadavg()[0]:.2f})")
    print(f"{'figure':<44} {'SQLite':>9} {'PostgreSQL':>10} {'target':>8}  met?")
    for label, fn, target in rows:
        a, b = fn("SQLite"), fn("PostgreSQL")
        fmt = (lambda v: f"{v:,.0f}") if label.startswith("bytes") else (lambda v: f"{v:.3f}")
        if target is None:
            met, shown = "", "-"
        else:
            missed = [n for n, v in zip(BACKENDS, (a, b)) if v >= target]
            met, shown = ("yes" if not missed else "NO (" + ", ".join(missed) + ")"), f"< {target:g}"
        print(f"{label:<44} {fmt(a):>9} {fmt(b):>10} {shown:>8}  {met}")


if __name__ == "__main__":
    c.main(body)
