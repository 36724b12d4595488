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
/sys) says no.

Nothing is written through a symbolic link already in place: a link named as
an output (or inside an output folder) is refused in one line, and every file
is created without following one (O_NOFOLLOW, O_EXCL), so a link planted in a
results folder cannot turn a write onto a file elsewhere. A text output may be
a link to a device or a pipe (/dev/stdout), which is written in place and
holds nothing to replace, or a link to one of this process's own descriptors
(/dev/stdout, /proc/self/fd/N) whatever it is open on, a file the shell
redirected to included, which is appended to, never truncated. A named pipe
no process reads is waited for PIPE_WAIT_S, then refused in one line. A
run's default name is taken exclusively, with a suffix when another run
holds it (`unique`)."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .errors import UsageError
from .inputs import kind_of

PIPE_WAIT_S = 10.0           # a named pipe's reader may be started just after the command
OWN_FDS = ("/proc/self/fd/", "/dev/fd/")


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


def _in_place(p: Path) -> bool:
    """Whether PATH is a device or a pipe (through a link too), or one of this process's own
    descriptors: written in place, not replaced."""
    if _own_fd(p):
        return True
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _own_fd(p: Path) -> bool:
    """Whether PATH is (a link to) one of this process's descriptors, /dev/stdout's
    /proc/self/fd/1: what the shell opened it on is the user's to name."""
    text = os.path.abspath(p)
    try:
        target = os.readlink(p) if os.path.islink(p) else ""
    except OSError:
        target = ""
    return any(x.startswith(OWN_FDS) for x in (text, target)) and os.path.exists(p)


def refuse_link(p: Path, stream: bool = False) -> None:
    """UsageError naming P when it is a symbolic link (a stream's link to a device or a pipe passes)."""
    if os.path.islink(p) and not (stream and _in_place(p)):
        raise UsageError(f"cannot write {p}: it is a symbolic link (to {os.readlink(p)}); "
                         "fabriclab writes no file through a link")


def file(path: str | Path, stream: bool = False, inputs=()) -> Path:
    """Check that PATH can take a file; returns it as a Path.

    stream: a text output, so a character device or a pipe will do too
    (written in place); a regular file is written whole through a temporary
    file beside it and a rename (`replacing`). A link is refused (refuse_link),
    and so is a file among `inputs`, the paths the command reads."""
    p = Path(path)
    refuse_link(p, stream)
    not_an_input(p, inputs)
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as e:
        raise UsageError(f"cannot write {p}: {e.strerror}") from None
    why = _existing(p, mode, stream) if mode is not None else None
    if not why and (mode is None or not stream):
        why = _can_make(p.parent)
    if why:
        raise UsageError(f"cannot write {p}: {why}")
    return p


def not_an_input(p: Path, inputs) -> None:
    """UsageError when P is one of the files the command reads: written, the input would be lost
    (an import's -o naming the file imported, a report's -o naming a run)."""
    for given in inputs:
        try:                                         # a terminal or a pipe read and written is no loss
            same = stat.S_ISREG(os.stat(p).st_mode) and os.path.samefile(p, given)
        except (OSError, ValueError):                # either missing, or a name no file can have
            continue
        if same:
            raise UsageError(f"cannot write {p}: this command reads it ({given}); name another output")


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


def files(folder: Path, names) -> None:
    """Check the files NAMES of an output folder, as `file` does, before any work."""
    for name in names:
        file(folder / name)


# ---- writing ---------------------------------------------------------------------------------

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _temporary(p: Path) -> tuple[int, Path]:
    """A new file beside P, made exclusively (no other writer, no link, shares it)."""
    while True:
        tmp = p.with_name(f".{p.name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, _NEW, 0o666), tmp
        except FileExistsError:
            continue


@contextmanager
def replacing(path, binary: bool = False):
    """A file object whose contents replace PATH whole when the block ends (a reader never
    sees half of it): a temporary file made exclusively beside PATH (its folder made where
    missing), renamed onto it. PATH may not be a link; an error leaves PATH as it was and
    removes the temporary file."""
    p = Path(path)
    refuse_link(p)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)        # a missing folder is made, as file() allowed
        fd, tmp = _temporary(p)
    except OSError as e:
        raise UsageError(f"cannot write {p}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
        refuse_link(p)
        os.replace(tmp, p)            # replaces a name, never follows one
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write(path, data: str | bytes, stream: bool = False) -> Path:
    """DATA to PATH, replaced whole (`replacing`); with `stream`, a device or a pipe (a text
    output's /dev/stdout) is written in place. OSError becomes one line."""
    p = Path(path)
    try:
        if stream and _in_place(p):
            with os.fdopen(_open_in_place(p), "ab" if isinstance(data, bytes) else "a") as f:
                f.write(data)
        else:
            with replacing(p, binary=isinstance(data, bytes)) as f:
                f.write(data)
    except OSError as e:
        raise UsageError(f"cannot write {p}: {e.strerror or e}") from None
    return p


def _open_in_place(p: Path) -> int:
    """A descriptor written in place: appending (a shell's `>> log` behind /dev/stdout keeps what
    it holds), and a named pipe opened only once a process reads it, within PIPE_WAIT_S."""
    if not stat.S_ISFIFO(os.stat(p).st_mode):
        return os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    deadline = time.monotonic() + PIPE_WAIT_S
    while True:
        try:
            fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            break
        except OSError as e:
            if e.errno != errno.ENXIO or time.monotonic() > deadline:     # ENXIO: no reader yet
                if e.errno == errno.ENXIO:
                    raise UsageError(f"cannot write {p}: a named pipe no process read within {PIPE_WAIT_S:g} s") \
                        from None
                raise
            time.sleep(0.05)
    os.set_blocking(fd, True)           # a reader there: writes wait for it as a pipe's do
    return fd


def stream(path) -> TextIO:
    """PATH opened for a stream written as it goes (a run's RUN.ndjson), truncated if it is
    a regular file; a link in its place is refused, never followed (O_NOFOLLOW)."""
    p = Path(path)
    refuse_link(p)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as e:
        refuse_link(p)                # a link made since the check
        raise UsageError(f"cannot write results to {p}: {e.strerror}") from None
    return os.fdopen(fd, "w", encoding="utf-8")


def unique(path: Path, stream: bool = True) -> Path:
    """A default output PATH not yet taken, held by a file created exclusively: a run's RUN.json
    is held by its stream RUN.ndjson (stream=True), another output by itself; when another holds
    it (two runs in one second, two imports of files of one name), PATH-2, PATH-3 ..."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10000):
        p = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        if os.path.lexists(p):
            continue
        try:
            os.close(os.open(p.with_suffix(".ndjson") if stream else p, _NEW, 0o666))
        except FileExistsError:
            continue
        return p
    raise UsageError(f"cannot write {path}: ten thousand names beside it are taken")


def new_directory(path: Path) -> Path:
    """A default output folder (stamped to the second) made exclusively, so two commands started
    in one second do not share it: PATH, else PATH-2, PATH-3 ..."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10000):
        p = path if n == 1 else path.with_name(f"{path.name}-{n}")
        try:
            p.mkdir()
        except FileExistsError:
            continue
        return p
    raise UsageError(f"cannot create {path}: ten thousand names beside it are taken")
