"""`fabriclab topology diff OLD NEW`: what changed between two network files.

As `ibnetdiscover --diff` compares two fabric scans (infiniband-diags,
ibnetdiscover(8)): cables added, removed, and changed in rate, and hosts and
switches added and removed. A cable is matched by its ends' (name, port);
a cable without ports by its two ends and its name, parallel cables of one
link counted one by one. A cable whose port moved is one removed and one
added, as ibnetdiscover reports it. Pure functions on network-file content; `compare`
gives the differences as records, for check's cabling test (acceptance/cabling.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .cables import Network, label, rate, read

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


@dataclass(frozen=True)
class Change:
    """One difference: `sign` - (removed), + (added) or ~ (changed); `what` host, switch or
    cable; a cable's facts (cables.read) before (`old`) and after (`new`), where it has them;
    `change` rate or degraded for a ~."""

    sign: str
    what: str
    name: str
    old: dict | None = None
    new: dict | None = None
    change: str = ""

    @property
    def line(self) -> str:
        """The line `topology diff` prints."""
        if self.what != "cable":
            return f"{self.sign} {self.what} {self.name}"
        c = self.new or self.old
        if self.sign != "~":
            return f"{self.sign} cable {self.name}  {rate(c['rate_MBps'])}"
        if self.change == "rate":
            return f"~ cable {self.name}  rate {rate(self.old['rate_MBps'])} -> {rate(c['rate_MBps'])}"
        return f"~ cable {self.name}  " + (f"degraded: {c['degraded']}" if c["degraded"] is not None
                                           else f"no longer degraded (was: {self.old['degraded']})")


def compare(a: Network, b: Network) -> list[Change]:
    """Every difference from network a to network b, in order: hosts, switches, then cables
    removed, added, changed in rate, and flagged or cleared as degraded."""
    out = []
    for what, before, after in (("host", a.hosts, b.hosts), ("switch", a.switches, b.switches)):
        now, was = set(after), set(before)
        out += [Change("-", what, x) for x in before if x not in now]
        out += [Change("+", what, x) for x in after if x not in was]
    ka, kb = _keys(a.cables), _keys(b.cables)
    out += [Change("-", "cable", label(c), old=c) for k, (c, _) in ka.items() if k not in kb]
    out += [Change("+", "cable", label(c), new=c) for k, (c, _) in kb.items() if k not in ka]
    for k, (c, _) in kb.items():
        if k not in ka:
            continue
        was = ka[k][0]
        r0, r1 = was["rate_MBps"], c["rate_MBps"]
        if abs(r1 - r0) > _SAME_RATE * max(r0, r1):
            out.append(Change("~", "cable", label(c), was, c, "rate"))
        if was["degraded"] != c["degraded"]:
            out.append(Change("~", "cable", label(c), was, c, "degraded"))
    return out


def changes(old, new, where_old: str = "OLD", where_new: str = "NEW") -> list[str]:
    """One line per change of two network files' content (compare's order). Empty when the same."""
    return [c.line for c in compare(read(old, where_old), read(new, where_new))]
