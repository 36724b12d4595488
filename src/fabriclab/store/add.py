"""One document's rows (rows.py) added to the store in one transaction, all or nothing: the run,
its versions, its points with their launches, samples and tails, its pairs, impacts, checks and
findings; one bulk insert per table (Store.insert). A document already stored (same digest) is
skipped with a note."""

from __future__ import annotations

import time
from dataclasses import dataclass

from fabriclab.errors import UsageError
from fabriclab.store.rows import Rows
from fabriclab.store.tables import COLUMNS, INTEGERS

RUN_TABLES = ("versions", "pairs", "impacts", "checks", "findings")     # rows tied to the run by run_id
CHILDREN = frozenset(Rows.CHILDREN)
ALLOWED = {t: frozenset(cols) | ({"children"} if t == "points" else frozenset()) for t, cols in COLUMNS.items()}


@dataclass(frozen=True)
class AddResult:
    run_pk: int          # the run's id in the store (the one already there when skipped)
    added: bool          # False: the same document (digest) was stored already
    points: int          # the run's points in the store
    note: str = ""


def add(store, rows: Rows) -> AddResult:
    """Insert one document's rows in ONE transaction; a refused add leaves the store unchanged."""
    run = dict(rows.run)
    run.setdefault("added_s", time.time())
    cols = _columns("runs", run, ("id",))
    try:
        with store.transaction():
            # ON CONFLICT DO NOTHING: a second adder of the same document waits for the first
            # to commit, then inserts nothing (no unique violation to recover from)
            got = store.query(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                              f"ON CONFLICT DO NOTHING RETURNING id", _values(run, "runs", cols))
            if not got:
                return _already(store, run)
            run_pk = got[0][0]
            for table in RUN_TABLES:
                _insert(store, table, [((run_pk,), r) for r in getattr(rows, table)])
            _add_points(store, run_pk, rows.points)
    except store.refusals as e:
        raise UsageError(f"cannot add {run.get('source') or run.get('uid')}: {_first_line(e)}") from None
    return AddResult(run_pk, True, len(rows.points))


def _add_points(store, run_pk: int, points: list) -> None:
    """Points with ids taken first (Store.new_ids), so that each child row (a point's
    "children": launches, samples, tails) knows its point without a query per point."""
    ids = store.new_ids("points", len(points))
    _insert(store, "points", [((pid, run_pk), p) for pid, p in zip(ids, points)])
    for child in Rows.CHILDREN:
        _insert(store, child, [((pid,), r) for pid, p in zip(ids, points)
                               for r in (p.get("children") or {}).get(child) or ()])


def _insert(store, table: str, keyed: list) -> None:
    """Rows given as (the values of the columns the store fills, which lead the table: id,
    run_id, point_id; the row's dict): one bulk insert."""
    if not keyed:
        return
    cols = COLUMNS[table]
    fill, rest = cols[:len(keyed[0][0])], cols[len(keyed[0][0]):]
    out = []
    for key, row in keyed:
        _known(row, table, fill)
        out.append(key + _values(row, table, rest))
    store.insert(table, cols, out)


def _already(store, run: dict) -> AddResult:
    """The runs row was not inserted: the same digest stored before (skipped), or the uid taken
    by another document (refused)."""
    found = store.query("SELECT id, uid FROM runs WHERE digest = ?", (run.get("digest"),))
    if not found:
        raise UsageError(f"run {run.get('uid')} is stored already from another document "
                         f"(a different digest): not added")
    run_pk, uid = found[0]
    (n,), = store.query("SELECT COUNT(*) FROM points WHERE run_id = ?", (run_pk,))
    return AddResult(run_pk, False, n, f"already stored as run {uid}: skipped")


def _columns(table: str, row: dict, fill: tuple) -> tuple:
    _known(row, table, fill)
    return tuple(c for c in COLUMNS[table] if c not in fill)


def _values(row: dict, table: str, cols) -> tuple:
    """The row's values in column order, a column not given NULL; a whole float in a BIGINT
    column as an int (SQLite's INTEGER affinity does so; PostgreSQL's COPY wants it)."""
    values = tuple(map(row.get, cols))
    ints = INTEGERS[table]
    if any(type(v) is float for v in values):
        values = tuple(int(v) if type(v) is float and c in ints and v.is_integer() else v for c, v in zip(cols, values))
    return values


def _known(row: dict, table: str, fill: tuple) -> None:
    """A row names only its table's columns, and none the store fills: a misspelt key would
    otherwise be stored as NULL without a word."""
    allowed = ALLOWED[table]
    if row.keys() <= allowed and not (fill and row.keys() & set(fill)) and (
            table != "points" or (row.get("children") or {}).keys() <= CHILDREN):
        return
    bad = (set(row) - allowed) | (set(fill) & set(row))
    bad |= {f"children.{c}" for c in set(row.get("children") or ()) - CHILDREN}
    raise ValueError(f"a {table} row has keys that are not its columns: {sorted(bad)}")


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
