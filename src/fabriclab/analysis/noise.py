"""The machine's noise per core, from the noise benchmarks' raw records
(schema/records.py; csrc/families/noise.c; docs/noise.md).

FWQ (fixed work quantum, LLNL's fwq.c): every quantum's nanoseconds. A
core's figures are the shortest, median and longest quantum, their spread
(max - min) / min, the share of quanta above FWQ_SLOW x the shortest, and
the share of the core's time lost: sum(q - min) / sum(q), what the quanta
took beyond the undisturbed one.

Selfish detour (Beckman et al. 2008; netgauge): every detour's start and
length (the gap between the two clock reads around it), the detours
counted, and the loop's span. A core's figures: the count, the rate per
second, the mean and longest length, and the CPU share lost, sum(length -
shortest gap) / span (netgauge's "CPU overhead due to noise").

The period of a periodic disturbance comes from the detours' start times.
Detours less than MERGE_NS apart are first joined into one episode (a
disturbance the scheduler cut in two is one), episodes are kept by length
(a band the caller states: a disturbance shows as detours of its length,
other load as detours of every length), and then every pair of kept
episodes gives an interval: an autocorrelation of the start times. A
disturbance of period P puts about span/P - 1 pairs at P (and fewer at 2P,
3P ..., none at P/2), random detours spread their pairs evenly, n^2 (T - t) /
T^2 per second of lag t. For each lag on a grid (PERIOD_STEP apart,
relative), the pairs within PERIOD_TOL of it, less what random starts would
put there, are its excess; the period is the shortest lag whose excess
is at least PEAK_SHARE of the largest (so a multiple, whose excess is
about as large, is not taken for it), refined as the median of the pairs'
intervals within PERIOD_TOL; where a multiple still gathered more (several
episodes a period, a disturbance missing from some periods), the shortest
of its fractions 1/2 .. 1/DIVISORS whose strength holds is taken.

Its strength is the share of the span's K whole periods that hold an
episode at the period's phase (within PERIOD_TOL, the starts folded on P),
less the share n random starts would hit by chance, 1 - exp(-2 n PERIOD_TOL
/ K), over what is left: about 1 for a disturbance that shows every period,
about 0 for random starts. It counts as found from STRENGTH_MIN, in
MIN_HITS periods at least and Z_MIN standard deviations above chance's
binomial count (about 1 / (2 PERIOD_TOL) phases are tried, so a lucky one
must not pass). Why not the median interval between consecutive detours:
one random detour between two periodic ones halves two intervals, and on a
busy machine that is most of them; pairs at every distance keep the
periodic ones whatever falls between."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FWQ_SLOW = 1.1            # a quantum above 1.1 x the shortest lost a tenth of its time or more
MERGE_NS = 50_000         # detours closer than 50 us are one episode
PERIOD_TOL = 0.025        # pairs within 2.5% of a lag count for it
PERIOD_STEP = 0.005       # the lag grid: 0.5% apart
PEAK_SHARE = 0.8          # the shortest lag with this share of the largest excess
MIN_HITS = 5              # found: in five periods at least,
Z_MIN = 4.0               # four standard deviations above chance (some 20 phases are tried),
STRENGTH_MIN = 0.3        # the share of periods beyond chance
PERIOD_MIN_NS = 500_000   # shortest period looked for: 0.5 ms
DIVISORS = 6              # whole fractions of a period tried (the module docstring)
MAX_EPISODES = 4000       # the longest kept beyond this (pairs grow as the square)


@dataclass(frozen=True)
class Fwq:
    rank: int
    cpu: int
    quanta: int
    min_s: float
    median_s: float
    max_s: float
    spread: float         # (max - min) / min
    slow_share: float     # quanta above FWQ_SLOW x min, of all
    lost_share: float     # sum(q - min) / sum(q)


@dataclass(frozen=True)
class Period:
    period_s: float
    strength: float       # the share of the span's periods with an episode at its phase
    episodes: int         # episodes in the length band
    length_s: float       # their median length
    hits: int = 0         # the periods with an episode at its phase
    periods: int = 0      # the periods the span holds at its phase (floor(span / period) or one more)
    chance: float = 0.0   # the share of them random starts would hit

    @property
    def z(self) -> float:
        """The hits above what chance gives, in standard deviations of a binomial count."""
        mean, var = self.periods * self.chance, self.periods * self.chance * (1 - self.chance)
        return (self.hits - mean - 0.5) / math.sqrt(var) if var > 0 else math.inf

    @property
    def found(self) -> bool:
        return self.strength >= STRENGTH_MIN and self.hits >= MIN_HITS and self.z >= Z_MIN


@dataclass(frozen=True)
class Detour:
    rank: int
    cpu: int
    detours: int
    kept: int
    span_s: float
    gap_min_s: float
    threshold: float
    rate_per_s: float
    mean_s: float
    max_s: float
    cpu_share: float      # sum(length - gap_min) / span
    period: Period | None


def fwq(quanta_ns, rank: int = 0, cpu: int = -1) -> Fwq:
    """A core's FWQ figures from its quanta (ns); ValueError for none or a quantum of 0 or less."""
    q = np.asarray(quanta_ns, dtype=float)
    if q.size == 0 or q.min() <= 0:
        raise ValueError("FWQ needs at least one quantum, each longer than 0 ns")
    lo = float(q.min())
    return Fwq(rank, cpu, int(q.size), lo * 1e-9, float(np.median(q)) * 1e-9, float(q.max()) * 1e-9,
               (float(q.max()) - lo) / lo, float(np.mean(q > FWQ_SLOW * lo)), float((q - lo).sum() / q.sum()))


def episodes(starts_ns, lengths_ns, merge_ns: float = MERGE_NS) -> tuple[np.ndarray, np.ndarray]:
    """Detours less than merge_ns apart (end to start) joined: (starts, lengths) of the episodes."""
    s = np.asarray(starts_ns, dtype=float)
    n = np.asarray(lengths_ns, dtype=float)
    if s.size == 0:
        return s, n
    order = np.argsort(s, kind="stable")
    s, n = s[order], n[order]
    ends = np.maximum.accumulate(s + n)
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] - ends[:-1] >= merge_ns
    first = np.flatnonzero(new)
    last = np.append(first[1:], s.size) - 1
    return s[first], ends[last] - s[first]


def find_period(starts_ns, lengths_ns, span_ns: float, min_len_ns: float = 0.0, max_len_ns: float = math.inf,
                min_period_ns: float = PERIOD_MIN_NS) -> Period | None:
    """The period of the episodes whose length is in [min_len_ns, max_len_ns], or None
    when fewer than three are, or no lag from min_period_ns to a third of the span has
    more pairs than random starts would give (module docstring)."""
    if not span_ns > 0 or not math.isfinite(span_ns):
        raise ValueError(f"the record's span must be a positive number of ns, not {span_ns!r}")
    if min_len_ns > max_len_ns:
        raise ValueError(f"length band {min_len_ns:g}..{max_len_ns:g} ns is empty")
    s, n = episodes(starts_ns, lengths_ns)
    keep = (n >= min_len_ns) & (n <= max_len_ns)
    s, n = s[keep], n[keep]
    if s.size > MAX_EPISODES:
        top = np.sort(np.argsort(n, kind="stable")[-MAX_EPISODES:])
        s, n = s[top], n[top]
    top_lag = span_ns / 3
    if s.size < 3 or top_lag <= min_period_ns:
        return None
    diffs = _pair_intervals(s, top_lag * (1 + PERIOD_TOL))
    lags = np.exp(np.arange(math.log(min_period_ns), math.log(top_lag), math.log1p(PERIOD_STEP)))
    lo, hi = lags * (1 - PERIOD_TOL), lags * (1 + PERIOD_TOL)
    seen = np.searchsorted(diffs, hi, side="right") - np.searchsorted(diffs, lo, side="left")
    # random starts: density n^2 (T - t) / T^2 per unit of lag t
    expected = s.size ** 2 * (span_ns - lags) / span_ns ** 2 * (hi - lo)
    excess = seen - expected
    best = float(excess.max())
    if best <= 0:
        return None
    i = int(np.flatnonzero(excess >= PEAK_SHARE * best)[0])
    period = float(np.median(diffs[(diffs >= lo[i]) & (diffs <= hi[i])]))
    # once more about the first estimate, so that the window is centred on the pairs
    period = float(np.median(diffs[np.abs(diffs - period) <= PERIOD_TOL * period]))
    strength = _strength(s, period, span_ns)
    # a multiple of the period whose lag gathered more pairs (more episodes per period at
    # its length) gives way to the shortest whole fraction of it that still holds
    for k in range(DIVISORS, 1, -1):
        part = _refined(diffs, period / k)
        if part is not None and part >= min_period_ns:
            share = _strength(s, part, span_ns)
            if share >= max(STRENGTH_MIN, PEAK_SHARE * strength):
                period, strength = part, share
                break
    hits, first = _hits(s, period, first=True)
    # the periods the span holds at that phase: floor(span / period), or one more where the
    # phase comes early enough in the first (a span of 249.6 periods holds 250 at phase 0.1)
    k = max(math.floor((span_ns - first % period) / period) + 1, hits, 1)
    return Period(period * 1e-9, strength, int(s.size), float(np.median(n)) * 1e-9, hits, k,
                  _chance(s.size, period, span_ns))


def _refined(diffs: np.ndarray, lag: float) -> float | None:
    """The median of the intervals within PERIOD_TOL of lag, None for fewer than three."""
    near = diffs[np.abs(diffs - lag) <= PERIOD_TOL * lag]
    return float(np.median(near)) if near.size >= 3 else None


def _hits(s: np.ndarray, period: float, first: bool = False):
    """The periods with an episode at the period's phase: the starts folded on the
    period, the phase the most of them fall within PERIOD_TOL of (circularly), and
    the distinct periods those fall in; with first, also the first such start (ns)."""
    phase = (s % period) / period
    # each start's neighbours within PERIOD_TOL, counted on the sorted phases laid out
    # three times (one turn either side, the fold's wrap): n log n, not an n x n table
    ring = np.sort(phase)
    ring = np.concatenate((ring - 1, ring, ring + 1))
    count = np.searchsorted(ring, phase + PERIOD_TOL, "right") - np.searchsorted(ring, phase - PERIOD_TOL, "left")
    dist = np.abs(phase - phase[int(np.argmax(count))])
    at = np.minimum(dist, 1 - dist) <= PERIOD_TOL
    hits = int(np.unique(np.floor((s[at] - s[at][0]) / period + 0.5)).size)
    return (hits, float(s[at][0])) if first else hits


def _chance(n: int, period: float, span: float) -> float:
    """The chance that a period holds one of n random starts within PERIOD_TOL of a given phase."""
    return 1 - math.exp(-n * 2 * PERIOD_TOL / max(math.floor(span / period), 1))


def _strength(s: np.ndarray, period: float, span: float) -> float:
    """The share of the span's whole periods with an episode at the period's phase, beyond chance."""
    k, p0 = max(math.floor(span / period), 1), _chance(s.size, period, span)
    if p0 >= 1:        # so many starts a period that every period holds one by chance
        return 0.0
    return float(np.clip((_hits(s, period) / k - p0) / (1 - p0), 0, 1))


def _pair_intervals(s: np.ndarray, top: float) -> np.ndarray:
    """Every interval between two starts (sorted) up to `top`, sorted."""
    out = []
    for k in range(1, s.size):
        d = s[k:] - s[:-k]
        d = d[d <= top]
        if d.size == 0:
            break
        out.append(d)
    return np.sort(np.concatenate(out)) if out else np.empty(0)


def detour(r: dict, threshold: float, min_len_ns: float = 0.0, max_len_ns: float = math.inf) -> Detour:
    """A core's detour figures from its record (schema/records.py's rank entry), the
    period among its episodes in the length band."""
    starts = np.asarray(r.get("start_ns") or [], dtype=float)
    lengths = np.asarray(r.get("length_ns") or [], dtype=float)
    span, gap = float(r["span_ns"]), float(r["gap_min_ns"])
    if not span > 0:
        raise ValueError("a detour record needs a span above 0 ns")
    count = int(r.get("detours", lengths.size))
    lost = float(np.clip(lengths - gap, 0, None).sum())
    period = find_period(starts, lengths, span, min_len_ns, max_len_ns)
    return Detour(int(r.get("rank", 0)), int(r.get("cpu", -1)), count, int(lengths.size), span * 1e-9, gap * 1e-9,
                  threshold, count / (span * 1e-9), float(lengths.mean()) * 1e-9 if lengths.size else 0.0,
                  float(lengths.max()) * 1e-9 if lengths.size else 0.0, lost / span, period)


def cores(noise: dict, min_len_ns: float = 0.0, max_len_ns: float = math.inf) -> list:
    """A point's `noise` record as one Fwq or Detour per rank."""
    if noise.get("method") == "fwq":
        return [fwq(r.get("quanta_ns") or [], int(r.get("rank", 0)), int(r.get("cpu", -1)))
                for r in noise.get("ranks") or [] if r.get("quanta_ns")]
    t = float(noise.get("threshold", 0))
    return [detour(r, t, min_len_ns, max_len_ns) for r in noise.get("ranks") or []]


def by_cpu(points) -> dict:
    """{"fwq": {cpu: [Fwq ..]}, "detour": {cpu: [Detour ..]}} over every launch's noise points."""
    out: dict = {"fwq": {}, "detour": {}}
    for p in points:
        rec = getattr(p, "noise", None)
        if not rec:
            continue
        for c in cores(rec):
            out[rec.get("method")].setdefault(c.cpu, []).append(c)
    return out
