"""Per-rank figures of a traffic pattern: each rank's median and bandwidth,
the aggregate, fairness, and the saturation plateau of a sweep.

A pattern point carries every rank's samples (seconds per op, each rank its
own clock) with its role and payload bytes per op. The point's own samples
are the slowest rank's, so its aggregate bandwidth is all payload bytes moved
by all ranks over the slowest time.

Fairness over the ranks that drive the pattern (senders, or both-way ranks):
min/max of their bandwidths, and Jain's index (Σx)² / (n Σx²), which is 1
when all are equal and 1/n when one rank takes everything (R. Jain, D. Chiu,
W. Hawe, "A quantitative measure of fairness and discrimination for resource
allocation in shared computer systems", DEC TR-301, 1984)."""

from __future__ import annotations

import math
import statistics

from ..schema.records import Point
from ..schema.summaries import ROLE_NAMES, Fairness, RankFigures
from .streams import jain

DRIVERS = ("s", "b")  # roles whose bandwidth is the pattern's per-process figure
PLATEAU_GAIN = 0.02   # saturation: one more pair gains less than this


def per_rank(p: Point, hosts: list | None = None) -> list[RankFigures]:
    """The figures of every rank that takes part (idle ranks do not).

    Senders and both-way ranks count the bytes they send; receivers and
    targets the bytes they receive. A rank that times nothing (a passive
    target) has no median and no bandwidth."""
    out = []
    for q, role in enumerate(p.roles):
        if role == "i":
            continue
        x = p.rank_samples[q]
        med = statistics.median(x) if x else None
        nbytes = p.rank_sent_bytes[q] if role in DRIVERS else p.rank_recv_bytes[q]
        bw = nbytes / med if med and med > 0 else None
        out.append(RankFigures(q, ROLE_NAMES[role], hosts[q] if hosts and q < len(hosts) else None, med, bw))
    return out


def fairness(bandwidths: list[float]) -> Fairness | None:
    """min/max ratio and Jain's index of the given per-rank bandwidths."""
    x = [b for b in bandwidths if b is not None and math.isfinite(b)]
    if not x or max(x) <= 0:
        return None
    return Fairness(len(x), min(x) / max(x), jain(x))


def summarize_point(p: Point, hosts: list | None = None) -> None:
    """Sets a pattern point's per-rank figures and the fairness among its senders."""
    p.ranks = per_rank(p, hosts)
    p.fairness = fairness(p.sender_bandwidths())


def plateau(actives: list[int], rates: list[float], gain: float = PLATEAU_GAIN) -> dict | None:
    """The saturation plateau of an aggregate-rate curve vs active count.

    The first active count after which one more step gains under `gain`
    (2%): its rate is the saturation throughput. When every step gains, the
    curve has not saturated and the result says so (reached: False) with the
    highest rate seen."""
    pts = sorted((a, r) for a, r in zip(actives, rates) if r is not None and math.isfinite(r))
    if not pts:
        return None
    for (a0, r0), (_, r1) in zip(pts, pts[1:]):
        if r0 > 0 and r1 < r0 * (1 + gain):
            return {"active": a0, "rate_Bps": max(r for a, r in pts if a >= a0), "reached": True}
    best = max(pts, key=lambda p: p[1])
    return {"active": best[0], "rate_Bps": best[1], "reached": False}
