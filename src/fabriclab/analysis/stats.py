"""Robust statistics of raw samples (seconds per operation).

The core keeps every sample and Python computes every statistic, so any number
here can be recomputed later from a stored result. Timing distributions are
skewed with a long right tail (interrupts, preemption, network contention), so
the headline number is the median with a distribution-free confidence
interval, not a mean with a normal-theory interval.

References
- W. J. Conover, Practical Nonparametric Statistics, 3rd ed., Wiley 1999, §3.2
  (confidence interval for a quantile from order statistics).
- J.-Y. Le Boudec, Performance Evaluation of Computer and Communication
  Systems, EPFL Press 2010, §2.2.1, Theorem 2.1 and Table A.1.
- B. Iglewicz and D. C. Hoaglin, How to Detect and Handle Outliers, ASQC
  Basic References in Quality Control vol. 16, 1993 (modified z-score).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence, Tuple, Union

import numpy as np

from ..schema.summaries import Summary

MAD_TO_SIGMA = 1.4826  # 1 / Phi^-1(3/4): MAD -> standard deviation for normal data
MEANAD_TO_SIGMA = 1.253314  # sqrt(pi / 2): mean absolute deviation -> standard deviation
OUTLIER_Z = 3.5  # Iglewicz & Hoaglin's recommended cut-off for |modified z|
EXACT_CI_MAX_N = 1000  # exact binomial below this, normal approximation above

ArrayLike = Union[Sequence[float], np.ndarray]


def as_samples(samples: ArrayLike) -> np.ndarray:
    """Return samples as a 1-D float array; reject what no statistic can use.

    Raises ValueError for an empty input, a non-1-D input, or any NaN,
    infinite or negative value (a duration cannot be negative)."""
    try:
        x = np.asarray(samples, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"samples must be numbers: {exc}") from None
    if x.ndim != 1:
        raise ValueError(f"samples must be a flat sequence, got shape {x.shape}")
    if x.size == 0:
        raise ValueError("no samples")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples contain NaN or infinite values")
    if np.any(x < 0):
        raise ValueError("samples contain negative durations")
    return x


def _check_confidence(confidence: float) -> None:
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def median_ci_ranks(n: int, confidence: float = 0.95) -> Tuple[int, int]:
    """1-based order-statistic ranks (j, k) with P(x_(j) <= median <= x_(k)) >= confidence.

    The number B of samples below the true median is Binomial(n, 1/2), whatever
    the distribution, so P(x_(j) <= m < x_(k)) = P(j <= B <= k - 1) (Conover
    §3.2). The interval is symmetric, k = n + 1 - j, with the largest j such
    that P(B <= j - 1) <= (1 - confidence) / 2. For n > 1000 the binomial is
    replaced by its normal approximation, Le Boudec Theorem 2.1:
    j = floor(n/2 - z sqrt(n)/2), k = ceil(n/2 + 1 + z sqrt(n)/2)
    (z = 1.96 gives the core's stopping rule, n/2 -+ 0.98 sqrt(n)).

    With too few samples no interval reaches the confidence (at 95%, n <= 5);
    the result is then (1, n), the widest interval there is."""
    _check_confidence(confidence)
    if n < 1:
        raise ValueError("no samples")
    tail = (1.0 - confidence) / 2.0
    if n <= EXACT_CI_MAX_N:
        total = 2**n  # integer sums; int / int true division is correctly rounded
        cum, j, c = 0, 1, 1
        for i in range(n):
            cum += c  # cum = P(B <= i) * 2**n, c = comb(n, i)
            if cum / total > tail:
                break
            j = i + 1  # P(B <= j - 1) <= tail
            c = c * (n - i) // (i + 1)
    else:
        z = NormalDist().inv_cdf(1.0 - tail)
        j = math.floor(n / 2 - z * math.sqrt(n) / 2)
    j = min(max(j, 1), (n + 1) // 2)
    return j, n + 1 - j


def median_ci(samples: ArrayLike, confidence: float = 0.95) -> Tuple[float, float]:
    """Distribution-free confidence interval (lo, hi) of the median, in sample units.

    n = 1 gives (x, x); all-equal samples give (x, x); small n gives (min, max)
    (see median_ci_ranks for the coverage actually achieved)."""
    x = np.sort(as_samples(samples))
    j, k = median_ci_ranks(x.size, confidence)
    return float(x[j - 1]), float(x[k - 1])


def sorted_median(s: np.ndarray) -> float:
    """np.median of sorted s, the same number (the middle value, or the middle two's sum
    halved): a few hundred samples sort in less time than np.median's checks take."""
    n = s.size
    return float(s[n // 2]) if n % 2 else float((s[n // 2 - 1] + s[n // 2]) / 2.0)


def percentile(samples: ArrayLike, q: Union[float, Sequence[float]]):
    """Percentile(s) q in [0, 100], numpy's 'linear' method (Hyndman & Fan type 7).

    Returns a float for a scalar q and an array for a sequence."""
    x = as_samples(samples)
    qa = np.asarray(q, dtype=float)
    if not np.all((qa >= 0) & (qa <= 100)):
        raise ValueError(f"percentile must be within [0, 100], got {q!r}")
    result = np.percentile(x, qa, method="linear")
    return float(result) if qa.ndim == 0 else result


def mad(samples: ArrayLike, scaled: bool = False) -> float:
    """Median absolute deviation, median(|x - median(x)|).

    scaled=True multiplies by 1.4826 so that it estimates the standard
    deviation of normal data (Rousseeuw & Croux, JASA 88, 1993)."""
    x = as_samples(samples)
    value = float(np.median(np.abs(x - np.median(x))))
    return value * MAD_TO_SIGMA if scaled else value


def modified_z_scores(samples: ArrayLike) -> np.ndarray:
    """Modified z-scores M_i = (x_i - median) / (1.4826 MAD) (Iglewicz & Hoaglin 1993).

    When MAD == 0 (more than half the samples are equal, common with a coarse
    timer) the scale falls back to 1.253314 x the mean absolute deviation
    from the median, as in IBM's SPSS / Cognos definition of the modified
    z-score; if that is 0 too, every sample equals the median and all scores
    are 0. (hyperfine's outlier_detection.rs instead divides by machine
    epsilon when MAD == 0, which flags every sample that differs from the
    median at all.)"""
    x = as_samples(samples)
    dev = x - np.median(x)
    return _z_scores(dev, float(np.median(np.abs(dev))))


def _z_scores(dev: np.ndarray, mad_value: float) -> np.ndarray:
    """modified_z_scores from the deviations from the median and their median."""
    scale = MAD_TO_SIGMA * mad_value
    if scale == 0.0:
        scale = MEANAD_TO_SIGMA * float(np.mean(np.abs(dev)))
    if scale == 0.0:
        return np.zeros_like(dev)
    return dev / scale


def outliers(samples: ArrayLike, threshold: float = OUTLIER_Z) -> np.ndarray:
    """Boolean mask of samples whose |modified z-score| exceeds threshold (3.5)."""
    return np.abs(modified_z_scores(samples)) > threshold


def _rel_half_width(lo: float, hi: float, median: float) -> float:
    half = (hi - lo) / 2.0
    if median == 0.0:
        return 0.0 if half == 0.0 else math.inf
    return half / median


def summarize(samples: ArrayLike, confidence: float = 0.95) -> Summary:
    """Summary of raw samples; ValueError on empty, non-finite or negative input."""
    x = as_samples(samples)
    _check_confidence(confidence)
    # every order statistic from one sort (a point's summary is taken for every launch
    # and every merge): the same figures median(), median_ci(), percentile(), mad() and
    # outliers() give, each of which would check and order the samples again
    s = np.sort(x)
    n = s.size
    median = sorted_median(s)
    j, k = median_ci_ranks(n, confidence)
    lo, hi = float(s[j - 1]), float(s[k - 1])
    p5, p25, p75, p95, p99 = (float(v) for v in np.percentile(s, [5, 25, 75, 95, 99], method="linear"))
    lo_x, hi_x = float(s[0]), float(s[-1])
    if lo_x == hi_x:  # summation rounding would report a spread that is not there
        mean, stdev = lo_x, 0.0
    else:
        mean, stdev = float(x.mean()), float(x.std(ddof=1))
    dev = x - median
    mad_value = sorted_median(np.sort(np.abs(dev)))
    return Summary(
        n=int(x.size),
        median=median,
        ci_low=lo,
        ci_high=hi,
        ci_rel=_rel_half_width(lo, hi, median),
        p5=p5,
        p25=p25,
        p75=p75,
        p95=p95,
        p99=p99,
        min=lo_x,
        max=hi_x,
        mean=mean,
        stdev=stdev,
        mad=mad_value,
        outliers=int((np.abs(_z_scores(dev, mad_value)) > OUTLIER_Z).sum()),
        confidence=float(confidence),
    )
