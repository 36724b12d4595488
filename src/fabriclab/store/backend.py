"""The store's two back ends behind one Store: SQLite (stdlib sqlite3) and PostgreSQL (psycopg 3).
SQL is written once with `?` placeholders and values always travel as parameters; `open_store`
connects, checks the database is a fabriclab store of a schema this fabriclab reads
(tables.py) and creates or migrates it when asked. Connection failures are one line naming the
redacted URL: a password is never shown."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

from fabriclab.errors import UsageError
from fabriclab.store import tables
from fabriclab.store.url import StoreURL, parse, redacted, secrets

BUSY_TIMEOUT_S = 30          # a writer waits this long for another's transaction to end
CONNECT_TIMEOUT_S = 10       # libpq's connect_timeout: an unreachable server is a line, not a hang
SCHEMA_LOCK = 0x66616272     # PostgreSQL advisory lock key ("fabr"): one process creates or migrates
CORRUPT = ("file is not a database", "database disk image is malformed")


class Store:
    """One open connection. transaction() is all or nothing (nested ones join the outer one);
    execute/executemany/query outside a transaction commit statement by statement."""

    kind = ""
    pk = ""                  # the DDL of a table's `id` column (tables.py's {pk})
    bytewise = ""            # a column's collation comparing bytes (tables.py's {bytewise})

    def __init__(self, conn, url: str):
        self.conn, self.url, self._depth = conn, url, 0

    @contextlib.contextmanager
    def transaction(self):
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        self._begin()
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        self._commit()

    def execute(self, sql: str, params=()) -> int:
        """Run one statement; the number of rows it changed."""
        cur = self.conn.cursor()
        cur.execute(self._sql(sql), tuple(params))
        return cur.rowcount

    def executemany(self, sql: str, rows) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            self.conn.cursor().executemany(self._sql(sql), rows)

    def insert(self, table: str, columns, rows) -> None:
        """Many rows into one table (SQLite: executemany of one INSERT)."""
        self.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                         rows)

    def query(self, sql: str, params=()) -> list[tuple]:
        cur = self.conn.cursor()
        cur.execute(self._sql(sql), tuple(params))
        return list(cur.fetchall())

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _sql(self, sql: str) -> str:
        return sql


class SQLiteStore(Store):
    kind = "sqlite"
    pk = "INTEGER PRIMARY KEY"
    read_only = False        # opened immutable: a reading command on a store in a read-only folder
    refusals = (sqlite3.IntegrityError, sqlite3.DataError)     # rows the schema refuses

    # A file damaged past its first pages opens and reads its tables, then fails on the page a
    # statement reaches: one line wherever that is.
    def execute(self, sql: str, params=()) -> int:
        with _damage(self):
            return super().execute(sql, params)

    def executemany(self, sql: str, rows) -> None:
        with _damage(self):
            super().executemany(sql, rows)

    def query(self, sql: str, params=()) -> list[tuple]:
        with _damage(self):
            return super().query(sql, params)

    def _begin(self):
        try:
            self.conn.execute("BEGIN IMMEDIATE")      # the write lock now, not at the first write
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise
            raise UsageError(f"the store {self.url} stayed locked by another writer for {BUSY_TIMEOUT_S} s") from None

    def _commit(self):
        self.conn.execute("COMMIT")

    def _rollback(self):
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def tables(self) -> set[str]:
        return {r[0] for r in self.query("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def lock_schema(self) -> None:
        """BEGIN IMMEDIATE already holds the database's one write lock."""

    def new_ids(self, table: str, n: int) -> list[int]:
        """n ids for new rows of `table`. MAX(id)+1.. is ours alone because the transaction
        (BEGIN IMMEDIATE) holds SQLite's single write lock until it commits: no other writer can
        take them in between, as they could outside it."""
        assert table in tables.TABLES and self._depth, "new_ids inside a transaction, on a store table"
        (top,), = self.query(f"SELECT COALESCE(MAX(id), 0) FROM {table}")
        return list(range(top + 1, top + 1 + n))


class PostgresStore(Store):
    kind = "postgresql"
    pk = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    bytewise = ' COLLATE "C"'

    def __init__(self, conn, url: str):
        super().__init__(conn, url)
        self._converted: dict[str, str] = {}
        import psycopg
        self.refusals = (psycopg.IntegrityError, psycopg.DataError)

    def _begin(self):
        self.conn.execute("BEGIN")

    def _commit(self):
        self.conn.execute("COMMIT")

    def _rollback(self):
        with contextlib.suppress(Exception):      # a dropped connection has nothing to roll back
            self.conn.execute("ROLLBACK")

    def _sql(self, sql: str) -> str:
        """`?` -> `%s` outside quoted literals and `%` -> `%%` (psycopg's placeholders), once per statement."""
        if sql not in self._converted:
            parts = re.split(r"('(?:[^']|'')*')", sql)
            self._converted[sql] = "".join(p.replace("%", "%%") if i % 2 else
                                           p.replace("%", "%%").replace("?", "%s") for i, p in enumerate(parts))
        return self._converted[sql]

    def tables(self) -> set[str]:
        return {r[0] for r in self.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}

    def lock_schema(self) -> None:
        """Two processes opening a new database at once: the second waits, then finds it made."""
        self.query("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))

    def new_ids(self, table: str, n: int) -> list[int]:
        """n ids drawn from the table's identity sequence (each ours, whatever runs beside us)."""
        assert table in tables.TABLES and self._depth, "new_ids inside a transaction, on a store table"
        rows = self.query("SELECT nextval(pg_get_serial_sequence(?, 'id')) FROM generate_series(1, ?)", (table, n))
        return sorted(r[0] for r in rows)

    def insert(self, table: str, columns, rows) -> None:
        """Many rows through COPY ... FROM STDIN: values travel as data, as parameters do, and a
        run's 5,000 rows take milliseconds where executemany's statement per row takes tenths
        of a second."""
        assert table in tables.TABLES
        with self.conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)


@contextlib.contextmanager
def _damage(store: "SQLiteStore"):
    """A damaged SQLite file's error as one line (UsageError): what to do, not a traceback. Read
    immutable (no locks), a page a writer is rewriting reads as damage too: that store is not told
    to be restored."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        if not any(c in str(e) for c in CORRUPT):
            raise
        if store.read_only:
            raise UsageError(f"the store {store.url}, read without locks (its folder takes no file), gave '{e}': "
                             "a writer may be changing it; try again, or where the folder is writable") from None
        raise UsageError(f"the store {store.url} is damaged ({e}): restore it from a backup, or move it aside and "
                         "remake it from its documents with `fabriclab history rebuild FOLDER`") from None


def open_store(url: str, create: bool = True) -> Store:
    """The store at `url` (a path, sqlite:///abs/path or postgresql://...), checked and, with
    create=True, created or migrated. create=False (reading commands) never creates one (an
    older schema is migrated either way: it is ours): a missing store, a foreign database, a
    newer schema or a corrupt file are one line each (UsageError) and leave the database as it
    was. A SQLite file on a network file system is the caller's to warn of (url.network_warning)."""
    u = parse(url)
    store = _open_sqlite(u, create) if u.kind == "sqlite" else _open_postgres(u)
    try:
        tables.check(store, create)
        if store.kind == "sqlite" and not store.read_only:
            _wal(store)                                  # after the checks: a foreign file keeps its mode
    except BaseException:
        store.close()
        raise
    return store


def _wal(store: "SQLiteStore") -> None:
    """WAL mode, which the file keeps once set. Switching needs the database to itself, and SQLite
    answers "locked" at once, without its busy handler, while another connection is in a
    transaction (a second adder that opens a new store as the first fills it): so the mode is
    read first, and a switch that finds the file busy is tried again until BUSY_TIMEOUT_S."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while store.query("PRAGMA journal_mode")[0][0].lower() != "wal":
        try:
            store.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise UsageError(f"cannot open the store {store.url}: {e}") from None
            time.sleep(0.05)


def _open_sqlite(u: StoreURL, create: bool) -> SQLiteStore:
    path = u.path
    if not create and not path.exists():
        raise UsageError(f"no fabriclab store at {path} (nothing added yet)")
    if path.exists() and not path.is_file():
        raise UsageError(f"{path} is not a file")
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot open the store {path}: {e}") from None
    try:
        return _connect(path, "rwc" if create else "rw")
    except sqlite3.OperationalError as e:
        # A WAL store is read through its -shm file beside it, which a read-only folder (a site's
        # store mounted read-only, or another user's) will not take: SQLite says "unable to open"
        # or "readonly". A reading command then opens the file as immutable: no locks and no -shm.
        # Commits still in a -wal file beside it would not be seen: that is refused instead.
        if create or not ("unable to open" in str(e) or "readonly" in str(e)):
            raise UsageError(f"cannot open the store {path}: {e}") from None
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise UsageError(f"cannot read the store {path} here: its folder takes no file, and {wal.name} beside it "
                         "holds commits only a reader that can write there sees; read it where the folder is "
                         "writable, or once a writer has closed it")
    try:
        store = _connect(path, "ro&immutable=1")
    except sqlite3.OperationalError as e:
        raise UsageError(f"cannot open the store {path}: {e}") from None
    store.read_only = True
    return store


def _connect(path: Path, mode: str) -> SQLiteStore:
    """A connection whose first read has been made: a corrupt file is one line (UsageError), another
    failure to read is sqlite3.OperationalError."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(Path(path).absolute()))}?mode={mode}", uri=True,
                               isolation_level=None, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as e:
        raise sqlite3.OperationalError(str(e)) from None
    store = SQLiteStore(conn, str(path))
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("SELECT name FROM sqlite_master").fetchall()   # the first read: a corrupt file says so here
    except sqlite3.DatabaseError as e:
        conn.close()
        if any(c in str(e) for c in CORRUPT):
            raise UsageError(f"{path} is not a database (corrupt?)") from None
        raise sqlite3.OperationalError(str(e)) from None
    return store


def _open_postgres(u: StoreURL) -> PostgresStore:
    import psycopg
    shown = redacted(u.text)
    try:
        conn = psycopg.connect(u.text, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as e:
        raise UsageError(f"cannot connect to the store {shown}: {_reason(e, u.text)}") from None
    return PostgresStore(conn, shown)


def _reason(error: Exception, url: str) -> str:
    """libpq's message on one line, with any password it might echo hidden."""
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip()) or type(error).__name__
    for secret in secrets(url):
        text = text.replace(secret, "***")
    return text
