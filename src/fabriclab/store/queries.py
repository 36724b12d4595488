"""The store read back as plain data: runs, one figure's series over runs (with each run's
launch medians), the series keys, a baseline run by uid or date, a run's points, message.shift's
pairs over runs, and the events between runs (MPI, libraries, fabriclab or the network file
changed). Runs are in time order: started_s, else the time they were added, then their id."""

from __future__ import annotations

from datetime import datetime, time as dtime, timezone
from typing import NamedTuple

from fabriclab.errors import UsageError
from fabriclab.store.tables import COLUMNS, NUMBERS

RunRow = NamedTuple("RunRow", [(c, object) for c in COLUMNS["runs"]])
PointRow = NamedTuple("PointRow", [(c, object) for c in COLUMNS["points"]]
                      + [("launch_medians", list), ("tails", dict)])


class SeriesPoint(NamedTuple):
    run_uid: str
    started_s: float | None
    median: float
    ci_low: float | None
    ci_high: float | None
    launch_medians: list
    unit: str


class PairRow(NamedTuple):
    run_uid: str
    started_s: float | None
    src: int
    dst: int
    src_host: str | None
    dst_host: str | None
    bandwidth: float
    expected: float | None
    cable: str | None


class Event(NamedTuple):
    started_s: float | None
    run_uid: str
    text: str


WHEN = "COALESCE(r.started_s, r.added_s)"
RUN_COLUMNS = ", ".join(f"r.{c}" for c in COLUMNS["runs"])


def _checked(store, spec: tuple, row: tuple) -> tuple:
    """row, when each numeric column in it holds a number or NULL and each other a text or NULL.
    SQLite keeps any value in any column, so a row another program rewrote ('abc' as a median, a
    blob as a cable) would otherwise fail far from here. spec (_spec): each checked value's index,
    table, column and kind; a row costs a type look-up a value (series() reads thousands)."""
    for i, table, column, number in spec:
        v = row[i]
        if v is not None and (type(v) not in _NUMBER if number else type(v) is not str):
            raise UsageError(f"the store {store.url}: {table}.{column} holds {str(v)[:40]!r}, not "
                             f"{'a number' if number else 'a text'} (a row rewritten by another program? "
                             "`fabriclab history rebuild FOLDER` remakes the store from its documents)")
    return row


_NUMBER = (int, float)


def _spec(*columns) -> tuple:
    """A row's check, made once: (index, table, column, holds a number) of each (table, column)
    given, None for a value not checked."""
    return tuple((i, *where, where[1] in NUMBERS[where[0]]) for i, where in enumerate(columns) if where is not None)


def _of(table: str, *names: str) -> tuple:
    return tuple((table, n) for n in names)


RUN_CHECK = _spec(*_of("runs", *COLUMNS["runs"]))


def runs(store, cluster=None, bench=None, since=None, until=None, kind=None) -> list[RunRow]:
    """The runs, oldest first; since/until (epoch seconds, a datetime or an ISO date) bound the
    start, inclusive; bench keeps the runs with a point of that benchmark."""
    where, params = [], []
    for cond, value in (("r.cluster = ?", cluster), ("r.kind = ?", kind),
                        (f"{WHEN} >= ?", _epoch(since, start=True)), (f"{WHEN} <= ?", _epoch(until, start=False)),
                        ("EXISTS (SELECT 1 FROM points p WHERE p.run_id = r.id AND p.bench = ?)", bench)):
        if value is not None:
            where.append(cond)
            params.append(value)
    sql = f"SELECT {RUN_COLUMNS} FROM runs r"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return [RunRow(*_checked(store, RUN_CHECK, r)) for r in store.query(sql + f" ORDER BY {WHEN}, r.id", params)]


def series(store, series_key: str, cluster=None, launches: bool = True, last: int = 0) -> list[SeriesPoint]:
    """One figure over the runs, in time order (the index points_series holds its points);
    launches=False leaves each point's launch_medians empty, for a reader that does not use
    them (they are most of the read: a row of launches_point per launch), and last=N reads them
    for the last N points only (0: all)."""
    on_cluster = " AND r.cluster = ?" if cluster is not None else ""
    params = (series_key,) + ((cluster,) if cluster is not None else ())
    points = store.query(
        f"SELECT p.id, r.uid, r.started_s, p.median, p.ci_low, p.ci_high, p.unit FROM points p "
        f"JOIN runs r ON r.id = p.run_id WHERE p.series = ?{on_cluster} ORDER BY {WHEN}, r.id, p.id", params)
    if not launches:
        medians = {}
    elif last and len(points) > last:
        medians = _launch_medians_of(store, [p[0] for p in points[-last:]])
    else:
        medians = _launch_medians(store, "p.series = ?" + on_cluster, params, join_runs=cluster is not None)
    return [SeriesPoint(uid, started, med, lo, hi, medians.get(pid, []), unit)
            for pid, uid, started, med, lo, hi, unit in (_checked(store, SERIES_CHECK, p) for p in points)]


SERIES_CHECK = _spec(None, ("runs", "uid"), ("runs", "started_s"),
                     *_of("points", "median", "ci_low", "ci_high", "unit"))


LAUNCH_CHECK = _spec(*_of("launches", "median"))


def _launch_median(store, v):
    """A launch's median, checked as _checked would, at the cost of one type look-up."""
    return v if type(v) in _NUMBER else _checked(store, LAUNCH_CHECK, (v,))[0]


def _launch_medians_of(store, ids: list, chunk: int = 500) -> dict[int, list[float]]:
    """point id -> its launches' medians in launch order, for the points named (in chunks of
    parameters, below SQLite's and libpq's limits)."""
    out: dict[int, list[float]] = {}
    for i in range(0, len(ids), chunk):
        part = ids[i:i + chunk]
        for pid, median in store.query(f"SELECT point_id, median FROM launches WHERE point_id IN "
                                       f"({', '.join('?' * len(part))}) ORDER BY point_id, launch", part):
            out.setdefault(pid, []).append(_launch_median(store, median))
    return out


def _launch_medians(store, where: str, params, join_runs: bool = False) -> dict[int, list[float]]:
    """point id -> its launches' medians in launch order, for the points `where` selects."""
    join = " JOIN runs r ON r.id = p.run_id" if join_runs else ""
    out: dict[int, list[float]] = {}
    for pid, median in store.query(f"SELECT l.point_id, l.median FROM launches l JOIN points p ON p.id = l.point_id"
                                   f"{join} WHERE {where} ORDER BY l.point_id, l.launch", params):
        out.setdefault(pid, []).append(_launch_median(store, median))
    return out


def series_keys(store, bench=None, cluster=None) -> list[str]:
    """The points' series keys, sorted; with bench, that benchmark's (keys begin 'bench|'). Read
    as a skip scan of the index points_series: one probe per distinct key."""
    # '}' follows '|' byte by byte, as the series column collates on both back ends (tables.py)
    low, high = ("", None) if bench is None else (bench + "|", bench + "}")
    bound = "" if high is None else " AND series < ?"
    params = ([low] + ([high] if high else [])) * 2
    on_cluster = ""
    if cluster is not None:   # a key kept if any of its points is the cluster's (mostly the first probed)
        on_cluster = (" AND EXISTS (SELECT 1 FROM points p JOIN runs r ON r.id = p.run_id "
                      "WHERE p.series = k.s AND r.cluster = ?)")
        params.append(cluster)
    return sorted(k for (k,) in store.query(
        f"WITH RECURSIVE k(s) AS (SELECT MIN(series) FROM points WHERE series >= ?{bound} "
        f"UNION ALL SELECT (SELECT MIN(series) FROM points WHERE series > k.s AND series >= ?{bound}) "
        f"FROM k WHERE k.s IS NOT NULL) SELECT s FROM k WHERE s IS NOT NULL{on_cluster}", params))


def baseline_run(store, ref: str, cluster=None) -> RunRow:
    """The run whose uid is `ref`, else the last run started on or before the date or time
    `ref` (an ISO date means that whole day, UTC)."""
    found = store.query(f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.uid = ?", (ref,))
    if found:
        return RunRow(*_checked(store, RUN_CHECK, found[0]))
    until = _epoch(ref, start=False, what="a run uid in the store")
    where, params = f"{WHEN} <= ?", [until]
    if cluster is not None:
        where, params = where + " AND r.cluster = ?", params + [cluster]
    found = store.query(f"SELECT {RUN_COLUMNS} FROM runs r WHERE {where} ORDER BY {WHEN} DESC, r.id DESC LIMIT 1",
                        params)
    if not found:
        raise UsageError(f"no run on or before {ref}" + (f" on cluster {cluster}" if cluster else ""))
    return RunRow(*_checked(store, RUN_CHECK, found[0]))


def points_of(store, run_pk: int) -> list[PointRow]:
    """A run's points in the order they were added, each with its launch medians and tails {pct: value}."""
    cols = ", ".join(f"p.{c}" for c in COLUMNS["points"])
    rows = store.query(f"SELECT {cols} FROM points p WHERE p.run_id = ? ORDER BY p.id", (run_pk,))
    medians = _launch_medians(store, "p.run_id = ?", (run_pk,))
    tails: dict[int, dict] = {}
    for pid, pct, value in store.query("SELECT t.point_id, t.pct, t.value FROM tails t JOIN points p "
                                       "ON p.id = t.point_id WHERE p.run_id = ? ORDER BY t.point_id, t.pct",
                                       (run_pk,)):
        tails.setdefault(pid, {})[pct] = _checked(store, TAIL_CHECK, (pct, value))[1]
    return [PointRow(*_checked(store, POINT_CHECK, r), medians.get(r[0], []), tails.get(r[0], {})) for r in rows]


POINT_CHECK = _spec(*_of("points", *COLUMNS["points"]))
TAIL_CHECK = _spec(*_of("tails", "pct", "value"))


def pairs_series(store, cluster, size) -> list[PairRow]:
    """message.shift's pairs of one message size over a cluster's runs: time order, then src, dst."""
    return [PairRow(*_checked(store, PAIR_CHECK, r)) for r in store.query(
        f"SELECT r.uid, r.started_s, q.src, q.dst, q.src_host, q.dst_host, q.bandwidth, q.expected, q.cable "
        f"FROM pairs q JOIN runs r ON r.id = q.run_id WHERE r.cluster = ? AND q.size = ? "
        f"ORDER BY {WHEN}, r.id, q.src, q.dst", (cluster, size))]


PAIR_CHECK = _spec(("runs", "uid"), ("runs", "started_s"), *_of("pairs", "src", "dst", "src_host", "dst_host",
                                                                  "bandwidth", "expected", "cable"))


def events(store, cluster) -> list[Event]:
    """Where a cluster's runs changed what they ran on, against the last run that said: MPI,
    each library in versions (but mpi, which is the runs row's), fabriclab, the network file.
    A run that does not say (NULL) changes nothing."""
    rows = store.query(f"SELECT r.id, r.uid, r.started_s, r.mpi, r.mpi_version, r.fabriclab_version, r.network, "
                       f"r.network_digest FROM runs r WHERE r.cluster = ? ORDER BY {WHEN}, r.id", (cluster,))
    versions: dict[int, dict] = {}
    for run_pk, component, version in store.query(
            "SELECT v.run_id, v.component, v.version FROM versions v JOIN runs r ON r.id = v.run_id "
            "WHERE r.cluster = ? AND v.component <> 'mpi'", (cluster,)):
        versions.setdefault(run_pk, {})[component] = version
    last: dict[str, tuple] = {}
    out = []
    for run_pk, uid, started, mpi, mpi_version, fl_version, network, network_digest in rows:
        now = {"MPI": (mpi, mpi_version)}
        now.update({c: (v,) for c, v in sorted(versions.get(run_pk, {}).items())})
        now.update({"fabriclab": (fl_version,), "network file": (network, network_digest)})
        for what, value in now.items():
            before = last.get(what)
            if before is not None:       # a field a run leaves out keeps the last run's
                value = tuple(b if v is None else v for v, b in zip(value, before))
            if all(v is None for v in value):
                continue
            if before is not None and value != before:
                out.append(Event(started, uid, _change(what, before, value)))
            last[what] = value
    return out


def _change(what: str, before: tuple, now: tuple) -> str:
    """'MPI 4.2 -> 5.0', 'MPI mpich 4.2 -> openmpi 5.0', 'libfabric 1.18 -> 1.20',
    'network file changed', 'network file a.yaml -> b.yaml'."""
    if what == "network file":
        return "network file changed" if before[0] == now[0] else f"network file {before[0]} -> {now[0]}"
    if what == "MPI" and before[0] == now[0]:
        before, now = before[1:], now[1:]
    return f"{what} {' '.join(map(str, before))} -> {' '.join(map(str, now))}"


def _epoch(value, start: bool, what: str = "") -> float | None:
    """Epoch seconds from a number, a datetime, or ISO-8601 text (UTC unless it says); a date
    alone is its first instant (start) or its last."""
    if value is None or isinstance(value, (int, float)):
        return None if value is None else float(value)
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()
    text = str(value).strip()
    try:
        if len(text) == 10:
            day = datetime.combine(datetime.strptime(text, "%Y-%m-%d").date(), dtime.min, tzinfo=timezone.utc)
            return day.timestamp() if start else day.timestamp() + 86400 - 1e-6
        return _epoch(datetime.fromisoformat(text), start)
    except ValueError:
        either = f"neither {what} nor" if what else "not"
        raise UsageError(f"{text[:80]!r} is {either} a date (YYYY-MM-DD) or an ISO-8601 time") from None
