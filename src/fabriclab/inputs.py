"""Where outside files come in: a regular file, read whole up to a bound.

Every reader of a file fabriclab did not write itself in this process (an
imported OSU or IMB output, a hostfile, a network, calibration or price file,
the tune state, a run document) reads it here first, so that what is no file
(a directory, /dev/zero, a pipe that nobody writes to) or too large a file
ends in one line and exit code 2 before any parsing: a device has no size and
would be read until memory runs out, and opening a pipe waits for a writer
(hence O_NONBLOCK on open; the descriptor is read only once it is known to be
a regular file)."""

from __future__ import annotations

import os
import stat

from .errors import UsageError


def kind_of(mode: int) -> str:
    """What a file of this st_mode is, in words (for the one line that refuses it)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n / 1024:g} KiB"


def read_bytes(path, what: str, limit: int) -> bytes:
    """The content of the regular file PATH, at most `limit` bytes; UsageError
    naming `what` for a missing or unreadable path, anything that is not a
    regular file, and a file larger than the limit."""
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        raise UsageError(f"cannot read {what} {p}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"cannot read {what} {p}: it is {kind_of(st.st_mode)}, not a file")
        too_large = UsageError(f"cannot read {what} {p}: larger than {_mib(limit)}, the most one may be")
        if st.st_size > limit:
            raise too_large
        chunks, have = [], 0
        while have <= limit:               # a file that grows while it is read stops at the bound too
            chunk = os.read(fd, min(1 << 20, limit + 1 - have))
            if not chunk:
                break
            chunks.append(chunk)
            have += len(chunk)
        if have > limit:
            raise too_large
        return b"".join(chunks)
    except OSError as e:
        raise UsageError(f"cannot read {what} {p}: {e.strerror}") from None
    finally:
        os.close(fd)


def read_text(path, what: str, limit: int) -> str:
    """read_bytes as UTF-8 text; UsageError where it is not."""
    try:
        return read_bytes(path, what, limit).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {what} {path}: not UTF-8 text") from None
