"""The technology catalog, named systems and prices, read from data files.

Every number in data/technologies.yaml and data/prices.yaml is a mapping
``{value, source, date}``; the loader refuses a bare number so that no number
enters the model without its source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional


from ..errors import UsageError
from ..datafile import read_data_file, shown
from .limits import CATALOG_MAX, PRICE
from .resources import KINDS, MB, Rates, Sourced, TechResource
from .topologies import FAMILIES, NodeModel, build

DATA = Path(__file__).parent / "data"


def _sourced(v, where: str, scale: float = 1.0) -> Sourced:
    if not isinstance(v, dict) or set(v) != {"value", "source", "date"}:
        raise UsageError(f"{where}: a catalog number must be {{value, source, date}}, got {shown(v)}")
    val = v["value"]
    if isinstance(val, bool) or not isinstance(val, (int, float)) or not 0 <= val <= CATALOG_MAX:
        raise UsageError(f"{where}: value must be a non-negative finite number of at most {CATALOG_MAX:g}, "
                         f"got {shown(val)}")
    if not str(v["source"]).strip() or not str(v["date"]).strip():
        raise UsageError(f"{where}: source and date must not be empty")
    return Sourced(float(val) * scale, str(v["source"]), str(v["date"]))


def _read_yaml(path: Path, what: str) -> dict:
    data = read_data_file(path, what)
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise UsageError(f"{path}: not a fabriclab {what} (expected 'schema: 1')")
    return data


@dataclass(frozen=True)
class Technology:
    key: str
    name: str
    era: str
    resources: dict
    switch_ports: Optional[Sourced] = None
    topologies: tuple = ()

    def node_model(self) -> NodeModel:
        hb = self.resources.get("host_bus")
        return NodeModel(adapter_bus="adapter_bus" in self.resources,
                         host_bus=None if hb is None else hb.duplex)

    def rates(self, switches: int = 0, calibrated: Optional[dict] = None,
              payload: Optional[float] = None) -> Rates:
        return Rates(self.resources, switches, payload, dict(calibrated or {}))


def _technology(key: str, d: dict, where: str) -> Technology:
    w = f"{where}: {key}"
    if not isinstance(d, dict) or "resources" not in d or "name" not in d:
        raise UsageError(f"{w}: a technology needs 'name' and 'resources'")
    res = {}
    for rk, rv in d["resources"].items():
        rw = f"{w}.resources.{rk}"
        if not isinstance(rv, dict) or "gross_MBps" not in rv:
            raise UsageError(f"{rw}: gross_MBps is required")
        kind = rv.get("kind", "link")
        if kind not in KINDS:
            raise UsageError(f"{rw}: kind must be one of {', '.join(KINDS)}")
        duplex = rv.get("duplex", "full")
        if duplex not in ("full", "half"):
            raise UsageError(f"{rw}: duplex must be full or half")
        opt = lambda k, s=1.0: _sourced(rv[k], f"{rw}.{k}", s) if k in rv else None
        known = {"label", "kind", "duplex", "gross_MBps", "payload_B", "overhead_B", "route_B_per_switch",
                 "efficiency", "measured_MBps", "max_payload_B"}
        if set(rv) - known:
            raise UsageError(f"{rw}: unknown key {sorted(set(rv) - known)[0]!r}")
        eff = opt("efficiency")
        if eff is not None and not 0 < eff.value <= 1:
            raise UsageError(f"{rw}.efficiency: must be in (0, 1]")
        res[rk] = TechResource(rk, str(rv.get("label", rk)), kind, _sourced(rv["gross_MBps"], f"{rw}.gross_MBps", MB),
                               duplex, opt("payload_B"), opt("overhead_B"), opt("route_B_per_switch"), eff,
                               opt("measured_MBps", MB), opt("max_payload_B"))
    if "link" not in res:
        raise UsageError(f"{w}: every technology needs a 'link' resource")
    sp = _sourced(d["switch_ports"], f"{w}.switch_ports") if "switch_ports" in d else None
    return Technology(key, str(d["name"]), str(d.get("era", "")), res, sp, tuple(d.get("topologies", ())))


def _catalog(path: Optional[str] = None) -> tuple:
    """(path, the catalog's mapping of technology key to its entry), as read."""
    p = Path(path) if path else DATA / "technologies.yaml"
    data = _read_yaml(p, "technology catalog")
    techs = data.get("technologies")
    if not isinstance(techs, dict) or not techs:
        raise UsageError(f"{p}: 'technologies' must be a non-empty mapping")
    return p, techs


def technologies(path: Optional[str] = None) -> dict:
    p, techs = _catalog(path)
    return {k: _technology(k, v, str(p)) for k, v in techs.items()}


def technology(key: str) -> Technology:
    # only the one asked for is built: a model of eight systems asks eight times
    p, techs = _catalog()
    if key not in techs:
        raise UsageError(f"unknown technology {key!r}: choose one of {', '.join(sorted(techs))}")
    return _technology(key, techs[key], str(p))


def prices(path: Optional[str] = None) -> dict:
    """The catalog's price list, or a user's (`--prices`), whose items replace the catalog's of
    the same name: in US dollars, each within limits.PRICE, as a network file's prices are; an
    item the catalog does not price (a typo) or another currency is refused, not ignored."""
    p = Path(path) if path else DATA / "prices.yaml"
    data = _read_yaml(p, "price list")
    items = data.get("items")
    if not isinstance(items, dict):
        raise UsageError(f"{p}: 'items' must be a mapping of item name to {{value, source, date}}")
    if str(data.get("currency", "USD")).upper() != "USD":
        raise UsageError(f"{p}: currency {shown(data.get('currency'))}: fabriclab's costs are in US dollars (USD)")
    out = {k: _sourced(v, f"{p}: items.{k}") for k, v in items.items()}
    for k, v in out.items():
        if not PRICE.lo <= v.value <= PRICE.hi:
            raise UsageError(f"{p}: items.{k}: value must be {PRICE}, got {v.value:g}")
    if path:
        known = prices()
        unknown = [k for k in out if k not in known]
        if unknown:
            raise UsageError(f"{p}: item {shown(unknown[0])} is not one the catalog prices (it prices: "
                             f"{', '.join(sorted(known)[:12])}{', ...' if len(known) > 12 else ''})")
    return out


@dataclass
class System:
    """A technology on a topology family, with the price items of its parts."""

    key: str
    label: str
    tech: Technology
    family: str
    params: dict = field(default_factory=dict)
    price_items: dict = field(default_factory=dict)
    # the topologies built so far, by size and parameters: a topology keeps the loads
    # counted on it (loads.class_loads), so curves of one system count each size once
    built: dict = field(default_factory=dict, repr=False, compare=False)

    def build(self, n: int):
        key = (n, repr(sorted(self.params.items())))
        if key not in self.built:
            sp = int(self.tech.switch_ports.value) if self.tech.switch_ports else None
            self.built[key] = build(self.family, n, self.params, sp, self.tech.node_model())
        return self.built[key]

    def rates(self, topo, calibrated: Optional[dict] = None, payload: Optional[float] = None) -> Rates:
        return self.tech.rates(topo.max_switches_on_route(), calibrated, payload)

    def calibrated(self, calibration) -> dict:
        """The measured rates of a calibration that apply to this system's technology."""
        return calibration.for_tech(self.tech) if calibration else {}


def _systems_data() -> dict:
    p = DATA / "systems.yaml"
    data = _read_yaml(p, "system list")
    return data["systems"]


def system_names() -> list:
    return list(_systems_data())


def _parse_params(text: str) -> dict:
    out = {}
    for part in filter(None, text.split(",")):
        if "=" not in part:
            raise UsageError(f"topology parameter {part!r} is not key=value")
        k, v = part.split("=", 1)
        v = v.strip()
        if v.lower() in ("true", "false"):
            out[k.strip()] = v.lower() == "true"
        else:
            try:
                out[k.strip()] = int(v)
            except ValueError:
                try:
                    out[k.strip()] = float(v)
                except ValueError:
                    out[k.strip()] = v
    return out


def system(spec: str) -> System:
    """A named system (systems.yaml) or ``TECH:FAMILY[:key=value,...]``."""
    data = _systems_data()
    if ":" not in spec:
        if spec not in data:
            raise UsageError(f"unknown system {spec!r}: choose one of {', '.join(data)} "
                             f"or write TECHNOLOGY:TOPOLOGY[:key=value,...]")
        d = data[spec]
        return System(spec, d.get("label", spec), technology(d["technology"]), d["topology"],
                      dict(d.get("params") or {}), dict(d.get("prices") or {}))
    parts = spec.split(":", 2)
    tech = technology(parts[0])
    fam = parts[1]
    if fam not in FAMILIES:
        raise UsageError(f"unknown topology family {fam!r} in {spec!r}: choose one of {', '.join(sorted(FAMILIES))}")
    params = _parse_params(parts[2]) if len(parts) == 3 else {}
    label = f"{tech.key} - {fam}" + (f" ({parts[2]})" if len(parts) == 3 else "")
    return System(spec, label, tech, fam, params, {})
