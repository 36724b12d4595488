"""Per-stream rates and fairness of tcp.stream's parallel streams (docs/sockets.md,
"Streams and directions"), from a point's kernel counters.

The core reports, on each rank that receives, `received_bytes.K`: the payload
bytes stream K has delivered since setup, read before the first sample and
after each (analysis/counters.py). A direction is named by its receiving rank:
rank 1 receives what 0 -> 1 carries (forward, and bidir's first direction),
rank 0 what 1 -> 0 carries (reverse, bidir's second). Stream K's rate is its
bytes over every sample over the samples' seconds (each sample's seconds per op
x the batch, scaled to the ops a bidir sample really moved: the time that moved
them), as iperf3 gives each stream its bytes over the test's time; the streams
of a point add up to its bandwidth.
Fairness is Jain's index (sum x)^2 / (n sum x^2) (Jain, Chiu & Hawe 1984,
DEC-TR-301): 1 when every stream has the same rate, 1/n when one has all."""

from __future__ import annotations

from dataclasses import dataclass

from . import counters as kc

COUNTER = "received_bytes"                # tcp_streams.c's per-stream counter base name
DIRECTION = {1: "0->1", 0: "1->0"}        # the receiving rank: the direction it receives
RECEIVERS = {"forward": (1,), "reverse": (0,), "bidir": (1, 0)}   # by the point's direction


def jain(xs) -> float | None:
    """Jain's fairness index of non-negative shares; None without a positive one."""
    xs = [float(x) for x in xs if x is not None]
    sq = sum(x * x for x in xs)
    # at most 1 by Cauchy-Schwarz; equal shares can round a last bit above it
    return min(1.0, sum(xs) ** 2 / (len(xs) * sq)) if xs and sq > 0 else None


@dataclass(frozen=True)
class Streams:
    """One point's streams over its launches: bytes/s per stream, per direction."""
    key: tuple
    directions: dict          # "0->1" / "1->0" -> [bytes/s of stream 0, 1, ...]
    seconds: float            # the samples' seconds the rates are over

    @property
    def stream_Bps(self) -> list:
        """Every stream's rate, direction 0->1 first."""
        return [x for d in sorted(self.directions, key=lambda d: d != "0->1") for x in self.directions[d]]

    @property
    def sum_Bps(self) -> float:
        return sum(self.stream_Bps)

    def direction_Bps(self, direction: str) -> float:
        return sum(self.directions.get(direction, []))

    @property
    def fairness(self) -> float | None:
        """Jain's index over every stream (each direction's alone: `fairness_of`)."""
        return jain(self.stream_Bps)

    def fairness_of(self, direction: str) -> float | None:
        return jain(self.directions.get(direction, []))


def _stream_index(name: str) -> int | None:
    base, k = kc.base_name(name), name[len(kc.base_name(name)) + 1:]
    return int(k) if base == COUNTER and k.isdigit() else None


def direction(p) -> str:
    """A point's direction: its params, else its variant, else forward (the default)."""
    if "direction" in (p.params or {}):
        return p.params["direction"]
    for part in (p.variant or "").split(","):
        k, _, v = part.partition("=")
        if k == "direction":
            return v
    return "forward"


def stream_rates(launches: list) -> Streams | None:
    """The streams of one point (`launches`: its launch records, records.Point, with
    counters), read on the ranks its direction has receive; None when it carries no
    per-stream counters."""
    kinds = {COUNTER: "sum"}
    receivers = RECEIVERS.get(direction(launches[0]), ())
    seconds = sum(s * (p.batch or 1) for p in launches for s in p.samples)
    if seconds <= 0:
        return None
    got: dict = {}
    for rank, c in enumerate(kc.pooled(launches, kinds)):
        per = {k: sum(xs) for name, xs in (c or {}).items() if (k := _stream_index(name)) is not None}
        if per and rank in receivers:
            got[DIRECTION[rank]] = [per.get(k, 0.0) for k in range(max(per) + 1)]
    if not got:
        return None
    # A bidir sample moves more than its batch (tcp_streams.c, ms_loop: the faster direction
    # writes on while the slower finishes) and reports its time per op moved, so the seconds
    # that moved the counted bytes are the samples' scaled by the bytes counted over the batch's.
    moved = sum(map(sum, got.values()))
    batch_bytes = sum(p.payload_bytes for p in launches)
    if direction(launches[0]) == "bidir" and moved > 0 and batch_bytes > 0:
        seconds *= moved / batch_bytes
    return Streams(launches[0].key, {d: [b / seconds for b in xs] for d, xs in got.items()}, seconds)


def by_point(points) -> list[Streams]:
    """Streams of every point of tcp.stream with counters, in the points' order."""
    groups: dict = {}
    for p in points:
        if p.bench == "tcp.stream" and p.rank_counters:
            groups.setdefault(p.key, []).append(p)
    return [s for s in (stream_rates(ps) for ps in groups.values()) if s is not None]
