"""Parameters derived from a size sweep: Hockney, LogGP, peak and half-peak.

Inputs are per-size medians in SI units: sizes in bytes, times in seconds
(one-way, i.e. sample / legs_per_op), bandwidths in bytes per second.

References
- R. W. Hockney, "The communication challenge for MPP: Intel Paragon and
  Meiko CS-2", Parallel Computing 20(3), 1994, 389-398.
- A. Alexandrov, M. F. Ionescu, K. E. Schauser, C. Scheiman, "LogGP:
  incorporating long messages into the LogP model", SPAA 1995.
- D. Culler et al., "LogP: towards a realistic model of parallel
  computation", PPoPP 1993.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Optional, Sequence, Tuple

# Plain Python on purpose: sweeps have tens of points, and `fabriclab show`
# starts faster without numpy.
ArrayLike = Sequence[float]


def _flat(x, what: str) -> list[float]:
    try:
        out = [float(v) for v in x]
    except TypeError:
        raise ValueError(f"sizes and {what} must be flat sequences of equal length") from None
    return out


def _pairs(sizes: ArrayLike, values: ArrayLike, what: str) -> Tuple[list, list]:
    """Validate two equal-length flat sequences: sizes >= 0, values finite and >= 0."""
    s, v = _flat(sizes, what), _flat(values, what)
    if len(s) != len(v):
        raise ValueError(f"sizes and {what} must be flat sequences of equal length")
    if not s:
        raise ValueError("no points")
    if not all(math.isfinite(x) for x in s + v):
        raise ValueError(f"sizes and {what} must be finite")
    if any(x < 0 for x in s + v):
        raise ValueError(f"sizes and {what} must not be negative")
    return s, v


def _relative_lsq(n: list, t: list) -> Tuple[float, float, float]:
    """Fit t = a + b n minimizing sum(((a + b n) - t) / t)^2; return (a, b, rel_rms).

    Why relative: sweeps are geometric (1 B .. 4 MiB) and times span four or
    more decades. Ordinary least squares lets the few largest sizes decide both
    parameters, leaving the intercept as the small difference of large numbers
    (often negative). Dividing each residual by t weights every point by its
    relative error, which also matches the multiplicative noise of timings;
    it is weighted least squares with weights 1 / t^2."""
    if any(x <= 0 for x in t):
        raise ValueError("times must be positive to fit")
    # Normal equations of the 2-column design [1/t, n/t] against 1.
    u = [1.0 / x for x in t]
    w = [m / x for m, x in zip(n, t)]
    suu, suw, sww = sum(x * x for x in u), sum(x * y for x, y in zip(u, w)), sum(y * y for y in w)
    su, sw = sum(u), sum(w)
    det = suu * sww - suw * suw
    if det == 0 or not math.isfinite(det):
        raise ValueError("the sizes do not determine a line")
    a = (su * sww - sw * suw) / det
    b = (suu * sw - suw * su) / det
    rel = [(a + b * m - x) / x for m, x in zip(n, t)]
    return a, b, math.sqrt(sum(r * r for r in rel) / len(rel))


@dataclass(frozen=True)
class HockneyFit:
    """T(n) = alpha + n / r_inf; n_half = alpha * r_inf is the size reaching r_inf / 2."""

    alpha: float  # s, start-up latency
    r_inf: float  # B/s, asymptotic bandwidth
    n_half: float  # B, half-performance length
    rel_rms: float  # root mean square of (T_fit - T) / T over the fitted points
    n_points: int

    def predict(self, size):
        """Model time in seconds for size bytes (a number, a sequence or an array)."""
        if isinstance(size, (int, float)):
            return self.alpha + size / self.r_inf
        try:
            return size * (1.0 / self.r_inf) + self.alpha  # numpy arrays broadcast
        except TypeError:
            return [self.alpha + float(x) / self.r_inf for x in size]

    def to_dict(self) -> dict:
        return asdict(self)


def hockney(sizes: ArrayLike, times: ArrayLike) -> HockneyFit:
    """Relative least-squares fit of Hockney's T(n) = alpha + n / r_inf.

    Points with size 0 are left out: many MPI libraries short-circuit empty
    messages, so T(0) need not lie on the line. Needs >= 2 distinct positive
    sizes; raises ValueError otherwise, and when times do not grow with size
    (slope <= 0: the sweep is all latency, sweep larger sizes). alpha may come
    out negative when the curve bends (e.g. at an eager/rendezvous switch); a
    large rel_rms says the one-line model does not describe the sweep."""
    s, t = _pairs(sizes, times, "times")
    pts = [(a, b) for a, b in zip(s, t) if a > 0]
    if len({a for a, _ in pts}) < 2:
        raise ValueError("the Hockney fit needs at least 2 distinct sizes > 0")
    alpha, inv_r, rel_rms = _relative_lsq([a for a, _ in pts], [b for _, b in pts])
    if inv_r <= 0:
        raise ValueError("times do not increase with size; sweep larger sizes to fit r_inf")
    r_inf = 1.0 / inv_r
    return HockneyFit(alpha, r_inf, alpha * r_inf, rel_rms, len(pts))


@dataclass(frozen=True)
class LogGP:
    """LogGP parameters that ping-pong data can identify (see loggp)."""

    G: float  # s/B, gap per byte of a long message (1/G = bandwidth)
    L_plus_2o: float  # s, latency plus send and receive overheads, small messages
    intercept: float  # s, intercept of the large-size line (includes protocol costs)
    fit_min_size: float  # B, smallest size used for G
    n_points: int  # points used for G
    rel_rms: float  # relative rms residual of the large-size fit

    @property
    def bandwidth(self) -> float:
        return 1.0 / self.G

    def to_dict(self) -> dict:
        return asdict(self)


def loggp(sizes: ArrayLike, times: ArrayLike, min_size: Optional[float] = None) -> LogGP:
    """LogGP-style parameters from ping-pong one-way times (Alexandrov et al. 1995).

    In LogGP a k-byte message costs o + (k - 1) G + L + o one way, which is what
    half a ping-pong round trip measures. From that alone:
    - G is identified: the slope of the large-size line (sizes >= min_size,
      default the upper half of the distinct positive sizes, relative least
      squares as in hockney).
    - L + 2o is identified only as a sum: T(s_min) - (s_min - 1) G at the
      smallest measured size (T(0) for a 0-byte point). Splitting L from o
      needs the CPU time of a send or receive (the overhead benchmarks of
      Culler et al.), which ping-pong hides because the CPU waits throughout.
    - g (gap between consecutive small messages) is not identified: it needs
      a streaming or message-rate test. P is the configuration, not measured.
    The large-size intercept is reported too; when it exceeds L + 2o the long
    messages pay a per-message cost the short ones do not (rendezvous
    handshake, registration), which the single LogGP line cannot express."""
    s, t = _pairs(sizes, times, "times")
    distinct = sorted({a for a in s if a > 0})
    if len(distinct) < 2:
        raise ValueError("LogGP needs at least 2 distinct sizes > 0")
    lo = distinct[(len(distinct) - 1) // 2] if min_size is None else float(min_size)
    big = [(a, b) for a, b in zip(s, t) if a > 0 and a >= lo]
    if len({a for a, _ in big}) < 2:
        raise ValueError(f"fewer than 2 distinct sizes >= {lo:g} B to fit G")
    intercept, G, rel_rms = _relative_lsq([a for a, _ in big], [b for _, b in big])
    if G <= 0:
        raise ValueError("times do not increase with size; sweep larger sizes to fit G")
    smin = min(s)
    t_small = statistics.median(b for a, b in zip(s, t) if a == smin)
    l2o = t_small - max(smin - 1.0, 0.0) * G
    return LogGP(G, l2o, intercept, min(a for a, _ in big), len(big), rel_rms)


def peak_bandwidth(sizes: ArrayLike, bandwidths: ArrayLike) -> Tuple[float, float]:
    """(peak bandwidth in B/s, the smallest size at which it was measured)."""
    s, b = _pairs(sizes, bandwidths, "bandwidths")
    peak = max(b)
    return peak, min(a for a, x in zip(s, b) if x == peak)


def half_peak_size(sizes: ArrayLike, bandwidths: ArrayLike) -> Optional[float]:
    """Smallest size (B) at which the bandwidth reaches half its measured peak.

    The first point at or above peak / 2 (in increasing size, not beyond the
    peak) and the point before it are interpolated linearly in log2(size),
    since sweeps are geometric. Returns None when the sweep does not bracket
    the crossing below the peak: the peak is 0, or the smallest positive
    size already reaches half the peak (start the sweep at smaller sizes).
    Size-0 points carry no bandwidth and are ignored; duplicate sizes raise
    ValueError (summarize each size first)."""
    s, b = _pairs(sizes, bandwidths, "bandwidths")
    pts = sorted((a, x) for a, x in zip(s, b) if a > 0)
    if not pts:
        return None
    if len({a for a, _ in pts}) != len(pts):
        raise ValueError("duplicate sizes: give one bandwidth per size")
    s, b = [a for a, _ in pts], [x for _, x in pts]
    peak = max(b)
    if peak <= 0:
        return None
    half = peak / 2.0
    i = next(k for k, x in enumerate(b) if x >= half)  # first index reaching half; <= the peak's index
    if i == 0:
        return None
    x0, x1 = math.log2(s[i - 1]), math.log2(s[i])
    b0, b1 = float(b[i - 1]), float(b[i])
    x = x0 + (half - b0) / (b1 - b0) * (x1 - x0)  # b0 < half <= b1
    return float(2.0**x)


def efficiency(achieved_Bps: float, wire_Bps: float) -> float:
    """Fraction of the wire (or nominal) bandwidth achieved, achieved / wire."""
    a, w = float(achieved_Bps), float(wire_Bps)
    if not (math.isfinite(a) and math.isfinite(w)) or a < 0 or w <= 0:
        raise ValueError("need achieved >= 0 and wire > 0, both finite")
    return a / w
