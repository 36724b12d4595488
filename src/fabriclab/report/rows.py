"""The row: one merged point as tables, exporters and figures read it.

Flat and in SI units (seconds, bytes, bytes per second); every format (table,
md, csv, json) and every figure reads the same fields, so they cannot drift
apart. Its derived figures are its point's (schema.records.Point): a row
copies them and scales any time statistic through the point, never by its
own arithmetic."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Optional

from ..analysis import cpu, merge
from ..suite.benchmarks import REGISTRY, coll_of
from ..schema.records import MergedPoint
from . import cpu_cost
from .work import app_of, speedups, work_rate


@dataclass(frozen=True)
class Row:
    bench: str
    variant: str
    size: int
    stride: int
    conns: int
    active: Optional[int]
    n: Optional[int]
    median_s: float
    ci_low_s: Optional[float]
    ci_high_s: Optional[float]
    ci_rel: Optional[float]
    p5_s: Optional[float]
    p25_s: Optional[float]
    p75_s: Optional[float]
    p95_s: Optional[float]
    p99_s: Optional[float]
    min_s: Optional[float]
    max_s: Optional[float]
    mean_s: Optional[float]
    stdev_s: Optional[float]
    latency_s: Optional[float]
    bandwidth_Bps: Optional[float]
    bytes_per_op: int
    legs_per_op: int
    concurrent: bool
    aggregate_bandwidth_Bps: Optional[float]
    rank_bandwidth_min_Bps: Optional[float]
    rank_bandwidth_mean_Bps: Optional[float]
    rank_bandwidth_max_Bps: Optional[float]
    fairness_jain: Optional[float]
    fairness_min_max: Optional[float]
    message_rate_per_s: Optional[float]
    # a collective: nccl-tests' bus bandwidth; and each taking rank's median time per op,
    # the fastest, the mean and the slowest (IMB's t_min, t_avg, t_max)
    bus_bandwidth_Bps: Optional[float]
    t_min_s: Optional[float]
    t_avg_s: Optional[float]
    t_max_s: Optional[float]
    slowest_rank: Optional[tuple]     # (rank, host) whose median time is t_max
    # a non-blocking collective with a compute loop: IMB-NBC's overlap (Point.overlap)
    overlap: Optional[dict]
    vs_best_copy: Optional[float]
    launches: int
    within_launch_rel: Optional[float]
    between_launch_rel: Optional[float]
    cache: Optional[str]
    buffers: Optional[int]
    batch: Optional[int]
    stop: Optional[str]
    validation_errors: Optional[int]
    warnings: str
    # apps: the work an op does per second (flops/s, keys/s), the speedup over
    # the same problem on one rank, and the median seconds per op of each phase
    flops_per_s: Optional[float]
    keys_per_s: Optional[float]
    speedup: Optional[float]
    phases_s: Optional[dict]
    # the socket benchmarks' CPU (report/cpu_cost.py): rank 0's (local) and rank 1's (remote)
    # CPU seconds per wall second, netperf's service demand (CPU us per KB or per transaction,
    # cpu_demand_per), and whether either CPU interval was too short to be fine
    cpu_local_util: Optional[float]
    cpu_remote_util: Optional[float]
    cpu_local_demand_us: Optional[float]
    cpu_remote_demand_us: Optional[float]
    cpu_demand_per: Optional[str]
    cpu_coarse: Optional[bool]
    point: MergedPoint = field(compare=False, repr=False)

    @classmethod
    def of(cls, p: MergedPoint, best_copy: Optional[float] = None, speedup: Optional[float] = None,
           tick_s: float = cpu.TICK_S) -> "Row":
        """The row of a merged point; best_copy: the best contiguous copy of
        the same working set, for a strided copy (ECT, seed 000); speedup: an
        app's rate over its rate on one rank."""
        s, fair, bws = p.summary, p.fairness, p.sender_bandwidths()
        taking = [r for r in p.ranks or [] if r.role == "both" and r.median_s is not None] if coll_of(p.bench) else []
        times = [r.median_s for r in taking]
        spread = (min(times), sum(times) / len(times), max(times)) if times else (None, None, None)
        slowest = max(taking, key=lambda r: r.median_s) if taking else None
        printed = (p.info or {}).get("printed_times")   # an imported collective: the tool's t_min, t_avg, t_max
        if not times and isinstance(printed, list) and len(printed) == 3:
            spread = tuple(printed)
        app = app_of(p.bench)
        rates = dict.fromkeys(RATE_FIELDS)       # an app's work rate in the column its facts name
        if app and app.column:
            rates[app.column] = work_rate(p)
        return cls(
            bench=p.bench, variant=p.variant, size=p.size, stride=p.stride, conns=p.conns, active=p.active,
            n=s.n, median_s=s.median, ci_low_s=s.ci_low, ci_high_s=s.ci_high,
            ci_rel=None if s.ci_rel is None or math.isinf(s.ci_rel) else s.ci_rel,
            p5_s=s.p5, p25_s=s.p25, p75_s=s.p75, p95_s=s.p95, p99_s=s.p99, min_s=s.min, max_s=s.max,
            mean_s=s.mean, stdev_s=s.stdev, latency_s=p.latency_s, bandwidth_Bps=p.bandwidth_Bps,
            bytes_per_op=p.bytes_per_op, legs_per_op=p.legs_per_op, concurrent=p.concurrent,
            aggregate_bandwidth_Bps=p.aggregate_bandwidth_Bps,
            rank_bandwidth_min_Bps=min(bws) if bws else None, rank_bandwidth_max_Bps=max(bws) if bws else None,
            rank_bandwidth_mean_Bps=sum(bws) / len(bws) if bws else None,
            fairness_jain=fair.jain if fair else None, fairness_min_max=fair.min_max_ratio if fair else None,
            message_rate_per_s=p.message_rate_per_s, bus_bandwidth_Bps=p.bus_bandwidth_Bps, overlap=p.overlap,
            t_min_s=spread[0], t_avg_s=spread[1], t_max_s=spread[2],
            slowest_rank=(slowest.rank, slowest.host) if slowest else None,
            vs_best_copy=p.bandwidth_Bps / best_copy if best_copy and p.bandwidth_Bps else None,
            launches=len(p.launches), within_launch_rel=p.spread.within_rel,
            between_launch_rel=p.spread.between_rel if len(p.launches) > 1 else None,
            cache=p.cache, buffers=p.buffers, batch=p.batch, stop=p.stop,
            validation_errors=None if p.validation is None else p.validation.get("errors"),
            warnings=warning_text(p.diagnostics),
            **rates, speedup=speedup, phases_s=p.phase_medians or None,
            **cpu_cost.row_figures(p, tick_s), point=p)

    @property
    def axes(self) -> dict:
        return {"size": self.size, "stride": self.stride, "conns": self.conns, "active": self.active}

    @property
    def work_per_s(self) -> Optional[float]:
        """An app's work per second in its own unit's base (flops, keys, array bytes); None for a transfer."""
        app = app_of(self.bench)
        if app is None:
            return None
        return getattr(self, app.column) if app.column else self.bandwidth_Bps

    @property
    def imported(self) -> bool:
        return self.point.is_imported

    @property
    def converged(self) -> bool:
        return self.point.converged

    def per_transfer(self, t: Optional[float]) -> Optional[float]:
        return self.point.per_transfer(t)

    def rate(self, t: Optional[float]) -> Optional[float]:
        return self.point.rate(t)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ROW_FIELDS}


ROW_FIELDS = tuple(f.name for f in fields(Row) if f.name != "point")
# The columns an app's work rate may take (suite/apps.py, App.column).
RATE_FIELDS = ("flops_per_s", "keys_per_s")


def warning_text(diags: list) -> str:
    """A point's warnings, each kind once, with how many launches had it
    where that is more than one: "validation-failed (3 launches), off-trend"."""
    counts: dict = {}
    for d in diags:
        counts[d["code"]] = counts.get(d["code"], 0) + (d.get("launches") or 1)
    return ", ".join(code + (f" ({n} launches)" if n > 1 else "") for code, n in counts.items())


def _best_copies(pts: list) -> dict:
    """(size, cache) -> the best contiguous copy bandwidth measured in the run
    (the benchmarks whose facts say they are one: bench.copy == "contiguous")."""
    best: dict = {}
    for p in pts:
        b = REGISTRY.get(p.bench)
        if b is not None and b.copy == "contiguous" and p.bandwidth_Bps:
            key = (p.size, p.cache)
            best[key] = max(best.get(key, 0.0), p.bandwidth_Bps)
    return best


def rows(doc) -> list[Row]:
    """One row per point, its launches merged (analysis/merge.py). A strided
    copy is read against the best contiguous copy of the same working set,
    the bound every packing mode lives under (ECT, seed 000); an app's rate
    against its rate on one rank (the merged points analysis keeps on the document)."""
    pts = merge.merged(doc)
    best = _best_copies(pts)
    ups = speedups(pts)
    tick = cpu.tick_of(doc.header.timer)
    out = []
    for p in pts:
        b = REGISTRY.get(p.bench)
        strided = b is not None and b.copy == "strided"
        out.append(Row.of(p, best.get((p.size, p.cache)) if strided else None, ups.get(id(p)), tick))
    return out
