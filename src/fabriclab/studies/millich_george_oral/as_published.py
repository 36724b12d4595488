"""AS PUBLISHED: seed 001's own formulas, approximations included.

This module reproduces what Millich, George and Oral (2002) computed, to draw
their figures as they drew them. It is not fabriclab's default; the default
is the exact computation of loads.py. Differences:

* Myrinet: Eq. 6 spreads the switch-to-switch traffic evenly over all
  switch ports using an average hop count, where the exact load is that of
  the most loaded link; Eq. 12 then averages remote and same-switch
  bandwidth arithmetically, weighted by message counts, where a node that
  sends N-1 equal messages at one rate gets the minimum.
* Eq. 7 and Eq. 8 (average switch hops) are garbled in the available text;
  they are reconstructed here as the mean distance between distinct
  switches: (S+1)/3 for a linear array and floor(S²/4)/(S-1) for a ring.
* "Symmetric network": k = N/S nodes per switch and j switch ports per
  switch on average (seed 001 §4.1). The Clos64 is taken at its word: "full
  link bandwidth to all" (§4.1) and "full bisection bandwidth is always
  maintained" (Fig. 9), i.e. B_eff at every size.
* Eq. 10 is capped at B_eff. Every node has "the full link bandwidth
  available to them via a port on the non-blocking crossbar switch", which is
  "restricted, though, when multiple switches are connected together with too
  few links" (§4.1): the switch-to-switch links can only lower a node's
  bandwidth. Uncapped, Eq. 10 exceeds the link wherever the inter-switch
  ports outnumber the nodes' demand (j·S > N·h: a 4-cable ring of three
  partly filled switches gives 1.41 B_eff at 17 nodes), which contradicts
  "Clos64 ... remains the leader" (§5).
For SCI tori (Eq. 1, 2, 4, 5) the published formulas are exact for
dimension-order routing; the tests check them against counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...errors import UsageError
from ...model.closed_forms import sci_hot_blink, sci_hot_link
from ...model.evaluate import Curve, Prediction

_MYRINET_FORMS = {"switch-array": "minimal", "switch-ring": "ring", "clos64": "clos64"}


def form(system) -> Optional[tuple]:
    """The seed's formula for a system: ("sci", dims), ("myrinet", topology,
    cables, ports), or None when the seed has none for it. Parameters the
    system does not give take the family's defaults (topologies.DEFAULTS)."""
    from ...model.topologies import DEFAULTS
    res, fam = system.tech.resources, system.family
    params = {**DEFAULTS.get(fam, {}), **system.params}
    if fam in ("torus", "ring"):
        if "adapter_bus" not in res or "link" not in res or params.get("bidirectional") or "shape" in params:
            return None
        return ("sci", 1 if fam == "ring" else int(params["dims"]))
    topo = _MYRINET_FORMS.get(fam)
    if topo is None or "link" not in res or res["link"].payload is None \
            or params.get("routing", "d-mod-k") != "d-mod-k" or params.get("placement", "fill") != "fill":
        return None
    sp = system.tech.switch_ports
    ports = int(params.get("ports", sp.value if sp else 16))
    return ("myrinet", topo, int(params.get("cables", 1)), ports)


def sci_bandwidth(r: int, f: int, b_link: float, b_blink: float) -> dict:
    """Eq. 4 and 5: (N-1)/hot × B_eff for the SCI link and the B-Link."""
    n = r ** f
    link = (n - 1) / sci_hot_link(n, r) * b_link if r > 1 else float("inf")
    blink = (n - 1) / sci_hot_blink(r, f) * b_blink
    return {"n": n, "link": link, "blink": blink, "overall": min(link, blink)}


def h_minimal(s: int) -> float:
    """Eq. 7 (reconstructed): mean hops between distinct switches of a linear array."""
    return (s + 1) / 3.0


def h_ring(s: int) -> float:
    """Eq. 8 (reconstructed): mean hops between distinct switches of a ring."""
    return (s * s // 4) / (s - 1)


def hot_link(n: float, k: float, h: float, j: float, s: int) -> float:
    """Eq. 6: N(N-k)·h_sw2sw / (j·S)."""
    return n * (n - k) * h / (j * s)


def efficiency(m: float, h: float) -> float:
    """Eq. 9: M / (M + h_sw2sw + 6) (Table 3: type 4, CRC 1, route bytes h + 1)."""
    return m / (m + h + 6.0)


@dataclass
class MyrinetPoint:
    n: int
    switches: int
    k: float
    j: float
    h: float
    b_eff: float
    sw2sw: Optional[float]     # Eq. 10; None when all nodes share one switch
    overall: float             # Eq. 12


def myrinet(topology: str, n: int, b_gross: float, message: float = 4096.0,
            calibrated: Optional[float] = None, ports: int = 16, cables: int = 1) -> MyrinetPoint:
    """Eq. 6-12 for 'minimal' (linear array), 'ring' (ring of switches, `cables`
    links between neighbours) or 'clos64'. Rates in bytes/s."""
    if n < 2:
        raise UsageError("a system needs at least 2 nodes")
    if topology == "minimal":
        s = 1
        while s * ports - 2 * (s - 1) * cables < n:
            s += 1
        j = 2.0 * (s - 1) * cables / s
        h = h_minimal(s) if s > 1 else 0.0
    elif topology == "ring":
        per = ports - 2 * cables
        s = 1 if n <= ports else max(2, -(-n // per))
        j = 2.0 * cables
        h = h_ring(s) if s > 1 else 0.0
    elif topology == "clos64":
        s = -(-n // 64)
        b_eff = calibrated if calibrated is not None else b_gross * efficiency(message, 1.0)
        return MyrinetPoint(n, s, n / s, 64.0, 1.0, b_eff, b_eff if s > 1 else None, b_eff)
    else:
        raise UsageError(f"no published Myrinet formula for topology {topology!r}")
    k = n / s
    b_eff = calibrated if calibrated is not None else b_gross * efficiency(message, h)
    if s == 1:
        return MyrinetPoint(n, s, k, 0.0, 0.0, b_eff, None, b_eff)
    hot = hot_link(n, k, h, j, s)
    sw2sw = min(b_eff, (n - k) / hot * b_eff)        # Eq. 10, never above the node's own link (§4.1)
    local = b_eff                                    # Eq. 11: same-switch links are dedicated
    overall = ((n - k) * sw2sw + (k - 1) * local) / (n - 1)   # Eq. 12
    return MyrinetPoint(n, s, k, j, h, b_eff, sw2sw, overall)


def curve(system, ns, calibrated: dict) -> Optional[Curve]:
    """The seed's own formulas as a model curve ("as published") at the sizes ns
    where the system's form exists, or None when the seed has no formula for
    it. `calibrated` maps resource names (link, adapter_bus) to measured
    bytes/s, replacing the nominal effective rates as in seed 001 §5."""
    f = form(system)
    if f is None:
        return None
    c = Curve(system.key + ":published", system.label + " (as published)", bool(calibrated))

    def points(cal: dict) -> list:
        return _sci_points(system, f[1], ns, cal) if f[0] == "sci" else _myrinet_points(system, f[1:], ns, cal)
    nominal = dict(points({})) if calibrated else {}       # the formulas at the catalog's nominal rates
    c.points = [Prediction(n, v, nominal.get(n, v), "as published", "", "", "published", "")
                for n, v in points(calibrated)]
    return c


def _sci_points(system, dims: int, ns, calibrated: dict) -> list:
    """(N, Eq. 4-5 bandwidth) at the sizes that are r^dims for some r >= 2."""
    res = system.tech.resources
    b_link = calibrated.get("link", res["link"].effective())
    b_blink = calibrated.get("adapter_bus", res["adapter_bus"].effective())
    out = []
    for n in ns:
        r = round(n ** (1.0 / dims))
        if r >= 2 and r ** dims == n:
            out.append((n, sci_bandwidth(r, dims, b_link, b_blink)["overall"]))
    return out


def _myrinet_points(system, shape: tuple, ns, calibrated: dict) -> list:
    """(N, Eq. 12 bandwidth) at every size."""
    topo, cables, ports = shape
    link = system.tech.resources["link"]
    return [(n, myrinet(topo, n, link.gross.value, link.payload.value, calibrated.get("link"), ports=ports,
                        cables=cables).overall) for n in ns]
