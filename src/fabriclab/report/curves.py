"""The curves every figure is made of: one run as the builders read it
(`RunView`), what a y axis can show (`METRICS`) and an x axis can be
(`XAXES`), and `sweep`, the generic figure of a metric along an axis, one
curve per run, benchmark variant and value of the other axes. The figure
builders (figures.py, apps.py) and `fabriclab plot` draw from these."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..suite.benchmarks import REGISTRY
from ..schema.records import AXES
from ..units import fmt_bytes
from .figure import Axis, Figure, Series, slug
from .rows import Row, rows
from .tables import derived, group_name
from .work import app_of, app_work

SIZE = Axis("message size (bytes)", log=True, kind="size")
# Where a benchmark's size is not a message's.
MAX_SERIES = 8
STATS_NOTE = ("line: median; dark band: its 95% interval over launches; light band: p5..p95 of the samples; "
              "hollow markers: points that did not converge")


@dataclass
class RunView:
    """One run as the builders read it: its rows (report/tables.py) and derived figures."""
    name: str
    doc: object                  # the run's document (schema/document.py)
    rows: list = field(default_factory=list)
    derived: dict = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, doc) -> "RunView":
        rs = rows(doc)
        return cls(name, doc, rs, derived(doc, rs))

    @property
    def nranks(self) -> int:
        return int(self.doc.header.nranks or 2)

    def benches(self) -> list[str]:
        return in_registry_order(r.bench for r in self.rows)


def in_registry_order(benches) -> list[str]:
    """Benchmarks once each in the registry's order (levels, then patterns), others after."""
    return sorted(dict.fromkeys(benches), key=lambda b: (order(b), b))


# ---- metrics: what a y axis can show, from a row ------------------------------------------

def _us(t):
    return None if t is None else t * 1e6


def _mbps(bps):
    return None if bps is None else bps * 1e-6


def _transfer_us(r: Row, t):
    """A time statistic of the op as microseconds per transfer (the point's own rule)."""
    return _us(r.per_transfer(t))


def _rate_mbps(r: Row, t):
    """A time statistic of the op as MB/s of its payload (the point's own rule)."""
    return _mbps(r.rate(t))


def _app_rate(r: Row, t):
    """An app's work per second at an op time t, in its figures' unit (its registry facts)."""
    work = app_work(r.point)
    return work / t * app_of(r.bench).rate.scale if work and t and t > 0 else None


@dataclass(frozen=True)
class Metric:
    axis: Axis
    value: Callable
    band: Callable | None = None      # row -> (low, high) of the 95% interval
    spread: Callable | None = None    # row -> (p5-side, p95-side)


METRICS = {
    "latency": Metric(Axis("time per transfer (\u00b5s)"),
                      lambda r: _transfer_us(r, r.median_s),
                      lambda r: (_transfer_us(r, r.ci_low_s), _transfer_us(r, r.ci_high_s)),
                      lambda r: (_transfer_us(r, r.p5_s), _transfer_us(r, r.p95_s))),
    "bandwidth": Metric(Axis("bandwidth (MB/s, 10^6 payload bytes/s)"),
                        lambda r: _rate_mbps(r, r.median_s),
                        lambda r: (_rate_mbps(r, r.ci_high_s), _rate_mbps(r, r.ci_low_s)),
                        lambda r: (_rate_mbps(r, r.p95_s), _rate_mbps(r, r.p5_s))),
    "aggregate": Metric(Axis("aggregate bandwidth (MB/s)"), lambda r: _mbps(r.aggregate_bandwidth_Bps)),
    "per-process": Metric(Axis("mean sender's bandwidth (MB/s)"), lambda r: _mbps(r.rank_bandwidth_mean_Bps)),
    "slowest": Metric(Axis("slowest sender's bandwidth (MB/s)"), lambda r: _mbps(r.rank_bandwidth_min_Bps)),
    "fairness": Metric(Axis("Jain fairness index (1 = equal shares)", log=False), lambda r: r.fairness_jain),
    "message-rate": Metric(Axis("message rate (10^6 messages/s)"), lambda r: _mbps(r.message_rate_per_s)),
    # an app's work: GFLOP/s, 10^6 keys/s, array GB/s (one unit per benchmark; its figures say which)
    "rate": Metric(Axis("work rate (GFLOP/s, 10^6 keys/s or array GB/s)"), lambda r: _app_rate(r, r.median_s),
                   lambda r: (_app_rate(r, r.ci_high_s), _app_rate(r, r.ci_low_s)),
                   lambda r: (_app_rate(r, r.p95_s), _app_rate(r, r.p5_s))),
}

# What an x axis can be, and its label with unit.
XAXES = {
    "size": SIZE,
    "stride": Axis("stride (8-byte words)", log=True, kind="pow2"),
    "active": Axis("active senders or pairs (count)", log=False, kind="count"),
    "conns": Axis("connections (count)", log=True, kind="pow2"),
}
assert set(XAXES) == set(AXES), "every axis of a point can be a figure's x axis"


def series_of(label: str, rs: list, metric: str, x: str, color=None, intervals: bool = True) -> Series:
    """One curve: rows sorted along x, with the metric's interval and spread."""
    m = METRICS[metric]
    at = [getattr(r, x) for r in rs]        # the x axis's field (Row.axes), read once a row
    order = sorted(range(len(rs)), key=lambda i: at[i] if at[i] is not None else -1)
    rs = [rs[i] for i in order]
    s = Series(label, [at[i] for i in order], [m.value(r) for r in rs], color=color,
               hollow=[not r.converged for r in rs])
    if intervals and m.band:
        # With n <= 5 the 95% interval of a median is [min, max]: no band (the tables print n=).
        pairs = [m.band(r) if (r.n or 0) > 5 else (None, None) for r in rs]
        s.band = ([p[0] for p in pairs], [p[1] for p in pairs])
    if intervals and m.spread:
        pairs = [m.spread(r) for r in rs]
        s.spread = ([p[0] for p in pairs], [p[1] for p in pairs])
    return s


def sweep(runs: list, benches: list, metric: str, x: str, where: Callable | None = None,
          title: str | None = None, fid: str | None = None, note: str = "", xlog: bool | None = None) -> Figure:
    """The generic figure: `metric` vs `x` for the named benchmarks, one curve
    per run, benchmark variant and value of every other axis that varies."""
    xaxis = XAXES[x] if xlog is None else replace(XAXES[x], log=xlog)
    curves: dict = {}
    for i, run in enumerate(runs):
        for r in run.rows:
            at = r.axes
            if r.bench not in benches or (where and not where(r)) or at[x] is None:
                continue
            if xaxis.log and at[x] <= 0:
                continue
            others = tuple((a, at[a]) for a in AXES if a != x)
            curves.setdefault((i, r.bench, r.variant), {}).setdefault(others, []).append(r)
    # Axes other than x that vary within a curve's rows split it into several.
    out = []
    siblings: dict = {}        # bench -> its curves' variants, gathered once (not once a curve)
    for k in curves:
        siblings.setdefault(k[1], []).append(k[2])
    for (i, bench, variant), by in sorted(curves.items(), key=lambda kv: (kv[0][0], order(kv[0][1]))):
        varying = [a for a in AXES if a != x and len({dict(k)[a] for k in by}) > 1]
        for others, rs in by.items():
            o = dict(others)
            parts = [variant_name(bench, variant, siblings[bench])]
            parts += [axis_text(a, o[a]) for a in varying]
            out.append((" ".join(parts), rs, i))
    several = len({i for _, _, i in out}) > 1    # curves from more than one run: name the run
    series = [series_of((f"{runs[i].name} " if several else "") + label, rs, metric, x,
                        intervals=not several or len(out) == 1) for label, rs, i in out[:MAX_SERIES]]
    names = ", ".join(benches) if len(benches) <= 3 else f"{len(benches)} benchmarks"
    fig = Figure(fid or slug(f"{names}-{metric}-vs-{x}"),
                 title or f"{names}: {metric} vs {x}", xaxis, METRICS[metric].axis, series, note=note)
    if len(out) > MAX_SERIES:
        fig.note += f" (first {MAX_SERIES} of {len(out)} curves shown)"
    return fig


def variant_name(bench: str, variant: str, siblings) -> str:
    """A benchmark variant's name; the default one says its parameter values
    when other variants of the benchmark are beside it (tcp.conns [check=epoll])."""
    if variant or not any(siblings):
        return group_name(bench, variant)
    b = REGISTRY.get(bench)
    keys = dict.fromkeys(kv.split("=", 1)[0] for v in siblings if v for kv in v.split(","))
    shown = ",".join(f"{k}={b.defaults.get(k, '?')}" for k in keys) if b else ""
    return group_name(bench, shown)


def order(bench: str) -> int:
    order = {b: i for i, b in enumerate(REGISTRY)}
    return order.get(bench, len(order))


def axis_text(axis: str, v) -> str:
    return {"size": lambda: fmt_bytes(v), "stride": lambda: f"stride {v}", "conns": lambda: f"{v} conns",
            "active": lambda: f"{v} active"}[axis]()


def measured(runs: list, benches) -> list[str]:
    have = {b for run in runs for b in run.benches()}
    return [b for b in benches if b in have]


def pick(values: list, k: int) -> list:
    """Up to k values spread evenly over a sorted list (its ends included)."""
    vs = sorted(set(values))
    if len(vs) <= k:
        return vs
    return [vs[round(i * (len(vs) - 1) / (k - 1))] for i in range(k)]
