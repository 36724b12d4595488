"""A run's hosts on a network file's nodes, by name, never by position: a
host is the node of its own name, else of its short name (the part before
the first '.': MPI_Get_processor_name may say node001.cluster where the
site's file says node001), else the one node whose short name is the same.
A host the file does not have ends a command in one line, before anything
launches (`require`)."""

from __future__ import annotations

from typing import Optional

from ..errors import UsageError

SHOWN = 4                 # the network's names an error line shows


def short(name: str) -> str:
    return name.split(".", 1)[0]


def nodes_of(hosts: list, node_names: list) -> list[Optional[int]]:
    """Each host's node index in node_names, None where the file has no such node."""
    exact = {n: i for i, n in enumerate(node_names)}
    shorts: dict = {}
    for i, n in enumerate(node_names):
        shorts.setdefault(short(n), []).append(i)

    def one(h: str) -> Optional[int]:
        if h in exact:
            return exact[h]
        if short(h) in exact:
            return exact[short(h)]
        hits = shorts.get(short(h), ())
        return hits[0] if len(hits) == 1 else None
    return [one(str(h)) for h in hosts]


def some(names: list) -> str:
    """A few of the network's names, and how many there are."""
    more = f", ... ({len(names)} in all)" if len(names) > SHOWN else ""
    return ", ".join(str(n) for n in names[:SHOWN]) + more


def require(hosts: list, node_names: list, network: str) -> list[int]:
    """Every host's node; UsageError in one line naming the first host that is no node of the
    network, and a few of the network's nodes."""
    where = nodes_of(hosts, node_names)
    missing = list(dict.fromkeys(h for h, i in zip(hosts, where) if i is None))
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise UsageError(f"host {missing[0]!r}{more} is not a node of the network file {network} "
                         f"(its nodes: {some(list(node_names))}); hosts are matched to nodes by name")
    return where
