"""The thread-scaling view (docs/threads.md): the benchmarks that declare view
"threads" (osu_latency_mt's, IMB-MT's and ucx_perftest -T's rules), their leading figure
(latency, or bandwidth over all threads) against the threads a rank runs,
one line per run, size and other settings. A run measures several thread
counts as variants (`-p threads=1,2,4`, `-p senders=1,2 -p receivers=1,2`);
a variant's threads are suite/threads.py's per-rank count, the larger of
senders and receivers for osu_latency_mt."""

from __future__ import annotations

from ..suite import threads
from ..suite.benchmarks import REGISTRY, in_view
from ..units import fmt_bytes
from .curves import MAX_SERIES, METRICS, measured, pick
from .figure import Axis, Figure, Series

THREADS = Axis("threads per rank", log=True, kind="pow2")
KEYS = ("threads", "senders", "receivers")
NOTE = ("osu_latency_mt: a sender thread's round trip over two, S sender threads on rank 0 and R receiver threads "
        "on rank 1 (x: the larger); IMB-MT: the bytes of every thread over the slowest thread's time; "
        "ucx_perftest -T: a thread's round trip over two, a UCP worker per thread (docs/threads.md)")


def split_variant(bench: str, variant: str) -> tuple[dict, str]:
    """(the thread parameters a variant sets, the rest of the variant) from "threads=2,window=8"."""
    parts = [p for p in variant.split(",") if p]
    mine = dict(p.split("=", 1) for p in parts if p.split("=", 1)[0] in KEYS and "=" in p)
    rest = ",".join(p for p in parts if p.split("=", 1)[0] not in KEYS)
    return mine, rest


def scaling(runs: list) -> list:
    figs = []
    for bench in measured(runs, in_view("threads")):
        fig = _vs_threads(runs, bench)
        if not fig.empty():
            figs.append(fig)
    return figs


def _vs_threads(runs: list, bench: str) -> Figure:
    b = REGISTRY[bench]
    metric = METRICS[b.metric]
    fig = Figure(f"threads-{bench.split('.', 1)[1]}", f"{bench}: {b.metric} vs threads per rank", THREADS,
                 metric.axis, note=NOTE)
    for run in runs:
        by: dict = {}
        for r in run.rows:
            if r.bench != bench or metric.value(r) is None:
                continue
            mine, rest = split_variant(bench, r.variant)
            by.setdefault((rest, r.size), {})[threads.per_rank(b, mine)] = r
        if len({n for line in by.values() for n in line}) < 2:
            continue
        sizes = pick([s for _, s in by], MAX_SERIES)
        for (rest, size), line in sorted(by.items()):
            if size not in sizes or len(line) < 2:
                continue
            ns = sorted(line)
            label = (f"{run.name} " if len(runs) > 1 else "") + fmt_bytes(size) + (f" [{rest}]" if rest else "")
            fig.series.append(Series(label, ns, [metric.value(line[n]) for n in ns],
                                     hollow=[not line[n].converged for n in ns]))
    fig.series = fig.series[:MAX_SERIES]
    return fig
