"""A point's parts (docs/schema.md): the statistics of its samples (Summary), a
pattern rank's figures and the pattern's fairness, and a merged point's
launches and spread. Each reads itself from the schema with its types and
ranges checked (`from_dict`, fields.py) and writes itself back (`to_dict`)."""

from __future__ import annotations

import math
from operator import attrgetter
from dataclasses import dataclass, fields as dc_fields, replace as dc_replace
from typing import Optional

from .fields import MAX_RANKS, Fields, is_duration

ROLE_NAMES = {"s": "sender", "r": "receiver", "t": "target", "b": "both", "i": "idle", "v": "victim",
              "a": "aggressor"}


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

