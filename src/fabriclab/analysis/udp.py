"""UDP figures from the kernels' counters (csrc/families/udp.c; docs/sockets.md, "UDP").

udp.stream: every rank that receives counts, per flow K, the datagrams
received, their payload bytes, those lost and those out of order (sums) and
the RFC 3550 jitter estimate (a level); the sending rank counts the
datagrams it sent. A flow's loss fraction is lost / (received + lost), which
is iperf3's lost / total (iperf_udp.c: the total is the highest sequence
number seen, the received plus the gaps not filled later). Its received rate
is the rate it was sent at, SIZE over the point's median seconds per op (the
point's bandwidth, per flow), times the share of the bytes sent that arrived:
a sample that a busy host stalled (the sender descheduled for a slice, ten
times a 1 ms sample) then weighs as one sample, not as ten, as iperf3's
throttle, which catches up over the whole test, makes it weigh. The payload
bytes over the samples' whole time (seconds per op x batch, summed over the
samples and launches) is `span_Bps`. The point's
jitter is the flows' mean (iperf3's sum line averages the streams' jitter) of
each flow's median estimate after each sample: iperf3 reports the estimate
at the test's end, which smooths only the last 16 or so datagrams, so a
scheduler's stall just before the end decides it; the median over the
samples is that figure without the luck of where the test ends. Fairness is Jain's index of
the flows' received rates (Jain, Chiu and Hawe, DEC-TR-301, 1984):
(sum x)^2 / (n sum x^2), 1 when all are equal, 1/n when one takes all.

udp.rr: rank 0 counts transactions sent, completed, lost (no reply within the
timeout), late replies and the completed ones' round trips summed; a
completed transaction's mean round trip is rtt_s / completed, its latency
half that (a ping-pong's transfer), and the rate is completed ones per
second of the samples' time.

`kinds` is the benchmark's registry entry `counters` (suite/udp.py), passed
in: this wing does not read the registry."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from . import counters
from .streams import jain  # noqa: F401  (Jain's index, one definition for every stream)


def loss_fraction(lost: float, received: float) -> float | None:
    """iperf3's lost / total, the total being the received and the lost."""
    total = lost + received
    return lost / total if total > 0 else None


def sampled_time(p) -> float:
    """The seconds a launch's samples spanned: seconds per op x batch, summed."""
    return sum(p.samples) * (p.batch or 1)


@dataclass(frozen=True)
class Flow:
    """One flow in one direction over a point's launches."""
    rank: int                  # the receiving rank
    stream: int
    sent: int                  # datagrams its sender sent during the samples
    received: int
    received_bytes: int
    lost: int
    out_of_order: int
    loss: float | None         # lost / (received + lost)
    jitter_s: float | None     # the median of its estimates after each sample, over launches
    received_Bps: float | None  # SIZE / the median seconds per op x received bytes / bytes sent
    span_Bps: float | None      # received bytes / the samples' whole time


@dataclass(frozen=True)
class StreamFigures:
    """A udp.stream point's figures over its launches."""
    key: tuple                 # records.Point.key
    flows: list                # [Flow], by receiving rank then stream
    sent: int
    received: int
    received_bytes: int
    lost: int
    out_of_order: int
    loss: float | None
    jitter_s: float | None     # the flows' mean
    received_Bps: float | None  # the flows' sum
    span_Bps: float | None      # the flows' sum of received bytes over the samples' whole time
    fairness: float | None     # Jain's index of the flows' received rates (None for one flow)
    launches: int


def _flow_totals(points, kinds: dict) -> tuple[dict, dict]:
    """({(rank, stream): {counter: total over launches}}, {(rank, stream): [jitter after each sample]})."""
    sums: dict = {}
    jit: dict = {}
    for p in points:
        levels = counters.rank_samples(p.rank_counters, kinds)
        for q, c in enumerate(counters.rank_totals(p.rank_counters, kinds)):
            for name, x in (c or {}).items():
                base, k = counters.base_name(name), int(name.rpartition(".")[2])
                if base == "jitter_s":
                    jit.setdefault((q, k), []).extend(levels[q][name])
                else:
                    sums.setdefault((q, k), {}).setdefault(base, 0)
                    sums[(q, k)][base] += x
    return sums, jit


def stream_figures(points, kinds: dict) -> list[StreamFigures]:
    """One StreamFigures per point key among `points` (launch records) that carry counters, in order."""
    out = []
    for key, ps in counters.by_key(points).items():
        sums, jit = _flow_totals(ps, kinds)
        seconds = sum(sampled_time(p) for p in ps)
        pooled = [x for p in ps for x in p.samples]
        per_op = statistics.median(pooled) if pooled else None
        size = ps[0].size
        nranks = max((q for q, _ in sums), default=-1) + 1
        flows = []
        for (q, k), c in sorted(sums.items()):
            if not c.get("received") and not c.get("lost"):
                continue        # this rank received nothing on the flow: it only sent
            sent = sum(sums.get((r, k), {}).get("sent", 0) for r in range(nranks) if r != q)
            got = c.get("received_bytes", 0)
            rate = size / per_op * got / (sent * size) if per_op and sent and size else None
            flows.append(Flow(q, k, int(sent), int(c.get("received", 0)), int(got),
                              int(c.get("lost", 0)), int(c.get("out_of_order", 0)),
                              loss_fraction(c.get("lost", 0), c.get("received", 0)),
                              statistics.median(jit[(q, k)]) if jit.get((q, k)) else None, rate,
                              got / seconds if seconds > 0 else None))
        tot = {f: sum(getattr(x, f) for x in flows) for f in ("sent", "received", "received_bytes", "lost",
                                                           "out_of_order")}
        jits = [f.jitter_s for f in flows if f.jitter_s is not None]
        rates = [f.received_Bps for f in flows if f.received_Bps is not None]
        spans = [f.span_Bps for f in flows if f.span_Bps is not None]
        out.append(StreamFigures(key, flows, **tot, loss=loss_fraction(tot["lost"], tot["received"]),
                                 jitter_s=statistics.fmean(jits) if jits else None,
                                 received_Bps=sum(rates) if rates else None, span_Bps=sum(spans) if spans else None,
                                 fairness=jain(rates) if len(rates) > 1 else None, launches=len(ps)))
    return out


def stream_samples(p, kinds: dict) -> dict:
    """One launch's per-sample figures over every flow together: {"received_Bps": [...], "lost": [...],
    "received": [...], "loss": [...], "jitter_s": [...] (the flows' mean after each sample)}."""
    per = counters.rank_samples(p.rank_counters, kinds)
    n = len(p.samples)
    acc = {"received": [0.0] * n, "received_bytes": [0.0] * n, "lost": [0.0] * n}
    jit: list = []
    for c in per:
        for name, xs in (c or {}).items():
            base = counters.base_name(name)
            if base in acc:
                acc[base] = [a + x for a, x in zip(acc[base], xs)]
            elif base == "jitter_s" and any(xs) and c.get(name.replace("jitter_s", "received", 1)):
                jit.append(xs)
    dur = [t * (p.batch or 1) for t in p.samples]
    return {"received_Bps": [b / d if d > 0 else None for b, d in zip(acc["received_bytes"], dur)],
            "received": acc["received"], "lost": acc["lost"],
            "loss": [loss_fraction(lo, r) for lo, r in zip(acc["lost"], acc["received"])],
            "jitter_s": [statistics.fmean(js) for js in zip(*jit)] if jit else [None] * n}


@dataclass(frozen=True)
class RRFigures:
    """A udp.rr point's figures over its launches."""
    key: tuple
    sent: int
    completed: int
    lost: int
    late: int
    loss: float | None          # lost / sent
    rtt_s: float | None         # a completed transaction's mean round trip
    latency_s: float | None     # half of it
    transactions_per_s: float | None   # completed ones per second of the samples
    launches: int


def rr_figures(points, kinds: dict) -> list[RRFigures]:
    """One RRFigures per point key among `points` (launch records) that carry counters, in order."""
    out = []
    for key, ps in counters.by_key(points).items():
        tot: dict = {}
        for p in ps:
            for c in counters.rank_totals(p.rank_counters, kinds):
                for name, x in (c or {}).items():
                    tot[name] = tot.get(name, 0) + x
        seconds = sum(sampled_time(p) for p in ps)
        sent, done = int(tot.get("sent", 0)), int(tot.get("completed", 0))
        rtt = tot["rtt_s"] / done if done and "rtt_s" in tot else None
        out.append(RRFigures(key, sent, done, int(tot.get("lost", 0)), int(tot.get("late", 0)),
                             tot.get("lost", 0) / sent if sent else None, rtt, rtt / 2 if rtt is not None else None,
                             done / seconds if seconds > 0 else None, len(ps)))
    return out
