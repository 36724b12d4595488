"""One point between a baseline run and a new run, from the two runs' launch medians:
the ratio, its interval, and a verdict that needs both the factor and significance.

The ratio is new / base of the medians of launch medians (above 1: new is
slower), the point estimate of analysis/launches.py. Its interval is the
percentile bootstrap over launches, computed by launches.ratio_ci with each
launch median as a launch of one sample: the two-level scheme then resamples
the launches and nothing within them, all a store keeps without --samples.

Verdicts (factor > 1, taken symmetrically: 1.05 slower is a ratio above 1.05,
faster one below 1 / 1.05):
- "slower" / "faster": the whole interval beyond the factor
  (ci_low > factor, or ci_high < 1 / factor): large and significant;
- "noise": the ratio beyond the factor but the interval reaching back inside
  it: large, but within what the launches' scatter allows;
- "same": the ratio within the factor;
- "no-interval": no interval can be formed, both runs being of one launch.

One launch on one side only: compare.py's rule, a run of a single launch
still compares and its interval then ignores launch-to-launch variation. Here
the single side enters as a constant and the interval is the other side's
launches alone; the caller knows the launch counts and says so. With one
launch on each side there is nothing to resample: the ratio is given with no
interval and the verdict is "no-interval" (compare's rule for points without
a distribution), never faster or slower."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import launches

VERDICTS = ("slower", "faster", "noise", "same", "no-interval")


@dataclass(frozen=True)
class Verdict:
    ratio: float      # new / base of the medians of launch medians; above 1: slower
    ci_low: float     # NaN when verdict is "no-interval"
    ci_high: float
    verdict: str      # one of VERDICTS


def ratio_verdict(base_launches: Sequence[float], new_launches: Sequence[float], factor: float = 1.05,
                  confidence: float = 0.95, seed: int = 0) -> Verdict:
    """The point's Verdict between a baseline run and a new run, from each one's launch medians
    (module docstring). ValueError for no launches, NaN, infinite or non-positive medians,
    a factor not above 1 or a confidence outside (0, 1)."""
    if not (isinstance(factor, numbers.Real) and math.isfinite(factor) and factor > 1):
        raise ValueError(f"factor must be a number above 1, got {factor!r}")
    if not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    base, new = _medians(base_launches, "base"), _medians(new_launches, "new")
    if base.size < 2 and new.size < 2:
        return Verdict(float(np.median(new) / np.median(base)), math.nan, math.nan, "no-interval")
    ratio, lo, hi = launches.ratio_ci([[m] for m in base], [[m] for m in new], confidence=confidence, seed=seed)
    return Verdict(ratio, lo, hi, verdict(ratio, lo, hi, factor))


def verdict(ratio: float, ci_low: float, ci_high: float, factor: float) -> str:
    """The verdict of a ratio and its interval against the factor (module docstring)."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return "no-interval"
    if ci_low > factor:
        return "slower"
    if ci_high < 1.0 / factor:
        return "faster"
    if ratio > factor or ratio < 1.0 / factor:
        return "noise"
    return "same"


def _medians(values: Sequence[float], side: str) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{side}: launch medians must be numbers") from None
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{side}: no launch medians")
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise ValueError(f"{side}: launch medians must be finite and positive")
    return x
