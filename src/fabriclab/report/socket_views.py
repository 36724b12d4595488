"""The socket views (docs/sockets.md), as iperf3, netperf and sockperf users read
their runs, drawn alike from fabriclab's points and from iperf3's imported ones:

- "udp-rate": loss and jitter against the offered rate (udp.stream over a
  `rate` sweep; iperf3 -u -b R tests), and the received rate against it, the
  line received = offered dashed: a curve leaves it where the path drops;
- "stream-fairness": every stream's share of a point with several streams
  (tcp.stream and udp.stream streams=N, iperf3 -P N), as bars, with Jain's
  index of the shares in the title;
- "underload": latency under load (udp.underload, sockperf's under-load mode):
  the replies' p50, p99 and p99.9 (`--per-op`) or their mean (the counters)
  against the messages offered per second, one curve per size.

A point's socket figures (`Socket`) come from one place, `socket_figures`:
an imported point's info["socket"] (imports/iperf3.py), a measured point's
kernel counters over its launches as the kernels' readers take them
(analysis/udp.py, analysis/streams.py); the replies under load from
analysis/underload.py, a run's or an imported sockperf test's."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..analysis import streams, udp
from ..analysis import underload as ul
from ..analysis.streams import jain
from ..suite.benchmarks import REGISTRY
from ..units import fmt_bytes
from .curves import MAX_SERIES
from .figure import Axis, Figure, Series
from .tables import group_name

OFFERED = Axis("offered rate (Mbit/s, 10^6 bits/s)", log=True)
LOSS = Axis("datagrams lost (%)", log=False)
JITTER = Axis("jitter (\u00b5s, RFC 3550's smoothed transit-time difference)", log=True)
RECEIVED = Axis("received rate (Mbit/s)", log=True)
SHARE = Axis("stream's received rate (Mbit/s)", log=False)
STREAM = Axis("stream (in the order the tool or kernel numbers them)", log=False)
MPS = Axis("messages offered (per second)", log=True)
LATENCY = Axis("reply latency (\u00b5s, half the round trip)", log=True)
PERCENTILES = ("p50", "p99", "p99.9")
SOCKET_BENCHES = ("udp.stream", "tcp.stream", "udp.underload")


@dataclass(frozen=True)
class Socket:
    """One point's figures as iperf3 prints them; None where not known."""
    offered_bps: float | None = None        # bits/s asked for, every stream and direction
    received_Bps: float | None = None       # bytes/s arrived, every stream and direction
    loss_fraction: float | None = None      # datagrams lost over datagrams sent
    jitter_s: float | None = None           # RFC 3550's jitter at the receiver
    out_of_order: int | None = None
    stream_Bps: list = field(default_factory=list)   # each stream's received bytes/s


def rate_bps(text) -> float | None:
    """A `rate` parameter's bits/s (its canonical form is a whole number of bits/s)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v > 0 and math.isfinite(v) else None


def _param(p, key: str):
    """A point's parameter: its params, else its variant, else the registry's default."""
    if key in (p.params or {}):
        return p.params[key]
    for part in (p.variant or "").split(","):
        k, _, v = part.partition("=")
        if k == key:
            return v
    b = REGISTRY.get(p.bench)
    return b.defaults.get(key) if b else None


def _from_counters(point, launches: list) -> Socket | None:
    """A measured point's socket figures from its launches' counters, by the kernels' own
    readers: analysis/udp.py for udp.stream (loss = lost / (received + lost), iperf3's; each
    flow's received bytes over the samples' time; jitter the flows' mean), analysis/streams.py
    for tcp.stream's streams. The offered rate is `rate` (bits/s per flow) times the flows
    (streams, both ways for bidir), none with pacing=unlimited."""
    if point.bench == "udp.stream":
        kinds = getattr(REGISTRY.get(point.bench), "counters", None) or {}
        figs = udp.stream_figures(launches, kinds) if kinds else []
        if not figs:
            return None
        f = figs[0]
        rate = None if _param(point, "pacing") == "unlimited" else rate_bps(_param(point, "rate"))
        flows = int(_param(point, "streams") or 1) * (2 if _param(point, "direction") == "bidir" else 1)
        return Socket(offered_bps=rate * flows if rate else None, received_Bps=f.received_Bps, loss_fraction=f.loss,
                      jitter_s=f.jitter_s, out_of_order=f.out_of_order,
                      stream_Bps=[x.received_Bps for x in f.flows if x.received_Bps is not None])
    if point.bench != "tcp.stream":
        return None
    st = streams.stream_rates(launches)     # none for one stream one way: tcp.c's loop keeps no counters
    return Socket(received_Bps=st.sum_Bps, stream_Bps=st.stream_Bps) if st else Socket(
        received_Bps=point.bandwidth_Bps)


def _from_import(p) -> Socket | None:
    s = (p.info or {}).get("socket")
    if not isinstance(s, dict):
        return None
    return Socket(s.get("offered_bps"), s.get("received_Bps"), s.get("loss_fraction"), s.get("jitter_s"),
                  s.get("out_of_order"), list(s.get("stream_Bps") or []))


def socket_figures(run) -> dict:
    """{point key: Socket} of a run's socket points that have any (report/curves.py RunView)."""
    out = {}
    launches: dict = {}
    for p in run.doc.points:
        if p.bench in SOCKET_BENCHES:
            launches.setdefault(p.key, []).append(p)
    for r in run.rows:
        if r.bench not in SOCKET_BENCHES:
            continue
        s = _from_import(r.point) or (_from_counters(r.point, launches[r.point.key]) if r.point.key in launches
                                       else None)
        if s is not None:
            out[r.point.key] = s
    return out


def _without(variant: str, key: str) -> str:
    return ",".join(x for x in variant.split(",") if x and not x.startswith(key + "="))


def _name(runs: list, run, text: str) -> str:
    return (f"{run.name} " if len(runs) > 1 else "") + text


# ---- loss and jitter against the offered rate ----------------------------------------------

def udp_rate(runs: list) -> list[Figure]:
    loss = Figure("udp-loss-vs-rate", "UDP: datagrams lost vs offered rate", OFFERED, LOSS,
                  note="lost as the receiver counts them (gaps in the sequence less late arrivals) over the "
                       "datagrams sent, iperf3's lost_percent; one curve per run, size and other settings")
    jit = Figure("udp-jitter-vs-rate", "UDP: jitter vs offered rate", OFFERED, JITTER,
                 note="RFC 3550's jitter, J += (|D| - J) / 16 over consecutive datagrams' transit-time differences "
                      "(iperf3's rule), at the end of the point")
    got = Figure("udp-received-vs-rate", "UDP: received rate vs offered rate", OFFERED, RECEIVED,
                 note="dashed: received = offered; a curve falls below it where datagrams are lost")
    top = 0.0
    for run in runs:
        figs = socket_figures(run)
        lines: dict = {}
        for r in run.rows:
            s = figs.get(r.point.key)
            if r.bench == "udp.stream" and s and s.offered_bps:
                lines.setdefault((_without(r.variant, "rate"), r.size), []).append((s.offered_bps, s))
        for (rest, size), pts in sorted(lines.items()):
            pts.sort(key=lambda t: t[0])
            xs = [x / 1e6 for x, _ in pts]
            label = _name(runs, run, f"{fmt_bytes(size)}" + (f" [{rest}]" if rest else ""))
            loss.series.append(Series(label, xs, [None if s.loss_fraction is None else 100 * s.loss_fraction
                                                  for _, s in pts]))
            jit.series.append(Series(label, xs, [s.jitter_s * 1e6 if s.jitter_s else None for _, s in pts]))
            got.series.append(Series(label, xs, [s.received_Bps * 8 / 1e6 if s.received_Bps else None
                                                 for _, s in pts]))
            top = max(top, max(xs))
    for fig in (loss, jit, got):
        fig.series = fig.series[:MAX_SERIES]
    if got.series:
        lo = min(x for s in got.series for x in s.x)
        got.series.append(Series("received = offered", [lo, top], [lo, top], dashed=True, markers=False, color=6))
    return [f for f in (loss, jit, got) if not f.empty()]


# ---- per-stream fairness --------------------------------------------------------------------

def stream_fairness(runs: list) -> list[Figure]:
    """A bar per stream of each point with several, at most MAX_SERIES points."""
    figs = []
    for run in runs:
        socks = socket_figures(run)
        for r in run.rows:
            s = socks.get(r.point.key)
            if r.bench not in ("tcp.stream", "udp.stream") or not s or len(s.stream_Bps) < 2:
                continue
            j = jain(s.stream_Bps)
            name = _name(runs, run, f"{group_name(r.bench, r.variant)} {fmt_bytes(r.size)}")
            index = "no stream moved a byte" if j is None else f"Jain's index {j:.3f}"     # an imported file's zeros
            figs.append(Figure(f"streams-{len(figs)}", f"{index}: {name}, each stream's rate", STREAM,
                               SHARE, bars=[(f"stream {i + 1}", x * 8 / 1e6) for i, x in enumerate(s.stream_Bps)],
                               note="each stream's received rate over the point; Jain's index (sum x)^2 / (n sum "
                                    "x^2): 1 for equal shares, 1/n when one stream takes all"))
            if len(figs) == MAX_SERIES:
                return figs
    return figs


# ---- latency under load ---------------------------------------------------------------------

def _median(xs: list):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2 if xs else None


def underload(runs: list) -> list[Figure]:
    """Each point's replies (analysis/underload.py: a run's launches or an imported sockperf
    test), the median over launches of each figure, against the messages offered (mps)."""
    fig = Figure("udp-underload", "UDP latency under load vs messages offered", MPS, LATENCY,
                 note="sockperf's under-load mode: a reply asked every reply_every messages; with --per-op the "
                      "replies' p50, p99 and p99.9 by sockperf's percentile rule (p99.9 dashed), else their mean "
                      "from the counters; the median over launches")
    for run in runs:
        launches: dict = {}
        for p in run.doc.points:
            if p.bench == "udp.underload":
                u = ul.of_point(p)
                if u is not None:
                    launches.setdefault(p.key, (p, []))[1].append(u)
        lines: dict = {}
        for key, (p, us) in launches.items():
            mps = rate_bps(_param(p, "mps"))
            if mps:
                lines.setdefault((_without(key[1], "mps"), key[2]), []).append((mps, us))
        for (rest, size), pts in sorted(lines.items()):
            pts.sort(key=lambda t: t[0])
            xs = [m for m, _ in pts]
            label = _name(runs, run, fmt_bytes(size) + (f" [{rest}]" if rest else ""))
            if all(all(q in u.quantiles for u in us) for _, us in pts for q in PERCENTILES):
                for q, dashed in zip(PERCENTILES, (False, False, True)):
                    fig.series.append(Series(f"{label} {q}", xs, [_median([u.quantiles[q] for u in us]) * 1e6
                                                                  for _, us in pts], dashed=dashed))
            else:
                ys = [_median([u.mean_s for u in us]) for _, us in pts]
                fig.series.append(Series(f"{label} mean", xs, [y * 1e6 if y else None for y in ys]))
    fig.series = fig.series[:MAX_SERIES]
    return [] if fig.empty() else [fig]
