"""The view "CPU per byte": the socket benchmarks' service demand against size,
local (rank 0) and remote (rank 1), netperf's us/KB or us/Tr (report/cpu_cost.py,
analysis/cpu.py)."""

from __future__ import annotations

from ..suite.benchmarks import REGISTRY, in_view
from .cpu_cost import VIEW, cost_unit, note
from .curves import MAX_SERIES, measured
from .figure import Axis, Figure, Series


def view(runs: list) -> list:
    """Service demand against size per socket benchmark, a line each for local and remote
    per run, variant and connection count."""
    figs = []
    for bench in measured(runs, in_view(VIEW)):
        per, b = cost_unit(bench), REGISTRY[bench]
        fig = Figure(f"cpu-{bench.replace('.', '-')}", f"{bench}: CPU per {'transaction' if per == 'Tr' else 'KB'}",
                     Axis(f"{b.size_label} ({b.size_unit})", log=True, kind="size"),
                     Axis(f"service demand (CPU us/{per})"),
                     note=note(per) + "; a line each for local (rank 0) and remote (rank 1); hollow: not converged")
        for run in runs:
            lines: dict = {}
            for r in run.rows:
                if r.bench == bench and r.cpu_demand_per:
                    lines.setdefault((r.variant, r.conns, r.stride, r.active), []).append(r)
            for (variant, conns, stride, active), rs in lines.items():
                rs = sorted(rs, key=lambda r: r.size)
                label = ((f"{run.name} " if len(runs) > 1 else "") + (f"[{variant}] " if variant else "")
                         + (f"conns {conns} " if conns != 1 else "") + (f"stride {stride} " if stride != 1 else "")
                         + (f"active {active} " if active is not None else ""))
                hollow = [not r.converged for r in rs]
                fig.series.append(Series(label + "local", [r.size for r in rs],
                                         [r.cpu_local_demand_us for r in rs], hollow=hollow))
                fig.series.append(Series(label + "remote", [r.size for r in rs],
                                         [r.cpu_remote_demand_us for r in rs], hollow=hollow))
        fig.series = fig.series[:2 * MAX_SERIES]
        if not fig.empty():
            figs.append(fig)
    return figs
