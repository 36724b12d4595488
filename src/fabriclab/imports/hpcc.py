"""HPC Challenge's network figures as hpccoutf.txt's summary prints them
(hpcc/src/io.c: `Name=value` lines between "Begin of Summary section." and
"End of Summary section."): the ten latency and bandwidth figures of
bench_lat_bw_1.5.2.c in HPCC's units (microseconds, 10^9 bytes per second)
and the process count, each checked. bench/bench_hpcc.py sets them beside
fabriclab's (analysis/hpcc.py names the same ten)."""

from __future__ import annotations

import math

from ..errors import UsageError

BEGIN, END = "Begin of Summary section.", "End of Summary section."
# hpccoutf.txt's names of the network figures (analysis/hpcc.py SUMMARY holds the same names).
NAMES = ("MaxPingPongLatency_usec", "RandomlyOrderedRingLatency_usec", "MinPingPongBandwidth_GBytes",
         "NaturallyOrderedRingBandwidth_GBytes", "RandomlyOrderedRingBandwidth_GBytes", "MinPingPongLatency_usec",
         "AvgPingPongLatency_usec", "MaxPingPongBandwidth_GBytes", "AvgPingPongBandwidth_GBytes",
         "NaturallyOrderedRingLatency_usec")
PROCS = "CommWorldProcs"
MAX_VALUE = 1e12          # microseconds or GB/s: far beyond any network


def summary(text: str) -> dict:
    """{name: value} of the network figures and {PROCS: processes} from hpccoutf.txt's text;
    UsageError naming what is missing or not a figure. HPCC prints its network figures as 0
    on one process (it runs the test only on two or more): refused here."""
    start, end = text.rfind(BEGIN), text.rfind(END)
    if start < 0 or end < start:
        raise UsageError("no summary section (\"Begin of Summary section.\" .. \"End of Summary section.\"): "
                         "not hpccoutf.txt, or HPCC did not finish")
    found: dict = {}
    for line in text[start + len(BEGIN):end].splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and (name in NAMES or name == PROCS):
            try:
                x = float(value)
            except ValueError:
                raise UsageError(f"hpccoutf.txt: {name}={value!r} is not a number") from None
            if not math.isfinite(x) or not 0 <= x <= MAX_VALUE:
                raise UsageError(f"hpccoutf.txt: {name}={value} is outside 0..{MAX_VALUE:g}")
            found[name] = x
    missing = [n for n in (PROCS, *NAMES) if n not in found]
    if missing:
        raise UsageError(f"hpccoutf.txt's summary lacks {', '.join(missing)}")
    if found[PROCS] < 2 or found[PROCS] != int(found[PROCS]):
        raise UsageError(f"hpccoutf.txt: {PROCS}={found[PROCS]:g}: HPCC measures the network on 2 or more processes")
    if any(found[n] <= 0 for n in NAMES):
        raise UsageError("hpccoutf.txt: a network figure is 0: HPCC did not measure the network")
    found[PROCS] = int(found[PROCS])
    return found


def parse(text: str, source: str = "hpccoutf.txt"):
    """hpccoutf.txt's network figures as imported points (imports/__init__.py builds the
    document): each of HPCC's statistics as a point of fabriclab's benchmark with the same
    op, its figure as the time of one op (a ping-pong round trip, a ring iteration: two
    messages, so twice HPCC's latency), the printed value and name kept. HPCC's ring
    figures are the better of its two methods (variant method=best), its ping-pong ones a
    statistic over pairs (variant pairs=max, min or avg); none is one of fabriclab's own
    points, so `compare` pairs none of them with a run's."""
    from ..suite.hpcc import BANDWIDTH_BYTES, LATENCY_BYTES
    from .printed import Parsed, Printed
    got = summary(text)
    n = got[PROCS]
    out = Parsed(None, "HPCC: the fastest of a few measurements; the worst pair; random rings' geometric mean",
                 n, settings={"latency_bytes": LATENCY_BYTES, "bandwidth_bytes": BANDWIDTH_BYTES})
    for name in NAMES:
        value = got[name]
        size = LATENCY_BYTES if name.endswith("_usec") else BANDWIDTH_BYTES
        one_way = value * 1e-6 if name.endswith("_usec") else size / (value * 1e9)
        ring = "Ring" in name
        variant = ("method=best" + (",order=random" if name.startswith("Randomly") else "") if ring
                   else "pairs=" + name[:3].lower())
        out.figures.append(Printed(name, "message.ring" if ring else "message.cross_pingpong", variant, size, n,
                                   2 * one_way, (n if ring else 1) * 2 * size, 1 if ring else 2, ring, value,
                                   "us" if name.endswith("_usec") else "GB/s", name, None, {name: str(value)}))
    return out
