"""What a figure shows, independent of how it is drawn: axes with units,
series with their intervals, marks and bars. Builders (figures.py) make
these; svg.py and raster.py draw them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

# Okabe & Ito's colour-blind-safe palette (Color Universal Design, 2008).
# Its yellow (#F0E442) is unreadable as a line on white: a dark olive replaces it.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#7A6A00")


@dataclass
class Axis:
    label: str              # what is on the axis, its unit in parentheses: "message size (bytes)"
    log: bool = True
    # "size": ticks at powers of two labelled 4K, 1M; "pow2": at powers of two;
    # "count": whole numbers; "number": decimal; "date": epoch seconds, ticks at whole UTC hours, days or months
    kind: str = "number"


@dataclass
class Series:
    label: str
    x: list
    y: list                              # None = no value at that x (a gap)
    band: Optional[tuple] = None         # (low, high) lists: the 95% interval of each y
    spread: Optional[tuple] = None       # (low, high) lists: p5..p95 of the samples
    dashed: bool = False                 # a model or fit, not a measurement
    markers: bool = True
    hollow: Optional[list] = None        # True where the point did not converge
    color: Optional[int] = None          # index into PALETTE; default: the series' position


@dataclass
class Mark:
    x: float
    label: str
    color: str = "#444444"


@dataclass
class Figure:
    id: str                  # unique in a report; also the file stem of `fabriclab plot`
    title: str
    x: Axis
    y: Axis
    series: list = field(default_factory=list)
    marks: list = field(default_factory=list)
    bars: list = field(default_factory=list)   # [(category, value)]: a bar chart instead of series
    # Stacked bars: each bar's value is a list, a segment per part named here (in the legend).
    parts: list = field(default_factory=list)
    note: str = ""           # the caption: how to read it, where the numbers come from

    def empty(self) -> bool:
        if self.bars:
            return not any(bar_total(v) for _, v in self.bars)
        return not any(y is not None for s in self.series for y in s.y)


def bar_total(v):
    """A bar's height: its value, or the sum of a stacked bar's segments (None: not measured)."""
    if isinstance(v, (list, tuple)):
        return sum(x for x in v if x) if any(x is not None for x in v) else None
    return v


_UNIT = re.compile(r"\(([^()]+)\)\s*$")


def unit_of(label: str) -> str | None:
    """The unit an axis label states in its trailing parentheses."""
    m = _UNIT.search(label)
    return m.group(1) if m else None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
