"""The history page (`fabriclab history report`): one self-contained HTML page of
series over time, from plain data (the store's command fills it; nothing here reads
a store). Each series is a figure: its median per run with the run's 95% interval as
a band, each detected change a labelled vertical line, and the cluster's events
(an MPI upgrade, a changed network file) a grey line on every figure they fall in.

Drawn with report/svg.py like every other figure; every text from a document is
escaped there (escape.xml: control characters visible). Bounds that keep a page of
hundreds of series small whatever the number of runs: a line holds at most
2 * MAX_COLUMNS vertices (longer series are decimated to each column's lowest and
highest median, the band to the column's envelope), circles mark each run only up
to MARKERS_UP_TO runs, and a figure draws at most MAX_EVENTS events (its latest)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Optional

from .. import __version__
from ..errors import UsageError
from .escape import xml as escape
from .figure import Axis, Figure, Mark, Series, slug
from .html import CSS, figure_html, table

MAX_COLUMNS = 250          # decimation columns: at most 500 vertices a line (a plot is 560 px wide)
MARKERS_UP_TO = 40         # runs a figure marks with a circle each; beyond, the line alone
MAX_EVENTS = 40            # events drawn on one figure: the latest within its span
LABEL_CHARS = 60           # a mark's label on a figure (the tables above hold the whole text)
SLOWER, FASTER, EVENT = "#B00020", "#006400", "#666666"
# Seconds shown in the unit of the series' largest median (report figures use the same units).
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "\u00b5s"), (1e-9, "ns"))
_FIELDS = ("title", "points", "changes", "unit", "cable")


@dataclass
class HistoryFigure:
    """One series over runs. points: (run_uid, started_s, median, ci_low, ci_high) in time
    order (ci_* None when unknown); changes: (index, ratio, ci_low, ci_high), index the
    first run after the step (analysis/changepoints.py), ratio after/before medians;
    cable: the cable the latest change is attributed to."""
    title: str
    points: list
    changes: list = field(default_factory=list)
    unit: str = "s"
    cable: Optional[str] = None

    @classmethod
    def of(cls, f) -> "HistoryFigure":
        """A HistoryFigure, or the same as a dict; points and changes may also be objects
        with those fields as attributes (the store's SeriesPoint, changepoints' Change)."""
        if isinstance(f, dict):
            extra = sorted(set(f) - set(_FIELDS))
            if extra:
                raise UsageError(f"history figure {str(f.get('title'))!r}: unknown field(s) {', '.join(extra)}")
            f = cls(**f)
        points = [_fields(p, ("run_uid", "started_s", "median", "ci_low", "ci_high")) for p in f.points]
        changes = [_fields(c, ("index", "ratio", "ci_low", "ci_high")) for c in f.changes]
        bad = [c[0] for c in changes if not 0 < c[0] < len(points)]
        if bad:
            raise UsageError(f"history figure {f.title!r}: change at run {bad[0]}, outside its {len(points)} runs")
        return cls(str(f.title), points, changes, f.unit or "", f.cable)


def _fields(item, names: tuple) -> tuple:
    if hasattr(item, names[-1]):
        return tuple(getattr(item, n) for n in names)
    return tuple(item[:len(names)])


def _ok(v) -> bool:
    return v is not None and math.isfinite(v)


def decimate(points: list, columns: int = MAX_COLUMNS) -> tuple[list, bool]:
    """(points, decimated): up to 2 * columns points, in time order. A longer series keeps,
    per equal slice of its time span, the runs of lowest and highest median (a spike stays
    visible), each with the slice's lowest ci_low and highest ci_high (the band's envelope)."""
    if len(points) <= 2 * columns:
        return points, False
    t0, t1 = points[0][1], points[-1][1]
    width = (t1 - t0) / columns or 1.0
    slices: dict = {}
    for p in points:
        slices.setdefault(min(int((p[1] - t0) / width), columns - 1), []).append(p)
    out = []
    for group in slices.values():
        lo = [p[3] for p in group if _ok(p[3])]
        hi = [p[4] for p in group if _ok(p[4])]
        band = (min(lo) if lo else None, max(hi) if hi else None)
        ends = sorted({min(group, key=lambda p: p[2]), max(group, key=lambda p: p[2])}, key=lambda p: p[1])
        out += [(p[0], p[1], p[2], *band) for p in ends]
    return out, True


def _scale(unit: str, medians: list) -> tuple[float, str]:
    """(factor, axis label): times per op in the unit of the largest median."""
    if unit != "s":
        return 1.0, f"value ({unit or 'no unit'})"
    top = max((abs(v) for v in medians if _ok(v)), default=1.0)
    factor, name = next(((f, n) for f, n in _TIME_UNITS if top >= f), _TIME_UNITS[-1])
    return 1.0 / factor, f"time per op ({name})"


def step_label(ratio: float, ci_low=None, ci_high=None) -> str:
    """A change as the step it makes: ratio 1.18 with interval [1.12, 1.25] -> "+18% [12%, 25%]"."""
    def pct(r, sign=""):
        d = (r - 1) * 100
        return f"{d:{sign}.1f}%" if abs(d) < 10 else f"{d:{sign}.0f}%"
    ci = f" [{pct(ci_low)}, {pct(ci_high)}]" if _ok(ci_low) and _ok(ci_high) else ""
    return pct(ratio, "+") + ci


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "\u2026"


def _marks(f: HistoryFigure, events: list) -> tuple[list, int]:
    """(marks, events left out): the figure's changes, then the events within its span."""
    marks = []
    for i, (index, ratio, lo, hi) in enumerate(f.changes):
        t = f.points[index][1]
        if _ok(t) and _ok(ratio):
            cable = f", cable {f.cable}" if f.cable and i == len(f.changes) - 1 else ""
            marks.append(Mark(t, _short(step_label(ratio, lo, hi) + cable), SLOWER if ratio > 1 else FASTER))
    times = [p[1] for p in f.points if _ok(p[1])]
    inside = [e for e in events if times and _ok(e[0]) and times[0] <= e[0] <= times[-1]]
    kept = sorted(inside, key=lambda e: e[0])[-MAX_EVENTS:]
    marks += [Mark(t, _short(str(text)), EVENT) for t, _, text in kept]
    return marks, len(inside) - len(kept)


def figure(f: HistoryFigure, events: list, fid: str) -> Figure:
    """One series as a report Figure (report/figure.py): dates across, its unit up."""
    drawn, decimated = decimate(sorted((p for p in f.points if _ok(p[1]) and _ok(p[2])), key=lambda p: p[1]))
    factor, ylabel = _scale(f.unit, [p[2] for p in drawn])
    scaled = lambda v: v * factor if _ok(v) else None      # noqa: E731
    series = Series("median", [p[1] for p in drawn], [scaled(p[2]) for p in drawn],
                    band=([scaled(p[3]) for p in drawn], [scaled(p[4]) for p in drawn]),
                    markers=len(drawn) <= MARKERS_UP_TO)
    marks, left_out = _marks(f, events)
    note = ("each run's median (line) and its 95% interval (band); a red or green dashed line: a change, the step "
            "after/before with its 95% interval (red: slower); grey: an event")
    if decimated:
        note += f"; {len(f.points)} runs drawn as the lowest and highest median of each of {MAX_COLUMNS} slices"
    if left_out:
        note += f"; {left_out} earlier events not drawn"
    return Figure(fid, f.title, Axis("run start (UTC)", log=False, kind="date"), Axis(ylabel), [series], marks,
                  note=note)


def _when(t) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if _ok(t) else "?"


def _change_rows(figs: list) -> list:
    return [[f.title, f.points[i][0], _when(f.points[i][1]), step_label(r, lo, hi),
             (f.cable or "-") if n == len(f.changes) - 1 else "-"]
            for f in figs for n, (i, r, lo, hi) in enumerate(f.changes)]


def page(figures: list, events: list, title: str, generated) -> str:
    """The page: the events and changes as tables, then a figure per series.
    figures: HistoryFigure or dicts of its fields; events: (started_s, run_uid, text);
    generated: epoch seconds (shown in UTC) or a text."""
    figs = [HistoryFigure.of(f) for f in figures]
    events = sorted(((t, uid, text) for t, uid, text in events), key=lambda e: e[0] if _ok(e[0]) else -math.inf)
    when = _when(generated) if isinstance(generated, (int, float)) else str(generated)
    body = [f"<h1>{escape(title)}</h1>",
            f"<p>Generated {escape(when)} by fabriclab {escape(__version__)}: {len(figs)} series. Times per "
            "operation are each run's median; intervals are 95%; a change's step is the median after it over the "
            "median before it.</p>",
            '<nav><a href="#events">events</a> <a href="#changes">changes</a> <a href="#series">series</a></nav>',
            '<h2 id="events">Events</h2>',
            table(["when", "run", "what"], [[_when(t), uid, text] for t, uid, text in events]) if events
            else "<p>None.</p>",
            '<h2 id="changes">Changes</h2>']
    rows = _change_rows(figs)
    body.append(table(["series", "first run after", "when", "step [95% interval]", "cable"], rows) if rows
                else "<p>None detected.</p>")
    body.append('<h2 id="series">Series</h2>')
    drawn = [figure(f, events, f"h{i}-{slug(f.title)[:48]}") for i, f in enumerate(figs)]
    body.append('<div class="figs">' + "\n".join(figure_html(d) if not d.empty() else
                                                 f"<p>{escape(d.title)}: no run with a start time and a median.</p>"
                                                 for d in drawn) + "</div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")
