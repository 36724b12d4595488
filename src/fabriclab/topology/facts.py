"""A network file as plain data for `fabriclab report` (report/network.py draws it).

The report may not import the model or this wing, so the command reads the file
here and hands the report a dict of names and numbers: `topology show`'s rows,
the switches by level with the hosts cabled to each counted (hosts are never
listed one by one), the cables between switches summed per switch pair, rate and
state, and every degraded cable with its ports and reason. Its size grows with
the switch pairs, not the hosts."""

from __future__ import annotations

from .cables import Network, label, read
from .show import levels, sections


def facts(data, where: str) -> dict:
    """The report's data of a network file's content, read and checked by the model first."""
    return of(read(data, where), where)


def of(net: Network, where: str) -> dict:
    hosts, switches = set(net.hosts), set(net.switches)
    level = levels(net)
    attached: dict = {s: set() for s in net.switches}        # switch -> the hosts cabled to it
    slow_to_hosts: dict = {}                                 # switch -> its degraded cables to hosts
    pairs: dict = {}                                         # (a, b, rate, degraded) -> cables
    for c in net.cables:
        a, b = c["ends"]
        bad = c["degraded"] is not None
        if a in switches and b in switches:
            key = (*sorted((a, b)), c["rate_MBps"], bad)
            pairs[key] = pairs.get(key, 0) + c["count"]
        elif (a in hosts) != (b in hosts):                   # a host's cable to its switch
            h, s = (a, b) if a in hosts else (b, a)
            attached[s].add(h)
            if bad:
                slow_to_hosts[s] = slow_to_hosts.get(s, 0) + c["count"]
    by_level: dict = {}
    for s in net.switches:                                   # file order within a level
        by_level.setdefault(level.get(s), []).append(
            {"name": s, "hosts": len(attached[s]), "degraded_to_hosts": slow_to_hosts.get(s, 0)})
    order = sorted(by_level, key=lambda k: (k is None, k or 0))
    return {"name": net.name, "file": where, "hosts": len(net.hosts), "switches": len(net.switches),
            "summary": [list(r) for r in sections(net, where)],
            "levels": [{"level": k, "switches": by_level[k]} for k in order],
            "links": [{"a": a, "b": b, "rate_MBps": r, "count": n, "degraded": bad}
                      for (a, b, r, bad), n in pairs.items()],
            "degraded": [{"name": c["name"], "label": label(c), "ends": list(c["ends"]),
                          "ports": list(c["ports"] or (None, None)), "count": c["count"],
                          "rate_MBps": c["rate_MBps"], "reason": c["degraded"]}
                         for c in net.cables if c["degraded"] is not None]}
