"""Seed 001's eight projection figures (Fig. 2, 3, 4, 9, 10, 13, 14, 15), drawn
from the model with the seed's parameters, no measurement: the exact model
(dashed) and, where the seed has one, its own formula as published (dashed,
with points), one colour per system; the sizes at which the seed's text
places a crossover are marks."""

from __future__ import annotations

from ...model.catalog import system
from ...report.figure import Axis, Mark, Series
from .. import draw
from . import as_published
from .model_curves import MYRINET, SCI, SeedCurves, of

NODES_LOG = Axis("system size (nodes)", log=True, kind="count")       # Fig. 2-4: up to 10,000 nodes
NODES = Axis("system size (nodes)", log=False, kind="count")          # Fig. 9-15: 2 to 128 nodes
PER_NODE = Axis("bandwidth per node (MB/s)", log=False)
COST = Axis("total network cost (US$)", log=False)
PER_MBPS = Axis("US$ per MB/s of per-node bandwidth", log=True)      # the ring's 200 beside the others' 10-30

# Legend labels short enough for the legend column (report/svg.py cuts at 38 characters).
LABEL = {"sci-ring": "SCI ring", "sci-2d": "SCI 2D torus", "sci-3d": "SCI 3D torus", "sci-4d": "SCI 4D torus",
         "myrinet-minimal": "Myrinet minimal", "myrinet-clos64": "Myrinet Clos64",
         "myrinet-ring4": "Myrinet ring, 4 links", "myrinet-ring2": "Myrinet ring, 2 links"}
CALIBRATED = ("sci-2d", "sci-ring") + MYRINET     # the systems of Figures 13-15, as the seed draws them
# Where the seed's text places each crossover (reference/millich-george-oral.yaml), by figure.
MARKS = {"4": ("sci-ring-best-uncalibrated", "sci-3d-torus-uncalibrated"),
         "13": ("sci-ring-best", "sci-2d-below-clos64", "sci-2d-second"),
         "14": ("sci-ring-cost-limit",), "15": ("sci-cost-effective-limit",)}
_BOUND = {"at_most": "<=", "at_least": ">=", None: ""}

MODEL_NOTE = "the model with the seed's parameters, no measurement"
BOTH = "; dashed: the exact model; dashed with points: the seed's formulas as published (approximations included)"
# as_published.py caps Eq. 10 at the node's link, as seed 001 §4.1 says; without it the 4-cable
# ring of 3 switches would be drawn above its own link at 17-23 nodes
CAP = "; as published, Eq. 10 capped at the node's link rate (§4.1: switch links only restrict)"
MB = 1e6


def figures(runs, ref) -> list:
    """The eight figures, in the seed's order; ids mgo-projection-N for the seed's Fig. N."""
    st = of(runs)
    made = {"2": _sci_figure(st, "link", "Fig. 2: SCI bandwidth per node limited by the SCI links (nominal)"),
            "3": _sci_figure(st, "blink", "Fig. 3: SCI bandwidth per node limited by the B-Link (nominal)"),
            "4": _sci_figure(st, "overall", "Fig. 4: SCI bandwidth per node, links and B-Link (nominal)"),
            "9": _figure9(st), "10": _figure10(st), "13": _figure13(st), "14": _figure14(st),
            "15": _figure15(st)}
    return [_figure(num, ref, *made[num]) for num in made]


def _figure(num: str, ref, title: str, x: Axis, y: Axis, series: list, note: str):
    values = [ref.get(k) for k in MARKS.get(num, ())]
    note = MODEL_NOTE + note
    if values:
        note += "; marks, the seed's text: " + "; ".join(f'"{v.printed}" ({v.where})' for v in values)
    fig = draw.figure(f"mgo-projection-{num}", title, x, y, series, note)
    fig.marks = [Mark(v.value, f"{_BOUND[v.bound]}{v.value:g}") for v in values]
    return fig


def _exact(key: str, xs: list, ys: list, g: int) -> Series:
    return Series(LABEL[key], list(xs), list(ys), dashed=True, markers=False, color=g % 8)


def _published(key: str, xs: list, ys: list, g: int) -> Series:
    return Series(LABEL[key] + ", as published", list(xs), list(ys), dashed=True, color=g % 8)


def _sci_bound(res, which: str) -> float:
    """A nominal SCI point's per-node bandwidth: overall, or the bound of its links or of its B-Link."""
    if which == "overall":
        return res.per_node
    return min(cl.bound for cl in res.classes
               if (cl.kind == "link") == (which == "link") and cl.kind in ("link", "adapter_bus"))


def _sci_figure(st: SeedCurves, which: str, title: str) -> tuple:
    """Figures 2-4: the exact bound (`which`: link, blink or overall) of every torus, and Eq. 4-5."""
    series = []
    for g, key in enumerate(SCI):
        pts = st.sci_nominal[key].points
        xs = [p.n for p in pts]
        series.append(_exact(key, xs, [_sci_bound(p.result, which) / MB for p in pts], g))
        f, res = g + 1, system(key).tech.resources
        pub = [as_published.sci_bandwidth(round(n ** (1 / f)), f, res["link"].effective(),
                                          res["adapter_bus"].effective()) for n in xs]
        series.append(_published(key, xs, [p[which] / MB for p in pub], g))
    return title, NODES_LOG, PER_NODE, series, BOTH + "; the two coincide for SCI tori (dimension-order routing)"


def _figure9(st: SeedCurves) -> tuple:
    """Myrinet switch-to-switch bandwidth, exact and Eq. 10."""
    series = []
    for g, key in enumerate(MYRINET):
        pts = [(n, b) for n, b in st.myr_sw2sw[key] if b != float("inf")]
        series.append(_exact(key, [n for n, _ in pts], [min(b / MB, 400) for _, b in pts], g))
        pub = [p for p in st.pub_myr[(key, False)] if p.sw2sw is not None]
        series.append(_published(key, [p.n for p in pub], [p.sw2sw / MB for p in pub], g))
    return ("Fig. 9: Myrinet switch-to-switch bandwidth per node (nominal)", NODES, PER_NODE, series,
            BOTH + CAP + "; the exact curves are cut at 400 MB/s (a few nodes on two switches have far more)")


def _figure10(st: SeedCurves) -> tuple:
    """Myrinet overall bandwidth, exact and Eq. 12."""
    series = []
    for g, key in enumerate(MYRINET):
        pts = st.myr_nominal[key].points
        series.append(_exact(key, [p.n for p in pts], [p.per_node / MB for p in pts], g))
        pub = st.pub_myr[(key, False)]
        series.append(_published(key, [p.n for p in pub], [p.overall / MB for p in pub], g))
    return "Fig. 10: Myrinet overall bandwidth per node (nominal)", NODES, PER_NODE, series, BOTH + CAP


def _figure13(st: SeedCurves) -> tuple:
    """The calibrated systems' bandwidth, exact and (Myrinet) Eq. 12."""
    series = []
    for g, key in enumerate(CALIBRATED):
        pts = st.calibrated[key].points
        series.append(_exact(key, [p.n for p in pts], [p.per_node / MB for p in pts], g))
        if key in MYRINET:
            pub = st.pub_myr[(key, True)]
            series.append(_published(key, [p.n for p in pub], [p.overall / MB for p in pub], g))
    return ("Fig. 13: projected bandwidth per node (calibrated)", NODES, PER_NODE, series,
            BOTH + CAP + "; rates: SCI link 390, B-Link 360, Myrinet 144 MB/s, the seed's measured saturation")


def _costs(st: SeedCurves, attr: str) -> list:
    """One series per calibrated system of a cost attribute of its points."""
    series = []
    for g, key in enumerate(CALIBRATED):
        pts = [p for p in st.calibrated[key].points if getattr(p, attr) is not None]
        series.append(_exact(key, [p.n for p in pts], [getattr(p, attr) for p in pts], g))
    return series


def _figure14(st: SeedCurves) -> tuple:
    return ("Fig. 14: total network cost (example prices)", NODES, COST, _costs(st, "cost"),
            "; example prices, not the seed's, which its text does not list (model/data/prices.yaml, or "
            "study run --prices FILE)")


def _figure15(st: SeedCurves) -> tuple:
    return ("Fig. 15: cost effectiveness (example prices)", NODES, PER_MBPS, _costs(st, "cost_per_mbps"),
            "; total cost / (N × per-node bandwidth) of the calibrated exact model, on a logarithmic axis "
            "(the seed's stops at 80 US$); example prices, not the seed's")
