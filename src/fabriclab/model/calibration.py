"""Calibration: measured saturation throughputs replace nominal effective rates.

Seed 001 measures the saturation throughput of one resource by forcing all
traffic through it (§3.2 Fig. 5-8, §4.2 Fig. 11-12) and substitutes it for
B_eff in the model (§5). Measurements come from flags or a file:

    -c link=390                  the link of every selected technology that has one
    -c sci-d33x.adapter_bus=360  only this technology's B-Link

    -c catalog                   the measured values stored in the catalog

A calibrated rate may not exceed the resource's gross rate (a typed rate above
it is a typo) unless the calibration is not `capped`: a rate measured across
the resource itself, as `fabriclab testbed validate` measures, outranks a
nominal rate that understates it. A common key that no selected technology
has, or an unknown technology, is an error.

A file (YAML or JSON) maps technology to resource to MB/s, or resource to MB/s
for all technologies; a value may also be {value, source, date}::

    sci-d33x: {link: 390, adapter_bus: 360}
    myrinet-m2l: {link: {value: 144, source: "our run 2024-05-01", date: "2024"}}

Two keys are no resource: `alpha_s` and `gamma_s_per_byte`, the seconds to
start a message and to reduce a byte that `model --collective` adds to a
collective's flows (`fabriclab calibrate RUN.json --collectives` writes them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from ..errors import UsageError
from ..datafile import read_data_file, shown
from .limits import RATE_MBPS
from .resources import MB

COSTS = ("alpha_s", "gamma_s_per_byte")


def _mbps(v, where: str) -> float:
    if isinstance(v, dict):
        if "value" not in v:
            raise UsageError(f"{where}: a measurement mapping needs 'value'")
        v = v["value"]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            v = float(str(v))
        except ValueError:
            raise UsageError(f"{where}: a measured rate must be a number of MB/s, got {shown(v)}") from None
    if not math.isfinite(v) or not v > 0:
        raise UsageError(f"{where}: a measured rate must be positive and finite, got {v}")
    if not RATE_MBPS.lo <= v <= RATE_MBPS.hi:
        raise UsageError(f"{where}: a measured rate must be {RATE_MBPS}, got {v:g}")
    return float(v) * MB


@dataclass
class Calibration:
    """Measured rates: per technology (``by_tech``) and for any technology (``common``)."""

    common: dict = field(default_factory=dict)
    by_tech: dict = field(default_factory=dict)
    use_catalog: bool = False
    capped: bool = True          # refuse rates above the gross rate
    # the collectives' costs (collective.py): seconds to start a message, to reduce a byte
    alpha_s: Optional[float] = None
    gamma_s_per_byte: Optional[float] = None

    def __bool__(self) -> bool:
        return bool(self.common or self.by_tech or self.use_catalog)

    def for_tech(self, tech) -> dict:
        out = {}
        if self.use_catalog:
            out.update({k: r.measured.value for k, r in tech.resources.items() if r.measured is not None})
        out.update({k: v for k, v in self.common.items() if k in tech.resources})
        out.update(self.by_tech.get(tech.key, {}))
        unknown = set(self.by_tech.get(tech.key, {})) - set(tech.resources)
        if unknown:
            raise UsageError(f"technology {tech.key} has no resource {sorted(unknown)[0]!r} to calibrate "
                             f"(it has: {', '.join(sorted(tech.resources))})")
        for k, v in out.items():
            gross = float(tech.resources[k].gross)
            if self.capped and v > gross * (1 + 1e-9):
                raise UsageError(f"calibrated {tech.key}.{k} = {v / MB:g} MB/s exceeds its gross rate "
                                 f"{gross / MB:g} MB/s")
        return out

    def check(self, techs, known, extra: frozenset = frozenset()) -> None:
        """Refuse technologies the catalog does not know (`known`: all technology
        keys) and common resources that none of the selected technologies has
        (`extra`: further resource names, those of a network file)."""
        for t in self.by_tech:
            if t not in known:
                raise UsageError(f"calibration names unknown technology {t!r}: choose one of "
                                 f"{', '.join(sorted(known))}")
        have = set().union(*(set(t.resources) for t in techs), extra)
        for k in self.common:
            if k not in have:
                some = sorted(have)[:12] + ([f"{len(have) - 12} more"] if len(have) > 12 else [])
                raise UsageError(f"calibration resource {k!r} belongs to none of the selected technologies "
                                 f"or network files (they have: {', '.join(some) or 'none'})")

    def merge(self, other: "Calibration") -> "Calibration":
        by = {k: dict(v) for k, v in self.by_tech.items()}
        for k, v in other.by_tech.items():
            by.setdefault(k, {}).update(v)
        pick = lambda k: getattr(other, k) if getattr(other, k) is not None else getattr(self, k)
        return Calibration({**self.common, **other.common}, by, self.use_catalog or other.use_catalog,
                           self.capped and other.capped, pick("alpha_s"), pick("gamma_s_per_byte"))


def _seconds(v, where: str) -> float:
    """A measured cost in seconds: a number or {value: ...}, above 0 and at most 1."""
    if isinstance(v, dict):
        v = v.get("value")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and 0 < v <= 1):
        raise UsageError(f"{where} must be seconds above 0 and at most 1, got {shown(v)}")
    return float(v)


def parse_flags(items) -> Calibration:
    cal = Calibration()
    for item in items or []:
        if item == "catalog":
            cal.use_catalog = True
            continue
        if "=" not in item:
            raise UsageError(f"calibration {item!r} is not RESOURCE=MBps, TECH.RESOURCE=MBps or 'catalog'")
        name, val = item.split("=", 1)
        rate = _mbps(val.strip(), f"calibration {item!r}")
        name = name.strip()
        if "." in name:
            tech, res = name.rsplit(".", 1)
            cal.by_tech.setdefault(tech, {})[res] = rate
        else:
            cal.common[name] = rate
    return cal


def load_file(path: str) -> Calibration:
    data = read_data_file(path, "calibration file")
    if not isinstance(data, dict) or not data:
        raise UsageError(f"{path}: expected a mapping of technology or resource to MB/s")
    cal = Calibration()
    for k, v in data.items():
        if k in COSTS:
            setattr(cal, k, _seconds(v, f"{path}: {k}"))
        elif isinstance(v, dict) and "value" not in v:
            for rk, rv in v.items():
                cal.by_tech.setdefault(str(k), {})[str(rk)] = _mbps(rv, f"{path}: {k}.{rk}")
        else:
            cal.common[str(k)] = _mbps(v, f"{path}: {k}")
    return cal
