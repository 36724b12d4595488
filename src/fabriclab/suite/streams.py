"""The rules of tcp.stream's parallel streams (docs/sockets.md, "Streams and
directions"), checked before launch.

Every stream is a connection with a descriptor on each of ranks 0 and 1 (two
per stream with direction=bidir: one connection each way). The ranks inherit
the open-file limit of the process that launches them (mpiexec passes its own
RLIMIT_NOFILE on; a batch system may set another, which this cannot see), so
the launching process's soft RLIMIT_NOFILE is the bound, less what MPI and
the core hold besides (FD_RESERVE)."""

from __future__ import annotations

import resource

from ..errors import UsageError

DIRECTIONS = ("forward", "reverse", "bidir")
# Descriptors a rank holds besides its streams: stdio, the MPI library's
# sockets and shared-memory files, epoll and the listener (a 2-rank MPICH or
# Open MPI run on one host holds 20-40).
FD_RESERVE = 64


def descriptors(streams: int, direction: str) -> int:
    """The descriptors one rank's connections take."""
    return streams * (2 if direction == "bidir" else 1)


def nofile_limit() -> int:
    """The launching process's soft RLIMIT_NOFILE (RLIM_INFINITY as a large number)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 30


def check_streams(name: str, sizes, params: dict, nranks: int, limit: int | None = None) -> None:
    """UsageError in one line when a rank cannot open the streams asked for (Bench.rules)."""
    streams, direction = int(params.get("streams", 1)), params.get("direction", DIRECTIONS[0])
    have = nofile_limit() if limit is None else limit
    need = descriptors(streams, direction)
    if need + FD_RESERVE > have:
        raise UsageError(f"{name}: streams={streams}{' (bidir: two connections each)' if direction == 'bidir' else ''}"
                         f" needs {need} file descriptors per rank and {FD_RESERVE} besides; the open-file "
                         f"limit (RLIMIT_NOFILE of this process, which the ranks inherit) is {have}: "
                         f"raise it (ulimit -n) or ask for fewer streams")
