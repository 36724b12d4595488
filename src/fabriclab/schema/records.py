"""The typed records of a run document (docs/schema.md): a point as one
launch measured it, a point merged over its launches, a rank's figures, and
the launch, launch-end and skip records.

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

import math
from operator import attrgetter
from dataclasses import dataclass, field, fields as dc_fields, replace as dc_replace
from typing import Any, Optional

from .fields import MAX_BYTES, MAX_RANKS, MAX_SECONDS, Fields, RecordError, durations, is_count, is_duration, \
    is_text

# A point's axes, in the order points are keyed and sorted; with the
# benchmark and its variant they identify a point across runs.
AXES = ("size", "stride", "conns", "active")
KEY_FIELDS = ("bench", "variant") + AXES
ROLE_NAMES = {"s": "sender", "r": "receiver", "t": "target", "b": "both", "i": "idle", "v": "victim",
              "a": "aggressor"}
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


@dataclass(frozen=True, slots=True)
class Summary:
    """Statistics of a point's samples, in seconds per op (docs/statistics.md).

    ci_rel is the interval's half-width over the median (inf when the median
    is 0 and the interval is not: stored as null); mad is the unscaled median
    absolute deviation; outliers counts |modified z| > 3.5. An imported point
    knows only its median, mean and perhaps n: the rest is None."""

    median: float
    n: Optional[int] = None
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    ci_rel: Optional[float] = None
    p5: Optional[float] = None
    p25: Optional[float] = None
    p75: Optional[float] = None
    p95: Optional[float] = None
    p99: Optional[float] = None
    min: Optional[float] = None
    max: Optional[float] = None
    mean: Optional[float] = None
    stdev: Optional[float] = None
    mad: Optional[float] = None
    outliers: Optional[int] = None
    confidence: Optional[float] = 0.95

    def to_dict(self) -> dict:
        d = dict(zip(SUMMARY_KEYS, _SUMMARY_GET(self)))
        if d["ci_rel"] is not None and math.isinf(d["ci_rel"]):
            d["ci_rel"] = None
        return d

    @classmethod
    def from_dict(cls, d, where: str = "summary") -> "Summary":
        f = Fields(d, where)
        times = {k: f.num(k, None, none=True) for k in ("ci_low", "ci_high", "p5", "p25", "p75", "p95", "p99",
                                                        "min", "max", "mean", "stdev", "mad")}
        ci_rel = f.num("ci_rel", None, hi=math.inf, none=True)
        if ci_rel is None and times["ci_low"] is not None:
            ci_rel = math.inf  # an interval about a zero median: stored as null (JSON has no inf)
        return cls(median=f.num("median"), n=f.int("n", None, none=True), ci_rel=ci_rel,
                   outliers=f.int("outliers", None, none=True),
                   confidence=f.num("confidence", None, hi=1.0, none=True), **times)

    def replace(self, **kw) -> "Summary":
        return dc_replace(self, **kw)


SUMMARY_KEYS = tuple(f.name for f in dc_fields(Summary))
_SUMMARY_GET = attrgetter(*SUMMARY_KEYS)


@dataclass(frozen=True, slots=True)
class RankFigures:
    """One participating rank of a pattern point: its role, its median time
    per op on its own clock, and its bandwidth (senders and both-way ranks
    count the bytes they send, receivers and targets what they receive)."""

    rank: int
    role: str
    host: Optional[str] = None
    median_s: Optional[float] = None
    bandwidth_Bps: Optional[float] = None

    def to_dict(self) -> dict:
        return {"rank": self.rank, "host": self.host, "role": self.role, "median_s": self.median_s,
                "bandwidth_Bps": self.bandwidth_Bps}

    @classmethod
    def from_dict(cls, d, where: str = "rank") -> "RankFigures":
        f = Fields(d, where)
        return cls(f.int("rank", hi=MAX_RANKS), f.str("role", choices=tuple(ROLE_NAMES.values())),
                   f.str("host", None, none=True), f.num("median_s", None, none=True),
                   f.num("bandwidth_Bps", None, hi=math.inf, none=True))


@dataclass(frozen=True, slots=True)
class Fairness:
    """Shares of the ranks that drive a pattern: min/max and Jain's index."""

    n: int
    min_max_ratio: float
    jain: float

    def to_dict(self) -> dict:
        return {"n": self.n, "min_max_ratio": self.min_max_ratio, "jain": self.jain}

    @classmethod
    def from_dict(cls, d, where: str = "fairness") -> "Fairness":
        f = Fields(d, where)
        return cls(f.int("n", hi=MAX_RANKS), f.num("min_max_ratio", hi=1.0), f.num("jain", hi=1.0))


@dataclass(frozen=True, slots=True)
class LaunchSummary:
    """One launch's part of a merged point."""

    launch: int
    median: float
    n: Optional[int]
    stop: Optional[str]

    def to_dict(self) -> dict:
        return {"launch": self.launch, "median": self.median, "n": self.n, "stop": self.stop}

    @classmethod
    def from_dict(cls, d, where: str = "launch") -> "LaunchSummary":
        f = Fields(d, where)
        return cls(f.int("launch", 0), f.num("median"), f.int("n", None, none=True), f.str("stop", None, none=True))


@dataclass(frozen=True, slots=True)
class Spread:
    """Within- and between-launch spread of a merged point (analysis/launches.py)."""

    within_rel: Optional[float] = None
    between_rel: Optional[float] = None
    max_min_ratio: Optional[float] = None
    launch_medians: Optional[list] = None

    def to_dict(self) -> dict:
        return {"within_rel": self.within_rel, "between_rel": self.between_rel,
                "max_min_ratio": self.max_min_ratio, "launch_medians": self.launch_medians}

    @classmethod
    def from_dict(cls, d, where: str = "spread") -> "Spread":
        f = Fields(d, where)
        rel = dict(hi=math.inf, none=True)
        return cls(f.num("within_rel", None, **rel), f.num("between_rel", None, **rel),
                   f.num("max_min_ratio", None, **rel),
                   f.list("launch_medians", is_duration, "durations", None, none=True))


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
        bytes_per_op, the problem's bytes, counts)."""
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
        return cls(**_point_fields(d, where))


# What a reader derives and so does not take from a document.
DERIVED = ("latency_s", "bandwidth_Bps", "aggregate_bandwidth_Bps", "message_rate_per_s", "bus_bandwidth_Bps",
           "overlap")
# The fields a point reads; the rest of a record is kept as it is (`extra`).
_POINT_KNOWN = frozenset({x.name for x in dc_fields(Point)} | {"kind", "spread", "launches"} | set(DERIVED))


def _point_fields(d, where: str) -> dict:
    """The constructor arguments of a Point from its mapping, checked."""
    Fields(d, where)     # not a mapping: said before any field is read
    f = Fields(d, lambda: f"{where} ({d.get('bench')!s:.40} size {d.get('size')!s:.24})")
    kw: dict[str, Any] = _key_fields(f)
    kw.update(_op_fields(f))
    kw.update(_sampling_fields(f, d))
    kw.update(_pattern_fields(f, d, kw["bytes_per_op"]))
    kw["phases"] = _phases(f)
    kw["op_histogram"] = _histogram(f)
    kw["rank_cpu"] = _rank_cpu(f)
    kw["rank_counters"] = _counters(f, len(kw["samples"]))
    kw["noise"] = _noise(f)
    kw["extra"] = {k: v for k, v in d.items() if k not in _POINT_KNOWN}
    return kw


def _key_fields(f: Fields) -> dict:
    return dict(bench=f.str("bench"), variant=f.str("variant", ""), size=f.int("size", hi=MAX_BYTES),
                stride=f.int("stride", 1, lo=1, hi=MAX_BYTES), conns=f.int("conns", 1, lo=1, hi=MAX_RANKS),
                active=f.int("active", None, hi=MAX_RANKS, none=True))


def _op_fields(f: Fields) -> dict:
    return dict(bytes_per_op=f.int("bytes_per_op", hi=MAX_BYTES), legs_per_op=f.int("legs_per_op", 1, lo=1, hi=1024),
                concurrent=f.bool("concurrent", False), params=f.obj("params", {}),
                cache=f.str("cache", None, none=True), buffers=f.int("buffers", None, hi=MAX_BYTES, none=True),
                working_set_bytes=f.int("working_set_bytes", None, hi=MAX_BYTES, none=True),
                rank_alloc_bytes=f.counts("rank_alloc_bytes", 0, MAX_BYTES, "byte counts", None, none=True),
                info=f.obj("info", {}, none=True) or {}, imported=f.obj("imported", None, none=True))


def _sampling_fields(f: Fields, d) -> dict:
    samples = f.list("samples", None, "durations", [])
    if samples and not durations(samples):
        f.bad("samples", f"must be durations in seconds, finite, 0 to {MAX_SECONDS:g}")
    validation = f.obj("validation", None, none=True)
    if validation is not None:
        v = Fields(validation, lambda: f"{f.where} validation")
        v.int("checked_bytes", 0), v.int("errors", 0)
    diags = f.list("diagnostics", lambda x: isinstance(x, dict) and is_text(x.get("code"))
                   and is_text(x.get("message")), "warnings with a code and a message", [])
    return dict(summary=Summary.from_dict(f.obj("summary"), lambda: f"{f.where} summary"), samples=samples,
                launch=f.int("launch", 0, none=True), warmup=f.int("warmup", None, none=True),
                batch=f.int("batch", None, none=True), stop=f.str("stop", None, none=True),
                elapsed_s=f.num("elapsed_s", None, none=True), validation=validation, diagnostics=diags)


def _phases(f: Fields) -> Optional[dict]:
    phases = f.obj("phases", None, none=True)
    if phases is None:
        return None
    for name, xs in phases.items():
        if not is_text(name) or not isinstance(xs, list) or (xs and not durations(xs)):
            f.bad("phases", "must map phase names to lists of durations in seconds")
    return dict(phases)


def _counters(f: Fields, n: int) -> Optional[list]:
    """The point's rank_counters: per rank null or {name: [n + 1 finite numbers]}."""
    rc = f.list("rank_counters", None, "per-rank counters", None, none=True)
    if rc is None:
        return None
    for q, c in enumerate(rc):
        if c is None:
            continue
        if not isinstance(c, dict):
            f.bad("rank_counters", f"rank {q} must be null or an object of counters")
        for name, xs in c.items():
            if not is_text(name) or not isinstance(xs, list) or len(xs) != n + 1 or not all(
                    type(x) in (int, float) and math.isfinite(x) for x in xs):
                f.bad("rank_counters", f"rank {q} counter {name!s:.40} must hold {n + 1} finite numbers "
                                       "(before the first sample and after each)")
    return list(rc)


def _rank_cpu(f: Fields) -> Optional[list]:
    """The point's rank_cpu: per rank {user_s, sys_s, wall_s}, seconds, each checked."""
    rc = f.list("rank_cpu", lambda x: isinstance(x, dict), "per-rank CPU use ({user_s, sys_s, wall_s})",
                None, none=True)
    for q, x in enumerate(rc or []):
        g = Fields(x, lambda: f"{f.where} rank_cpu[{q}]")
        g.num("user_s"), g.num("sys_s"), g.num("wall_s")
    return None if rc is None else [{k: x[k] for k in ("user_s", "sys_s", "wall_s")} for x in rc]


NOISE_METHODS = ("fwq", "detour")
MAX_NS = 10 ** 15            # 11.6 days in nanoseconds


def _noise(f: Fields) -> Optional[dict]:
    """A noise point's record (csrc/families/noise.c, docs/noise.md), checked whole: per
    rank its CPU and raw integer nanoseconds, every quantum (fwq) or every detour kept,
    its start and length (detour)."""
    n = f.obj("noise", None, none=True)
    if n is None:
        return None
    g = Fields(n, lambda: f"{f.where} noise")
    method = g.str("method", choices=NOISE_METHODS)
    if method == "fwq":
        g.int("work", lo=1, hi=1 << 40)
    elif not 1 <= g.num("threshold") <= 1e6:
        g.bad("threshold", "must be from 1 to 1e6")
    for r in g.list("ranks", lambda x: isinstance(x, dict), "rank records", []):
        q = Fields(r, lambda: f"{f.where} noise rank")
        q.int("rank", hi=MAX_RANKS), q.int("cpu", lo=-1, hi=MAX_RANKS)
        if method == "fwq":
            q.counts("quanta_ns", 0, MAX_NS, "nanoseconds", [])
            continue
        q.int("gap_min_ns", lo=1, hi=MAX_NS), q.int("loops", hi=1 << 62), q.int("span_ns", hi=MAX_NS)
        detours = q.int("detours", hi=1 << 62)
        starts = q.counts("start_ns", 0, MAX_NS, "nanoseconds", [])
        lengths = q.counts("length_ns", 0, MAX_NS, "nanoseconds", [])
        if len(starts) != len(lengths) or len(starts) > detours:
            q.bad("start_ns", "and length_ns must hold one entry per detour kept")
    return dict(n)


MAX_BUCKETS = 100_000


def _histogram(f: Fields) -> Optional[dict]:
    """The point's op_histogram (docs/schema.md), checked whole: its buckets' geometry,
    the timer's cost, and per rank a count, the extremes and sparse [bucket, count] pairs."""
    h = f.obj("op_histogram", None, none=True)
    if h is None:
        return None
    g = Fields(h, lambda: f"{f.where} op_histogram")
    base, err, nb = g.num("base_s"), g.num("error"), g.int("buckets", lo=1, hi=MAX_BUCKETS)
    g.num("timer_cost_s", None, none=True), g.int("ops_per_timing", 1, lo=1, hi=1 << 40)
    if not (0 < base < 1 and 0 < err < 1):
        g.bad("base_s", "and error must be fractions above 0")
    for r in g.list("ranks", lambda x: isinstance(x, dict), "rank histograms", []):
        q = Fields(r, lambda: f"{f.where} op_histogram rank")
        q.int("rank", hi=MAX_RANKS), q.int("n"), q.num("min_s"), q.num("max_s")
        pairs = q.list("buckets", lambda x: isinstance(x, list) and len(x) == 2 and all(is_count(v) for v in x)
                       and x[0] < nb, f"[bucket, count] pairs, buckets below {nb}", [])
        if len(pairs) > nb:
            q.bad("buckets", f"must hold at most {nb} pairs")
    return dict(h)


def _pattern_fields(f: Fields, d, bytes_per_op: int) -> dict:
    if d.get("roles") is None:
        return {}
    roles = f.str("roles")
    if not roles or len(roles) > MAX_RANKS or set(roles) - set(ROLE_NAMES):
        f.bad("roles", f"must be role letters ({''.join(ROLE_NAMES)}), one per rank")
    n = len(roles)

    def per_rank(key, lo, hi, what, none=False):
        """Integers lo..hi per rank, or (lo None) each rank's samples or null."""
        default = None if none else [0] * n
        v = (f.counts(key, lo, hi, what, default, none) if lo is not None else
             f.list(key, lambda x: x is None or durations(x), what, default, none))
        if v is not None and len(v) != n:
            raise RecordError(f"{f.where}: {key.replace('_', ' ')} do not match its roles ({len(v)} entries for "
                              f"{n} ranks)")
        return v

    ranks = f.list("ranks", lambda x: isinstance(x, dict), "rank figures", None, none=True)
    fair = f.obj("fairness", None, none=True)
    return dict(roles=roles, peers=per_rank("peers", -1, n - 1, "rank numbers"),
                rank_samples=per_rank("rank_samples", None, None, "lists of durations or null", none=True),
                rank_sent_bytes=per_rank("rank_sent_bytes", 0, MAX_BYTES, "byte counts"),
                rank_recv_bytes=per_rank("rank_recv_bytes", 0, MAX_BYTES, "byte counts"),
                messages_per_op=f.int("messages_per_op", None, none=True),
                ranks=None if ranks is None else [RankFigures.from_dict(r, lambda: f"{f.where} rank") for r in ranks],
                fairness=None if fair is None else Fairness.from_dict(fair, lambda: f"{f.where} fairness"))


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
        kw = _point_fields(d, where)
        f = Fields(d, where)
        kw.pop("launch", None), kw.pop("warmup", None), kw.pop("elapsed_s", None)
        launches = f.list("launches", lambda x: isinstance(x, dict), "launch summaries")
        spread = f.obj("spread", None, none=True)
        return cls(**kw, launch=None, launches=[LaunchSummary.from_dict(x, lambda: f"{where} launch") for x in launches],
                   spread=Spread() if spread is None else Spread.from_dict(spread, lambda: f"{where} spread"))


@dataclass
class LaunchRecord:
    """A `launch` record: one launch of the core, its command and the core's hello."""

    KIND = "launch"
    bench: str
    variant: str = ""
    launch: int = 0
    command: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    started: Optional[float] = None
    hello: Optional[dict] = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"bench": self.bench, "variant": self.variant, "launch": self.launch, "command": self.command,
             "env": self.env, "started": self.started}
        if self.hello is not None:
            d["hello"] = self.hello
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d, where: str = "launch record") -> "LaunchRecord":
        f = Fields(d, where)
        hello = f.obj("hello", None, none=True)
        if hello is not None:
            h = Fields(hello, f"{where} hello")
            h.int("ranks", None, lo=1, hi=MAX_RANKS, none=True)
            h.list("hosts", is_text, "host names", None, none=True)
            h.list("cpus", lambda x: x is None or is_count(x, MAX_RANKS), "CPU counts", None, none=True)
            h.str("mpi_library", None, none=True)
        return cls(f.str("bench"), f.str("variant", ""), f.int("launch", 0),
                   f.list("command", is_text, "arguments", []), f.obj("env", {}),
                   f.num("started", None, hi=math.inf, none=True), hello,
                   _extra(d, ("bench", "variant", "launch", "command", "env", "started", "hello")))


@dataclass
class LaunchEnd:
    """A `launch_end` record: where a launch's ranks ended, the machine's
    noise around it and, on a testbed, what its cables carried (spans,
    shapers, wire bytes)."""

    KIND = "launch_end"
    bench: str
    variant: str = ""
    launch: int = 0
    noise: Optional[dict] = None
    wire_bytes: Optional[float] = None
    extra: dict = field(default_factory=dict)

    @property
    def spans(self) -> list:
        return self.extra.get("spans") or []

    @property
    def steal_fraction(self) -> Optional[float]:
        v = (self.noise or {}).get("steal_fraction")
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None

    def get(self, key: str, default=None):
        """A field a testbed's watch adds (counters, shapers, spans, ...)."""
        return self.extra.get(key, default)

    def to_dict(self) -> dict:
        d = {"bench": self.bench, "variant": self.variant, "launch": self.launch, "noise": self.noise}
        if self.wire_bytes is not None:
            d["wire_bytes"] = self.wire_bytes
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d, where: str = "launch_end record") -> "LaunchEnd":
        f = Fields(d, where)
        for j, span in enumerate(f.list("spans", lambda x: isinstance(x, dict), "spans", [])):
            g = Fields(span, f"{where} spans[{j}]")
            g.int("size"), g.num("seconds"), g.obj("cpu")
            g.list("cables", lambda x: isinstance(x, dict), "cable directions")
        f.list("shapers", lambda x: isinstance(x, dict), "shaper counters", [])
        return cls(f.str("bench"), f.str("variant", ""), f.int("launch", 0), f.obj("noise", None, none=True),
                   f.num("wire_bytes", None, hi=math.inf, none=True),
                   _extra(d, ("bench", "variant", "launch", "noise", "wire_bytes")))


@dataclass
class SkipRecord:
    """A `skip` record: a point the kernel cannot measure here, and why."""

    KIND = "skip"
    bench: str
    size: int
    reason: str
    stride: int = 1
    variant: str = ""
    conns: int = 1
    active: Optional[int] = None
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        return (self.bench, self.variant, self.size, self.stride, self.conns, self.active)

    def to_dict(self) -> dict:
        return {"bench": self.bench, "variant": self.variant, "size": self.size, "stride": self.stride,
                "conns": self.conns, "active": self.active, "reason": self.reason, **self.extra}

    @classmethod
    def from_dict(cls, d, where: str = "skip record") -> "SkipRecord":
        f = Fields(d, where)
        return cls(f.str("bench"), f.int("size", hi=MAX_BYTES), f.str("reason", "", none=True) or "",
                   f.int("stride", 1, lo=1, hi=MAX_BYTES), f.str("variant", ""),
                   f.int("conns", 1, lo=1, hi=MAX_RANKS), f.int("active", None, hi=MAX_RANKS, none=True),
                   _extra(d, ("bench", "size", "reason", "stride", "variant", "conns", "active")))


@dataclass
class DiagnosticRecord:
    """A `diagnostic` record: a warning about the run or a benchmark (code,
    message, advice), as analysis/diagnostics.py writes it."""

    KIND = "diagnostic"
    code: str
    message: str
    advice: str = ""
    bench: Optional[str] = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "advice": self.advice, "bench": self.bench,
                **self.extra}

    @classmethod
    def from_dict(cls, d, where: str = "diagnostic record") -> "DiagnosticRecord":
        f = Fields(d, where)
        return cls(f.str("code"), f.str("message"), f.str("advice", ""), f.str("bench", None, none=True),
                   _extra(d, ("code", "message", "advice", "bench")))


def _extra(d, known: tuple) -> dict:
    """The fields of a record this version does not type (kept and written back)."""
    return {k: v for k, v in d.items() if k != "kind" and k not in known}


__all__ = ["AXES", "KEY_FIELDS", "SUMMARY_KEYS", "Summary", "RankFigures", "Fairness", "LaunchSummary", "Spread",
           "Point", "MergedPoint", "LaunchRecord", "LaunchEnd", "SkipRecord", "DiagnosticRecord", "RecordError",
           "point_key"]
