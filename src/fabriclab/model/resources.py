"""Resources of a fabric and the rates they offer.

A *resource* is anything every packet of a flow has to cross and that has a
finite rate: a link in one direction (a switch port of a non-blocking crossbar
is the link attached to it, seed 001 §2.3), an adapter-internal bus (the SCI
B-Link between the link controllers of different dimensions), or the host I/O
bus (PCI, PCIe).

Every rate follows seed 001 Eq. 3::

    B_eff = B_gross × efficiency,   efficiency = payload / (payload + overhead)

where the per-packet overhead grows by ``route_bytes_per_switch`` for each
switch on the route in source-routed formats (Myrinet, seed 001 Table 3).
A measured saturation throughput (calibration, seed 001 §3.2, §4.2) replaces
B_eff when one is given.

All rates are stored in bytes per second; catalog files use MB/s (10^6 B/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from ..errors import UsageError

MB = 1e6  # the seeds' MB/s are decimal: 64 bit x 66.67 MHz = 533 MB/s

KINDS = ("link", "switch_port", "adapter_bus", "host_bus")


@dataclass(frozen=True, slots=True)    # slots: networks from files hold one per link
class Sourced:
    """A number from the catalog together with where it comes from."""

    value: float
    source: str
    date: str

    def __float__(self) -> float:
        return float(self.value)


def packet_efficiency(payload: float, overhead: float, route_bytes_per_switch: float = 0.0,
                      switches: int = 0) -> float:
    """payload / (payload + overhead + route bytes), seed 001 Eq. 3 and Eq. 9.

    Myrinet (seed 001 Table 3) carries one route byte per switch on the route,
    so its efficiency M / (M + h + 6) depends on the path length."""
    if not math.isfinite(payload) or payload <= 0:
        raise UsageError(f"packet payload must be a positive finite number, got {payload}")
    if overhead < 0 or route_bytes_per_switch < 0 or switches < 0:
        raise UsageError("packet overhead, route bytes and switch count must not be negative")
    return payload / (payload + overhead + route_bytes_per_switch * switches)


@dataclass(frozen=True, slots=True)
class TechResource:
    """One resource type of a technology (its link, adapter bus or host bus)."""

    name: str                       # key used by topologies: link, adapter_bus, host_bus, ...
    label: str                      # human name: "SCI link", "B-Link", "PCI 64/66"
    kind: str                       # one of KINDS
    gross: Sourced                  # bytes/s per direction (per bus for half-duplex buses)
    duplex: str = "full"            # "half": one shared resource for both directions
    payload: Optional[Sourced] = None
    overhead: Optional[Sourced] = None
    route_bytes_per_switch: Optional[Sourced] = None
    efficiency_value: Optional[Sourced] = None   # when the format is not payload/overhead
    measured: Optional[Sourced] = None           # saturation throughput, bytes/s
    max_payload: Optional[Sourced] = None        # largest payload one packet of the format carries

    def efficiency(self, switches: int = 0, payload: Optional[float] = None) -> float:
        """Packet efficiency; `payload` overrides the catalog payload (e.g. a message size)."""
        if self.efficiency_value is not None and (payload is None or self.overhead is None):
            return float(self.efficiency_value)   # not a payload/overhead format: a payload cannot change it
        if self.payload is None and payload is None:
            return 1.0
        if payload is not None and not (math.isfinite(payload) and payload > 0):
            raise UsageError(f"packet payload must be a positive finite number, got {payload}")
        p = float(payload if payload is not None else self.payload)
        if self.max_payload is not None:
            p = min(p, float(self.max_payload))      # a longer message travels in full packets
        o = float(self.overhead) if self.overhead is not None else 0.0
        r = float(self.route_bytes_per_switch) if self.route_bytes_per_switch is not None else 0.0
        return packet_efficiency(p, o, r, switches)

    def effective(self, switches: int = 0, payload: Optional[float] = None) -> float:
        """Nominal effective rate B_gross × efficiency in bytes/s (seed 001 Eq. 3)."""
        return float(self.gross) * self.efficiency(switches, payload)


@dataclass
class Rates:
    """Resolves the rate of each technology resource: calibrated or nominal.

    ``calibrated`` maps a technology resource name (``link``) to a measured
    saturation rate in bytes/s; it replaces the nominal effective rate."""

    resources: dict
    switches: int = 0
    payload: Optional[float] = None
    calibrated: dict = field(default_factory=dict)

    def nominal(self, name: str) -> float:
        return self.resource(name).effective(self.switches, self.payload)

    def resource(self, name: str) -> TechResource:
        try:
            return self.resources[name]
        except KeyError:
            raise UsageError(f"the technology has no resource {name!r} "
                             f"(it has: {', '.join(sorted(self.resources))})") from None

    def label(self, name: str) -> str:
        return self.resource(name).label
