"""The halo view (docs/halo.md): MPI's neighbourhood collectives beside the
hand-written exchange of IMB-P2P's stencils, at equal bytes per rank.

Every benchmark that declares view "halo" draws its op time against the
bytes each rank sends per op (the most any rank sent, as the core
reports each rank's: SIZE x neighbours for both kinds), one line per run,
benchmark and variant. Where a run measured a neighbourhood collective on
IMB's own grid (neighborhood=stencil2d or stencil3d: the same neighbours
as message.stencil2d/3d) and the stencil itself, a second figure draws
their ratio, the collective's time over the exchange's, at each size
both measured: above 1 the library's schedule costs more than posting
every receive and send at once. Where the run carries the network's
model of its exchanges (its `halo_model` block, verdicts/halo_prediction.py),
the time figure draws each line's prediction dashed beside it."""

from __future__ import annotations

from ..suite.benchmarks import in_view
from .curves import MAX_SERIES, measured
from .figure import Axis, Figure, Series
from .tables import group_name

PER_RANK = Axis("bytes each rank sends per op", kind="size")
TIME = Axis("time per op (us)")
RATIO = Axis("neighbourhood collective / stencil (time per op)", log=False)
NOTE = ("the median op time of the slowest rank; the stencil is IMB-P2P's Irecv/Isend/Waitall exchange, "
        "timed back to back as IMB times it, the collective one call after a barrier (OSU's rule, docs/halo.md)")


def _grid_of(bench: str, variant: str) -> str | None:
    """The IMB grid a point ran on ("stencil2d"), or None: the stencil's own, or the
    neighbourhood a collective named."""
    if bench.startswith("message.stencil"):
        return bench.split(".", 1)[1]
    for part in variant.split(","):
        if part in ("neighborhood=stencil2d", "neighborhood=stencil3d"):
            return part.split("=", 1)[1]
    return None


def _per_rank(r) -> int | None:
    """The bytes the busiest rank sends per op, as the core reported them (None: not reported)."""
    sent = r.point.rank_sent_bytes
    return max(sent) if sent else None


def _predicted(run) -> dict:
    """(bench, variant, size) -> the network model's op time in the run's halo_model block."""
    rows = ((getattr(run.doc, "blocks", None) or {}).get("halo_model") or {}).get("rows") or []
    return {(r["bench"], r.get("variant", ""), r["size"]): r["predicted_s"] for r in rows}


def view(runs: list) -> list[Figure]:
    benches = measured(runs, in_view("halo"))
    if not benches:
        return []
    times = Figure("halo-time", "Halo exchange: time per op vs bytes each rank sends", PER_RANK, TIME, note=NOTE)
    ratio = Figure("halo-ratio", "Neighbourhood collective over the hand-written exchange, same neighbours",
                   PER_RANK, RATIO, note="at equal SIZE both move the same bytes to the same neighbours; " + NOTE)
    for run in runs:
        prefix = f"{run.name} " if len(runs) > 1 else ""
        lines: dict = {}
        for r in run.rows:
            if r.bench in benches and r.median_s > 0 and _per_rank(r):
                lines.setdefault((r.bench, r.variant), []).append(r)
        stencils, model = {}, _predicted(run)
        for (bench, variant), rs in lines.items():
            rs = sorted(rs, key=lambda r: r.size)
            times.series.append(Series(prefix + group_name(bench, variant), [_per_rank(r) for r in rs],
                                       [r.median_s * 1e6 for r in rs], hollow=[not r.converged for r in rs]))
            at = [r for r in rs if (bench, variant, r.size) in model]
            if at:
                times.series.append(Series(prefix + group_name(bench, variant) + " (model)", [_per_rank(r) for r in at],
                                           [model[(bench, variant, r.size)] * 1e6 for r in at], dashed=True))
            if bench.startswith("message.stencil") and "touch=off" not in variant:
                stencils[_grid_of(bench, variant)] = {r.size: r for r in rs}
        for (bench, variant), rs in lines.items():
            grid = _grid_of(bench, variant)
            base = stencils.get(grid) if bench.startswith("coll.") else None
            pairs = [(r, base[r.size]) for r in sorted(rs, key=lambda r: r.size) if base and r.size in base]
            if pairs:
                ratio.series.append(Series(f"{prefix}{group_name(bench, variant)} / {grid}",
                                           [_per_rank(s) for _, s in pairs],
                                           [c.median_s / s.median_s for c, s in pairs]))
    times.series, ratio.series = times.series[:MAX_SERIES], ratio.series[:MAX_SERIES]
    return [f for f in (times, ratio) if not f.empty()]
