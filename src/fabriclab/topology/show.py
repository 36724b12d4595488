"""`fabriclab topology show`: a network file summed up in aligned plain text.

Hosts and switches; cables by rate; parallel cables (switch pairs joined by
more than one); the switches' levels, by their distance in cables from the
nearest host (1: the leaves); the cables flagged degraded, each with its
ports; and where the file came from (its `source`)."""

from __future__ import annotations

from collections import Counter, deque

from .cables import Network, label, rate, read

LISTED = 20                       # rows of a long section shown; the rest counted


def summary(data, where: str) -> list[str]:
    """The lines `topology show` prints for a network file's content (read and checked
    by the model first), a heading column and its text."""
    rows = sections(read(data, where), where)
    width = max(len(h) for h, _ in rows)
    return [f"{h:<{width}}  {t}".rstrip() for h, t in rows]


def sections(net: Network, where: str) -> list[tuple[str, str]]:
    """The summary as (heading, text) rows, a continuation's heading empty (the report's table too)."""
    rows = [("network", f"{net.name} ({where})"), ("source", _source(net.source)),
            ("hosts", f"{len(net.hosts):,}"), ("switches", f"{len(net.switches):,}")]
    return rows + _cables(net) + _levels(net) + _parallel(net) + _degraded(net)


def _source(src: dict | None) -> str:
    if not src:
        return "not recorded (a file written by hand)"
    text = src["format"] + (f", read from {src['read']}" if "read" in src else "")
    given = src.get("given") or {}
    if given:
        shown = lambda v: ",".join(map(str, v)) if isinstance(v, list) else str(v)
        text += "; given: " + ", ".join(f"{k}={shown(v)}" for k, v in given.items())
    return text


def _cables(net: Network) -> list[tuple[str, str]]:
    hosts = set(net.hosts)
    total = sum(c["count"] for c in net.cables)
    to_hosts = sum(c["count"] for c in net.cables if hosts & set(c["ends"]))
    rows = [("cables", f"{total:,} ({to_hosts:,} to hosts, {total - to_hosts:,} between switches)")]
    by_rate = Counter()
    for c in net.cables:
        by_rate[c["rate_MBps"]] += c["count"]
    width = max(len(rate(r)) for r in by_rate)
    rows += [("by rate" if k == 0 else "", f"{rate(r):<{width}}  {n:,}")
             for k, (r, n) in enumerate(sorted(by_rate.items(), reverse=True))]
    return rows


def levels(net: Network) -> dict:
    """Switch -> its level: 1 + the fewest switch-to-switch cables to a switch with a host;
    a switch that reaches none is left out."""
    hosts, switches = set(net.hosts), set(net.switches)
    near: dict = {s: [] for s in switches}
    level: dict = {}
    for c in net.cables:
        a, b = c["ends"]
        if a in switches and b in switches:
            near[a].append(b)
            near[b].append(a)
        elif a in hosts and b in switches or b in hosts and a in switches:
            level[b if b in switches else a] = 1
    todo = deque(level)
    while todo:                                   # breadth first from the leaves
        s = todo.popleft()
        for t in near[s]:
            if t not in level:
                level[t] = level[s] + 1
                todo.append(t)
    return level


def _levels(net: Network) -> list[tuple[str, str]]:
    level = levels(net)
    by_level: dict = {}
    for s in net.switches:                        # file order within a level
        by_level.setdefault(level.get(s), []).append(s)
    keys = sorted(by_level, key=lambda x: (x is None, x or 0))
    heads = [(f"{k}" if k is not None else "no host reached") + ":" for k in keys]
    counts = [f"{len(by_level[k]):,} switch{'es' * (len(by_level[k]) != 1)}" for k in keys]
    wh, wc = max(map(len, heads), default=0), max(map(len, counts), default=0)
    rows = [("levels" if j == 0 else "", f"{h:<{wh}} {c:<{wc}}  {_some(by_level[k])}")
            for j, (k, h, c) in enumerate(zip(keys, heads, counts))]
    return rows or [("levels", "no switches")]


def _some(names: list, n: int = 6) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n:,} more" if len(names) > n else "")


def _parallel(net: Network) -> list[tuple[str, str]]:
    """Switch pairs with more than one cable, whether as one link's count or as separate links."""
    switches = set(net.switches)
    pairs = Counter()
    for c in net.cables:
        if set(c["ends"]) <= switches:
            pairs[tuple(sorted(c["ends"]))] += c["count"]
    many = [(p, n) for p, n in pairs.items() if n > 1]
    if not many:
        return [("parallel", "none: no two switches share more than one cable")]
    sizes = Counter(n for _, n in many)
    pairs_of = lambda k: f"{k:,} pair{'s' * (k != 1)}"
    rows = [("parallel", f"{pairs_of(len(many))} of switches with more than one cable: "
             + ", ".join(f"{pairs_of(k)} of {n}" for n, k in sorted(sizes.items())))]
    width = max(len(f"{a} -- {b}") for (a, b), _ in many[:LISTED])
    rows += [("", f"{f'{a} -- {b}':<{width}}  {n} cables") for (a, b), n in many[:LISTED]]
    if len(many) > LISTED:
        rows.append(("", f"and {len(many) - LISTED:,} more pairs"))
    return rows


def _degraded(net: Network) -> list[tuple[str, str]]:
    bad = [c for c in net.cables if c["degraded"] is not None]
    if not bad:
        return [("degraded", "none flagged")]
    rows = [("degraded", f"{len(bad):,} cable{'s' * (len(bad) != 1)} below what both ends support")]
    return rows + [("", f"{label(c)}  {rate(c['rate_MBps'])}: {c['degraded']}") for c in bad]
