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


def draw(st: Study, outdir: Path, fmt: str = "png") -> dict:
    out = {}
    note_pub = "solid: exact model; dashed: the seed's formulas as published (approximations included)"
    # published.py caps Eq. 10 at the node's link, as seed 001 §4.1 says; without it the 4-cable
    # ring of 3 switches would be drawn above its own link at 17-23 nodes
    note_cap = "; as published, Eq. 10 capped at the node's link rate (§4.1: switch links only restrict)"
    sci_labels = {"sci-ring": "Ring", "sci-2d": "2D torus", "sci-3d": "3D torus", "sci-4d": "4D torus"}

    def sci_fig(num, which, title):
        series = []
        for g, key in enumerate(SCI):
            c = st.sci_nominal[key]
            xs = [p.n for p in c.points]
            ys = []
            for p in c.points:
                res = p.result
                if which == "overall":
                    ys.append(res.per_node / MB)
                else:
                    ys.append(min(cl.bound for cl in res.classes
                                  if (cl.kind == "link") == (which == "link") and cl.kind in ("link", "adapter_bus")) / MB)
            series.append(Series(sci_labels[key], xs, ys, group=g))
            f = SCI.index(key) + 1
            res_ = system(key).tech.resources
            pub = [published.sci_bandwidth(round(n ** (1 / f)), f, res_["link"].effective(),
                                           res_["adapter_bus"].effective()) for n in xs]
            pk = {"link": "link", "blink": "blink", "overall": "overall"}[which]
            series.append(Series(sci_labels[key] + " (as published)", xs, [p[pk] / MB for p in pub],
                                 dashed=True, group=g))
        return figure(series, outdir / f"figure{num}.{fmt}", title, "Available bandwidth per node (MB/s)",
                      logx=True, note=note_pub + "; the two coincide for SCI tori")

    out["2"] = sci_fig(2, "link", "Fig. 2: SCI bandwidth per node limited by the SCI links (nominal 444 MB/s)")
    out["3"] = sci_fig(3, "blink", "Fig. 3: SCI bandwidth per node limited by the B-Link (nominal 427 MB/s)")
    out["4"] = sci_fig(4, "overall", "Fig. 4: SCI bandwidth per node, links and B-Link (nominal)")
    series = []
    for g, key in enumerate(MYRINET):
        lab = system(key).label
        pts = [(n, b) for n, b in st.myr_sw2sw[key] if b != float("inf")]
        series.append(Series(lab, [n for n, _ in pts], [min(b, 400 * MB) / MB for _, b in pts], group=g))
        pub = [p for p in st.pub_myr[(key, False)] if p.sw2sw is not None]
        series.append(Series(lab + " (as published)", [p.n for p in pub], [p.sw2sw / MB for p in pub],
                             dashed=True, group=g))
    out["9"] = figure(series, outdir / f"figure9.{fmt}",
                      "Fig. 9: Myrinet switch-to-switch available bandwidth per node (nominal)",
                      "Bandwidth per node (MB/s)", note=note_pub + note_cap + "; exact curves capped at 400 MB/s for display")
    series = []
    for g, key in enumerate(MYRINET):
        lab = system(key).label
        series.append(Series(lab, *_mb(st.myr_nominal[key].points), group=g))
        pub = st.pub_myr[(key, False)]
        series.append(Series(lab + " (as published)", [p.n for p in pub], [p.overall / MB for p in pub],
                             dashed=True, group=g))
    out["10"] = figure(series, outdir / f"figure10.{fmt}", "Fig. 10: Myrinet overall available bandwidth per node (nominal)",
                       "Bandwidth per node (MB/s)", note=note_pub + note_cap)
    series = []
    for g, key in enumerate(("sci-2d", "sci-ring") + MYRINET):
        c = st.calibrated[key]
        series.append(Series(c.label, *_mb(c.points), group=g))
        if key in MYRINET:
            pub = st.pub_myr[(key, True)]
            series.append(Series(c.label + " (as published)", [p.n for p in pub], [p.overall / MB for p in pub],
                                 dashed=True, group=g))
    out["13"] = figure(series, outdir / f"figure13.{fmt}", "Fig. 13: projected available bandwidth per node (calibrated)",
                       "Bandwidth per node (MB/s)", note=note_pub + note_cap + "; rates: SCI link 390, B-Link 360, Myrinet 144 MB/s")
    series = []
    for g, key in enumerate(("sci-2d", "sci-ring") + MYRINET):
        c = st.calibrated[key]
        pts = [p for p in c.points if p.cost is not None]
        series.append(Series(c.label, [p.n for p in pts], [p.cost for p in pts], group=g))
    out["14"] = figure(series, outdir / f"figure14.{fmt}", "Fig. 14: total network cost vs system size (EXAMPLE prices)",
                       "Total cost (US$)", note="prices are illustrative examples, not the seed's (see data/prices.yaml)")
    series = []
    for g, key in enumerate(("sci-2d", "sci-ring") + MYRINET):
        c = st.calibrated[key]
        pts = [p for p in c.points if p.cost_per_mbps is not None]
        series.append(Series(c.label, [p.n for p in pts], [p.cost_per_mbps for p in pts], group=g))
    out["15"] = figure(series, outdir / f"figure15.{fmt}",
                       "Fig. 15: cost effectiveness, US$ per MB/s of per-node bandwidth (EXAMPLE prices)",
                       "US$ / (MB/s) per node", ylim=(0, 80),
                       note="total cost / (N × per-node bandwidth), calibrated exact model; example prices")
    st.figures = {k: str(v) for k, v in out.items()}
    return st.figures


def run(study: str, outdir: str, fmt: str = "png", prices_file=None) -> tuple:
    if study not in STUDIES:
        raise UsageError(f"unknown study {study!r}: choose one of {', '.join(STUDIES)}")
    st = compute(price_list(prices_file))
    draw(st, Path(outdir), fmt)
    return st, findings(st)
