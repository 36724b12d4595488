"""The ladder of levels (seed 000 Fig. 15) and efficiency (Fig. 16), each level held against the local copy.

A rung is a level's best throughput and lowest latency. A transfer's rate
depends on how many bytes its ops rotate through (its working set: a put
window of 64 x 64 KiB rotates through 4 MiB per side) as much as on the
level, so each transfer rung also carries `memory.copy` at the same working
set, the rate one core copies those bytes at: a remote level above it is
either noise or has a cause the figure's note names, never silently
(docs/usage.md, "Reports and figures"). The run may lack memory.copy at that
working set: between two it measured, the rate is interpolated in log
working set (as report/figures.py's best contiguous copy of strided
transfers) and the note says so; beyond them, the note says that it is
missing and how to measure it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..suite.benchmarks import LEVELS, REGISTRY
from ..units import fmt_bytes, fmt_rate
from .curves import RunView
from .figure import Axis, Figure
from .tables import group_name

COPY = "memory.copy"


@dataclass(frozen=True)
class Rung:
    """One level of the ladder: its best throughput and lowest latency, and where."""
    level: str
    best_Bps: float | None
    best_bench: str
    best_size: int | None
    latency_s: float | None
    latency_bench: str
    latency_size: int | None
    working_set: int | None = None    # bytes per side the best point's ops rotate through
    copy_Bps: float | None = None     # memory.copy at that working set
    copy_how: str = ""                # "measured", "interpolated between A and B", or "" (none)
    above: str = ""                   # why the best exceeds copy_Bps, where it does


def working_set(row) -> int | None:
    """A row's working set: as its point records it, else (documents before
    schema version 12) its buffers x size."""
    p = row.point
    if p.working_set_bytes is not None:
        return p.working_set_bytes
    return (p.buffers or 1) * p.size if p.size else None


def _copies(run: RunView) -> dict:
    """memory.copy's best row at each working set it measured."""
    best: dict = {}
    for r in run.rows:
        ws = working_set(r) if r.bench == COPY and r.bandwidth_Bps else None
        if ws and (ws not in best or r.bandwidth_Bps > best[ws].bandwidth_Bps):
            best[ws] = r
    return best


def copy_at(run: RunView, ws: int | None) -> tuple:
    """(memory.copy's rate at working set `ws`, how it was had, its row where measured)."""
    best = _copies(run)
    if not ws or not best:
        return None, "", None
    if ws in best:
        return best[ws].bandwidth_Bps, "measured", best[ws]
    lo = max((k for k in best if k < ws), default=None)
    hi = min((k for k in best if k > ws), default=None)
    if lo is None or hi is None:
        return None, "", None
    f = math.log(ws / lo) / math.log(hi / lo)
    rate = best[lo].bandwidth_Bps + f * (best[hi].bandwidth_Bps - best[lo].bandwidth_Bps)
    return rate, f"interpolated between {fmt_bytes(lo)} and {fmt_bytes(hi)}", None


def _why_above(run: RunView, row, copy_row) -> str:
    """Why a transfer reads above the local copy of its working set."""
    lo, _ = row.point.interval(row.bandwidth_Bps)
    if copy_row is not None and lo <= copy_row.point.interval(copy_row.bandwidth_Bps)[1]:
        return "their 95% intervals overlap: no difference this run can tell"
    if len(set(run.doc.header.hosts or [])) > 1:
        return "its ranks ran on different hosts, and the network's rate is not bound by one core's copy"
    return ("both ranks ran on one host, where the transfer is itself a copy, by the library's own routine and "
            "with two cores' private caches holding the working set where memory.copy has one core's")


def _paths_by_level(run: RunView) -> dict:
    """level -> its two-rank transfer rows, in the run's order (one pass over the rows, not one a level)."""
    by: dict = {}
    for r in run.rows:
        if not r.concurrent and (REGISTRY[r.bench].pattern is None if r.bench in REGISTRY else r.active is None):
            by.setdefault(r.bench.split(".", 1)[0], []).append(r)
    return by


def ladder_rows(run: RunView) -> list[Rung]:
    """Per level: its best throughput and lowest latency, and which benchmark
    gave them; for a transfer level, memory.copy at the best point's working
    set. Only two-rank transfers count (one stream, one direction): a
    bidirectional or many-rank aggregate is not one path's throughput."""
    out = []
    by_level = _paths_by_level(run)
    for level in LEVELS:
        rs = by_level.get(level)
        if not rs:
            continue
        bw = max((r for r in rs if r.bandwidth_Bps), key=lambda r: r.bandwidth_Bps, default=None)
        lat_rs = [r for r in rs if r.bench in REGISTRY and REGISTRY[r.bench].metric == "latency"
                  and "registration" not in REGISTRY[r.bench].views and r.latency_s is not None]
        small = min((r.size for r in lat_rs), default=None)
        lat = min((r for r in lat_rs if r.size == small), key=lambda r: r.latency_s, default=None)
        ws = working_set(bw) if bw and level != "memory" else None
        rate, how, copy_row = copy_at(run, ws)
        above = _why_above(run, bw, copy_row) if rate and bw.bandwidth_Bps > rate else ""
        out.append(Rung(level, bw.bandwidth_Bps if bw else None, group_name(bw.bench, bw.variant) if bw else "-",
                        bw.size if bw else None, lat.latency_s if lat else None,
                        group_name(lat.bench, lat.variant) if lat else "-", small, ws, rate, how, above))
    return out


def copy_note(lad: list) -> str:
    """What the note of the throughput figure says of each transfer level against the local copy."""
    said, missing = [], []
    for r in lad:
        if r.level == "memory" or not r.best_Bps or not r.working_set:
            continue
        at = f"{fmt_bytes(r.working_set)} working set"
        if r.copy_Bps is None:
            missing.append(f"{r.level} ({at}: fabriclab run {COPY} -s {fmt_bytes(r.working_set)})")
        elif r.above:
            said.append(f"{r.level} ({r.best_bench}, {fmt_rate(r.best_Bps)}) reads above {COPY}'s "
                        f"{fmt_rate(r.copy_Bps)} at its {at}{'' if r.copy_how == 'measured' else ', ' + r.copy_how}:"
                        f" {r.above}")
    text = ""
    if said:
        text += "; " + "; ".join(said)
    elif any(r.copy_Bps for r in lad):
        text += f"; no transfer level reads above {COPY} at its own working set"
    if missing:
        text += f"; the run has no {COPY} at the working set of " + ", ".join(missing)
    return text


def ladder(runs: list, wire_Bps: float | None = None, wire_text: str = "", wire_name: str = "") -> list[Figure]:
    """The ladder of levels (seed 000 Fig. 15) and efficiency (Fig. 16), for the first run."""
    lad = ladder_rows(runs[0])
    if not lad:
        return []
    of = f" ({runs[0].name})" if len(runs) > 1 else ""
    figs = [Figure("ladder-bandwidth", f"Best throughput per level{of}", Axis("level", log=False),
                   Axis("best bandwidth (MB/s)", log=False), bars=[(r.level, (r.best_Bps or 0) / 1e6)
                                                                   for r in lad],
                   note="the fastest point of each level's two-rank, one-direction benchmarks (seed 000 Fig. 15); "
                        "the table below gives each one's working set and memory.copy at it" + copy_note(lad)),
            Figure("ladder-latency", f"Lowest latency per level{of}", Axis("level", log=False),
                   Axis("time per transfer at the smallest size (\u00b5s)"),
                   bars=[(r.level, r.latency_s * 1e6 if r.latency_s is not None else None) for r in lad],
                   note="the lowest one-way time of each level's latency benchmarks at their smallest size "
                        "(the table names it); memory has no latency benchmark")]
    if wire_Bps:
        bars = [(r.level, (r.best_Bps or 0) / wire_Bps * 100) for r in lad if r.level != "memory"]
        vals = [v for _, v in bars if v > 0]
        hosts = set(runs[0].doc.header.hosts or [])
        one_host = len(hosts) <= 1
        figs.append(Figure("efficiency", f"Efficiency against {wire_name or 'the wire rate'}{of}",
                           Axis("level", log=False),
                           Axis("best throughput / wire rate (%)", log=bool(vals) and max(vals) / min(vals) > 30),
                           bars=bars,
                           note=f"best throughput of each transfer level over the gross link rate of {wire_text} "
                                "(seed 000 Fig. 16)" + ("; every rank ran on one host, so these transfers did not "
                                                        "cross that link (shared memory): above 100% says so"
                                                        if one_host else "")))
    return [f for f in figs if not f.empty()]
