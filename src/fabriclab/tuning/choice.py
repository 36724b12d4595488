"""Which algorithm each size gets: the fastest measured one, kept only where
compare's interval (analysis/launches.py ratio_ci and verdict, the two-level
bootstrap over launches) says it is faster than the library's own choice;
elsewhere the library keeps its choice. Also the size ranges a selection
file gives each choice."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Optional

from ..analysis import launches

AUTO = "auto"


@dataclass(frozen=True)
class Choice:
    """One size's decision."""
    size: int
    algorithm: Optional[str]    # what the file selects; None: the library's own choice
    fastest: str                # the fastest measured algorithm (by the median of launch medians)
    ratio: float                # fastest / the library's own choice, time per op
    ratio_ci_low: float
    ratio_ci_high: float
    verdict: str                # compare's: faster | same | slower
    medians: dict               # algorithm -> median of its launch medians (s)

    def to_dict(self) -> dict:
        return {"size": self.size, "algorithm": self.algorithm, "fastest": self.fastest, "ratio": self.ratio,
                "ratio_ci_low": self.ratio_ci_low, "ratio_ci_high": self.ratio_ci_high, "verdict": self.verdict,
                "medians_s": self.medians}


def _by_algorithm(points) -> dict:
    """{size: {algorithm: [launch samples]}} of collective points."""
    out: dict = {}
    for p in points:
        alg = (p.params or {}).get("algorithm", AUTO)
        out.setdefault(p.size, {}).setdefault(alg, []).append(p.samples)
    return out


def choose(points, alpha: float = 0.05, threshold: float = 0.02) -> list[Choice]:
    """One Choice per size measured with the library's own choice (`auto`)
    beside at least one named algorithm."""
    out = []
    for size, algs in sorted(_by_algorithm(points).items()):
        base = algs.get(AUTO)
        named = {a: xs for a, xs in algs.items() if a != AUTO and xs}
        if not base or not named:
            continue
        medians = {a: statistics.median(statistics.median(s) for s in xs) for a, xs in algs.items()}
        fastest = min(named, key=lambda a: medians[a])
        ratio, lo, hi = launches.ratio_ci(base, named[fastest], confidence=1 - alpha)
        verdict = launches.verdict(lo, hi, threshold)
        out.append(Choice(size, fastest if verdict == "faster" else None, fastest, ratio, lo, hi, verdict, medians))
    return out


def ranges(choices: list[Choice]) -> list[tuple[int, Optional[int], Optional[str]]]:
    """[(low, high, algorithm)]: consecutive sizes with one decision merged,
    the boundary between two measured sizes at their geometric mean (sizes
    are measured on a log scale); the first range starts at 0 and the last
    has no end (None)."""
    out: list = []
    for i, c in enumerate(choices):
        low = 0 if i == 0 else int(math.sqrt(max(choices[i - 1].size, 1) * max(c.size, 1))) + 1
        if out and out[-1][2] == c.algorithm:
            continue
        if out:
            out[-1] = (out[-1][0], low - 1, out[-1][2])
        out.append((low, None, c.algorithm))
    return out
