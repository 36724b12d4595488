"""The typed points of a run document (docs/schema.md): a point as one
launch measured it and a point merged over its launches. Their parts are in
summaries.py, how a point's fields are read in point_fields.py, the run's
other records (launch, launch-end, skip, diagnostic) in run_records.py.

A point owns its derived figures: the time of one transfer, the bandwidth,
the aggregate bandwidth and the message rate are computed here, once, from
its median and how its time becomes figures (IMB's scale_time/scale_bw):
an op of a sequential benchmark is `legs_per_op` one-way transfers in a row,
so one transfer takes t / legs (ping-pong: 2); a concurrent op moves all its
transfers at once, so the op's time is the figure. Bandwidth is the payload
bytes of one op over its time; an op that moves no payload (size 0) has
none. Every record reads itself from the schema with its types and ranges
checked (`from_dict`, fields.py) and writes itself back (`to_dict`); fields
this version does not know are kept and written back unchanged."""

from __future__ import annotations

from operator import attrgetter
from dataclasses import dataclass, field, fields as dc_fields
from typing import Optional

from .fields import Fields, RecordError, is_duration
from .point_fields import point_kwargs
from .summaries import Fairness, LaunchSummary, Spread, Summary

# A point's axes, in the order points are keyed and sorted; with the
# benchmark and its variant they identify a point across runs.
AXES = ("size", "stride", "conns", "active")
KEY_FIELDS = ("bench", "variant") + AXES
STOPS = ("converged", "time_cap", "max_samples", "imported", "mixed")
CACHE_STATES = ("warm", "cold")


def point_key(p) -> tuple:
    """What identifies a point across runs, from a record or a mapping
    (version 1 points: no variant, one connection, no active count)."""
    if isinstance(p, Point):
        return p.key
    return (p["bench"], p.get("variant", ""), p["size"], p.get("stride", 1), p.get("conns", 1), p.get("active"))


def overlap_percent(t_pure: float, t_cpu: float, t_ovrl: float) -> float:
    """Intel MPI Benchmarks' overlap of a non-blocking operation (IMB-NBC,
    "Measuring Communication and Computation Overlap"): 100 x max(0, min(1,
    (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU))); 100 when the op hides
    entirely behind the computation, 0 when they add up."""
    return 100.0 * max(0.0, min(1.0, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)))



def _plain(x):
    """A record (or a list of them) as JSON-ready data."""
    if hasattr(x, "to_dict"):
        return x.to_dict()
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


@dataclass(slots=True)
class Point:
    """A point as one launch measured it (a `point` record).

    Key: the benchmark, its variant and every axis (AXES). The op: its payload
    bytes, its legs and whether they overlap. Pattern points (roles is not
    None) also carry every rank's layout, bytes and samples and the per-rank
    figures computed from them (analysis/ranks.py)."""

    KIND = "point"
    bench: str
    size: int
    bytes_per_op: int
    summary: Summary
    variant: str = ""
    stride: int = 1
    conns: int = 1
    active: Optional[int] = None
    legs_per_op: int = 1
    concurrent: bool = False
    params: dict = field(default_factory=dict)
    cache: Optional[str] = None
    buffers: Optional[int] = None
    # bytes per side of the largest region a rank's ops rotate through (null
    # for an app's op); and what each rank's kernel allocated for the point
    working_set_bytes: Optional[int] = None
    rank_alloc_bytes: Optional[list] = None
    launch: Optional[int] = 0
    warmup: Optional[int] = None
    batch: Optional[int] = None
    samples: list = field(default_factory=list)
    stop: Optional[str] = None
    elapsed_s: Optional[float] = None
    validation: Optional[dict] = None
    info: dict = field(default_factory=dict)
    diagnostics: list = field(default_factory=list)
    imported: Optional[dict] = None
    # pattern points
    roles: Optional[str] = None
    peers: Optional[list] = None
    rank_samples: Optional[list] = None
    rank_sent_bytes: Optional[list] = None
    rank_recv_bytes: Optional[list] = None
    messages_per_op: Optional[int] = None
    ranks: Optional[list] = None          # [RankFigures]
    fairness: Optional[Fairness] = None
    # app points: seconds per op in each named phase, one per sample (the
    # mean over the active ranks; docs/core-protocol.md)
    phases: Optional[dict] = None
    # --per-op: every single op's time in log buckets, per rank that times (analysis/tails.py)
    op_histogram: Optional[dict] = None
    # per rank, its process's CPU over the point's samples: {user_s, sys_s, wall_s}
    # (getrusage; docs/core-protocol.md, "rank_cpu"; analysis/cpu.py derives from it)
    rank_cpu: Optional[list] = None
    # kernels with counters: per rank, null or {name: [v0, v1 .. vn]}, the raw values
    # before the first sample and after each (docs/core-protocol.md, "counters";
    # analysis/counters.py derives figures from them with the registry's kinds)
    rank_counters: Optional[list] = None
    # the noise benchmarks: every rank's raw quanta or detours in integer ns (_noise,
    # analysis/noise.py)
    noise: Optional[dict] = None
    extra: dict = field(default_factory=dict)   # fields this version does not know

    # ---- identity

    @property
    def key(self) -> tuple:
        return (self.bench, self.variant, self.size, self.stride, self.conns, self.active)

    @property
    def is_pattern(self) -> bool:
        return self.roles is not None

    @property
    def is_imported(self) -> bool:
        """Another tool's printed figure: no samples, no interval (schema version 4)."""
        return self.imported is not None

    @property
    def converged(self) -> bool:
        return self.stop in ("converged", "imported")

    # ---- the derived figures, computed here only

    @property
    def median_s(self) -> float:
        return self.summary.median

    def per_transfer(self, t: Optional[float]) -> Optional[float]:
        """A time per op (any statistic of it) as the time of one transfer."""
        if t is None:
            return None
        return t if self.concurrent else t / max(1, self.legs_per_op)

    def rate(self, t: Optional[float]) -> Optional[float]:
        """Payload bytes per second of an op lasting t seconds (None without payload or time)."""
        if not t or t <= 0 or self.bytes_per_op <= 0:
            return None
        return self.bytes_per_op / t

    @property
    def latency_s(self) -> Optional[float]:
        return self.per_transfer(self.summary.median)

    @property
    def bandwidth_Bps(self) -> Optional[float]:
        return self.rate(self.summary.median)

    @property
    def bus_factor(self) -> Optional[float]:
        """A collective's bus bandwidth over its algorithm bandwidth at its rank count, as the
        run recorded it in the point's info (suite/collectives.py); None for any other point."""
        factor = (self.info or {}).get("bus_factor")
        return factor if isinstance(factor, (int, float)) else None

    @property
    def bus_bandwidth_Bps(self) -> Optional[float]:
        """A collective's bus bandwidth (nccl-tests): its bandwidth times its bus factor."""
        bw, factor = self.bandwidth_Bps, self.bus_factor
        return bw * factor if bw is not None and factor is not None else None

    @property
    def overlap(self) -> Optional[dict]:
        """A non-blocking collective's overlap with computation (IMB-NBC), from
        the calibration in its info and its op time t_ovrl: percent at the
        median, low and high at the interval's ends (a longer op overlaps
        less); the compute phase's time during the op over its time alone
        (compute_slowdown) and t_cpu over t_pure, which the loop was
        calibrated to match (cpu_over_pure). Either far from 1: the CPU ran
        the loop at another speed than calibrated, and the percent measures
        that as well as overlap. None for any other point."""
        o = (self.info or {}).get("overlap")
        if not isinstance(o, dict) or not is_duration(o.get("t_pure_s")) or not is_duration(o.get("t_cpu_s")):
            return None
        tp, tc, s = o["t_pure_s"], o["t_cpu_s"], self.summary
        if min(tp, tc) <= 0:
            return None
        compute = self.phase_medians.get("compute")
        return {"percent": overlap_percent(tp, tc, s.median),
                "low": overlap_percent(tp, tc, s.ci_high if s.ci_high is not None else s.median),
                "high": overlap_percent(tp, tc, s.ci_low if s.ci_low is not None else s.median),
                "compute_slowdown": compute / tc if compute is not None else None, "cpu_over_pure": tc / tp}

    @property
    def aggregate_bandwidth_Bps(self) -> Optional[float]:
        """A pattern's payload of all ranks over the slowest rank's time (its median)."""
        return self.bandwidth_Bps if self.is_pattern else None

    @property
    def message_rate_per_s(self) -> Optional[float]:
        """Messages per second over the median: a pattern's messages of all its
        ranks per op, or those a kernel records per op in its info (the
        *.msg_rate benchmarks: one, so the rate is perftest's MsgRate, messages
        over the time from the first post to the last completion)."""
        med = self.summary.median
        n = self.messages_per_op if self.is_pattern else (self.info or {}).get("messages_per_op")
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0 or med <= 0:
            return None
        return n / med

    @property
    def payload_bytes(self) -> int:
        """Payload the timed operations moved between ranks: every sample's
        batch of ops (warm-up excluded). A pattern's ops move what its ranks
        send (an app's op also has bytes that stay on their rank, which its
        bytes_per_op, the problem's bytes, counts). A bidir tcp.stream sample
        moves at least this, its time per op moved (tcp_streams.c)."""
        per_op = sum(self.rank_sent_bytes) if self.is_pattern and self.rank_sent_bytes else self.bytes_per_op
        return len(self.samples) * (self.batch or 1) * per_op

    def interval(self, figure: float) -> tuple:
        """The 95% interval of a figure inversely proportional to the op's time
        (a bandwidth, a rate) from the interval of that time."""
        s = self.summary
        return (figure * s.median / s.ci_high if s.ci_high else figure,
                figure * s.median / s.ci_low if s.ci_low else figure)

    @property
    def phase_medians(self) -> dict:
        """The median seconds per op of each phase ({} without phases)."""
        import statistics
        return {k: statistics.median(v) for k, v in (self.phases or {}).items() if v}

    def sender_bandwidths(self) -> list:
        """Bandwidths of the ranks that drive the pattern (senders, both-way ranks)."""
        return [r.bandwidth_Bps for r in self.ranks or [] if r.role in ("sender", "both")
                and r.bandwidth_Bps is not None]

    # ---- the schema

    # Written only when the point has them (pattern fields: only for patterns).
    _OPTIONAL = ("warmup", "elapsed_s", "imported", "launch", "phases", "working_set_bytes", "rank_alloc_bytes",
                 "op_histogram", "rank_counters", "rank_cpu",
                 "noise")
    _PATTERN = ("roles", "peers", "rank_samples", "rank_sent_bytes", "rank_recv_bytes", "messages_per_op")
    _ALWAYS = ("bench", "variant", "size", "stride", "conns", "active", "params", "cache", "buffers", "bytes_per_op",
               "legs_per_op", "concurrent", "batch", "samples", "stop", "validation", "info")
    _get_always = staticmethod(attrgetter(*_ALWAYS))   # one C call for the fields every record has

    def to_dict(self) -> dict:
        d = dict(zip(self._ALWAYS, self._get_always(self)))
        d.update({k: getattr(self, k) for k in self._OPTIONAL if getattr(self, k) is not None})
        d.update(summary=self.summary.to_dict(), latency_s=self.latency_s, bandwidth_Bps=self.bandwidth_Bps,
                 diagnostics=list(self.diagnostics))
        bus = self.bus_bandwidth_Bps
        if bus is not None:
            d["bus_bandwidth_Bps"] = bus
        rate = None if self.is_pattern else self.message_rate_per_s
        if rate is not None:
            d["message_rate_per_s"] = rate
        overlap = self.overlap
        if overlap is not None:
            d["overlap"] = overlap
        if self.is_pattern:
            d.update({k: getattr(self, k) for k in self._PATTERN})
            d.update(ranks=_plain(self.ranks), fairness=_plain(self.fairness),
                     aggregate_bandwidth_Bps=self.aggregate_bandwidth_Bps,
                     message_rate_per_s=self.message_rate_per_s)
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d, where: str = "point") -> "Point":
        """Reads a `point` record; RecordError names the first wrong field."""
        return cls(**point_kwargs(d, where, _POINT_KNOWN))


# What a reader derives and so does not take from a document.
DERIVED = ("latency_s", "bandwidth_Bps", "aggregate_bandwidth_Bps", "message_rate_per_s", "bus_bandwidth_Bps",
           "overlap")
# The fields a point reads; the rest of a record is kept as it is (`extra`).
_POINT_KNOWN = frozenset({x.name for x in dc_fields(Point)} | {"kind", "spread", "launches"} | set(DERIVED))


@dataclass(slots=True)
class MergedPoint(Point):
    """A point merged over its launches (analysis/merge.py): the launches'
    samples pooled, a median and interval from the two-level bootstrap, and
    what each launch gave. A document stores it without the pooled samples."""

    launches: list = field(default_factory=list)    # [LaunchSummary]
    spread: Spread = field(default_factory=Spread)

    _OPTIONAL = ("imported", "phases", "working_set_bytes", "rank_alloc_bytes", "rank_cpu")
    NOT_STORED = ("samples", "rank_samples")

    def to_dict(self, stored: bool = False) -> dict:
        d = Point.to_dict(self)   # zero-argument super() fails in a slotted dataclass (bpo-46404)
        d.update(launches=_plain(self.launches), spread=self.spread.to_dict())
        for k in self.NOT_STORED if stored else ():
            d.pop(k, None)
        return d

    @classmethod
    def from_dict(cls, d, where: str = "merged point") -> "MergedPoint":
        kw = point_kwargs(d, where, _POINT_KNOWN)
        f = Fields(d, where)
        kw.pop("launch", None), kw.pop("warmup", None), kw.pop("elapsed_s", None)
        launches = f.list("launches", lambda x: isinstance(x, dict), "launch summaries")
        spread = f.obj("spread", None, none=True)
        return cls(**kw, launch=None, launches=[LaunchSummary.from_dict(x, lambda: f"{where} launch") for x in launches],
                   spread=Spread() if spread is None else Spread.from_dict(spread, lambda: f"{where} spread"))


__all__ = ["AXES", "KEY_FIELDS", "Summary", "Fairness", "LaunchSummary", "Spread", "Point", "MergedPoint",
           "RecordError", "point_key"]
