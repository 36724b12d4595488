"""The host's TCP sockets by state, from /proc/net/tcp and /proc/net/tcp6 (what
`ss -tan state time-wait` counts): how tcp.crr's TIME_WAIT handling is checked
(docs/sockets.md, "Connection rate"). A socket in TIME_WAIT holds its 4-tuple
for 60 s on Linux; on the side that connects, one per ephemeral port
(net.ipv4.ip_local_port_range) would run the ports out at about 28,000 / 60 s =
470 connections per second."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TIME_WAIT = "06"   # include/net/tcp_states.h: TCP_TIME_WAIT = 6
TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
PORT_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"


def parse(text: str) -> Counter:
    """{(state, local port, remote port): sockets} of one /proc/net/tcp* table's
    text (its header line skipped; state as the table's two hex digits)."""
    out: Counter = Counter()
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 4 or ":" not in f[1] or ":" not in f[2]:
            continue
        out[(f[3].upper(), int(f[1].rsplit(":", 1)[1], 16), int(f[2].rsplit(":", 1)[1], 16))] += 1
    return out


def states(tables=TABLES) -> Counter:
    """{(state, local port, remote port): sockets} over the host's TCP tables (a missing one counts none)."""
    out: Counter = Counter()
    for t in tables:
        try:
            out.update(parse(Path(t).read_text()))
        except OSError:
            continue
    return out


def time_wait(counts: Counter, port: int) -> tuple[int, int, int]:
    """TIME_WAIT sockets of the connections to a listener on `port`: (on the listening
    side: local port `port`; on the connecting side: remote port `port`, each holding
    an ephemeral port; every other TIME_WAIT socket of the host)."""
    listening = connecting = other = 0
    for (st, local, remote), n in counts.items():
        if st != TIME_WAIT:
            continue
        if local == port:
            listening += n
        elif remote == port:
            connecting += n
        else:
            other += n
    return listening, connecting, other


def ephemeral_ports(path: str = PORT_RANGE) -> int | None:
    """How many ports the host gives connecting sockets (None if it does not say)."""
    try:
        lo, hi = (int(x) for x in Path(path).read_text().split())
    except (OSError, ValueError):
        return None
    return hi - lo + 1
