"""The machine's noise beside a collective's time on the same cores (view
"noise", docs/noise.md): per core the share of its time lost to noise, by
the selfish detour (sum of the detours' lengths over the span) and by FWQ
(the quanta's time beyond the shortest over all of it); and, where the run
also timed a small collective (coll.barrier, coll.allreduce at its smallest
size), the collective's median and 99th-percentile sample beside the
detours' mean and longest length, in microseconds. Read together: a
collective waits for its slowest rank, so a detour on any core it runs on
delays the whole op; a p99 that sits near the detours' lengths while the
median does not is the noise, a p99 far above them is something else (the
network, the library). Every figure is the median over the run's launches
(a core's detours and quanta from analysis/noise.py)."""

from __future__ import annotations

import numpy as np

from ..analysis import noise
from .figure import Axis, Figure

COLLECTIVES = ("coll.barrier", "coll.allreduce")
LOST = Axis("time lost (%)", log=False)
US = Axis("time (\u00b5s)")        # log: a collective's microseconds beside detours of milliseconds


def _suffix(runs: list, run) -> tuple[str, str]:
    named = len(runs) > 1
    return (f"-{run.name}" if named else "", f" ({run.name})" if named else "")


def _lost(run, cores: dict) -> list:
    """[(category, percent)]: per CPU, the detours' share and FWQ's lost share, medians over launches."""
    bars = []
    for cpu in sorted(set(cores["detour"]) | set(cores["fwq"])):
        if cpu in cores["detour"]:
            bars.append((f"cpu {cpu} detours", 100 * float(np.median([c.cpu_share for c in cores["detour"][cpu]]))))
        if cpu in cores["fwq"]:
            bars.append((f"cpu {cpu} FWQ", 100 * float(np.median([c.lost_share for c in cores["fwq"][cpu]]))))
    return bars


def _collective(run, cores: dict) -> list:
    """[(category, us)]: each small collective's p50 and p99 sample at its smallest size, then the
    detours' mean and longest."""
    bars = []
    for bench in COLLECTIVES:
        pts = [p for p in run.doc.points if p.bench == bench and p.samples]
        if not pts:
            continue
        size = min(p.size for p in pts)
        x = np.concatenate([np.asarray(p.samples, dtype=float) for p in pts if p.size == size])
        op = bench.split(".", 1)[1]
        bars += [(f"{op} p50", float(np.percentile(x, 50)) * 1e6), (f"{op} p99", float(np.percentile(x, 99)) * 1e6)]
    detours = [c for cs in cores["detour"].values() for c in cs if c.kept]
    if bars and detours:
        bars += [("detour mean", float(np.median([c.mean_s for c in detours])) * 1e6),
                 ("detour longest", max(c.max_s for c in detours) * 1e6)]
    return bars if detours else []


def view(runs: list) -> list[Figure]:
    figs = []
    for run in runs:
        cores = noise.by_cpu(run.doc.points)
        ident, of = _suffix(runs, run)
        lost = _lost(run, cores)
        if lost:
            figs.append(Figure(f"noise-lost{ident}", f"Time lost to noise per core{of}", Axis("core", log=False),
                               LOST, bars=lost,
                               note="noise.detour: the detours' length beyond the shortest loop over the span "
                                    "(netgauge's CPU overhead); noise.fwq: the quanta's time beyond the shortest "
                                    "over all of it; medians over launches (docs/noise.md)"))
        both = _collective(run, cores)
        if both:
            figs.append(Figure(f"noise-collective{ident}", f"A small collective beside the detours{of}",
                               Axis("figure", log=False), US, bars=both,
                               note="the collective at its smallest size, its samples the slowest rank's time "
                                    "per op of a batch; a "
                                    "p99 near the detours' lengths while the median is not is the noise "
                                    "(docs/noise.md, reading them beside a collective)"))
    return figs
