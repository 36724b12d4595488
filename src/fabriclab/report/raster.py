"""Draws a Figure as PNG with matplotlib (loaded only here), for slides and
papers that want pixels; the same Figure as svg.py draws, so both formats
show the same curves, bands, marks and labels."""

from __future__ import annotations

import io

from .. import outputs
from .escape import terminal
from .figure import PALETTE, Figure


def _text(x) -> str:
    """A label as matplotlib draws it as it is: control characters visible (no font has
    glyphs for them, and matplotlib warns of each), '$' not starting mathtext."""
    return terminal(x).replace("$", r"\$")


def _ticks_formatter(kind: str):
    from matplotlib.ticker import FuncFormatter
    from ..units import fmt_bytes
    if kind == "size":
        return FuncFormatter(lambda v, _: fmt_bytes(v) if v >= 1 else f"{v:g}")
    return FuncFormatter(lambda v, _: f"{v:g}")


def _bars(ax, fig: Figure) -> None:
    """A bar per category, its value on top; stacked bars (fig.parts) a
    segment per part, bottom up, as svg.py draws them."""
    cats = [_text(c) for c, _ in fig.bars]
    if fig.parts:
        low = [0.0] * len(cats)
        for j, part in enumerate(fig.parts):
            seg = [((v or [])[j] if j < len(v or []) else None) or 0.0 for _, v in fig.bars]
            ax.bar(cats, seg, bottom=low, color=PALETTE[j % len(PALETTE)], width=0.6, label=_text(part))
            low = [a + b for a, b in zip(low, seg)]
        return
    vals = [v or 0 for _, v in fig.bars]
    ax.bar(cats, vals, color=[PALETTE[i % len(PALETTE)] for i in range(len(cats))], width=0.6)
    for i, v in enumerate(vals):
        ax.annotate(f"{v:.3g}", (i, v), ha="center", va="bottom", fontsize=8)
    if fig.y.log:
        ax.set_yscale("log")


def _png(mf, dpi: int) -> bytes:
    drawn = io.BytesIO()
    mf.savefig(drawn, dpi=dpi, format="png")
    return drawn.getvalue()


def render_png(fig: Figure, path: str, dpi: int = 150) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    legend = len(fig.series) > 1 or any(s.dashed for s in fig.series) or bool(fig.parts)
    width = 8.9 if legend else 6.4
    mf = MplFigure(figsize=(width, 3.6))
    # Fixed margins (the SVG's, in inches) instead of tight_layout, which draws the figure once more.
    mf.subplots_adjust(left=1.0 / width, right=(6.4 - 0.15) / width, bottom=0.5 / 3.6, top=1 - 0.35 / 3.6)
    ax = mf.add_subplot(1, 1, 1)
    if fig.bars:
        _bars(ax, fig)
    for i, s in enumerate(fig.series):
        color = PALETTE[(s.color if s.color is not None else i) % len(PALETTE)]
        pts = [(x, y) for x, y in zip(s.x, s.y) if y is not None]
        if s.spread:
            ax.fill_between(s.x, [v if v is not None else float("nan") for v in s.spread[0]],
                            [v if v is not None else float("nan") for v in s.spread[1]], color=color, alpha=0.10,
                            linewidth=0)
        if s.band:
            ax.fill_between(s.x, [v if v is not None else float("nan") for v in s.band[0]],
                            [v if v is not None else float("nan") for v in s.band[1]], color=color, alpha=0.28,
                            linewidth=0)
        if pts:
            ax.plot(*zip(*pts), color=color, linestyle="--" if s.dashed else "-", linewidth=1.6, label=_text(s.label))
        if s.markers:
            hollow = s.hollow or [False] * len(s.x)
            for filled in (True, False):
                sel = [(x, y) for x, y, h in zip(s.x, s.y, hollow) if y is not None and h != filled]
                if sel:
                    ax.scatter(*zip(*sel), s=14, color=color if filled else "white", edgecolors=color, zorder=3)
    for m in fig.marks:
        ax.axvline(m.x, color="#444444", linestyle=":", linewidth=1)
        ax.annotate(_text(m.label), (m.x, 1), xycoords=("data", "axes fraction"), xytext=(3, -10),
                    textcoords="offset points", fontsize=8)
    if not fig.bars:
        if fig.x.log:
            ax.set_xscale("log", base=2 if fig.x.kind in ("size", "pow2") else 10)
        if fig.y.log:
            ax.set_yscale("log")
        # The SVG's ranges and ticks, so both formats read the same.
        from matplotlib.ticker import NullFormatter
        from .svg import axis_range
        xs = [v for s in fig.series for v in s.x] + [m.x for m in fig.marks]
        ys = [v for s in fig.series
              for v in s.y + [w for pair in (s.band, s.spread) if pair for w in pair[0] + pair[1]]]
        for axis, values, set_lim, set_ticks, which in ((fig.x, xs, ax.set_xlim, ax.set_xticks, ax.xaxis),
                                                        (fig.y, ys, ax.set_ylim, ax.set_yticks, ax.yaxis)):
            lo, hi, ticks = axis_range(axis, values, zero=axis is fig.y and not axis.log)
            set_lim(lo, hi)
            set_ticks(ticks)
            which.set_major_formatter(_ticks_formatter(axis.kind))
            which.set_minor_formatter(NullFormatter())
    ax.set_title(_text(fig.title), fontsize=11, loc="left", fontweight="bold")
    ax.set_xlabel(_text(fig.x.label))
    ax.set_ylabel(_text(fig.y.label))
    ax.grid(True, alpha=0.3)
    if legend:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    outputs.write(path, _png(mf, dpi), stream=True)     # never through a link (outputs.py)
