"""Where results go: an output path checked whole before any work is done.

Every command that writes a file checks its path here first, so a long run
is not measured only to fail at its last step: a directory where a file is
meant, a device, a parent that is a file or that cannot be made, or a place
this process cannot write, each gets one line and exit code 2.

Documents (a run's RUN.json and its RUN.ndjson stream, an import) are
written whole through a temporary file renamed into place, so they must be
regular files or not exist yet; text outputs (`show -o`, `report -o`) are
written in place and may also be a character device or a pipe such as
/dev/stdout. Writability is tried, not inferred from permission bits: root
passes every permission check, and only the file system (read-only, /proc,
/sys) says no."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import UsageError
from .inputs import kind_of


def _nearest(path: Path) -> Path:
    """The nearest ancestor of PATH that exists (PATH itself if it does)."""
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def _tried(make, folder: Path) -> str | None:
    """Make a scratch file or folder in FOLDER and remove it: None, or why it failed."""
    try:
        made = make(dir=folder, prefix=".fabriclab-check-")
    except OSError as e:
        return e.strerror or str(e)
    if isinstance(made, tuple):
        os.close(made[0])
        os.unlink(made[1])
    else:
        os.rmdir(made)
    return None


def _can_make(folder: Path) -> str | None:
    """None when FOLDER exists and takes new files, or can be made; else why not."""
    have = _nearest(folder)
    if not have.is_dir():
        return f"{have} is not a directory"
    if have == folder:
        why = _tried(tempfile.mkstemp, have)
        return f"cannot create files in {have}: {why}" if why else None
    why = _tried(tempfile.mkdtemp, have)
    return f"cannot create directories in {have}: {why}" if why else None


def _existing(p: Path, mode: int, stream: bool) -> str | None:
    """Why an existing PATH cannot take the output, or None."""
    if stat.S_ISDIR(mode):
        return "it is a directory; name a file inside it"
    if not (stat.S_ISREG(mode) or stream and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode))):
        return f"it is {kind_of(mode)}, not a file"
    if stat.S_ISFIFO(mode):         # opening a pipe would wait for its reader
        return None
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_APPEND))   # no truncation: the file stays as it is
    except OSError as e:
        return e.strerror
    return None


def file(path: str | Path, stream: bool = False) -> Path:
    """Check that PATH can take a file; returns it as a Path.

    stream: written in place (open and write), so a character device or a
    pipe will do too; otherwise written whole through PATH.tmp and a rename,
    and both must be regular files or absent."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as e:
        raise UsageError(f"cannot write {p}: {e.strerror}") from None
    why = _existing(p, mode, stream) if mode is not None else None
    tmp = Path(str(p) + ".tmp")
    if not why and not stream and os.path.lexists(tmp) and not tmp.is_file():
        why = f"its temporary file {tmp} is {kind_of(os.stat(tmp).st_mode)}"
    if not why and (mode is None or not stream):
        why = _can_make(p.parent)
    if why:
        raise UsageError(f"cannot write {p}: {why}")
    return p


def document(path: Path, given: str | None = None) -> Path:
    """A run's document PATH and its stream beside it (PATH with .ndjson);
    `given` is the path as the user wrote it, before .json was added."""
    if given and os.path.lexists(given):
        file(given)
    file(path)
    file(path.with_suffix(".ndjson"))
    return path


def directory(path: str | Path, what: str = "directory") -> Path:
    """Check that PATH is a directory that takes new files, or can be made; returns it."""
    p = Path(path)
    why = "it is not a directory" if os.path.lexists(p) and not p.is_dir() else _can_make(p)
    if why:
        raise UsageError(f"cannot create {what} {p}: {why}")
    return p
