"""HPC Challenge's network figures from message.cross_pingpong's and
message.ring's points, by HPCC's rules (hpcc/src/bench_lat_bw_1.5.2.c,
docs/hpcc.md):

- a measurement's latency is its loop's time over twice its iterations
  (two messages a round trip, two a ring iteration each way): an op's time
  over two; its bandwidth is the message size over that latency;
- HPCC's figure is the fastest of its few measurements, each the mean of a
  short loop (MEASUREMENTS, LOOPS: 5 of 8 round trips at the latency size,
  2 of 1 ping-pong and 2 of 3 ring iterations at the bandwidth size).
  `rule="hpcc"` forms measurements of the same length from each launch's
  samples in order, takes the fastest of each run of HPCC's count of them,
  and reports the median of those: the figure a typical HPCC run prints,
  without the chance of one run's few measurements (the fastest sample of
  hundreds reads faster than any HPCC run). `rule="median"` is fabriclab's
  median of the pooled samples, to set beside it;
- ping-pong: the largest latency over the pairs at the latency size (8 B)
  and the smallest bandwidth at the bandwidth size (2,000,000 B), with
  the other two statistics (min, average, max) as HPCC's details;
- a ring's latency is the better of HPCC's two methods (two MPI_Sendrecv,
  or MPI_Irecv/MPI_Isend/MPI_Waitall); the natural ring's is that, the
  random rings' the geometric mean over the rings; each ring bandwidth is
  the size over its latency (per process, each way);
- the ratios to the ping-pong bandwidth that HPCC's header reads a network
  by (RATIO_TABLE).

Each sample is already the slowest rank's (the core's reduction, HPCC's
MPI_MAX over the ranks). HPCC takes the better method on each rank before
that maximum: under rule "hpcc" a ring's points that kept every rank's
samples (a pattern's do) are reduced in HPCC's order (hpcc_ring_time), and
the better method after the maximum otherwise (docs/hpcc.md)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable, Optional

from ..errors import UsageError

PINGPONG = "message.cross_pingpong"
RING = "message.ring"
# bench_lat_bw(): cross_ping_pong_controlled(.., lat, 8, 5), (.., bw, 1, 2);
# ring_lat_bw_loop(lat, 8, 5, 30), (bw, 3, 2, 10): (loop length, measurements)
LOOPS = {(PINGPONG, "latency"): (8, 5), (PINGPONG, "bandwidth"): (1, 2),
         (RING, "latency"): (8, 5), (RING, "bandwidth"): (3, 2)}
RULES = ("hpcc", "median")
# HPCC's header: ping-pong bandwidth : naturally ordered ring : random ring, per network.
RATIO_TABLE = (("torus network (T3E)", 1.0, 1 / 2, 1 / 5), ("bus connecting n CPUs", 1.0, None, None),
               ("shared memory vector system", 1.0, 1 / 2, 1 / 2), ("full crossbar, one process a node", 1.0, 1.0, 1.0))
# hpccoutf.txt's summary names and units, in the order HPCC prints its major results first.
SUMMARY = (("MaxPingPongLatency_usec", "max_pingpong_latency_s", 1e6),
           ("RandomlyOrderedRingLatency_usec", "random_ring_latency_s", 1e6),
           ("MinPingPongBandwidth_GBytes", "min_pingpong_bandwidth_Bps", 1e-9),
           ("NaturallyOrderedRingBandwidth_GBytes", "natural_ring_bandwidth_Bps", 1e-9),
           ("RandomlyOrderedRingBandwidth_GBytes", "random_ring_bandwidth_Bps", 1e-9),
           ("MinPingPongLatency_usec", "min_pingpong_latency_s", 1e6),
           ("AvgPingPongLatency_usec", "avg_pingpong_latency_s", 1e6),
           ("MaxPingPongBandwidth_GBytes", "max_pingpong_bandwidth_Bps", 1e-9),
           ("AvgPingPongBandwidth_GBytes", "avg_pingpong_bandwidth_Bps", 1e-9),
           ("NaturallyOrderedRingLatency_usec", "natural_ring_latency_s", 1e6))


@dataclass(frozen=True)
class Figures:
    """HPCC's figures in seconds and bytes per second (None where the points lack them)."""
    rule: str
    latency_bytes: Optional[int] = None
    bandwidth_bytes: Optional[int] = None
    pairs: int = 0
    rings: int = 0
    max_pingpong_latency_s: Optional[float] = None
    min_pingpong_latency_s: Optional[float] = None
    avg_pingpong_latency_s: Optional[float] = None
    min_pingpong_bandwidth_Bps: Optional[float] = None
    avg_pingpong_bandwidth_Bps: Optional[float] = None
    max_pingpong_bandwidth_Bps: Optional[float] = None
    natural_ring_latency_s: Optional[float] = None
    random_ring_latency_s: Optional[float] = None
    natural_ring_bandwidth_Bps: Optional[float] = None
    random_ring_bandwidth_Bps: Optional[float] = None

    @property
    def ratios(self) -> dict:
        """Natural- and random-ring bandwidth over the smallest ping-pong bandwidth."""
        pp = self.min_pingpong_bandwidth_Bps
        return {k: (bw / pp if bw is not None and pp else None)
                for k, bw in (("natural", self.natural_ring_bandwidth_Bps), ("random", self.random_ring_bandwidth_Bps))}

    def summary(self) -> dict:
        """{hpccoutf.txt's name: the figure in its unit} for the figures known."""
        return {name: getattr(self, attr) * scale for name, attr, scale in SUMMARY
                if getattr(self, attr) is not None}


def op_time(samples: Iterable[float], rule: str) -> float:
    """A point's op time from its samples (every launch's): the fastest or the median."""
    xs = [x for x in samples if x is not None and x > 0]
    if not xs:
        raise ValueError("no positive sample")
    return min(xs) if rule == "hpcc" else statistics.median(xs)


def measurements(samples: list, batch: int, loop: int) -> list:
    """HPCC's measurements from one launch's samples in order: each the mean of the
    consecutive samples that hold at least `loop` ops (a sample holds `batch`); fewer
    samples than that make one measurement of them all."""
    k = max(1, -(-loop // max(1, batch)))
    xs = [x for x in samples if x is not None and x > 0]
    if len(xs) < k:
        return [statistics.fmean(xs)] if xs else []
    return [statistics.fmean(xs[i:i + k]) for i in range(0, len(xs) - k + 1, k)]


def hpcc_time(runs: list, count: int) -> float:
    """HPCC's figure from measurement series (one a launch, in order): the fastest of
    each `count` consecutive measurements (one HPCC run's), the median over them.
    Series too short for one group give their fastest measurement."""
    firsts = [min(r[i:i + count]) for r in runs for i in range(0, len(r) - count + 1, count)]
    if firsts:
        return statistics.median(firsts)
    xs = [x for r in runs for x in r]
    if not xs:
        raise ValueError("no positive sample")
    return min(xs)


def geometric_mean(xs: Iterable[float]) -> float:
    """HPCC's average over the random rings: exp of the mean log."""
    xs = list(xs)
    if not xs or min(xs) <= 0:
        raise ValueError("a geometric mean needs positive values")
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def best_of_methods(latencies: dict) -> float:
    """A ring's latency: the better (smaller) of its methods' ({method: seconds})."""
    if not latencies:
        raise ValueError("no method measured")
    return min(latencies.values())


def _samples(points: list, bench: str) -> dict:
    """{(size, what tells the point apart): [(a launch's samples in order, ops a sample)]}
    of one benchmark's points."""
    out: dict = {}
    for p in points:
        if p.bench != bench or p.is_imported:
            continue
        if bench == PINGPONG:
            key = (p.size, p.active)
        else:
            prm = p.params or {}
            order = prm.get("order", "natural")
            key = (p.size, order, str(prm.get("seed", "")) if order == "random" else "", prm.get("method", "sendrecv"))
        out.setdefault(key, []).append((p.samples or ([p.summary.min] if p.summary.min else []), p.batch or 1))
    return out


def _time(launches: list, rule: str, bench: str, what: str) -> float:
    """A point's op time over its launches ([(samples, batch)]) by the rule."""
    if rule != "hpcc":
        return op_time([x for xs, _ in launches for x in xs], rule)
    loop, count = LOOPS[(bench, what)]
    return hpcc_time([measurements(xs, batch, loop) for xs, batch in launches], count)


def _sizes(keys, latency_bytes, bandwidth_bytes) -> tuple:
    sizes = sorted({k[0] for k in keys})
    if not sizes:
        return None, None
    return (latency_bytes if latency_bytes in sizes else sizes[0],
            bandwidth_bytes if bandwidth_bytes in sizes else sizes[-1])


def pingpong(points: list, rule: str, latency_bytes: int, bandwidth_bytes: int) -> dict:
    """Ping-pong's min, average and max over the pairs: latency at one size, bandwidth at the other."""
    runs = _samples(points, PINGPONG)
    lat = [_time(v, rule, PINGPONG, "latency") / 2 for (size, _), v in runs.items() if size == latency_bytes]
    bw = [size / (_time(v, rule, PINGPONG, "bandwidth") / 2) for (size, _), v in runs.items()
          if size == bandwidth_bytes]
    out = {"pairs": len(lat)}
    if lat:
        out.update(max_pingpong_latency_s=max(lat), min_pingpong_latency_s=min(lat),
                   avg_pingpong_latency_s=sum(lat) / len(lat))
    if bw:
        out.update(min_pingpong_bandwidth_Bps=min(bw), max_pingpong_bandwidth_Bps=max(bw),
                   avg_pingpong_bandwidth_Bps=sum(bw) / len(bw))
    return out


def _per_rank(points: list, size: int) -> dict:
    """{(order, seed): {launch: {method: (every rank's samples, ops a sample)}}} of the ring
    points at `size` that kept each rank's samples."""
    out: dict = {}
    for p in points:
        if p.bench != RING or p.is_imported or p.size != size or not p.rank_samples:
            continue
        prm = p.params or {}
        order = prm.get("order", "natural")
        ring = (order, str(prm.get("seed", "")) if order == "random" else "")
        out.setdefault(ring, {}).setdefault(p.launch, {})[prm.get("method", "sendrecv")] = (p.rank_samples,
                                                                                              p.batch or 1)
    return out


def hpcc_ring_time(launches: dict, loop: int = 1, count: int = 1) -> float | None:
    """A ring's op time by HPCC's order of reductions (bench_lat_bw_1.5.2.c): in each
    measurement every rank takes the better of its two methods' times, the ring's is the
    slowest rank's, and the figure is the fastest of HPCC's `count` measurements
    (hpcc_time). The measurements of a launch are its two methods' points' samples in
    order, `loop` ops each (the two run one after the other there, as HPCC's two loops
    do); None unless some launch measured both methods on every rank."""
    runs = []
    for methods in launches.values():
        if len(methods) < 2:
            continue
        (a, ba), (b, bb) = list(methods.values())[:2]
        a = [measurements(r, ba, loop) for r in a]
        b = [measurements(r, bb, loop) for r in b]
        n = min(len(x) for x in (*a, *b))
        runs.append([max(min(ra[i], rb[i]) for ra, rb in zip(a, b)) for i in range(n)])
    runs = [r for r in runs if r]
    return hpcc_time(runs, count) if runs else None


def rings(points: list, rule: str, size: int, what: str = "latency") -> tuple:
    """(natural ring latency, random rings' geometric mean latency, random rings counted) at `size`
    (HPCC's latency or bandwidth size: `what`); each ring's latency the better of its methods'
    (under rule "hpcc", each rank's better one before the slowest rank, where the points kept
    every rank's samples)."""
    best: dict = {}
    for (sz, order, seed, method), launches in _samples(points, RING).items():
        if sz == size:
            best.setdefault((order, seed), {})[method] = _time(launches, rule, RING, what) / 2
    lat = {ring: best_of_methods(m) for ring, m in best.items()}
    if rule == "hpcc":
        for ring, launches in _per_rank(points, size).items():
            t = hpcc_ring_time(launches, *LOOPS[(RING, what)])
            if t is not None and ring in lat:
                lat[ring] = t / 2
    natural = lat.get(("natural", ""))
    randoms = [t for (order, _), t in lat.items() if order == "random"]
    return natural, geometric_mean(randoms) if randoms else None, len(randoms)


def figures(points: list, rule: str = "hpcc", latency_bytes: int = 8, bandwidth_bytes: int = 2_000_000) -> Figures:
    """HPCC's figures from a run's points (each launch's; any other benchmark's are ignored).
    The latency and bandwidth sizes are HPCC's where measured, else the smallest and largest."""
    if rule not in RULES:
        raise UsageError(f"the rule must be one of {', '.join(RULES)}, not {rule!r}")
    printed = {p.imported.get("column"): p.imported.get("value") for p in points
               if p.is_imported and p.bench in (PINGPONG, RING)}
    if printed:
        return printed_figures(printed, rule, latency_bytes, bandwidth_bytes)
    keys = list(_samples(points, PINGPONG)) + list(_samples(points, RING))
    lat_size, bw_size = _sizes(keys, latency_bytes, bandwidth_bytes)
    if lat_size is None:
        return Figures(rule)
    pp = pingpong(points, rule, lat_size, bw_size)
    nat_lat, rand_lat, count = rings(points, rule, lat_size)
    nat_bw_lat, rand_bw_lat, count_bw = rings(points, rule, bw_size, "bandwidth")
    return Figures(rule, lat_size, bw_size, rings=max(count, count_bw), natural_ring_latency_s=nat_lat,
                   random_ring_latency_s=rand_lat,
                   natural_ring_bandwidth_Bps=bw_size / nat_bw_lat if nat_bw_lat else None,
                   random_ring_bandwidth_Bps=bw_size / rand_bw_lat if rand_bw_lat else None, **pp)


def printed_figures(printed: dict, rule: str, latency_bytes: int, bandwidth_bytes: int) -> Figures:
    """HPCC's own figures as hpccoutf.txt printed them ({summary name: value}, an import of
    imports/hpcc.py): already by HPCC's rule, whichever is asked."""
    values = {attr: printed[name] / scale for name, attr, scale in SUMMARY
              if isinstance(printed.get(name), (int, float))}
    return Figures(rule, latency_bytes, bandwidth_bytes, **values)
