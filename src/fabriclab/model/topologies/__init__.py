"""Topology families and the registry that builds them for a given size.

Each family is a builder ``(n_nodes, params, switch_ports, node_model) ->
Topology | None`` (None when the family has no member of that size, e.g. a 2D
torus of 10 nodes). Registration is data: FAMILIES maps the name to the
builder and the parameters it accepts.
"""

from __future__ import annotations

import math

from ...errors import UsageError
from .base import NodeModel, Paths, ResourceClass, Topology, check_int
from .custom import CustomNetwork, load_network_file
from .dragonfly import Dragonfly
from .fattree import FatTree
from .switched import Clos64, Crossbar, SwitchArray, SwitchRing
from .torus import Torus, ring


def _ports(params: dict, switch_ports, what: str) -> int:
    ports = params.get("ports", switch_ports)
    if ports is None:
        raise UsageError(f"{what} needs a switch port count: the technology has none, give ports=N")
    return check_int("switch ports", ports, 2)


def _bool(params: dict, key: str) -> bool:
    v = params.get(key, False)
    if not isinstance(v, bool):
        raise UsageError(f"{key} must be true or false, got {v!r}")
    return v


def _float(params: dict, key: str, default: float) -> float:
    v = params.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise UsageError(f"{key} must be a positive finite number, got {v!r}")
    return float(v)


def _torus(n, p, sp, nm):
    bidir = _bool(p, "bidirectional")
    if "shape" in p:
        shape = tuple(check_int("torus shape entry", x, 2)
                      for x in str(p["shape"]).replace("x", ",").split(",") if x)
        t = Torus(shape, bidir, nm)
        return t if t.n_nodes == n else None
    return Torus.regular(n, check_int("torus dimensions", p.get("dims", DEFAULTS["torus"]["dims"]), 1, 64), bidirectional=bidir, node_model=nm)


# defaults of family parameters that other modules need to know (the seed's formulas)
DEFAULTS = {"switch-array": {"cables": 1}, "switch-ring": {"cables": 2}, "torus": {"dims": 2}}

FAMILIES = {
    "ring": (lambda n, p, sp, nm: ring(n, _bool(p, "bidirectional"), nm),
             {"bidirectional"}),
    "torus": (_torus, {"dims", "shape", "bidirectional"}),
    "crossbar": (lambda n, p, sp, nm: Crossbar(n, _ports(p, sp, "a crossbar"), nm)
                 if n <= _ports(p, sp, "a crossbar") else None, {"ports"}),
    "switch-array": (lambda n, p, sp, nm: SwitchArray(n, _ports(p, sp, "a switch array"),
                                                      check_int("cables between neighbouring switches",
                                                                p.get("cables", DEFAULTS["switch-array"]["cables"]), 1), p.get("routing", "d-mod-k"), nm,
                                                      p.get("placement", "fill")),
                     {"ports", "cables", "routing", "placement"}),
    "switch-ring": (lambda n, p, sp, nm: SwitchRing(n, _ports(p, sp, "a ring of switches"),
                                                    check_int("cables between neighbouring switches",
                                                              p.get("cables", DEFAULTS["switch-ring"]["cables"]), 1), p.get("routing", "d-mod-k"), nm,
                                                    p.get("placement", "fill")),
                    {"ports", "cables", "routing", "placement"}),
    "clos64": (lambda n, p, sp, nm: Clos64(n, p.get("routing", "d-mod-k"), nm) if n <= 128 else None,
               {"routing"}),
    "kary-tree": (lambda n, p, sp, nm: FatTree.kary_for(n, p.get("k", 4), routing=p.get("routing", "d-mod-k"),
                                                        node_model=nm), {"k", "routing"}),
    "folded-clos": (lambda n, p, sp, nm: _folded(n, p, sp, nm), {"radix", "levels", "oversubscription", "routing"}),
    "xgft": (lambda n, p, sp, nm: FatTree(_ints(p["m"]), _ints(p["w"]), n_nodes=n,
                                          routing=p.get("routing", "d-mod-k"), node_model=nm)
             if n <= _prod(_ints(p["m"])) else None, {"m", "w", "routing"}),
    "dragonfly": (lambda n, p, sp, nm: _dragonfly(n, p, nm), {"p", "a", "h", "g", "routing"}),
}


def _ints(v) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(check_int("fat-tree shape entry", x, 1) for x in v)
    return tuple(check_int("fat-tree shape entry", x, 1) for x in str(v).replace("/", ",").split(",") if x)


def _prod(t) -> int:
    out = 1
    for x in t:
        out *= x
    return out


def _folded(n, p, sp, nm):
    if "radix" not in p and not sp:
        raise UsageError("a folded Clos needs a switch radix: the technology has none, give radix=N")
    radix = check_int("switch radix", p.get("radix", sp), 2)
    over = _float(p, "oversubscription", 1.0)
    levels = p.get("levels")
    levels = None if levels in (None, "auto") else check_int("folded Clos levels", levels, 1, 3)
    if levels is None and n > _prod(FatTree.folded_shapes(radix, over)[3][0]):
        return None          # larger than any folded Clos of this radix
    return FatTree.folded_clos(n, radix, levels, over, routing=p.get("routing", "d-mod-k"), node_model=nm)


def _dragonfly(n, p, nm):
    routing = p.get("routing", "d-mod-k")
    if {"a", "h", "g"} & set(p):
        try:
            a = check_int("dragonfly routers per group a", p["a"], 1)
            h = check_int("dragonfly global links per router h", p["h"], 1)
            g = check_int("dragonfly groups g", p["g"], 2)
        except KeyError as e:
            raise UsageError(f"a dragonfly given by shape needs p, a, h and g; {e.args[0]} is missing") from None
        df = Dragonfly(check_int("dragonfly nodes per router p", p.get("p", 4), 1), a, h, g, routing=routing, node_model=nm)
        return Dragonfly(df.p, a, h, g, n_nodes=n, routing=routing, node_model=nm) if n <= df.capacity else None
    pp = check_int("dragonfly nodes per router p", p.get("p", 4), 1)
    if n > (2 * pp * pp + 1) * 2 * pp * pp:
        return None
    return Dragonfly.balanced(n, pp, routing=routing, node_model=nm)


def build(family: str, n: int, params: dict, switch_ports=None, node_model: NodeModel = NodeModel()):
    """A topology of `family` with n nodes, or None when the family has none of that size."""
    if family not in FAMILIES:
        raise UsageError(f"unknown topology family {family!r}: choose one of {', '.join(sorted(FAMILIES))}")
    fn, allowed = FAMILIES[family]
    extra = set(params) - allowed
    if extra:
        raise UsageError(f"topology {family} has no parameter {sorted(extra)[0]!r} "
                         f"(it takes: {', '.join(sorted(allowed)) or 'none'})")
    try:
        return fn(int(n), params, switch_ports, node_model)
    except KeyError as e:
        raise UsageError(f"topology {family} needs the parameter {e.args[0]!r}") from None
    except (TypeError, ValueError, ZeroDivisionError) as e:
        raise UsageError(f"bad parameter for topology {family}: {e}") from None


__all__ = ["DEFAULTS", "FAMILIES", "build", "NodeModel", "Paths", "ResourceClass", "Topology", "Torus", "ring",
           "Crossbar", "SwitchArray", "SwitchRing", "Clos64", "FatTree", "Dragonfly", "CustomNetwork",
           "load_network_file"]
