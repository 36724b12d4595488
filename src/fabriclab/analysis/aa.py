"""An A/A test's reading: two runs of one configuration compared by
`compare`, where every verdict other than "same" is false.

The false-verdict rate is the share of compared points whose verdict is
faster or slower; the between-launch spread of a point is the max/min of its
launch medians (the spread the two-level interval of analysis/launches.py
must cover). The threshold that would have called every point "same" is the
largest distance of an interval's near end beyond 1: compare's verdict needs
the whole interval beyond 1 +- threshold (launches.verdict)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


COMPARED = ("same", "faster", "slower")


@dataclass(frozen=True)
class Reading:
    points: int                  # points compared with an interval
    verdicts: dict               # verdict -> count
    false_rate: float            # share of compared points not "same"
    spread_median: float         # between-launch spread (max/min of launch medians), median over points and runs
    spread_p90: float
    threshold_all_same: float    # the smallest --threshold at which every verdict would have been "same"

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def spreads(doc) -> list[float]:
    """Per point measured in several launches: max/min of its launch medians."""
    out = []
    for ps in doc.groups().values():
        meds = [p.summary.median for p in ps]
        if len(meds) > 1 and min(meds) > 0:
            out.append(max(meds) / min(meds))
    return out


def read(changes: list, docs: list) -> Reading:
    """The reading of compare's changes between the runs in docs."""
    compared = [c for c in changes if c.verdict in COMPARED]
    verdicts: dict = {}
    for c in changes:
        verdicts[c.verdict] = verdicts.get(c.verdict, 0) + 1
    wrong = sum(c.verdict != "same" for c in compared)
    spread = sorted(s for d in docs for s in spreads(d))
    need = max((max(c.ratio_ci_low - 1, 1 - c.ratio_ci_high, 0.0) for c in compared
                if math.isfinite(c.ratio_ci_low) and math.isfinite(c.ratio_ci_high)), default=0.0)
    return Reading(len(compared), verdicts, wrong / len(compared) if compared else float("nan"),
                   statistics.median(spread) if spread else float("nan"), _p90(spread), need)


def _p90(xs: list[float]) -> float:
    """The 90th percentile by the nearest rank (xs sorted)."""
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, -(-9 * len(xs) // 10) - 1))]
