"""`fabriclab show`'s lines for tcp.stream's parallel streams and directions
(analysis/streams.py): each stream's rate, each direction's sum and Jain's
fairness index, for a point with more than one stream or both directions;
and tcp.crr's transactions per second (docs/sockets.md)."""

from __future__ import annotations

from ..analysis import merge, streams
from ..units import fmt_bytes, fmt_time


def _name(bench: str, variant: str) -> str:
    return f"{bench} [{variant}]" if variant else bench


def _mbps(x: float) -> str:
    return f"{x / 1e6:.4g} MB/s"


def crr_lines(merged) -> list[str]:
    """A line per tcp.crr point (merged over its launches): transactions per second."""
    out = []
    for p in merged:
        m = p.summary.median if p.bench == "tcp.crr" else None
        if m:
            out.append(f"connections: {_name(p.bench, p.variant)} at {fmt_bytes(p.size)}: {1 / m:,.0f} "
                       f"transactions/s (1 / the median transaction, {fmt_time(m)}; netperf's TCP_CRR "
                       f"divides its transactions by the test's time: the mean)")
    return out


def lines(doc) -> list[str]:
    """A line per direction of each such point: its streams' rates, their sum and fairness;
    then tcp.crr's rates."""
    out = []
    for s in streams.by_point(doc.points):
        if len(s.stream_Bps) < 2:
            continue
        bench, variant, size = s.key[:3]
        for d in sorted(s.directions, key=lambda d: d != "0->1"):
            fair = s.fairness_of(d)
            out.append(f"streams: {_name(bench, variant)} at {fmt_bytes(size)}, ranks {d}: "
                       f"sum {_mbps(s.direction_Bps(d))}, fairness {'-' if fair is None else f'{fair:.3f}'}"
                       f" (Jain); per stream " + ", ".join(_mbps(x) for x in s.directions[d]))
        if len(s.directions) > 1:
            out.append(f"streams: {_name(bench, variant)} at {fmt_bytes(size)}, both directions: "
                       f"sum {_mbps(s.sum_Bps)}, fairness {s.fairness:.3f} (Jain, every stream)")
    if any(p.bench == "tcp.crr" for p in doc.points):
        out += crr_lines(merge.merged(doc))
    return out
