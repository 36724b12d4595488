"""The collectives' figures: per operation, bus bandwidth against size (nccl-tests'
convention, suite/collectives.py), one curve per run, variant (form, in place,
element type ...) and rank count, with the fastest to the slowest rank's time as
the band (IMB's t_min .. t_max, read as bandwidths); scan, which has no bus
bandwidth, as algorithm bandwidth; the barrier as time per op against ranks;
where a run swept ranks, each operation's time against ranks, one line per
size; where a run measured it, each operation's overlap with
computation (IMB-NBC) against size, its 95% interval as the band; and where
the run knew its network (its coll_model block, verdicts/coll_prediction.py),
its measured time beside each algorithm's predicted time, and the table of
measured over predicted."""

from __future__ import annotations

from ..suite.benchmarks import REGISTRY, in_view
from ..units import fmt_bytes, fmt_time
from .curves import MAX_SERIES, SIZE, measured
from .figure import Axis, Figure, Series
from .tables import group_name


def collectives(runs: list) -> list[Figure]:
    figs = []
    for bench in measured(runs, in_view("collectives")):
        fig = _barrier(runs, bench) if bench == "coll.barrier" else _operation(runs, bench)
        figs += [f for f in (fig, _scaling(runs, bench), _overlap(runs, bench), _model(runs, bench))
                 if not f.empty()]
    return figs


def _grouped(rows, key) -> dict:
    """key(row) -> its rows, in their order (one pass over the rows, not one a key)."""
    by: dict = {}
    for r in rows:
        by.setdefault(key(r), []).append(r)
    return by


def _of(run, bench: str) -> list:
    return [r for r in run.rows if r.bench == bench]


def _lines(runs: list, bench: str):
    """(label, rows sorted by size) of each run, variant and rank count, at most MAX_SERIES."""
    out = []
    for run in runs:
        for key, line in _grouped(_of(run, bench), lambda r: (r.variant, r.active)).items():
            line = sorted(line, key=lambda r: r.size)
            label = (f"{run.name} " if len(runs) > 1 else "") + f"{group_name(bench, key[0])} N={key[1]}"
            out.append((label, line))
    return out[:MAX_SERIES]


def _operation(runs: list, bench: str) -> Figure:
    op, bus = bench.split(".", 1)[1], REGISTRY[bench].coll.bus is not None
    what = "bus bandwidth" if bus else "algorithm bandwidth"
    fig = Figure(f"coll-{op}", f"{REGISTRY[bench].coll.call}: {what} vs size", SIZE, Axis(f"{what} (MB/s)"),
                 note=(f"{what}: the op's bytes over the slowest rank's time"
                       + (" times the operation's bus factor (nccl-tests), comparable with the wire rate"
                          if bus else "") + "; band: the fastest to the slowest rank's median time"))
    for label, line in _lines(runs, bench):
        line = [r for r in line if r.size > 0]
        def mbps(r, t):
            """The figure of an op lasting t seconds, in MB/s."""
            rate, factor = r.rate(t), (r.point.bus_factor if bus else 1.0)
            return rate * factor / 1e6 if rate and factor is not None else None
        fig.series.append(Series(label, [r.size for r in line], [mbps(r, r.median_s) for r in line],
                                 band=([mbps(r, r.t_max_s) for r in line], [mbps(r, r.t_min_s) for r in line]),
                                 hollow=[not r.converged for r in line]))
    return fig


def _barrier(runs: list, bench: str) -> Figure:
    fig = Figure("coll-barrier", "MPI_Barrier: time per op vs ranks", Axis("ranks (count)", kind="count"),
                 Axis("time per op (us)"), note="the slowest rank's time of one barrier")
    for run in runs:
        for variant, line in _grouped(_of(run, bench), lambda r: r.variant).items():
            line = sorted(line, key=lambda r: r.active or 0)
            fig.series.append(Series((f"{run.name} " if len(runs) > 1 else "") + group_name(bench, variant),
                                     [r.active for r in line], [r.median_s * 1e6 for r in line],
                                     hollow=[not r.converged for r in line]))
    return fig


def _overlap(runs: list, bench: str) -> Figure:
    """Overlap % against size, one line per variant and rank count that measured it."""
    op = bench.split(".", 1)[1]
    fig = Figure(f"coll-{op}-overlap", f"{REGISTRY[bench].coll.call}: overlap with computation vs size", SIZE,
                 Axis("overlap (%)"),
                 note="IMB-NBC: 100 x (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu), clipped to 0..100; "
                      "band: from the interval of t_ovrl; hollow: the compute loop ran off its calibrated speed "
                      "(overlap-compute) or the point did not converge")
    for label, line in _lines(runs, bench):
        line = [r for r in line if r.overlap]
        if not line:
            continue
        fig.series.append(Series(label, [r.size for r in line], [r.overlap["percent"] for r in line],
                                 band=([r.overlap["low"] for r in line], [r.overlap["high"] for r in line]),
                                 hollow=[not r.converged or "overlap-compute" in (r.warnings or "") for r in line]))
    return fig


def _scaling(runs: list, bench: str) -> Figure:
    """Time per op against ranks, one line per run, variant and size, where the run swept two or
    more rank counts (the barrier's own figure is this already)."""
    op = bench.split(".", 1)[1]
    fig = Figure(f"coll-{op}-ranks", f"{REGISTRY[bench].coll.call}: time per op vs ranks",
                 Axis("ranks (count)", kind="count"), Axis("time per op (us)"),
                 note="the slowest rank's time of one op; band: the fastest to the slowest rank's median time")
    if bench == "coll.barrier":
        return fig
    for run in runs:
        for (variant, size), line in _grouped((r for r in _of(run, bench) if r.active),
                                              lambda r: (r.variant, r.size)).items():
            line = sorted(line, key=lambda r: r.active)
            if len(line) < 2 or len(fig.series) >= MAX_SERIES:
                continue
            label = (f"{run.name} " if len(runs) > 1 else "") + f"{group_name(bench, variant)} {fmt_bytes(size)}"
            fig.series.append(Series(label, [r.active for r in line], [r.median_s * 1e6 for r in line],
                                     band=([(r.t_min_s or r.median_s) * 1e6 for r in line],
                                           [(r.t_max_s or r.median_s) * 1e6 for r in line]),
                                     hollow=[not r.converged for r in line]))
    return fig


def _model(runs: list, bench: str) -> Figure:
    """Measured time per op against size beside the model's time of each algorithm on the
    network the run crossed, a line per run, variant and rank count."""
    op = bench.split(".", 1)[1]
    fig = Figure(f"coll-{op}-model", f"{REGISTRY[bench].coll.call}: measured vs the network's model",
                 SIZE, Axis("time per op (us)", log=True),
                 note="solid: measured (the slowest rank's median); dashed: the model's time of each algorithm "
                      "on the run's network file (docs/model.md §10)")
    for run in runs:
        preds = [r for r in run.doc.coll_predictions if r["bench"] == bench]
        for variant, active in dict.fromkeys((r["variant"], r["active"]) for r in preds):
            line = sorted((r for r in preds if (r["variant"], r["active"]) == (variant, active)),
                          key=lambda r: r["size"])
            name = (f"{run.name} " if len(runs) > 1 else "") + f"{group_name(bench, variant)} N={active}"
            xs = [r["size"] for r in line]
            fig.series.append(Series(f"{name} measured", xs, [r["measured_s"] * 1e6 for r in line]))
            for alg in line[0]["predictions"]:
                fig.series.append(Series(f"{name} model: {alg}", xs,
                                         [r["predictions"].get(alg, 0) * 1e6 or None for r in line],
                                         dashed=True, markers=False))
    fig.series = fig.series[:MAX_SERIES]
    return fig


def model_table(run) -> tuple[list, list]:
    """(head, body): each collective point beside the model's prediction for the network
    the run crossed (its coll_model block), or no rows where the run has none."""
    body = [[group_name(r["bench"], r.get("variant", "")), fmt_bytes(r["size"]), r["active"],
             fmt_time(r["measured_s"]), fmt_time(r["predicted_s"]), f"{r['ratio']:.3f}", r["verdict"],
             f"{r['algorithm']} ({r.get('as', '')})", r.get("bottleneck") or "-", r.get("network") or "-"]
            for r in run.doc.coll_predictions]
    return ["benchmark", "size", "ranks", "measured", "predicted", "measured / predicted", "verdict (10%)",
            "algorithm timed", "bottleneck", "network"], body
