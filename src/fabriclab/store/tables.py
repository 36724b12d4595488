"""The store's tables: one DDL text for SQLite and PostgreSQL (`{pk}` filled by the back end),
SCHEMA_VERSION, the MIGRATIONS that bring a store from version n to n+1, the columns each table
takes, and the checks made on open: a fabriclab store (table meta, app = 'fabriclab.store'), of a
schema version this fabriclab reads, else one line and the database untouched."""

from __future__ import annotations

import re

from fabriclab.errors import UsageError

APP = "fabriclab.store"
SCHEMA_VERSION = 1

# Types both back ends read alike: TEXT, BIGINT, DOUBLE PRECISION (SQLite's REAL affinity).
# Times twice: ISO-8601 UTC text for people, epoch seconds for ordering. The back end fills
# {pk} (the id column) and {bytewise}: series keys ordered byte by byte as SQLite does, where a
# PostgreSQL database's language collation would put 'bench|8' after 'bench}' and break the
# range a benchmark's keys are read by (queries.series_keys).
SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id {pk}, uid TEXT NOT NULL UNIQUE, digest TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL, cluster TEXT NOT NULL,
    started TEXT, started_s DOUBLE PRECISION, ended TEXT, ended_s DOUBLE PRECISION,
    status TEXT, nranks BIGINT, hosts TEXT,
    mpi TEXT, mpi_version TEXT, fabriclab_version TEXT,
    network TEXT, network_digest TEXT, source TEXT, added_s DOUBLE PRECISION NOT NULL);
CREATE TABLE versions (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    component TEXT NOT NULL, version TEXT NOT NULL);
CREATE TABLE points (id {pk}, run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    series TEXT{bytewise} NOT NULL, bench TEXT NOT NULL, variant TEXT NOT NULL, size BIGINT NOT NULL,
    stride BIGINT NOT NULL, conns BIGINT NOT NULL, active BIGINT, params TEXT NOT NULL,
    cache TEXT, unit TEXT NOT NULL, median DOUBLE PRECISION NOT NULL,
    ci_low DOUBLE PRECISION, ci_high DOUBLE PRECISION, launches BIGINT NOT NULL, samples BIGINT,
    bytes_per_op BIGINT, imported TEXT);
CREATE TABLE launches (point_id BIGINT NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    launch BIGINT NOT NULL, median DOUBLE PRECISION NOT NULL, n BIGINT);
CREATE TABLE samples (point_id BIGINT NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    launch BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL);
CREATE TABLE tails (point_id BIGINT NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    pct DOUBLE PRECISION NOT NULL, value DOUBLE PRECISION NOT NULL);
CREATE TABLE pairs (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    size BIGINT NOT NULL, src BIGINT NOT NULL, dst BIGINT NOT NULL, src_host TEXT, dst_host TEXT,
    bandwidth DOUBLE PRECISION NOT NULL, expected DOUBLE PRECISION, cable TEXT);
CREATE TABLE impacts (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    victim TEXT NOT NULL, aggressor TEXT NOT NULL, size BIGINT NOT NULL,
    impact DOUBLE PRECISION NOT NULL, ci_low DOUBLE PRECISION, ci_high DOUBLE PRECISION,
    predicted DOUBLE PRECISION, cables TEXT);
CREATE TABLE checks (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    test TEXT NOT NULL, verdict TEXT NOT NULL, attempts BIGINT NOT NULL);
CREATE TABLE findings (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    test TEXT NOT NULL, item TEXT NOT NULL, cable TEXT, host TEXT);
CREATE INDEX points_series ON points (series, run_id, id, median, ci_low, ci_high, unit);
CREATE INDEX points_run ON points (run_id, bench);
CREATE INDEX runs_cluster ON runs (cluster, started_s);
CREATE INDEX versions_run ON versions (run_id);
CREATE INDEX launches_point ON launches (point_id, launch, median);
CREATE INDEX samples_point ON samples (point_id);
CREATE INDEX tails_point ON tails (point_id);
CREATE INDEX pairs_run ON pairs (run_id);
CREATE INDEX impacts_run ON impacts (run_id);
CREATE INDEX checks_run ON checks (run_id);
CREATE INDEX findings_run ON findings (run_id);
"""
# points_series: series(key) reads one key's points from the index alone (an index range,
# then each run by id): a series has one point per run, so from the table it would read a page
# per run (10,000 runs: 10,000 pages, most of the read's time, docs/history.md "The store at a
# site's scale"). launches_point likewise holds the launch medians series() reads.
# points_run (run_id, bench): a run's points, the cascade, and runs(bench=) as one probe per run.
# The children's point_id/run_id indexes serve the readers and ON DELETE CASCADE.


def _statements(text: str) -> list[str]:
    return [s.strip() for s in text.split(";") if s.strip()]


# MIGRATIONS[n]: the statements taking a store of schema n to n+1, applied in one transaction
# (0: an empty database). A new version appends its statements here and moves SCHEMA_VERSION.
MIGRATIONS = {
    0: _statements(SCHEMA_V1) + [
        f"INSERT INTO meta (key, value) VALUES ('app', '{APP}')",
        "INSERT INTO meta (key, value) VALUES ('schema_version', '1')",
    ],
}
TABLES = ("meta", "runs", "versions", "points", "launches", "samples", "tails", "pairs", "impacts",
          "checks", "findings")


def _columns(text: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each table's (column, type) in order, read from its CREATE TABLE (the one text is the truth)."""
    out = {}
    for name, body in re.findall(r"CREATE TABLE (\w+) \((.*?)\);", text, flags=re.S):
        body = re.sub(r"\([^()]*\)", "", body)          # REFERENCES runs(id): no comma inside
        out[name] = tuple((col.split()[0], col.split()[1].split("{")[0]) for col in body.split(","))
    return out


COLUMNS = {t: tuple(c for c, _ in cols) for t, cols in _columns(SCHEMA_V1).items()}
INTEGERS = {t: frozenset(c for c, kind in cols if kind == "BIGINT") for t, cols in _columns(SCHEMA_V1).items()}
# the columns holding numbers ("": the id, whose type {pk} the back end fills); the others hold text
NUMBERS = {t: frozenset(c for c, kind in cols if kind in ("BIGINT", "DOUBLE", "")) for t, cols in _columns(SCHEMA_V1).items()}


def check(store, create: bool) -> None:
    """Refuse what is not a fabriclab store of a schema this fabriclab reads (one line each,
    nothing written); create (create=True) or migrate the store, under the write lock, checking
    again there since another process may have done it first."""
    version = _version(store)
    if version == SCHEMA_VERSION:
        return
    if version == 0 and not create:
        raise UsageError(f"no fabriclab store at {store.url} (nothing added yet)")
    with store.transaction():
        store.lock_schema()
        version = _version(store)
        for n in range(version, SCHEMA_VERSION):
            for sql in MIGRATIONS[n]:
                store.execute(sql.format(pk=store.pk, bytewise=store.bytewise))
            if n > 0:
                store.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(n + 1),))


def _version(store) -> int:
    """0 for an empty database; the schema version of a fabriclab store; else UsageError."""
    tables = store.tables()
    if not tables:
        return 0
    if "meta" not in tables:
        raise UsageError(f"{store.url} is not a fabriclab store (it holds other tables)")
    meta = dict(store.query("SELECT key, value FROM meta WHERE key IN ('app', 'schema_version')"))
    if meta.get("app") != APP:
        raise UsageError(f"{store.url} is not a fabriclab store (its meta table is another program's)")
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        raise UsageError(f"{store.url}: schema_version {meta.get('schema_version')!r} is not a number") from None
    if version > SCHEMA_VERSION:
        raise UsageError(f"{store.url} was written by a newer fabriclab (schema {version}; "
                         f"this one reads up to {SCHEMA_VERSION})")
    return version
