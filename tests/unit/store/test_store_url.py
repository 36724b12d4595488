"""Where the store is (--store > FABRICLAB_STORE > the XDG default), its URL read, its password
hidden from every message, and a SQLite file on a network file system noticed."""
from pathlib import Path

import pytest

from fabriclab.errors import UsageError
from fabriclab.store import url


def test_the_option_beats_the_environment_which_beats_the_default():
    env = {"FABRICLAB_STORE": "/env/store.sqlite", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}
    assert url.resolve("/opt/s.sqlite", env) == "/opt/s.sqlite"
    assert url.resolve(None, env) == "/env/store.sqlite"
    assert url.resolve(None, {"XDG_DATA_HOME": "/xdg"}) == "/xdg/fabriclab/store.sqlite"
    assert url.resolve("", {"HOME": "/home/u"}) == "/home/u/.local/share/fabriclab/store.sqlite"


def test_paths_and_urls_parsed():
    assert url.parse("runs/s.sqlite") == url.StoreURL("sqlite", "runs/s.sqlite", Path("runs/s.sqlite"))
    assert url.parse("~/s.sqlite").path == Path.home() / "s.sqlite"
    assert url.parse("sqlite:///abs/my%20store.sqlite").path == Path("/abs/my store.sqlite")
    pg = url.parse("postgres://u@db.site:5433/fl?sslmode=require")
    assert (pg.kind, pg.text) == ("postgresql", "postgresql://u@db.site:5433/fl?sslmode=require")
    assert url.parse("POSTGRESQL:///fl?host=/run/pg").kind == "postgresql"


@pytest.mark.parametrize("text, says", [("sqlite://relative.sqlite", "absolute"), ("mysql://u:pw@h/db", "not a store URL"),
                                        ("  ", "empty")])
def test_bad_urls_are_one_line_without_the_password(text, says):
    with pytest.raises(UsageError) as e:
        url.parse(text)
    assert says in str(e.value) and "\n" not in str(e.value) and "pw" not in str(e.value)


@pytest.mark.parametrize("given, shown", [
    ("postgresql://alice:s3cret@db:5432/fl", "postgresql://alice:***@db:5432/fl"),
    ("postgresql://alice@db/fl?password=s3cret&sslmode=require", "postgresql://alice@db/fl?password=***&sslmode=require"),
    ("postgresql://alice:p@ss/w?rd@db/fl", "postgresql://alice:***@db/fl"),     # unescaped @ / ? in it
    ("postgresql:///fl?host=/run/pg&user=postgres", "postgresql:///fl?host=/run/pg&user=postgres"),
    ("/var/lib/fl/store.sqlite", "/var/lib/fl/store.sqlite"),
])
def test_redacted_hides_every_password(given, shown):
    assert url.redacted(given) == shown
    assert all(s not in url.redacted(given) for s in url.secrets(given))


def test_secrets_are_found_raw_and_decoded():
    assert set(url.secrets("postgresql://a:p%40ss@h/db")) == {"p%40ss", "p@ss"}
    assert url.secrets("postgresql://a@h/db") == []


MOUNTS = """\
/dev/sda1 / ext4 rw,relatime 0 0
tmpfs /tmp tmpfs rw 0 0
fs1:/export/home /home nfs4 rw,vers=4.2 0 0
/dev/sdb1 /home/local ext4 rw 0 0
10.0.0.1@o2ib:/lfs /scratch lustre rw 0 0
//srv/share /mnt/my\\040share cifs rw 0 0
"""


@pytest.mark.parametrize("path, fs", [("/home/u/.local/share/fabriclab/store.sqlite", "nfs4"), ("/home", "nfs4"),
                                      ("/home/local/store.sqlite", None), ("/homework/s.sqlite", None),
                                      ("/scratch/u/s.sqlite", "lustre"), ("/mnt/my share/s.sqlite", "cifs"),
                                      ("/tmp/s.sqlite", None), ("/var/s.sqlite", None)])
def test_network_file_systems_found_by_the_longest_mount_point(path, fs):
    assert url.network_filesystem(path, MOUNTS) == fs


def test_a_network_file_system_warning_is_one_line_naming_it():
    line = url.network_warning("/home/u/s.sqlite", MOUNTS)
    assert "nfs4" in line and "/home/u/s.sqlite" in line and "\n" not in line
    assert url.network_warning("/tmp/s.sqlite", MOUNTS) is None
