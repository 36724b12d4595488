"""The UDP benchmarks' figures in the run's tables (analysis/udp.py): per udp.stream point what
arrived (rate, loss, out of order, jitter; per flow and Jain's fairness with several flows), per
udp.rr point the completed transactions' latency, their rate and the lost ones."""

from __future__ import annotations

from ..analysis import udp
from ..suite.benchmarks import REGISTRY
from ..units import fmt_bytes, fmt_rate, fmt_time


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.3g}%"


def _t(x) -> str:
    return "-" if x is None else fmt_time(x)


def _r(x) -> str:
    return "-" if x is None else fmt_rate(x)


def lines(doc) -> list[str]:
    """A line per UDP point (and per flow where a point has several), from its launches' counters."""
    by = {}
    for p in doc.points:
        if p.bench in ("udp.stream", "udp.rr") and p.rank_counters:
            by.setdefault(p.bench, []).append(p)
    out = []
    for f in udp.stream_figures(by.get("udp.stream", []), REGISTRY["udp.stream"].counters):
        bench, variant, size = f.key[:3]
        name = f"{bench}[{variant}]" if variant else bench
        fair = f", fairness {f.fairness:.3f}" if f.fairness is not None else ""
        out.append(f"udp: {name} at {fmt_bytes(size)}: received {_r(f.received_Bps)} ({f.received} of "
                   f"{f.sent} datagrams sent), lost {f.lost} ({_pct(f.loss)}), out of order {f.out_of_order}, "
                   f"jitter {_t(f.jitter_s)}{fair} ({f.launches} launches)")
        for x in f.flows if len(f.flows) > 1 else ():
            out.append(f"  flow {x.stream} to rank {x.rank}: {_r(x.received_Bps)}, lost {x.lost} ({_pct(x.loss)}), "
                       f"out of order {x.out_of_order}, jitter {_t(x.jitter_s)}")
    for f in udp.rr_figures(by.get("udp.rr", []), REGISTRY["udp.rr"].counters):
        bench, variant, size = f.key[:3]
        name = f"{bench}[{variant}]" if variant else bench
        rate = "-" if f.transactions_per_s is None else f"{f.transactions_per_s:.4g}/s"
        out.append(f"udp: {name} at {fmt_bytes(size)}: {f.completed} of {f.sent} transactions completed, "
                   f"latency {_t(f.latency_s)} (round trip {_t(f.rtt_s)}), {rate}, lost {f.lost} ({_pct(f.loss)}),"
                   f" late replies {f.late} ({f.launches} launches)")
    return out
