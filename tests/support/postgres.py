"""A PostgreSQL server of the tests' own (Debian's postgresql, `make debs`): initdb in a fresh
temporary folder, listening on a unix socket there only (no TCP port), one per test session
(`postgres_server`), stopped at the end; `postgres_url` gives each test a new empty database
of it so that tests do not see each other. Run as root, the server runs as the `postgres`
user. A missing PostgreSQL fails the tests that ask for it (it is never skipped)."""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

INSTALL_HINT = "PostgreSQL is not installed (Debian's postgresql: `make debs`)"


def bin_dir() -> Path:
    """The newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if not found:
        pytest.fail(INSTALL_HINT, pytrace=False)
    return Path(found[-1]).parent


class Server:
    """initdb + pg_ctl start in `root`; .url(db) is a libpq URL over the unix socket."""

    def __init__(self, root: Path):
        self.root, self.bin = root, bin_dir()
        self.data, self.log = root / "data", root / "server.log"
        self.as_owner = []
        if os.geteuid() == 0:       # PostgreSQL refuses to run as root
            user = pwd.getpwnam("postgres")
            os.chown(root, user.pw_uid, user.pw_gid)
            self.as_owner = ["runuser", "-u", "postgres", "--"]
        os.chmod(root, 0o700)

    def _run(self, *argv: str) -> None:
        p = subprocess.run(self.as_owner + list(argv), capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}\n{log}")

    def start(self) -> "Server":
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--no-sync")
        # fsync off: the tests kill clients, never the server, and a lost server is a lost test run
        opts = f"-c listen_addresses='' -k {self.root} -c fsync=off -c full_page_writes=off -c max_connections=200"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "start")
        return self

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql:///{db}?host={self.root}&user=postgres"

    def create_database(self) -> str:
        """A new empty database, its text compared by a language's rules (ICU's en-US) as at
        most sites, not byte by byte; its URL."""
        import psycopg
        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as conn:   # the name is of our own making
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'")
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server():
    """One server for the session (a few seconds to start), stopped at the end."""
    root = Path(tempfile.mkdtemp(prefix="fl-pg-"))
    server = Server(root)
    try:
        server.start()
        yield server
    finally:
        if (server.data / "postmaster.pid").exists():
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh empty database of the session's server: its URL."""
    return postgres_server.create_database()
