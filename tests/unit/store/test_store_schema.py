"""The store's tables made on open, and what is not a store of ours refused in one line with the
file left byte for byte as it was: a foreign database, a newer schema, a corrupt file, a missing
store for a reading command. Passwords stay out of connection errors."""
import sqlite3

import pytest

from fabriclab.errors import UsageError
from fabriclab.store import backend, tables
from fabriclab.store.backend import open_store


def refused(path, create=True) -> str:
    """open_store's one line, the file's bytes checked unchanged."""
    before = path.read_bytes() if path.exists() else None
    with pytest.raises(UsageError) as e:
        open_store(str(path), create=create)
    assert (path.read_bytes() if path.exists() else None) == before
    assert "\n" not in str(e.value)
    return str(e.value)


def test_a_new_store_has_every_table_its_identity_and_the_settings(tmp_path):
    path = tmp_path / "deep" / "store.sqlite"
    with open_store(str(path)) as s:
        assert s.kind == "sqlite" and s.url == str(path)
        assert s.tables() == set(tables.TABLES)
        assert dict(s.query("SELECT key, value FROM meta")) == {"app": "fabriclab.store", "schema_version": "1"}
        assert s.query("PRAGMA journal_mode") == [("wal",)]
        assert s.query("PRAGMA foreign_keys") == [(1,)] and s.query("PRAGMA busy_timeout") == [(30000,)]
        indexes = {r[0] for r in s.query("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"points_series", "points_run", "runs_cluster", "launches_point"} <= indexes
    with open_store(str(path), create=False) as s:        # opened again: nothing to do
        assert s.query("SELECT COUNT(*) FROM meta") == [(2,)]


def test_one_ddl_text_for_both_back_ends():
    assert tables.SCHEMA_V1.count("{pk}") == 2 and set(tables.COLUMNS) == set(tables.TABLES)
    assert sorted(tables.MIGRATIONS) == list(range(tables.SCHEMA_VERSION))
    assert tables.COLUMNS["launches"] == ("point_id", "launch", "median", "n")
    assert tables.INTEGERS["points"] == {"run_id", "size", "stride", "conns", "active", "launches", "samples",
                                         "bytes_per_op"}


def test_a_reading_command_creates_nothing(tmp_path):
    path = tmp_path / "none.sqlite"
    assert "no fabriclab store at" in refused(path, create=False)
    assert not path.exists()
    path.write_bytes(b"")                                   # an empty file: an empty database, not a store
    assert "no fabriclab store at" in refused(path, create=False)


def _sqlite(path, *sql):
    conn = sqlite3.connect(path)
    for s in sql:
        conn.execute(s)
    conn.commit()
    conn.close()


def test_another_program_s_database_is_refused_untouched(tmp_path):
    path = tmp_path / "other.sqlite"
    _sqlite(path, "CREATE TABLE customers (name TEXT)", "INSERT INTO customers VALUES ('x')")
    assert refused(path) == f"{path} is not a fabriclab store (it holds other tables)"
    _sqlite(path, "CREATE TABLE meta (key TEXT, value TEXT)", "INSERT INTO meta VALUES ('app', 'other')")
    assert "not a fabriclab store (its meta table is another program's)" in refused(path)


def test_a_newer_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "s.sqlite"
    open_store(str(path)).close()
    _sqlite(path, "UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    assert refused(path) == f"{path} was written by a newer fabriclab (schema 7; this one reads up to 1)"
    assert refused(path, create=False).endswith("(schema 7; this one reads up to 1)")


def test_a_corrupt_file_is_refused_untouched(tmp_path):
    path = tmp_path / "s.sqlite"
    path.write_bytes(b"not sqlite at all\n" * 300)
    assert refused(path) == f"{path} is not a database (corrupt?)"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)    # a damaged header
    assert "is not a database (corrupt?)" in refused(path)


def test_an_older_schema_is_migrated_in_one_transaction(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    open_store(str(path)).close()
    monkeypatch.setattr(tables, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(tables.MIGRATIONS, 1, ["ALTER TABLE runs ADD COLUMN note TEXT", "CREATE TABLE broken ("])
    with pytest.raises(sqlite3.OperationalError):         # a failing migration leaves version 1 whole
        open_store(str(path))
    monkeypatch.setitem(tables.MIGRATIONS, 1, ["ALTER TABLE runs ADD COLUMN note TEXT"])
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == [("1",)]
    with open_store(str(path)) as s:
        assert s.query("SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]
        assert "note" in {r[1] for r in s.query("PRAGMA table_info(runs)")}


def test_placeholders_become_psycopg_s_outside_literals_only():
    s = backend.PostgresStore(None, "postgresql://h/db")
    assert s._sql("SELECT '?', ? FROM t WHERE a LIKE 'x%' AND b = ?") == \
        "SELECT '?', %s FROM t WHERE a LIKE 'x%%' AND b = %s"
    assert s._sql("SELECT 'it''s ?' || ?") == "SELECT 'it''s ?' || %s"


@pytest.mark.parametrize("given", ["postgresql://alice:s3cr3tpw@/fl?host=/nonexistent/socket/dir",
                                   "postgres:///fl?host=/nonexistent/socket/dir&user=a&password=s3cr3tpw"])
def test_a_failed_connection_is_one_line_naming_the_redacted_url(given):
    with pytest.raises(UsageError) as e:
        open_store(given)
    msg = str(e.value)
    assert msg.startswith("cannot connect to the store postgresql://") and "***" in msg
    assert "s3cr3tpw" not in msg and "\n" not in msg and "/nonexistent/socket/dir" in msg


def test_a_store_locked_past_the_busy_timeout_is_one_line(tmp_path):
    path = tmp_path / "s.sqlite"
    open_store(str(path)).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with open_store(str(path)) as s:
            s.execute("PRAGMA busy_timeout = 50")
            with pytest.raises(UsageError, match=r"the store .* stayed locked by another writer for 30 s"):
                with s.transaction():
                    pass
    finally:
        holder.rollback()
        holder.close()
