"""Hostlists ('node[001-128,130]', 'rack[1-2]n[01-04]', Slurm's and pdsh's notation)
expanded by ClusterShell's NodeSet, after a scan that counts the names they stand
for and refuses more than a limit before any is built: NodeSet builds every name
of a range as it parses it, so a count from NodeSet itself would already be the
expansion (a[0-999999] took 1.7 s and 100 MB)."""

from __future__ import annotations

import re

from .datafile import shown
from .errors import UsageError

NAME_CHARS = 200                                       # as the model's names (model/limits.py)
NAME = re.compile(r"[A-Za-z0-9._-]+")                 # what a hostlist may hold outside brackets
_TOKEN = re.compile(r"[A-Za-z0-9._-]+|\[[^\[\]]*\]|,|.", re.S)
_RANGE = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?(,|\Z)")


def count(expr: str, limit: int, w: str, room: str | None = None) -> int:
    """The names a hostlist stands for (overlaps counted twice), refused in one line
    (`w`: where it was read) as soon as the count passes `limit` (`room`: how the
    limit is told); only names, brackets of ranges and commas."""
    over = lambda: UsageError(f"{w}: hostlist {shown(expr)} stands for more than "
                              f"{room or f'{limit:,} names'}: refused before expanding it")
    total, element, empty = 0, 1, True
    for m in _TOKEN.finditer(expr):
        t = m.group()
        if t == ",":
            if empty:
                raise UsageError(f"{w}: hostlist {shown(expr)} has an empty name")
            total, element, empty = total + element, 1, True
        elif t[0] == "[" and len(t) > 1:
            n, pos, body = 0, 0, t[1:-1]
            while True:
                r = _RANGE.match(body, pos)
                if not r or (r[2] and int(r[2]) < int(r[1])):
                    raise UsageError(f"{w}: hostlist {shown(expr)}: a bracket holds numbers and ranges "
                                     f"(1-3,7) of up to 18 digits, got {shown(t)}")
                n, pos = n + int(r[2] or r[1]) - int(r[1]) + 1, r.end()
                if n > limit or not r[3]:
                    break
            element, empty = element * n, False
        elif NAME.fullmatch(t):
            if len(t) > NAME_CHARS:
                raise UsageError(f"{w}: hostlist {shown(expr)}: a name longer than {NAME_CHARS}")
            empty = False
        else:
            raise UsageError(f"{w}: hostlist {shown(expr)}: {shown(t)} is not part of a hostlist "
                             "(names of letters, digits and ._-, [ranges], commas)")
        if total + element > limit:
            raise over()
    if empty:
        raise UsageError(f"{w}: hostlist {shown(expr)} has an empty name")
    return total + element


def expand(expr: str, limit: int, w: str, room: str | None = None) -> list[str]:
    """The names of a hostlist in NodeSet's order (sorted, each once), counted first
    (count()); a hostlist NodeSet refuses ends in one line too."""
    if not isinstance(expr, str) or not expr:
        raise UsageError(f"{w}: a hostlist must be non-empty text, got {shown(expr)}")
    count(expr, limit, w, room)
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet, NodeSetException
    from ClusterShell.RangeSet import RangeSetException
    try:
        return list(NodeSet(expr, resolver=RESOLVER_NOGROUP))
    except (NodeSetException, RangeSetException) as e:
        raise UsageError(f"{w}: hostlist {shown(expr)}: {shown(str(e), 80)}") from None
