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

from dataclasses import dataclass, field
from typing import Hashable, Optional, Sequence

# The lowest cap a budget sets: twice the core's first-point warm-up (csrc/runner.c,
# RUN_WARMUP_S, at most half the cap), so that a lowered cap never shortens a warm-up.
FLOOR_S = 0.2
# Launches finished before the cap may move: a projection from fewer swings with the
# first few jobs (the default suite's first launch of memory.memcpy is not its last of tcp.stream).
MIN_KNOWN = 8


@dataclass
class _Cost:
    fixed: float                 # seconds of its last launch, less those of its capped points
    capped: int                  # its points that stopped at the cap


@dataclass
class Pace:
    """The caps of a run's launches. `keys[i]` names the job of the i-th launch
    (launches of one job share a key) and `points[i]` its point count; `cap(i, now)`
    is launch i's cap given the seconds since the first launch began, and `done(i, wall,
    capped, cap)` records what launch i took. budget None (or base <= FLOOR_S): the cap
    is always `base`."""

    base: float
    budget: Optional[float]
    keys: Sequence[Hashable]
    costs: dict = field(default_factory=dict)    # key: _Cost of its last launch
    caps: list = field(default_factory=list)     # the cap given to each launch, in order
    finished: int = 0

    def cap(self, i: int, now: float) -> float:
        c = self._cap(i, now)
        self.caps.append(c)
        return c

    def _cap(self, i: int, now: float) -> float:
        if self.budget is None or self.base <= FLOOR_S or self.finished < min(MIN_KNOWN, len(set(self.keys))):
            return self.base
        known = self.costs.values()
        mean_fixed = sum(c.fixed for c in known) / len(self.costs)
        mean_capped = sum(c.capped for c in known) / len(self.costs)
        fixed = capped = 0.0
        for key in self.keys[i:]:
            c = self.costs.get(key)
            fixed += c.fixed if c else mean_fixed
            capped += c.capped if c else mean_capped
        if capped == 0:
            return self.base
        return min(self.base, max(FLOOR_S, (self.budget - now - fixed) / capped))

    def done(self, i: int, wall: float, capped: int, cap: float) -> None:
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
