"""The plot of `fabriclab model` (matplotlib, Agg backend): PNG or SVG by the file suffix."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .. import outputs  # noqa: E402
from ..errors import UsageError  # noqa: E402

FORMATS = ("png", "svg")
_MARKERS = "os^vD<>xP*h+"


@dataclass
class Series:
    label: str
    xs: list
    ys: list
    dashed: bool = False
    group: int = 0               # series of one group share a colour and a marker


def literal(text: str) -> str:
    """Text that matplotlib prints as it is: a pair of '$' would start mathtext, which
    fails on an unknown command (a network file's name may hold anything that prints)."""
    return text.replace("$", r"\$")


def figure(series: list, path, title: str, ylabel: str, xlabel: str = "Number of nodes",
           logx: bool = False, logy: bool = False, note: Optional[str] = None) -> Path:
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise UsageError(f"plot file {path} must end in .png or .svg")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create plot directory {path.parent}: {e.strerror or e}") from None
    if not path.parent.is_dir():
        raise UsageError(f"cannot create plot directory {path.parent}: it is not a directory")
    fig, ax = plt.subplots(figsize=(10.5, 5.4))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for s in series:
        if not s.xs:
            continue
        c = colours[s.group % len(colours)]
        m = _MARKERS[s.group % len(_MARKERS)]
        ax.plot(s.xs, s.ys, linestyle="--" if s.dashed else "-", marker=m,
                markersize=3 if len(s.xs) > 40 else 5, color=c, label=literal(s.label),
                linewidth=1.2 if s.dashed else 1.6, alpha=0.85 if s.dashed else 1.0)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    if note:
        fig.text(0.01, 0.005, note, fontsize=6.5, alpha=0.8)
    # no tight_layout: savefig's tight bounding box takes in the legend beside the axes
    # and the note below them, and tight_layout would draw the figure once more
    drawn = io.BytesIO()          # drawn whole, then written without following a link (outputs.py)
    try:
        fig.savefig(drawn, format=fmt, dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
    outputs.write(path, drawn.getvalue())
    return path
