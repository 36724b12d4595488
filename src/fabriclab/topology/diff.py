"""`fabriclab topology diff OLD NEW`: what changed between two network files.

As `ibnetdiscover --diff` compares two fabric scans (infiniband-diags,
ibnetdiscover(8)): cables added, removed, and changed in rate, and hosts and
switches added and removed. A cable is matched by its ends' (name, port);
a cable without ports by its two ends and its name, parallel cables of one
link counted one by one. A cable whose port moved is one removed and one
added, as ibnetdiscover reports it. Pure functions on network-file content."""

from __future__ import annotations

from .cables import label, rate, read

_SAME_RATE = 1e-9                 # relative: rates written out and read back compare equal


def _keys(cables: list) -> dict:
    """Each cable's identity -> (the cable, which of its link's count)."""
    out: dict = {}
    seen: dict = {}                           # (pair, name) -> cables keyed so far
    for c in cables:
        (a, b), ports = c["ends"], c["ports"]
        if ports is not None:
            key = ("ports", frozenset({(a, ports[0]), (b, ports[1])}))
            out[key] = (c, 0)
            continue
        base = ("pair", frozenset({a, b}), None if c["name"] == f"{a}-{b}" else c["name"])
        n = seen.get(base, 0)                 # separate links of one pair and name: counted on
        for k in range(c["count"]):
            out[(*base, n + k)] = (c, k)
        seen[base] = n + c["count"]
    return out


def changes(old, new, where_old: str = "OLD", where_new: str = "NEW") -> list[str]:
    """One line per change, in order: hosts, switches, then cables removed, added,
    changed in rate, and flagged or cleared as degraded. Empty when the same."""
    a, b = read(old, where_old), read(new, where_new)
    lines = []
    for what, before, after in (("host", a.hosts, b.hosts), ("switch", a.switches, b.switches)):
        now, was = set(after), set(before)
        lines += [f"- {what} {x}" for x in before if x not in now]
        lines += [f"+ {what} {x}" for x in after if x not in was]
    ka, kb = _keys(a.cables), _keys(b.cables)
    lines += [f"- cable {label(c)}  {rate(c['rate_MBps'])}" for k, (c, _) in ka.items() if k not in kb]
    lines += [f"+ cable {label(c)}  {rate(c['rate_MBps'])}" for k, (c, _) in kb.items() if k not in ka]
    for k, (c, _) in kb.items():
        if k not in ka:
            continue
        was = ka[k][0]
        r0, r1 = was["rate_MBps"], c["rate_MBps"]
        if abs(r1 - r0) > _SAME_RATE * max(r0, r1):
            lines.append(f"~ cable {label(c)}  rate {rate(r0)} -> {rate(r1)}")
        if was["degraded"] != c["degraded"]:
            lines.append(f"~ cable {label(c)}  " + (f"degraded: {c['degraded']}" if c["degraded"] is not None
                                                    else f"no longer degraded (was: {was['degraded']})"))
    return lines
