"""A run's time budget: each launch's point-time cap, lowered when the launches fall behind it.

Most points stop when their interval is narrow enough; the rest run until the
point-time cap (--point-time). On a slow or busy host those capped points are
what makes a run long, and they are the only thing a lower cap shortens. So
before each launch the time the remaining launches need is projected from
what the finished ones took, each job's launch as fixed seconds (its launch,
its points that converged) plus its capped points times the cap, and the cap
is the largest that fits the budget, between FLOOR_S and --point-time
(docs/statistics.md, "Time budget"). HPC Challenge bounds its ping-pong pairs
by a time budget in the same spirit; here nothing is left out, points are only
sampled less where they could not converge anyway."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable, Optional, Sequence

# The lowest cap a budget sets: twice the core's timed warm-up of a benchmark's first point
# (csrc/runner.c, RUN_WARMUP_S 0.1 s, at most half the cap), so a lowered cap never shortens it.
FLOOR_S = 0.2
# Launches finished before the cap may move: jobs' launches differ widely (a memory.memcpy
# launch against a tcp.stream one), and a projection from fewer swings with the first few.
MIN_KNOWN = 8
# The share of the budget the projection aims at: launches vary from their projection, and
# aiming at the budget itself ended runs just over it (154.1 s of a 153.9 s budget).
AIM = 0.99


@dataclass
class _Cost:
    fixed: float                 # seconds of its last launch, less those of its capped points
    capped: int                  # its points that stopped at the cap


@dataclass
class Pace:
    """The caps of a run's launches. `keys[i]` names the job of the i-th launch
    (launches of one job share a key); `cap(i, now)` is launch i's cap given the
    seconds since the first launch began, and `done(i, wall, capped, cap)` records
    what launch i took. budget None or base <= FLOOR_S: the
    cap is always `base`.
    Each call costs the number of distinct jobs, not of launches."""

    base: float
    budget: Optional[float]
    keys: Sequence[Hashable]
    costs: dict = field(default_factory=dict)    # key: _Cost of its last launch
    caps: list = field(default_factory=list)     # the cap given to each launch, in order
    finished: int = 0

    def __post_init__(self):
        self._left = Counter(self.keys)          # launches not yet begun, per job
        self._needed = min(MIN_KNOWN, len(self._left))

    def cap(self, i: int, now: float) -> float:
        c = self._cap(now)
        if self.budget is not None:
            self._left[self.keys[i]] -= 1
        self.caps.append(c)
        return c

    def _cap(self, now: float) -> float:
        """The largest cap at which the launches not begun (this one included) fit what is left
        of AIM x the budget."""
        if self.budget is None or self.base <= FLOOR_S or self.finished < self._needed:
            return self.base
        n = len(self.costs)
        mean = _Cost(sum(c.fixed for c in self.costs.values()) / n, sum(c.capped for c in self.costs.values()) / n)
        fixed = capped = 0.0
        for key, left in self._left.items():
            c = self.costs.get(key, mean)
            fixed += left * c.fixed
            capped += left * c.capped
        if capped == 0:
            return self.base
        # to the millisecond: the cap is recorded in every launch's command
        return min(self.base, max(FLOOR_S, round((AIM * self.budget - now - fixed) / capped, 3)))

    def done(self, i: int, wall: float, capped: int, cap: float) -> None:
        if self.budget is None:
            return
        self.costs[self.keys[i]] = _Cost(max(0.0, wall - capped * cap), capped)
        self.finished += 1

    def summary(self, seconds: float) -> Optional[dict]:
        """The footer's `budget` (docs/schema.md): None without a budget."""
        if self.budget is None:
            return None
        lowered = [c for c in self.caps if c < self.base]
        return {"budget_s": self.budget, "point_time_s": self.base, "launches": len(self.caps),
                "launches_lowered": len(lowered),
                "lowest_point_time_s": min(lowered) if lowered else self.base, "launches_s": seconds,
                "met": seconds <= self.budget}
