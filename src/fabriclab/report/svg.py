"""Draws a Figure as a standalone SVG document: no script, no external font,
styles as attributes, so it reads the same inline in a report, alone in a
browser, or printed. Plain string building: a report of a few hundred points
draws in well under a second."""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from .escape import xml as escape

from ..units import fmt_bytes
from .figure import PALETTE, Axis, Figure, bar_total

W, H = 640, 360                      # the plot box's outer size in px
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 30, 46
LEGEND_W = 250                       # legend column right of the plot when there are several series
FONT = 'font-family="DejaVu Sans,Helvetica,Arial,sans-serif"'


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _label(v: float, kind: str) -> str:
    if kind == "size":
        return fmt_bytes(v)
    if kind == "date":      # a tick at midnight UTC names its day, another its hour
        return time.strftime("%Y-%m-%d" if v % _DAY == 0 else "%m-%d %H:%M", time.gmtime(v))
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{v:.6g}"


def _value(v: float) -> str:
    """A bar's value: whole numbers from 100 up, else three significant digits."""
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _log_ticks(lo: float, hi: float, kind: str) -> list[float]:
    """Powers of the base (2 for sizes, 10 else) at a whole step of exponents
    (1, 16, 256, 4K ...), about eight; within a decade, 1-2-5 steps."""
    base = 2.0 if kind in ("size", "pow2") else 10.0
    a, b = math.floor(math.log(lo, base) + 1e-9), math.ceil(math.log(hi, base) - 1e-9)
    step = max(1, math.ceil((b - a + 1) / 8))
    if base == 2 and step > 1:
        step = 1 << math.ceil(math.log2(step))      # exponents at multiples of 2, 4, 8: 1, 16, 256 ...
    ticks = [base ** k for k in range(a, b + 1) if k % step == 0]
    inside = [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
    if base == 10 and len(inside) < 3:     # about a decade or less: add 2 and 5
        more = sorted({base ** k * m for k in range(a - 1, b + 1) for m in (1, 2, 5)})
        inside = [t for t in more if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
    if len(inside) < 3:                    # a narrow range: decimal steps read better
        inside = [t for t in _lin_ticks(lo, hi) if t > 0]
    return inside or [lo, hi]


def _lin_ticks(lo: float, hi: float, whole: bool = False, kind: str = "number") -> list[float]:
    """Ticks at 1, 2 or 5 times a power of ten, about six of them (whole: integers only)."""
    span = hi - lo or abs(hi) or 1.0
    raw = span / 6
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    if whole:
        step = max(1.0, round(step))
    if kind == "size":                     # sizes step by powers of two: 1M, 2M, 3M
        step = 2.0 ** math.ceil(math.log2(raw))
    start = math.ceil(lo / step - 1e-9) * step
    n = int(math.floor((hi - start) / step + 1e-9)) + 1
    return [round(start + i * step, 12) for i in range(max(n, 1))]


_DAY = 86400.0
# Date steps in seconds up to two weeks, then in months: about six ticks over the axis.
_DATE_STEPS = (60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0, _DAY, 2 * _DAY, 7 * _DAY, 14 * _DAY)
_MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120, 600, 1200)


def _date_ticks(lo: float, hi: float) -> list[float]:
    """UTC ticks, about six: whole hours or days (weeks from a Monday), else first days of months."""
    span = hi - lo
    for step in _DATE_STEPS:
        if span / step <= 6:
            base = 4 * _DAY if step >= 7 * _DAY else 0.0     # 1970-01-05 was a Monday
            first = math.ceil((lo - base) / step) * step + base
            return [first + i * step for i in range(int((hi - first) // step) + 1)]
    months = next((m for m in _MONTH_STEPS if span / (m * 30.4 * _DAY) <= 6), _MONTH_STEPS[-1])
    d = datetime.fromtimestamp(lo, timezone.utc)
    k = d.year * 12 + d.month - 1 + (d != datetime(d.year, d.month, 1, tzinfo=timezone.utc))
    k = -(-k // months) * months
    out = []
    while k // 12 <= 9999 and (t := datetime(k // 12, k % 12 + 1, 1, tzinfo=timezone.utc).timestamp()) <= hi:
        out.append(t)
        k += months
    return out


class _Scale:
    """Data to pixel on one axis, log or linear, over the data's range (padded)."""

    def __init__(self, axis: Axis, values: list[float], p0: float, p1: float, zero: bool = False):
        self.log = axis.log
        vals = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not self.log)]
        if zero and not self.log:
            vals.append(0.0)
        lo, hi = (min(vals), max(vals)) if vals else (1.0, 10.0)
        if self.log:
            if hi / lo < 1.5:
                lo, hi = lo / 1.25, hi * 1.25
            base = 2.0 if axis.kind in ("size", "pow2") else 10.0
            if hi / lo >= base * base:         # wide: out to the powers around the data, so its ends have ticks
                lo = base ** math.floor(math.log(lo, base) + 1e-9)
                hi = base ** math.ceil(math.log(hi, base) - 1e-9)
            lo, hi = lo / 1.06, hi * 1.06
        else:
            pad = (hi - lo) * 0.05 or abs(hi) * 0.1 or 1.0
            if axis.kind == "date":            # a run alone: an hour each side
                pad = (hi - lo) * 0.05 or 3600.0
            lo, hi = (lo if zero and lo == 0 else lo - pad), hi + pad
        self.ticks = (_log_ticks(lo, hi, axis.kind) if self.log else _date_ticks(lo, hi) if axis.kind == "date"
                      else _lin_ticks(lo, hi, axis.kind == "count", axis.kind))
        if self.log:
            lo, hi = min(lo, self.ticks[0]), max(hi, self.ticks[-1])
        self.lo, self.hi, self.p0, self.p1 = lo, hi, p0, p1
        # Called once per drawn value: the ends' logarithms and spans once per axis (the same operands,
        # so the same pixels).
        self._lo, self._span = (math.log(lo), math.log(hi) - math.log(lo)) if self.log else (lo, hi - lo)
        self._px = p1 - p0

    def ok(self, v) -> bool:
        return v is not None and math.isfinite(v) and (v > 0 or not self.log)

    def __call__(self, v: float) -> float:
        f = ((math.log(v) if self.log else v) - self._lo) / self._span
        return self.p0 + f * self._px


def axis_range(axis: Axis, values: list, zero: bool = False) -> tuple[float, float, list[float]]:
    """(low, high, ticks) of an axis over these values: the PNG drawer uses them too."""
    sc = _Scale(axis, values, 0.0, 1.0, zero)
    return sc.lo, sc.hi, sc.ticks


def _poly(pts) -> str:
    return " ".join(f"{_num(x)},{_num(y)}" for x, y in pts)


def _runs(xs, ys, sx, sy):
    """Consecutive drawable points, split at gaps."""
    run = []
    for x, y in zip(xs, ys):
        if sx.ok(x) and sy.ok(y):
            run.append((sx(x), sy(y)))
        elif run:
            yield run
            run = []
    if run:
        yield run


def _band(xs, lo, hi, sx, sy, color, opacity, cls) -> list[str]:
    out = []
    pts = [(x, a, b) for x, a, b in zip(xs, lo, hi) if sx.ok(x) and sy.ok(a) and sy.ok(b)]
    if len(pts) >= 2:
        ring = [(sx(x), sy(b)) for x, _, b in pts] + [(sx(x), sy(a)) for x, a, _ in reversed(pts)]
        out.append(f'<polygon class="{cls}" points="{_poly(ring)}" fill="{color}" fill-opacity="{opacity}" '
                   f'stroke="none"/>')
    return out


def render(fig: Figure) -> str:
    """The figure as a standalone <svg> element (also a valid .svg file)."""
    legend = len(fig.series) > 1 or any(s.dashed for s in fig.series) or bool(fig.parts)
    width = W + (LEGEND_W if legend else 0)
    x0, x1, y0, y1 = LEFT, W - RIGHT, TOP, H - BOTTOM
    tid = f"{fig.id}-title"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {H}" width="{width}" height="{H}" '
           f'role="img" aria-labelledby="{tid}" class="figure-svg" {FONT} font-size="11">',
           f'<title id="{tid}">{escape(fig.title)}</title>',
           f'<rect x="0" y="0" width="{width}" height="{H}" fill="#ffffff"/>',
           f'<text class="title" x="{x0}" y="18" font-size="13" font-weight="bold">{escape(fig.title)}</text>']
    if fig.bars:
        out += _bars(fig, x0, x1, y0, y1)
    else:
        out += _xy(fig, x0, x1, y0, y1)
    out.append(f'<text class="xlabel" x="{_num((x0 + x1) / 2)}" y="{H - 8}" text-anchor="middle">'
               f'{escape(fig.x.label)}</text>')
    out.append(f'<text class="ylabel" transform="translate(14,{_num((y0 + y1) / 2)}) rotate(-90)" '
               f'text-anchor="middle">{escape(fig.y.label)}</text>')
    if legend:
        out += _legend(fig, W + 4, y0)
    out.append("</svg>")
    return "\n".join(out)


def _frame(sx, sy, x0, x1, y0, y1, xkind, ykind, xticks=True) -> list[str]:
    out = []
    for t in sy.ticks:
        py = sy(t)
        out.append(f'<line x1="{x0}" y1="{_num(py)}" x2="{x1}" y2="{_num(py)}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{x0 - 5}" y="{_num(py + 4)}" text-anchor="end">{escape(_label(t, ykind))}</text>')
    if xticks:
        for t in sx.ticks:
            px = sx(t)
            out.append(f'<line x1="{_num(px)}" y1="{y0}" x2="{_num(px)}" y2="{y1}" stroke="#eeeeee"/>')
            out.append(f'<text x="{_num(px)}" y="{y1 + 15}" text-anchor="middle">{escape(_label(t, xkind))}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="#555555"/>')
    return out


def _xy(fig: Figure, x0, x1, y0, y1) -> list[str]:
    xs = [v for s in fig.series for v in s.x] + [m.x for m in fig.marks]
    ys = [v for s in fig.series for v in s.y]
    for s in fig.series:
        for pair in (s.band, s.spread):
            if pair:
                ys += [v for v in pair[0] + pair[1] if v is not None]
    sx = _Scale(fig.x, xs, x0, x1)
    sy = _Scale(fig.y, ys, y1, y0, zero=not fig.y.log)
    out = _frame(sx, sy, x0, x1, y0, y1, fig.x.kind, fig.y.kind)
    for i, s in enumerate(fig.series):
        color = PALETTE[(s.color if s.color is not None else i) % len(PALETTE)]
        if s.spread:
            out += _band(s.x, *s.spread, sx, sy, color, 0.10, "spread")
        if s.band:
            out += _band(s.x, *s.band, sx, sy, color, 0.28, "band")
    for i, s in enumerate(fig.series):
        color = PALETTE[(s.color if s.color is not None else i) % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        for run in _runs(s.x, s.y, sx, sy):
            if len(run) > 1:
                out.append(f'<polyline class="series" points="{_poly(run)}" fill="none" stroke="{color}" '
                           f'stroke-width="1.8"{dash}/>')
        if s.markers:
            hollow = s.hollow or [False] * len(s.x)
            for x, y, h in zip(s.x, s.y, hollow):
                if sx.ok(x) and sy.ok(y):
                    fill = "#ffffff" if h else color
                    out.append(f'<circle cx="{_num(sx(x))}" cy="{_num(sy(y))}" r="{3.2 if h else 2.6}" '
                               f'fill="{fill}" stroke="{color}" stroke-width="1.2"/>')
    return out + _marks(fig.marks, sx, x1, y0, y1)


MARK_ROWS = 4          # label rows under the plot's top edge before labels may overlap


def _marks(marks, sx, x1, y0, y1) -> list[str]:
    """A dashed vertical line per mark, its label at the top in the first row where it
    overlaps no label before it (about 5.6 px a character at 10 px), ending at its line
    near the right edge."""
    out, rows = [], []               # rows: the right end of each row's last label
    for m in sorted(marks, key=lambda m: m.x):
        if not (sx.ok(m.x) and sx.lo <= m.x <= sx.hi):
            continue
        px = sx(m.x)
        out.append(f'<line class="mark" x1="{_num(px)}" y1="{y0}" x2="{_num(px)}" y2="{y1}" stroke="{m.color}" '
                   f'stroke-dasharray="3 3"/>')
        width = 5.6 * len(m.label) + 3
        left, right, anchor = (px - width, px, ' text-anchor="end" dx="-3"') if px + width > x1 \
            else (px, px + width, ' dx="3"')
        row = next((i for i, end in enumerate(rows) if end < left), len(rows))
        if row < MARK_ROWS:
            rows[row:row + 1] = [right]
        # A white halo keeps the label readable over the curves it crosses.
        out.append(f'<text x="{_num(px)}" y="{y0 + 11 + 12 * (row % MARK_ROWS)}"{anchor} font-size="10" '
                   f'fill="{m.color}" stroke="#ffffff" stroke-width="3" paint-order="stroke">{escape(m.label)}</text>')
    return out


def _bars(fig: Figure, x0, x1, y0, y1) -> list[str]:
    vals = [bar_total(v) for _, v in fig.bars if bar_total(v) is not None]
    sy = _Scale(fig.y, vals, y1, y0, zero=not fig.y.log)
    sx = _Scale(Axis("", log=False), [0, len(fig.bars)], x0, x1)
    out = _frame(sx, sy, x0, x1, y0, y1, "number", fig.y.kind, xticks=False)
    slot = (x1 - x0) / max(len(fig.bars), 1)
    base = y1 if fig.y.log else sy(max(sy.lo, 0.0))
    for i, (cat, v) in enumerate(fig.bars):
        cx = x0 + slot * (i + 0.5)
        out.append(f'<text x="{_num(cx)}" y="{y1 + 15}" text-anchor="middle">{escape(str(cat))}</text>')
        if bar_total(v) is None or not sy.ok(bar_total(v)):
            out.append(f'<text x="{_num(cx)}" y="{_num(y1 - 6)}" text-anchor="middle" fill="#777777">'
                       f'not measured</text>')
            continue
        if isinstance(v, (list, tuple)):
            out += _stack(v, cx, slot * 0.6, sy, fig.y.log)
            continue
        top = sy(v)
        out.append(f'<rect class="bar" x="{_num(cx - slot * 0.3)}" y="{_num(min(top, base))}" '
                   f'width="{_num(slot * 0.6)}" height="{_num(abs(base - top))}" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(f'<text x="{_num(cx)}" y="{_num(min(top, base) - 4)}" text-anchor="middle">'
                   f'{escape(_label(v, fig.y.kind) if fig.y.kind == "size" else _value(v))}</text>')
    return out


def _stack(segments, cx: float, width: float, sy, log: bool) -> list[str]:
    """One stacked bar (linear axis): a rect per segment from the bottom up,
    its value written inside where there is room."""
    out, low = [], 0.0
    for j, v in enumerate(segments):
        if not v or log:
            continue
        y_low, y_high = sy(low), sy(low + v)
        out.append(f'<rect class="bar" x="{_num(cx - width / 2)}" y="{_num(y_high)}" width="{_num(width)}" '
                   f'height="{_num(y_low - y_high)}" fill="{PALETTE[j % len(PALETTE)]}" stroke="#ffffff" '
                   f'stroke-width="0.5"/>')
        if y_low - y_high >= 13:
            out.append(f'<text x="{_num(cx)}" y="{_num((y_low + y_high) / 2 + 4)}" text-anchor="middle" '
                       f'fill="#ffffff" font-size="10">{escape(_value(v))}</text>')
        low += v
    return out


def _legend(fig: Figure, x, y) -> list[str]:
    out = []
    for j, part in enumerate(fig.parts):       # stacked bars: a swatch per part
        yy = y + 8 + j * 16
        out.append(f'<rect x="{x}" y="{yy - 5}" width="20" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>')
        out.append(f'<text x="{x + 25}" y="{yy + 4}">{escape(str(part))}</text>')
    for i, s in enumerate(fig.series):
        color = PALETTE[(s.color if s.color is not None else i) % len(PALETTE)]
        yy = y + 8 + i * 16
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(f'<line x1="{x}" y1="{yy}" x2="{x + 20}" y2="{yy}" stroke="{color}" stroke-width="2"{dash}/>')
        label = s.label if len(s.label) <= 38 else s.label[:37] + "\u2026"
        out.append(f'<text x="{x + 25}" y="{yy + 4}">{escape(label)}</text>')
    return out
