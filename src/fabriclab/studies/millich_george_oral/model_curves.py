"""The model's numbers for seed 001's systems, with the seed's parameters and no
measurement: per-node bandwidth of the SCI tori and rings and the Myrinet
switch arrays, rings and Clos64 boxes, nominal and calibrated by the seed's
measured saturation rates (390, 360 and 144 MB/s, stored in the catalog), with
their costs, and the seed's own formulas as published beside the exact model
(as_published.py). The projections' figures (model_figures.py) and the
findings judged on the model (model_findings.py) read them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...model.calibration import Calibration
from ...model.catalog import system
from ...model.cost import price_list
from ...model.evaluate import curve
from ...model.loads import solve
from . import as_published

SCI = ("sci-ring", "sci-2d", "sci-3d", "sci-4d")
MYRINET = ("myrinet-minimal", "myrinet-clos64", "myrinet-ring4", "myrinet-ring2")
# The resource classes between switches (Fig. 9's switch-to-switch bandwidth).
INTER_SWITCH = ("isl", "box", "leaf_up", "spine_down")
# Seed 001 §5: the measured saturation rates replace the effective ones (the catalog's `measured`).
SEED_CAL = Calibration(use_catalog=True)


@dataclass
class SeedCurves:
    """All numbers behind the projections' figures, reused by the findings."""

    sci_nominal: dict = field(default_factory=dict)     # key -> evaluate.Curve
    myr_nominal: dict = field(default_factory=dict)
    myr_sw2sw: dict = field(default_factory=dict)       # key -> [(n, exact inter-switch bound)]
    calibrated: dict = field(default_factory=dict)      # key -> Curve (the seed's calibration, with costs)
    pub_myr: dict = field(default_factory=dict)         # (key, calibrated?) -> [as_published.MyrinetPoint]
    isl_rises: dict = field(default_factory=dict)       # (placement, key) -> (rises, switch additions)


def of(runs) -> SeedCurves:
    """The study's curves, computed once per run of the study (recipe.Runs.once):
    with the price list `study run --prices` names, else the shipped example prices."""
    return runs.once("seed-001-model", lambda: compute(price_list(runs.prices)))


def sci_sizes(f: int, top: int = 10_000) -> list:
    """The sizes an SCI torus of f dimensions exists at (r^f); every size for a ring up
    to 100, then steps of 25%, as Fig. 2-4 run to 10,000 nodes on a logarithmic axis."""
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


def compute(prices=None) -> SeedCurves:
    """Fig. 2-4's tori to 10,000 nodes, Fig. 9-10's Myrinet systems and Fig. 13-15's
    calibrated systems from 2 to 128 nodes, exact and as published."""
    st = SeedCurves()
    systems = {key: system(key) for key in SCI + MYRINET}  # one each: its nominal and calibrated curves share topologies
    for key, f in zip(SCI, (1, 2, 3, 4)):
        st.sci_nominal[key] = curve(systems[key], sci_sizes(f), with_cost=False)
    ns = list(range(2, 129))
    prices = price_list() if prices is None else prices
    for key in MYRINET:
        s = systems[key]
        st.myr_nominal[key] = curve(s, ns, with_cost=False)
        st.myr_sw2sw[key] = [(p.n, _inter_switch_bound(p.result)) for p in st.myr_nominal[key].points]
        _, topo_name, cables, ports = as_published.form(s)
        link = s.tech.resources["link"]
        m = float(link.payload.value)
        for cal in (False, True):
            st.pub_myr[(key, cal)] = [as_published.myrinet(topo_name, n, link.gross.value, m,
                                                           link.measured.value if cal else None,
                                                           ports=ports, cables=cables) for n in ns]
    for key in ("sci-ring", "sci-2d", "sci-3d") + MYRINET:
        sizes = {"sci-2d": sci_sizes(2, 128), "sci-3d": sci_sizes(3, 1000)}.get(key, ns)
        st.calibrated[key] = curve(systems[key], sizes, SEED_CAL, prices=prices)
    st.isl_rises = {(placement, key): _isl_rises(systems[key], placement) for placement in ("fill", "balanced")
                    for key in ("myrinet-minimal", "myrinet-ring4", "myrinet-ring2")}
    return st


def _isl_rises(sysm, placement: str) -> tuple:
    """(switch additions after which the inter-switch bound rises, switch additions)
    of a Myrinet system from 2 to 128 nodes, nodes placed as `placement` says (the
    system's own topologies where that is its placement: fill is the default)."""
    if sysm.params.get("placement", "fill") != placement:
        sysm = replace(sysm, params=dict(sysm.params, placement=placement), built={})
    ups, adds, prev = 0, 0, None
    for n in range(2, 129):
        topo = sysm.build(n)
        res = solve(topo, sysm.rates(topo))
        sw = topo.inventory()["switches"]
        b = min((c.bound for c in res.classes if c.key.startswith("isl")), default=float("inf"))
        if prev is not None and sw > prev[0] > 1:
            adds += 1
            ups += b > prev[1] * (1 + 1e-9)
        prev = (sw, b)
    return ups, adds


def worked_example() -> dict:
    """Seed 001 §5: a calibrated 3×3 torus gives 8/20 × 360 = 144 MB/s, B-Link bound."""
    s = system("sci-2d")
    t = s.build(9)
    r = solve(t, s.rates(t, SEED_CAL.for_tech(s.tech)))
    return {"per_node": r.per_node, "bottleneck": r.bottleneck.label,
            "adapter_load": next(c.load for c in r.classes if c.key == "adapter_bus")}
