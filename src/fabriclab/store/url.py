"""Where the store is: `--store URL` > env FABRICLAB_STORE > $XDG_DATA_HOME/fabriclab/store.sqlite;
a store URL parsed (a path or sqlite:///abs/path; postgresql:// or postgres://), shown with its
password hidden (`redacted`), and the network file systems on which SQLite's locks are not to be
trusted (`network_filesystem`, read from /proc/self/mounts)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from fabriclab.errors import UsageError

ENV = "FABRICLAB_STORE"
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres")
# File systems whose byte-range locks SQLite cannot rely on (sqlite.org/faq.html#q5, "WAL does
# not work over a network filesystem"): a store there can be corrupted by two writers.
NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.ceph",
              "glusterfs", "fuse.glusterfs", "9p", "afs", "ocfs2", "gfs2", "fuse.sshfs", "pvfs2", "orangefs",
              "panfs", "wekafs", "fuse.weka")
MOUNTS = "/proc/self/mounts"


@dataclass(frozen=True)
class StoreURL:
    kind: str               # "sqlite" | "postgresql"
    text: str               # what the back end connects with (a file path, or the libpq URL)
    path: Path | None = None    # the SQLite file

    def redacted(self) -> str:
        return redacted(self.text)


def default_path(environ=None) -> Path:
    """$XDG_DATA_HOME/fabriclab/store.sqlite, XDG's default for XDG_DATA_HOME being ~/.local/share."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "fabriclab" / "store.sqlite"


def resolve(option: str | None = None, environ=None) -> str:
    """The store's URL: the --store option, else FABRICLAB_STORE, else the default file."""
    env = os.environ if environ is None else environ
    for given in (option, env.get(ENV)):
        if given is not None and given.strip():
            return given.strip()
    return str(default_path(env))


def parse(text: str) -> StoreURL:
    """A store URL or path as the back end reads it; an unknown scheme is one line."""
    if not text or not text.strip():
        raise UsageError("empty store URL")
    m = SCHEME.match(text)
    if not m:
        return StoreURL("sqlite", text, Path(text).expanduser())
    scheme = m.group(1).lower()
    if scheme in POSTGRES_SCHEMES:
        return StoreURL("postgresql", "postgresql://" + text[m.end():])
    if scheme == "sqlite":
        rest = text[m.end():].split("?", 1)[0]
        if not rest.startswith("/") or rest == "/":
            raise UsageError(f"{redacted(text)}: a sqlite URL names an absolute file: sqlite:///abs/path")
        return StoreURL("sqlite", unquote(rest), Path(unquote(rest)))
    raise UsageError(f"{redacted(text)}: not a store URL (a file path, sqlite:///abs/path or postgresql://...)")


def redacted(url: str) -> str:
    """The URL with any password replaced by ***: the user-info's (user:pw@, up to the last '@',
    so that an unescaped '@' or '/' in a password hides more, never less) and a password=
    parameter's."""
    m = SCHEME.match(url)
    if not m:
        return url
    head, rest = url[:m.end()], url[m.end():]
    at = rest.rfind("@")
    if at >= 0 and ":" in rest[:at]:
        rest = rest[:rest.index(":")] + ":***" + rest[at:]
    rest = re.sub(r"([?&]password=)[^&]*", r"\1***", rest, flags=re.IGNORECASE)
    return head + rest


def secrets(url: str) -> list[str]:
    """The password texts a URL holds (raw and percent-decoded): what no message may show."""
    m = SCHEME.match(url)
    rest = url[m.end():] if m else ""
    found = []
    at = rest.rfind("@")
    if at >= 0 and ":" in rest[:at]:
        found.append(rest[rest.index(":") + 1:at])
    found += re.findall(r"[?&]password=([^&]*)", rest, flags=re.IGNORECASE)
    return [s for raw in found if raw for s in {raw, unquote(raw)}]


def _unescape(field: str) -> str:
    """/proc/self/mounts writes space, tab, newline and backslash as octal escapes (\\040...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def network_filesystem(path, mounts: str | None = None) -> str | None:
    """The type of the network file system holding `path` (the longest mount point above it),
    or None on a local one. `mounts` is /proc/self/mounts's text, read when not given."""
    if mounts is None:
        try:
            mounts = Path(MOUNTS).read_text()
        except OSError:
            return None
    target = Path(os.path.realpath(Path(path).expanduser()))
    best, fstype = -1, None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(_unescape(fields[1]))
        if (target == point or point in target.parents) and len(point.parts) > best:
            best, fstype = len(point.parts), fields[2]
    return fstype if fstype in NETWORK_FS else None


def network_warning(path, mounts: str | None = None) -> str | None:
    """The one warning line for a SQLite store on a network file system, or None."""
    fs = network_filesystem(path, mounts)
    if fs is None:
        return None
    return (f"warning: the store {path} is on {fs}, a network file system: SQLite's locking is not reliable "
            f"there, so two writers can corrupt it (keep it on a local disk, or use postgresql://)")
