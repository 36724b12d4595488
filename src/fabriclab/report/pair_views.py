"""The N x N pair matrix as a heat map (mpiGraph's picture): a cell per
ordered pair, the row's rank sending to the column's, hosts on the axes,
coloured by the pair's figure (its bandwidth over the model's rate on a
known network, else over the median pair: verdicts/pair_matrix.py), the low
pairs framed, what they name below. Inline SVG written here: the report's
figures (svg.py) are curves and bars, and a matrix is neither."""

from __future__ import annotations

import math

from ..analysis import merge
from ..units import fmt_bytes
from .escape import xml as escape

CELL, LABEL = 28, 92          # px: a cell's side, the room for host labels
LOW_COLOR = "#b00020"


def _color(fig: float) -> str:
    """A figure of 0 (red) through 0.5 (yellow) to 1 and above (green); grey where unmeasured."""
    if not math.isfinite(fig):
        return "#dddddd"
    f = max(0.0, min(1.0, fig))
    r, g = (255, int(510 * f)) if f < 0.5 else (int(255 * (2 - 2 * f)), 200)
    return f"#{r:02x}{min(g, 200):02x}40"


def _svg(m) -> str:
    n = len(m.hosts)
    side = LABEL + n * CELL + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}" '
           f'viewBox="0 0 {side} {side}" font-size="10" font-family="DejaVu Sans,Arial">']
    for i, h in enumerate(m.hosts):
        label = escape(f"r{i} {h}"[:14])
        y = LABEL + i * CELL + CELL / 2 + 3
        out.append(f'<text x="{LABEL - 4}" y="{y:.0f}" text-anchor="end">{label}</text>')
        x = LABEL + i * CELL + CELL / 2 + 3
        out.append(f'<text transform="translate({x:.0f},{LABEL - 4}) rotate(-90)">{label}</text>')
    low = set(m.low)
    for r in range(n):
        for c in range(n):
            if r == c:
                continue
            x, y = LABEL + c * CELL, LABEL + r * CELL
            fig, bw = float(m.figure[r, c]), float(m.bandwidth[r, c])
            edge = f' stroke="{LOW_COLOR}" stroke-width="2.5"' if (r, c) in low else ' stroke="#fff"'
            tip = f"r{r} {m.hosts[r]} to r{c} {m.hosts[c]}: {bw / 1e6:.1f} MB/s, {fig:.2f} of typical"
            out.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{_color(fig)}"{edge}>'
                       f'<title>{escape(tip)}</title></rect>')
            if n <= 16 and math.isfinite(bw):
                out.append(f'<text x="{x + CELL / 2:.0f}" y="{y + CELL / 2 + 3:.0f}" text-anchor="middle" '
                           f'font-size="8">{bw / 1e6:.0f}</text>')
    out.append("</svg>")
    return "".join(out)


def html(runs: list) -> list[str]:
    """Each run's pair matrices (message.shift points with per-rank figures), as figures."""
    from ..errors import UsageError
    from ..verdicts import pair_matrix
    out = []
    for run in runs:
        doc = run.doc
        if not doc.header.hosts or not any(p.bench == pair_matrix.BENCH for p in merge.merged(doc)):
            continue
        try:
            ms = pair_matrix.matrices(merge.merged(doc), doc.header.hosts, doc.header.network)
        except UsageError:
            ms = pair_matrix.matrices(merge.merged(doc), doc.header.hosts)
        for m in ms:
            basis = "the model's rate on the run's network" if m.predicted is not None else "the median pair"
            named = "; ".join(m.named) or "nothing"
            out.append(f"<figure>{_svg(m)}<figcaption>{escape(run.name)}: pairs at {fmt_bytes(m.size)}, MB/s, the "
                       f"row's rank sending to the column's; colour: bandwidth over {basis} (red 0, yellow 0.5, "
                       f"green 1); framed: low ({len(m.low)}); named: {escape(named)}</figcaption></figure>")
    return ['<h2 id="pairs">The pair matrix</h2>', '<div class="figs">' + "".join(out) + "</div>"] if out else []
