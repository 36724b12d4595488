"""`fabriclab reproduce sci-myrinet-2002`: seed 001's Figures 2, 3, 4, 9, 10,
13, 14 and 15, and each of its stated findings beside what the model computes.

Every figure draws the exact model (solid) and, where it differs, the seed's
own formulas "as published" (dashed, published.py). Findings are in
findings.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UsageError
from . import published
from .calibration import SEED_CAL
from .findings import findings
from ...model.catalog import system
from ...model.cost import price_list
from ...model.evaluate import curve
from ...model.plot import Series, figure
from ...model.resources import MB

STUDIES = ("sci-myrinet-2002",)
SCI = ("sci-ring", "sci-2d", "sci-3d", "sci-4d")
MYRINET = ("myrinet-minimal", "myrinet-clos64", "myrinet-ring4", "myrinet-ring2")
INTER_SWITCH = ("isl", "box", "leaf_up", "spine_down")


@dataclass
class Study:
    """All numbers behind the figures, reused by the findings."""

    sci_nominal: dict = field(default_factory=dict)     # key -> Curve
    myr_nominal: dict = field(default_factory=dict)
    myr_sw2sw: dict = field(default_factory=dict)       # key -> [(n, exact bound)]
    calibrated: dict = field(default_factory=dict)      # key -> Curve (seed calibration)
    pub_myr: dict = field(default_factory=dict)         # (key, calibrated?) -> [MyrinetPoint]
    figures: dict = field(default_factory=dict)         # "2" -> path


def sci_sizes(f: int, top: int = 10_000) -> list:
    if f == 1:
        small = list(range(2, 101))
        big, x = [], 100.0
        while x < top:
            x *= 1.25
            big.append(int(round(x)))
        return sorted(set(small + [n for n in big if n <= top]))
    out, r = [], 2
    while r ** f <= top:
        out.append(r ** f)
        r += 1
    return out


def _inter_switch_bound(res) -> float:
    bounds = [c.bound for c in res.classes if c.key.startswith(INTER_SWITCH) or
              (c.key.startswith(("up.", "down.")) and not c.key.endswith(".0"))]
    return min(bounds) if bounds else float("inf")


def compute(prices=None) -> Study:
    st = Study()
    for key, f in zip(SCI, (1, 2, 3, 4)):
        st.sci_nominal[key] = curve(system(key), sci_sizes(f), with_cost=False)
    ns = list(range(2, 129))
    prices = price_list() if prices is None else prices
    for key in MYRINET:
        s = system(key)
        st.myr_nominal[key] = curve(s, ns, with_cost=False)
        st.myr_sw2sw[key] = [(p.n, _inter_switch_bound(p.result)) for p in st.myr_nominal[key].points]
        _, topo_name, cables, ports = published.form(s)
        link = s.tech.resources["link"]
        m = float(link.payload.value)
        for cal in (False, True):
            st.pub_myr[(key, cal)] = [published.myrinet(topo_name, n, link.gross.value, m,
                                                        link.measured.value if cal else None,
                                                        ports=ports, cables=cables) for n in ns]
    for key in ("sci-ring", "sci-2d", "sci-3d") + MYRINET:
        sizes = {"sci-2d": sci_sizes(2, 128), "sci-3d": sci_sizes(3, 1000)}.get(key, ns)
        st.calibrated[key] = curve(system(key), sizes, SEED_CAL, prices=prices)
    return st


def _mb(points, attr="per_node"):
    return [p.n for p in points], [getattr(p, attr) / MB for p in points]


NOTE_PUB = "solid: exact model; dashed: the seed's formulas as published (approximations included)"
# published.py caps Eq. 10 at the node's link, as seed 001 §4.1 says; without it the 4-cable
# ring of 3 switches would be drawn above its own link at 17-23 nodes
NOTE_CAP = "; as published, Eq. 10 capped at the node's link rate (§4.1: switch links only restrict)"
SCI_LABELS = {"sci-ring": "Ring", "sci-2d": "2D torus", "sci-3d": "3D torus", "sci-4d": "4D torus"}
CALIBRATED = ("sci-2d", "sci-ring") + MYRINET     # the systems of Figures 13-15, as drawn


@dataclass
class Spec:
    """One figure as data: its series (model.plot.Series), title, y label and
    figure() options; drawn here as PNG or SVG and by the study's report
    (studies/millich_george_oral.py) as one of its figures."""

    series: list
    title: str
    ylabel: str
    options: dict = field(default_factory=dict)


def specs(st: Study) -> dict:
    """Figure number -> Spec, for every figure of the study."""
    return {"2": _sci_figure(st, "link", "Fig. 2: SCI bandwidth per node limited by the SCI links (nominal 444 MB/s)"),
            "3": _sci_figure(st, "blink", "Fig. 3: SCI bandwidth per node limited by the B-Link (nominal 427 MB/s)"),
            "4": _sci_figure(st, "overall", "Fig. 4: SCI bandwidth per node, links and B-Link (nominal)"),
            "9": _figure9(st), "10": _figure10(st), "13": _figure13(st), "14": _figure14(st), "15": _figure15(st)}


def draw(st: Study, outdir: Path, fmt: str = "png") -> dict:
    """Every figure of the study into outdir; figure number -> path (also kept in st.figures)."""
    out = {num: figure(f.series, outdir / f"figure{num}.{fmt}", f.title, f.ylabel, **f.options)
           for num, f in specs(st).items()}
    st.figures = {k: str(v) for k, v in out.items()}
    return st.figures


def _sci_bound(res, which: str) -> float:
    """A nominal SCI point's per-node bandwidth: overall, or the bound of its links or of its B-Link."""
    if which == "overall":
        return res.per_node
    return min(cl.bound for cl in res.classes
               if (cl.kind == "link") == (which == "link") and cl.kind in ("link", "adapter_bus"))


def _sci_figure(st: Study, which: str, title: str) -> Spec:
    """Figures 2-4: the exact bound (`which`: link, blink or overall) of every torus, and Eq. 4-5."""
    series = []
    for g, key in enumerate(SCI):
        c = st.sci_nominal[key]
        xs = [p.n for p in c.points]
        series.append(Series(SCI_LABELS[key], xs, [_sci_bound(p.result, which) / MB for p in c.points], group=g))
        f = SCI.index(key) + 1
        res_ = system(key).tech.resources
        pub = [published.sci_bandwidth(round(n ** (1 / f)), f, res_["link"].effective(),
                                       res_["adapter_bus"].effective()) for n in xs]
        series.append(Series(SCI_LABELS[key] + " (as published)", xs, [p[which] / MB for p in pub],
                             dashed=True, group=g))
    return Spec(series, title, "Available bandwidth per node (MB/s)",
                {"logx": True, "note": NOTE_PUB + "; the two coincide for SCI tori"})


def _figure9(st: Study) -> Spec:
    """Myrinet switch-to-switch bandwidth, exact and Eq. 10."""
    series = []
    for g, key in enumerate(MYRINET):
        lab = system(key).label
        pts = [(n, b) for n, b in st.myr_sw2sw[key] if b != float("inf")]
        series.append(Series(lab, [n for n, _ in pts], [min(b, 400 * MB) / MB for _, b in pts], group=g))
        pub = [p for p in st.pub_myr[(key, False)] if p.sw2sw is not None]
        series.append(Series(lab + " (as published)", [p.n for p in pub], [p.sw2sw / MB for p in pub],
                             dashed=True, group=g))
    return Spec(series, "Fig. 9: Myrinet switch-to-switch available bandwidth per node (nominal)",
                "Bandwidth per node (MB/s)", {"note": NOTE_PUB + NOTE_CAP + "; exact curves capped at 400 MB/s for display"})


def _figure10(st: Study) -> Spec:
    """Myrinet overall bandwidth, exact and Eq. 12."""
    series = []
    for g, key in enumerate(MYRINET):
        lab = system(key).label
        series.append(Series(lab, *_mb(st.myr_nominal[key].points), group=g))
        pub = st.pub_myr[(key, False)]
        series.append(Series(lab + " (as published)", [p.n for p in pub], [p.overall / MB for p in pub],
                             dashed=True, group=g))
    return Spec(series, "Fig. 10: Myrinet overall available bandwidth per node (nominal)",
                "Bandwidth per node (MB/s)", {"note": NOTE_PUB + NOTE_CAP})


def _figure13(st: Study) -> Spec:
    """The calibrated systems' bandwidth, exact and (Myrinet) Eq. 12."""
    series = []
    for g, key in enumerate(CALIBRATED):
        c = st.calibrated[key]
        series.append(Series(c.label, *_mb(c.points), group=g))
        if key in MYRINET:
            pub = st.pub_myr[(key, True)]
            series.append(Series(c.label + " (as published)", [p.n for p in pub], [p.overall / MB for p in pub],
                                 dashed=True, group=g))
    return Spec(series, "Fig. 13: projected available bandwidth per node (calibrated)",
                "Bandwidth per node (MB/s)", {"note": NOTE_PUB + NOTE_CAP + "; rates: SCI link 390, B-Link 360, Myrinet 144 MB/s"})


def _costs(st: Study, attr: str) -> list:
    """One series per calibrated system of a cost attribute of its points."""
    series = []
    for g, key in enumerate(CALIBRATED):
        c = st.calibrated[key]
        pts = [p for p in c.points if getattr(p, attr) is not None]
        series.append(Series(c.label, [p.n for p in pts], [getattr(p, attr) for p in pts], group=g))
    return series


def _figure14(st: Study) -> Spec:
    return Spec(_costs(st, "cost"), "Fig. 14: total network cost vs system size (EXAMPLE prices)",
                "Total cost (US$)", {"note": "prices are illustrative examples, not the seed's (see data/prices.yaml)"})


def _figure15(st: Study) -> Spec:
    return Spec(_costs(st, "cost_per_mbps"), "Fig. 15: cost effectiveness, US$ per MB/s of per-node bandwidth "
                "(EXAMPLE prices)", "US$ / (MB/s) per node",
                {"ylim": (0, 80), "note": "total cost / (N × per-node bandwidth), calibrated exact model; example prices"})


def run(study: str, outdir: str, fmt: str = "png", prices_file=None) -> tuple:
    if study not in STUDIES:
        raise UsageError(f"unknown study {study!r}: choose one of {', '.join(STUDIES)}")
    st = compute(price_list(prices_file))
    draw(st, Path(outdir), fmt)
    return st, findings(st)
