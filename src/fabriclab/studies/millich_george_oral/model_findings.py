"""Seed 001's stated findings about its projections, judged on the model with
the seed's parameters (no measurement: recipe.MODEL), ids mgo-m1 .. mgo-m18.

The verdicts read: "holds in the model" when the model computes what the
seed states; "does not hold in the model" when it computes otherwise, with
why and the numbers; a statement that holds for part of what it claims (at
some sizes, for one of the systems it names, in one of the seed's two
wordings) does not hold as stated, and its `because` opens with "it holds
only in part:" and names the part that holds; statements about cost are "not
judged": they rest on prices the seed's text does not list, so the model's
costs are its price list's, and `model` says what they give.
"""

from __future__ import annotations

import numpy as np

from ...model import crossover as X
from ...model.catalog import system
from ...model.resources import MB
from .. import draw
from ..recipe import MODEL, Finding
from .model_curves import of, worked_example

PARTLY = "it holds only in part: "
# The systems of the seed's Figure 13, compared calibrated.
FIG13 = ("sci-ring", "sci-2d", "myrinet-minimal", "myrinet-clos64", "myrinet-ring4", "myrinet-ring2")


def findings(runs, ref) -> list:
    """Every finding in the seed's order: rates, SCI tori, measured rates, the
    worked example, the calibrated systems, cost, and the shape of the curves."""
    st = of(runs)
    cal = [st.calibrated[k] for k in FIG13]
    q = lambda *keys: "; ".join(draw.quoted(ref.get(k)) for k in keys)
    return (_effective_rates(q) + [_ring_vs_2d(st, q), _3d_vs_2d(st, q)] + _saturation_rates(q)
            + [_worked_example(st, ref), _calibrated_ring(st, cal, q), _clos_leads(st, cal, q),
               _2d_second(st, cal, q), _2d_vs_minimal(st)]
            + _cost_findings(st, cal, q) + [_clos_keeps_bisection(st), _switch_added(st), _dimensions(st)])


def _finding(fid: str, where: str, claim: str, published: str) -> Finding:
    return Finding(f"mgo-m{fid}", claim, where, published, judged_on=MODEL)


def _v(curve, n):
    v, e = X.values_on(curve, [n])
    return float(v[0]), bool(e[0])


def _mb(x):
    return f"{x / MB:.1f}"


def _last_lead(curves, leader_key, ns):
    """Last size in ns (ascending) up to which curves[leader_key] leads without a break."""
    last = None
    lead = next(c for c in curves if c.key == leader_key)
    for n in ns:
        lv, _ = _v(lead, n)
        others = [_v(c, n)[0] for c in curves if c.key != leader_key]
        others = [o for o in others if np.isfinite(o)]
        if np.isfinite(lv) and all(lv > o * (1 + X.TIE) for o in others):
            last = n
        else:
            break
    return last


def _sci():
    """The SCI technology's link and B-Link."""
    res = system("sci-2d").tech.resources
    return res["link"], res["adapter_bus"]


def _effective_rates(q) -> list:
    """m1, m2: seed 001 Eq. 3 for the SCI link and the B-Link."""
    link, blink = _sci()
    out = []
    for fid, res, seed, claim in (
            ("1", link, 444, "128-byte payloads give 66.7% efficiency: an SCI link's effective bandwidth is "
                             "444 MB/s of 667"),
            ("2", blink, 427, "the B-Link's effective bandwidth is slightly lower, 427 MB/s")):
        e = res.effective() / MB
        out.append(_finding(fid, "§3.1, Eq. 3", claim, q("sci-link-effective", "sci-packet-efficiency")
                            if fid == "1" else q("sci-blink-effective")).judged(
            f"{res.efficiency():.1%} × {res.gross.value / MB:.0f} = {e:.1f} MB/s", abs(e - seed) < 1,
            f"the catalog's packet format gives {e:.1f} MB/s, not {seed}"))
    return out


def _ring_vs_2d(st, q) -> Finding:
    """m3: where the nominal ring stops leading the 2D torus (Fig. 4)."""
    nom = [st.sci_nominal[k] for k in ("sci-ring", "sci-2d", "sci-3d", "sci-4d")]
    ring, d2 = nom[0], nom[1]
    last = _last_lead(nom, "sci-ring", range(2, 100))
    r5, d5 = _v(ring, 5)[0], _v(d2, 5)[0]
    return _finding("3", "§3.1, Fig. 4", "a simple ring offers the highest bandwidth for systems of five nodes or "
                    "less; then the 2D torus is best", q("sci-ring-best-uncalibrated")).judged(
        f"ring best up to {last} nodes, then the 2D torus; the ring leads at 4 ({_mb(ring.at(4).per_node)} vs "
        f"{_mb(d2.at(4).per_node)} MB/s) and trails at 9 ({_mb(ring.at(9).per_node)} vs {_mb(d2.at(9).per_node)})",
        last == 5,
        f"no 2D torus of 5 to 8 nodes exists (4 = 2×2, then 9 = 3×3); at 5 nodes the ring ({_mb(r5)} MB/s, link "
        f"bound) is {1 - r5 / d5:.1%} below the 2D curve drawn from 4 to 9 nodes ({_mb(d5)}), so the model puts "
        "the crossover between 4 and 5; the seed, reading its figure, says five")


def _3d_vs_2d(st, q) -> Finding:
    """m4: where the nominal 3D torus overtakes the 2D torus."""
    d2, d3 = st.sci_nominal["sci-2d"], st.sci_nominal["sci-3d"]
    f = _finding("4", "§3.1, Fig. 4; §5", "with the B-Link's bandwidth, a 3D torus is only beneficial for systems "
                 "with more than 64 nodes (§5: 'at about 64 nodes or greater')",
                 q("sci-3d-torus-uncalibrated", "sci-3d-torus"))
    sw = X.pairwise(d2, d3)
    if not sw:
        return f.judged("the 3D torus never overtakes the 2D torus up to 10,000 nodes", False,
                        "the 2D torus stays ahead at every size both exist")
    first3, a64, b64 = sw[0], d3.at(64), d2.at(64)
    return f.judged(
        f"3D torus ahead of 2D from {first3.n} nodes: {_mb(first3.winner_value)} vs {_mb(first3.loser_value)} MB/s"
        f" (2D: {d2.at(first3.n).bottleneck}; 3D: {d3.at(first3.n).bottleneck})", first3.n > 64,
        f"{PARTLY}§5's wording ('about 64 nodes or greater') holds; §3.1's 'more than 64' is one size late: 64 = "
        f"8² = 4³ is the smallest size at which both tori exist, and there the 3D torus ({_mb(a64.per_node)}, "
        f"{a64.bottleneck}) already beats the 2D torus ({_mb(b64.per_node)}, {b64.bottleneck}) by "
        f"{a64.per_node / b64.per_node - 1:.1%}")


def _saturation_rates(q) -> list:
    """m5-m7: the measured saturation rates against the effective ones (§3.2, §4.2)."""
    link, blink = _sci()
    out = []
    for fid, res, seed_pct, what, keys in (
            ("5", link, 88, "SCI link", ("sci-link-saturation", "sci-link-saturation-share")),
            ("6", blink, 84, "B-Link", ("sci-blink-saturation", "sci-blink-saturation-share"))):
        meas, eff = res.measured.value, res.effective()
        pct = meas / eff
        out.append(_finding(fid, "§3.2", f"measured {what} saturation throughput {meas / MB:.0f} MB/s, about "
                            f"{seed_pct}% of the {_mb(eff)} MB/s effective bandwidth", q(*keys)).judged(
            f"{meas / MB:.0f} / {_mb(eff)} = {pct:.1%}", abs(pct * 100 - seed_pct) < 1,
            f"{pct:.1%} is not within a point of {seed_pct}%"))
    ml = system("myrinet-clos64").tech.resources["link"]
    pct = ml.measured.value / ml.gross.value
    out.append(_finding("7", "§4.2", "Myrinet link saturates at 144 MB/s, 90% of the 160 MB/s peak",
                        q("myrinet-link-saturation", "myrinet-link-saturation-share")).judged(
        f"{ml.measured.value / MB:.0f} / {ml.gross.value / MB:.0f} = {pct:.1%} (nominal effective rate with "
        f"4096-byte packets over one switch: {_mb(ml.effective(1))} MB/s)", abs(pct - 0.9) < 0.005,
        f"{pct:.1%} is not within half a point of 90%"))
    return out


def _worked_example(st, ref) -> Finding:
    """m8: §5's calibrated 3×3 torus against the calibrated Clos64."""
    _, blink = _sci()
    we = worked_example()
    clos = st.calibrated["myrinet-clos64"].at(64)
    ok = abs(we["per_node"] / MB - 144) < 0.5 and abs(clos.per_node / MB - 144) < 0.5
    return _finding("8", "§5, worked example", "a calibrated 3×3 SCI torus gives each node 144 MB/s, bound by "
                    "the B-Link, the same as a calibrated Myrinet Clos64",
                    f"144 MB/s, from the measured {draw.stated(ref.get('sci-blink-saturation'))} (B-Link) and "
                    f"{draw.stated(ref.get('myrinet-link-saturation'))} (Myrinet)").judged(
        f"B-Link load {we['adapter_load']:.0f} → 8/{we['adapter_load']:.0f} × {blink.measured.value / MB:.0f} = "
        f"{_mb(we['per_node'])} MB/s ({we['bottleneck']}); Clos64 at 64 nodes: {_mb(clos.per_node)} MB/s "
        f"({clos.bottleneck})", ok, "the two are not both 144 MB/s (the numbers above)")


def _calibrated_ring(st, cal, q) -> Finding:
    """m9: how long the calibrated SCI ring leads Figure 13."""
    link, _ = _sci()
    last = _last_lead(cal, "sci-ring", range(2, 129))
    r5 = st.calibrated["sci-ring"].at(5).per_node
    return _finding("9", "§5, Fig. 13", "for systems of four nodes or less, a simple SCI ring provides the "
                    "highest throughput", q("sci-ring-best")).judged(
        f"ring best up to {last} nodes (at 5: {_mb(r5)} MB/s against "
        f"{_mb(st.calibrated['myrinet-clos64'].at(5).per_node)} for Myrinet and "
        f"{_mb(_v(st.calibrated['sci-2d'], 5)[0])} on the interpolated 2D curve)", last == 4,
        f"at 5 nodes the calibrated ring's links allow (N-1)/(N(N-1)/2) = 4/10 × {link.measured.value / MB:.0f} "
        f"= {_mb(r5)} MB/s, more than any other system of Figure 13 reaches there, so the ring leads one size "
        "longer than the seed states; the seed's bound coincides with the 2D torus's first size (2×2 = 4)")


def _clos_leads(st, cal, q) -> Finding:
    """m10: the leaders of Figure 13 past nine nodes."""
    after9 = [s for s in X.segments(cal) if s.first > 9]
    d2c, clos = st.calibrated["sci-2d"], st.calibrated["myrinet-clos64"]
    return _finding("10", "§5, Fig. 13", "after nine nodes SCI (2D torus) falls below Myrinet Clos64, which "
                    "remains the leader for larger systems", q("sci-2d-below-clos64")).judged(
        f"2D torus {_mb(d2c.at(9).per_node)} = Clos64 {_mb(clos.at(9).per_node)} MB/s at 9, "
        f"{_mb(d2c.at(16).per_node)} at 16; leaders past 9: "
        + "; ".join(f"{s.label} {s.first}-{s.last}" for s in after9),
        all("Clos64" in s.label for s in after9),
        "another system leads past 9 nodes (the leaders listed)")


def _2d_second(st, cal, q) -> Finding:
    """m11: whether the 2D torus is second to the Clos64 from 25 nodes."""
    d2c = st.calibrated["sci-2d"]
    ns = list(range(25, 129))
    on = [X.values_on(c, ns)[0].tolist() for c in cal]      # each curve interpolated once, at every size
    d2, d2_exact = X.values_on(d2c, ns)
    bad = []
    for i, n in enumerate(ns):
        vals = sorted(((v[i], c.key) for c, v in zip(cal, on) if np.isfinite(v[i])), reverse=True)
        if len(vals) > 1 and vals[0][1] == "myrinet-clos64" and vals[1][1] != "sci-2d" and \
                vals[1][0] > float(d2[i]) * (1 + X.TIE):
            bad.append((n, vals[1][1], vals[1][0], (float(d2[i]), bool(d2_exact[i]))))
    f = _finding("11", "§5, Fig. 13", "after the Clos64, 2D SCI provides the next highest bandwidth for systems "
                 "of 25 nodes or greater", q("sci-2d-second"))
    if not bad:
        return f.judged("2D torus second at every size from 25 to 128", True)
    exact = [b for b in bad if b[3][1]]          # at a size where a 2D torus exists
    return f.judged(
        f"2D torus second at every size where it exists ({', '.join(str(p.n) for p in d2c.points if p.n >= 25)}); "
        f"on the interpolated curve it is passed at {', '.join(str(b[0]) for b in bad)} nodes by "
        f"{system(bad[0][1]).label} ({_mb(bad[0][2])} vs {_mb(bad[0][3][0])} MB/s at {bad[0][0]})", False,
        ("" if exact else PARTLY + "at every size a 2D torus exists, not on the curve interpolated between them: ")
        + _f11_why(st, bad))


def _f11_why(st, bad) -> str:
    n, key = bad[-1][0], bad[-1][1]
    p = st.calibrated[key].at(n)
    b = p.result.bottleneck
    pub = next(x for x in st.pub_myr[(key, True)] if x.n == n)
    return (f"at {n} nodes the exact model gives {system(key).label} {_mb(p.per_node)} MB/s (most loaded "
            f"resource: {b.label}, {b.load:.0f} messages); the seed's Eq. 6 spreads an average hop count "
            f"over all switch ports and Eq. 12 averages, giving {_mb(pub.overall)} MB/s, so in the seed's "
            f"figure the 2D torus ({_mb(_v(st.calibrated['sci-2d'], n)[0])} MB/s, interpolated) stays second")


def _2d_vs_minimal(st) -> Finding:
    """m12: the 2D torus against minimally connected Myrinet."""
    d2c, mins = st.calibrated["sci-2d"], st.calibrated["myrinet-minimal"]
    worse = [p.n for p in d2c.points if mins.at(p.n) and mins.at(p.n).per_node > p.per_node * (1 + X.TIE)]
    return _finding("12", "§5, Fig. 13-14", "the 2D torus provides considerably better bandwidth than minimally "
                    "connected Myrinet for systems of all sizes", "the curves of Fig. 13 (no number stated)").judged(
        f"2D torus ahead at every size from 25 nodes (25: {_mb(d2c.at(25).per_node)} vs "
        f"{_mb(mins.at(25).per_node)} MB/s; 121: {_mb(d2c.at(121).per_node)} vs {_mb(mins.at(121).per_node)})"
        + (f"; behind at {', '.join(map(str, worse))}" if worse else ""), not worse,
        f"{PARTLY}from the first size that needs two switches, not below it: up to 16 nodes 'minimal' Myrinet is "
        f"one 16-port switch, which gives every node its full link ({_mb(mins.at(16).per_node)} MB/s at 16, the "
        f"2D torus {_mb(d2c.at(16).per_node)})")


# The seed's prices are not in its text: a verdict on cost would be the price list's.
UNPRICED = "the seed's prices are not in its text; the model's costs are those of its price list " \
           "(example prices, or study run --prices FILE), not the seed's"


def _cost_findings(st, cal, q) -> list:
    """m13-m15: Fig. 14-15, not judged (UNPRICED); what the model computes with its prices."""
    d2, mins = st.calibrated["sci-2d"], st.calibrated["myrinet-minimal"]
    cheapest = {}
    for n in range(2, 129):
        costs = [(p.cost, c.label) for c in cal for p in [c.at(n)] if p is not None and p.cost is not None]
        if costs:
            cheapest[n] = min(costs)[1]
    ratios = [d2.at(n).cost / mins.at(n).cost for n in (25, 49, 64, 100, 121) if d2.at(n) and mins.at(n)]
    return [
        Finding("mgo-m13", "an SCI ring is the least expensive option, but not a good option past about 8 nodes "
                "because of its severely limited bandwidth", "§5, Fig. 14", q("sci-ring-cost-limit"),
                judged_on=MODEL, because=UNPRICED,
                model=("ring cheapest at every size" if all(v == "SCI - Ring" for v in cheapest.values()) else
                       "cheapest: " + ", ".join(sorted(set(cheapest.values()))))
                + f"; ring bandwidth at 8: {_mb(st.calibrated['sci-ring'].at(8).per_node)} MB/s against "
                f"{_mb(_v(d2, 8)[0])} for the 2D torus"),
        Finding("mgo-m14", "the total cost of an SCI 2D torus is nearly identical to that of a minimally "
                "connected Myrinet system", "§5, Fig. 14", "the curves of Fig. 14 (no number stated)",
                judged_on=MODEL, because=UNPRICED,
                model=f"2D torus / minimal Myrinet cost at 25-121 nodes: {min(ratios):.2f} to {max(ratios):.2f}"),
        Finding("mgo-m15", "SCI 2D torus or Myrinet Clos64 give the most bandwidth for the money; SCI is more cost "
                "effective up to approximately 64 nodes, Myrinet for larger systems", "§5, Fig. 15",
                q("sci-cost-effective-limit"), judged_on=MODEL, because=UNPRICED, model=_per_mbps(st))]


def _per_mbps(st) -> str:
    """Where the Clos64 becomes cheaper per MB/s than the 2D torus (Fig. 15)."""
    d2, mins, clos = (st.calibrated[k] for k in ("sci-2d", "myrinet-minimal", "myrinet-clos64"))
    pairs = {p.n: (p.cost_per_mbps, clos.at(p.n).cost_per_mbps) for p in d2.points if clos.at(p.n) is not None}
    first = next((n for n, (a, b) in pairs.items() if b < a), None)
    single = [n for n in range(2, 17) if mins.at(n) and d2.at(n) and mins.at(n).cost_per_mbps < d2.at(n).cost_per_mbps]
    text = ("the Clos64 never becomes cheaper per MB/s than the 2D torus" if first is None else
            f"Clos64 cheaper per MB/s than the 2D torus from {first} nodes (${pairs[first][1]:.1f} vs "
            f"${pairs[first][0]:.1f} per MB/s per node)")
    if single:
        text += f"; a single 16-port Myrinet switch is cheaper per MB/s than the 2D torus at {', '.join(map(str, single))}"
    return text


def _clos_keeps_bisection(st) -> Finding:
    """m16: switch-to-switch bandwidth as nodes per switch grow (Fig. 9)."""
    clos_min = min(b for _, b in st.myr_sw2sw["myrinet-clos64"])
    link = system("myrinet-clos64").tech.resources["link"]
    rising = steps = 0
    for key in ("myrinet-minimal", "myrinet-ring4", "myrinet-ring2"):
        s_, prev = system(key), None
        for n, b in st.myr_sw2sw[key]:
            sw = s_.build(n).inventory()["switches"]
            if prev is not None and sw == prev[0] > 1:
                steps += 1
                rising += b > prev[1] * (1 + 1e-9)
            prev = (sw, b)
    clos_ok = clos_min >= link.effective(4) * (1 - 1e-9)
    return _finding("16", "§4.1, Fig. 9", "switch-to-switch bandwidth falls as nodes per switch grow, except with "
                    "the Clos64, which always keeps full bisection bandwidth",
                    "the curves of Fig. 9 (no number stated)").judged(
        f"Clos64: inter-switch links never limit a node below {_mb(clos_min)} MB/s (its link: "
        f"{_mb(link.effective(4))}); for the other three, adding a node without adding a switch raises the "
        f"inter-switch bound in {rising} of {steps} steps", clos_ok and rising == 0,
        "the Clos64's inter-switch links limit a node below its link" if not clos_ok else
        f"{PARTLY}the Clos64 keeps full bisection bandwidth; for the other three the bound does not fall "
        "with every node: a node's all-to-all rate is N-1 messages over the hottest link's load; a node added "
        "to a switch whose cables are not the hot ones raises N-1 but not that load, so the bound rises until "
        "the new switch's own cables become the hot ones; the seed's Eq. 10 with Eq. 6 reduces to "
        "j·S·B/(N·h), which falls with every added node")


def _switch_added(st) -> Finding:
    """m17: switch-to-switch bandwidth when a switch is added (Fig. 9)."""
    rises = st.isl_rises
    fill_up = sum(v[0] for (pl, _), v in rises.items() if pl == "fill")
    bal_up = sum(v[0] for (pl, _), v in rises.items() if pl == "balanced")
    desc = lambda pl: ", ".join(f"{system(k).label.replace('Myrinet - ', '')} {u} of {a}"
                                for (p_, k), (u, a) in rises.items() if p_ == pl)
    return _finding("17", "§4.1, Fig. 9", "switch-to-switch bandwidth rises when a switch is added whose ports "
                    "are not all used yet", "the curves of Fig. 9 (no number stated)").judged(
        f"switch additions after which the inter-switch bound rises — nodes filled in order: {desc('fill')}; "
        f"nodes spread evenly: {desc('balanced')}", bool(fill_up),
        (PARTLY + "with nodes spread evenly (the seed's k = N/S nodes on every switch), not with nodes filled "
         "in order: " if bal_up else "") +
        "with nodes filled in order the new switch starts almost empty and the old cuts keep their full load, "
        "so nothing rises; spread evenly, the exact bound rises when the new switch takes nodes off a loaded "
        "cut, but in a ring the added switch also lengthens the paths (see the counts above)")


def _dimensions(st) -> Finding:
    """m18: more torus dimensions trade link load for B-Link load (Fig. 2-3), at 4096 nodes."""
    n = 4096
    at = [st.sci_nominal[k].at(n).result for k in ("sci-2d", "sci-3d", "sci-4d")]
    lk = [min(c.bound for c in r.classes if c.kind == "link") for r in at]
    bl = [next(c.bound for c in r.classes if c.kind == "adapter_bus") for r in at]
    return _finding("18", "§3.1, Fig. 2-3", "more dimensions relieve the SCI links but load the B-Link more",
                    "the curves of Fig. 2-3 (no number stated)").judged(
        f"at 4096 nodes (2D, 3D, 4D): link bound {', '.join(_mb(x) for x in lk)} MB/s; B-Link bound "
        f"{', '.join(_mb(x) for x in bl)} MB/s", lk[0] < lk[1] < lk[2] and bl[0] > bl[1] > bl[2],
        "the bounds do not move that way at 4096 nodes (the numbers above)")
