"""Latency under load (udp.underload, docs/sockets.md "Latency under load"):
one point's figures as sockperf's under-load mode prints them, from a run's
point or from an imported sockperf test, so the two read side by side.

A run's point: the achieved message rate is the messages sent over the
samples' time (every sample is seconds per message sent: sockperf's
SentMessages / RunTime); the mean latency is the replies' summed RTT/2 over
the replies (the kernel's counters `latency_s` and `back`); the lost
replies are the counter `lost`; the percentiles come from the per-op
histogram (`run --per-op`), one timing per reply, each read by sockperf's
rule (client.cpp printPercentiles: the observation of rank (int)(0.5 + q n),
1-based, of n sorted) as the geometric middle of the bucket that holds that
rank, within 0.5% of the reply's latency. An imported point carries what
sockperf printed (imports/sockperf.py, info["underload"])."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .counters import rank_totals

# sockperf's percentiles (printPercentiles), as fractions
QUANTILES = (("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999),
             ("p99.99", 0.9999), ("p99.999", 0.99999))
KINDS = {"sent": "sum", "asked": "sum", "back": "sum", "lost": "sum", "latency_s": "sum"}


@dataclass(frozen=True)
class Underload:
    """One point's latency under load."""
    rate: float                  # messages sent a second
    mean_s: float | None         # the replies' mean latency (RTT/2)
    quantiles: dict = field(default_factory=dict)  # name -> seconds, as sockperf names them
    replies: int | None = None   # replies that came back (observations)
    lost: int | None = None      # replies asked that did not come back in time
    min_s: float | None = None
    max_s: float | None = None
    source: str = "fabriclab"    # "fabriclab" or "sockperf"


def hist_quantiles(hist: dict) -> dict:
    """{name: seconds} of a per-op histogram by sockperf's percentile rule; {} without timings."""
    counts: dict = {}
    lo, hi = math.inf, 0.0
    for r in hist.get("ranks") or []:
        for i, c in r.get("buckets") or []:
            counts[int(i)] = counts.get(int(i), 0) + int(c)
        if r.get("n"):
            lo, hi = min(lo, float(r["min_s"])), max(hi, float(r["max_s"]))
    n = sum(counts.values())
    if n == 0:
        return {}
    base, e = float(hist["base_s"]), float(hist["error"])
    order = sorted(counts)
    out = {}
    for name, q in QUANTILES:
        k = int(0.5 + q * n)
        if k < 1:
            continue
        cum = 0
        for i in order:
            cum += counts[i]
            if cum >= k:
                out[name] = min(max(base * (1 + e) ** (i + 0.5), lo), hi)
                break
    return {**out, "min": lo, "max": hi, "n": n}


def of_point(p) -> Underload | None:
    """The figures of one point (records.Point) of udp.underload: a run's or an imported one."""
    if p.imported is not None:
        u = (p.info or {}).get("underload")
        if not u:
            return None
        qs = {"p" + k: v for k, v in (u.get("quantiles_s") or {}).items()}
        return Underload(1 / p.median_s, u.get("mean_s"), qs, u.get("observations"), u.get("dropped"),
                         u.get("min_s"), u.get("max_s"), "sockperf")
    if not p.samples:
        return None
    rate = len(p.samples) / sum(p.samples)
    totals = next((c for c in rank_totals(p.rank_counters, KINDS) if c), None) or {}
    back = totals.get("back")
    mean = totals["latency_s"] / back if back else None
    h = hist_quantiles(p.op_histogram) if p.op_histogram else {}
    return Underload(rate, mean, {k: v for k, v in h.items() if k.startswith("p")},
                     int(back) if back is not None else None,
                     int(totals["lost"]) if "lost" in totals else None, h.get("min"), h.get("max"))
