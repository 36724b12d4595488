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
from dataclasses import asdict, dataclass
from typing import Optional, Sequence, Tuple, Union

import numpy as np

ArrayLike = Union[Sequence[float], np.ndarray]


def _pairs(sizes: ArrayLike, values: ArrayLike, what: str) -> Tuple[np.ndarray, np.ndarray]:
    """Validate two equal-length 1-D arrays: sizes >= 0, values finite and >= 0."""
    s = np.asarray(sizes, dtype=float)
    v = np.asarray(values, dtype=float)
    if s.ndim != 1 or v.ndim != 1 or s.size != v.size:
        raise ValueError(f"sizes and {what} must be flat sequences of equal length")
    if s.size == 0:
        raise ValueError("no points")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(v))):
        raise ValueError(f"sizes and {what} must be finite")
    if np.any(s < 0) or np.any(v < 0):
        raise ValueError(f"sizes and {what} must not be negative")
    return s, v


def _relative_lsq(n: np.ndarray, t: np.ndarray) -> Tuple[float, float, float]:
    """Fit t = a + b n minimizing sum(((a + b n) - t) / t)^2; return (a, b, rel_rms).

    Why relative: sweeps are geometric (1 B .. 4 MiB) and times span four or
    more decades. Ordinary least squares lets the few largest sizes decide both
    parameters, leaving the intercept as the small difference of large numbers
    (often negative). Dividing each residual by t weights every point by its
    relative error, which also matches the multiplicative noise of timings;
    it is weighted least squares with weights 1 / t^2."""
    if np.any(t <= 0):
        raise ValueError("times must be positive to fit")
    design = np.column_stack([1.0 / t, n / t])
    (a, b), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
    rel = (a + b * n - t) / t
    return float(a), float(b), float(np.sqrt(np.mean(rel**2)))


@dataclass(frozen=True)
class HockneyFit:
    """T(n) = alpha + n / r_inf; n_half = alpha * r_inf is the size reaching r_inf / 2."""

    alpha: float  # s, start-up latency
    r_inf: float  # B/s, asymptotic bandwidth
    n_half: float  # B, half-performance length
    rel_rms: float  # root mean square of (T_fit - T) / T over the fitted points
    n_points: int

    def predict(self, size: Union[float, np.ndarray]):
        """Model time in seconds for size bytes."""
        return self.alpha + np.asarray(size, dtype=float) / self.r_inf

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
    keep = s > 0
    s, t = s[keep], t[keep]
    if np.unique(s).size < 2:
        raise ValueError("the Hockney fit needs at least 2 distinct sizes > 0")
    alpha, inv_r, rel_rms = _relative_lsq(s, t)
    if inv_r <= 0:
        raise ValueError("times do not increase with size; sweep larger sizes to fit r_inf")
    r_inf = 1.0 / inv_r
    return HockneyFit(alpha, r_inf, alpha * r_inf, rel_rms, int(s.size))


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
    distinct = np.unique(s[s > 0])
    if distinct.size < 2:
        raise ValueError("LogGP needs at least 2 distinct sizes > 0")
    lo = distinct[(distinct.size - 1) // 2] if min_size is None else float(min_size)
    big = (s > 0) & (s >= lo)
    if np.unique(s[big]).size < 2:
        raise ValueError(f"fewer than 2 distinct sizes >= {lo:g} B to fit G")
    intercept, G, rel_rms = _relative_lsq(s[big], t[big])
    if G <= 0:
        raise ValueError("times do not increase with size; sweep larger sizes to fit G")
    smin = float(s.min())
    t_small = float(np.median(t[s == smin]))
    l2o = t_small - max(smin - 1.0, 0.0) * G
    return LogGP(G, l2o, intercept, float(s[big].min()), int(big.sum()), rel_rms)


def peak_bandwidth(sizes: ArrayLike, bandwidths: ArrayLike) -> Tuple[float, float]:
    """(peak bandwidth in B/s, the smallest size at which it was measured)."""
    s, b = _pairs(sizes, bandwidths, "bandwidths")
    peak = float(b.max())
    return peak, float(s[b == peak].min())


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
    keep = s > 0
    s, b = s[keep], b[keep]
    if s.size == 0:
        return None
    if np.unique(s).size != s.size:
        raise ValueError("duplicate sizes: give one bandwidth per size")
    order = np.argsort(s)
    s, b = s[order], b[order]
    peak = float(b.max())
    if peak <= 0:
        return None
    half = peak / 2.0
    i = int(np.argmax(b >= half))  # first index reaching half; <= the peak's index
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
