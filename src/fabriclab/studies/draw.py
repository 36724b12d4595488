"""Small pieces every study's figures and findings share: a measured series
from a run's rows, the seed's published values as a reference series, and
the numbers findings quote."""

from __future__ import annotations

from typing import Optional

from ..report.figure import Axis, Figure, Series
from ..units import fmt_bytes

MBPS = 1e6          # figures draw MB/s (10^6 bytes/s) and microseconds, as the seeds print them
US = 1e-6

SIZE = Axis("message size (bytes)", log=True, kind="size")
BANDWIDTH = Axis("throughput (MB/s)", log=True)     # log: a seed's 1990s MB/s beside today's GB/s
LATENCY = Axis("time (us)", log=True)


def measured(label: str, rows: list, y: str = "bandwidth", x: str = "size", color: Optional[int] = None) -> Series:
    """A series of a run's rows: bandwidth in MB/s, latency (one way) or the
    median op time in microseconds, against the rows' size (or conns, stride, active)."""
    pick = {"bandwidth": lambda r: r.bandwidth_Bps and r.bandwidth_Bps / MBPS,
            "latency": lambda r: r.latency_s and r.latency_s / US,
            "op": lambda r: r.median_s / US,
            "aggregate": lambda r: r.aggregate_bandwidth_Bps and r.aggregate_bandwidth_Bps / MBPS}[y]
    xs = [getattr(r, x) for r in rows]
    return Series(label, xs, [pick(r) for r in rows], hollow=[r.stop != "converged" for r in rows], color=color)


def published(label: str, values: list, x: str = "size", scale: float = MBPS, color: Optional[int] = None) -> Series:
    """The seed's values (reference.Value, each with its condition `at[x]`, such as
    size or connections) as a dashed reference series, in the figure's unit
    (`scale` SI units per unit); a missing value (None) is left out."""
    pts = sorted((v.at[x], v.si() / scale) for v in values if v is not None and x in (v.at or {}))
    return Series(label, [p[0] for p in pts], [p[1] for p in pts], dashed=True, color=color)


def level(label: str, value, xs: list, scale: float = MBPS, color: Optional[int] = None) -> Series:
    """One published value drawn flat across the measured sizes (a peak, a plateau)."""
    if value is None or not xs:
        return Series(label, [], [], dashed=True)
    return Series(label, [min(xs), max(xs)], [value.si() / scale] * 2, dashed=True, markers=False, color=color)


def figure(fid: str, title: str, x: Axis, y: Axis, series: list, note: str) -> Figure:
    return Figure(fid, title, x, y, [s for s in series if s.x], note=note)


def at(rows: list, size: int, field: str = "size"):
    """The row measured at exactly `size` (or the nearest below it), else None."""
    below = [r for r in rows if getattr(r, field) <= size]
    return max(below, key=lambda r: getattr(r, field)) if below else None


def peak(rows: list):
    """The row of highest bandwidth, else None."""
    ok = [r for r in rows if r.bandwidth_Bps]
    return max(ok, key=lambda r: r.bandwidth_Bps) if ok else None


def mbps(row) -> str:
    return f"{row.bandwidth_Bps / MBPS:.1f} MB/s at {fmt_bytes(row.size)}"


def usec(seconds: float) -> str:
    return f"{seconds / US:.1f} us"


def stated(value) -> str:
    """A published value in its unit, without the text around it."""
    return f"{value.value:g} {value.unit}" if value is not None else "-"


def quoted(value) -> str:
    """A published value as the seed prints it, and where."""
    return f"{value.printed} ({value.where})" if value is not None else "-"
