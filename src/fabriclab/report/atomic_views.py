"""The atomics view (docs/atomics.md): the
benchmarks that declare view "atomics" (deposit.fop, cas, acc, get_acc, run
or imported from OSU's tests), their latency per sync mode: a bar per
benchmark, sync (and IMB's aggregate mode) at each run's smallest size, and
for the vector ops (acc, get_acc) latency against size, a line per sync.
The latency is the point's own: the time of one op with its
synchronisation as OSU times it (fence and pscw: half a round of an op each
way), or in aggregate mode the time of a flush's ops over their number."""

from __future__ import annotations

from ..suite.benchmarks import REGISTRY, in_view
from .curves import MAX_SERIES, SIZE, measured
from .figure import Axis, Figure, Series

LATENCY = Axis("latency per op (\u00b5s)")
NOTE = ("the time of one op with its synchronisation: OSU's rule (osu_fop_latency.c and its siblings: total time "
        "over iterations, x0.5 for fence and pscw whose round is an op each way), or IMB-RMA's aggregate mode "
        "(n ops, one flush, over n); median over samples")


def settings(bench: str, variant: str) -> tuple[str, str]:
    """(sync, the rest of the variant) of a point: sync=... from the variant, else the benchmark's
    default; mode=aggregate named in the rest as `aggregate`."""
    parts = dict(p.split("=", 1) for p in variant.split(",") if "=" in p)
    sync = parts.pop("sync", REGISTRY[bench].defaults.get("sync", "flush"))
    if parts.pop("mode", "osu") == "aggregate":
        parts["aggregate"] = parts.pop("ops_per_flush", str(REGISTRY[bench].defaults["ops_per_flush"]))
    parts.pop("ops_per_flush", None)
    return sync, ",".join(f"{k}={v}" for k, v in sorted(parts.items()))


def _label(bench: str, sync: str, rest: str) -> str:
    return f"{bench.split('.', 1)[1]} {sync}" + (f" [{rest}]" if rest else "")


def atomics(runs: list) -> list:
    benches = measured(runs, in_view("atomics"))
    if not benches:
        return []
    figs = [f for run in runs if not (f := _per_sync(run, benches, len(runs) > 1)).empty()]
    for bench in benches:
        fig = _vs_size(runs, bench)
        if not fig.empty():
            figs.append(fig)
    return figs


def _per_sync(run, benches: list, named: bool) -> Figure:
    """A bar per (benchmark, sync, other settings) at its smallest size, in registry then sync order."""
    of = f" ({run.name})" if named else ""
    syncs = {b: REGISTRY[b].params["sync"].choices for b in benches}
    first: dict = {}
    for r in run.rows:
        if r.bench in syncs and r.latency_s is not None:
            key = (r.bench, *settings(r.bench, r.variant))
            if key not in first or r.size < first[key].size:
                first[key] = r
    order = sorted(first, key=lambda k: (benches.index(k[0]), syncs[k[0]].index(k[1])
                                         if k[1] in syncs[k[0]] else 99, k[2]))
    return Figure(f"atomics-sync{'-' + run.name if named else ''}", f"Atomics: latency per sync mode{of}",
                  Axis("benchmark and sync (smallest size)", log=False), LATENCY,
                  bars=[(_label(*k) + f" @{first[k].size} B", first[k].latency_s * 1e6) for k in order],
                  note=NOTE)


def _vs_size(runs: list, bench: str) -> Figure:
    """A vector op's latency against size, a line per run and sync (at least two sizes)."""
    fig = Figure(f"atomics-{bench.split('.', 1)[1]}", f"{bench}: latency vs size per sync mode", SIZE, LATENCY,
                 note=NOTE)
    for run in runs:
        lines: dict = {}
        for r in run.rows:
            if r.bench == bench and r.latency_s is not None:
                lines.setdefault(settings(bench, r.variant), []).append(r)
        for (sync, rest), rs in sorted(lines.items()):
            if len(rs) < 2:
                continue
            rs = sorted(rs, key=lambda r: r.size)
            label = (f"{run.name} " if len(runs) > 1 else "") + _label(bench, sync, rest)
            fig.series.append(Series(label, [r.size for r in rs], [r.latency_s * 1e6 for r in rs],
                                     hollow=[not r.converged for r in rs]))
    fig.series = fig.series[:MAX_SERIES]
    return fig
