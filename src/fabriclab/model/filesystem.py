"""A network from a file (`fabriclab model -t FILE`) as a system beside the catalog's.

It exists at one size, its own; its links carry their own rates and packet
formats (so --payload applies where a link gives payload_B and overhead_B);
`-c link=MBPS` calibrates every link of the file and `-c NAME=MBPS` the links
named NAME (a measured rate replaces the nominal one, seed 001 §5); the file's
`prices` name the items its adapters, switches and cables cost.
"""

from __future__ import annotations

from typing import Optional

from ..errors import UsageError
from .resources import MB, Rates
from .topologies import NodeModel, load_network_file


class FileSystem:
    """The system of one network file."""

    family = "custom"
    tech = None
    params: dict = {}

    def __init__(self, path: str, node_model: NodeModel = NodeModel()):
        self.path = str(path)
        self.topo = load_network_file(self.path, node_model)
        self.key = f"file:{self.path}"
        self.label = self.topo.name
        self.price_items = self.topo.price_items

    @property
    def n_nodes(self) -> int:
        return self.topo.n_nodes

    def build(self, n: int):
        return self.topo if n == self.topo.n_nodes else None

    def rates(self, topo, calibrated: Optional[dict] = None, payload: Optional[float] = None) -> Rates:
        return Rates({}, 0, payload, dict(calibrated or {}))

    def resource_names(self) -> set:
        """What `-c NAME=MBPS` may name for this file: 'link' and every link name."""
        return {"link"} | {c.own.name for c in self.topo.classes if c.own is not None}

    def calibrated(self, calibration) -> dict:
        """Class key -> measured bytes/s: a link's own name first, then 'link'; never above its gross rate."""
        if not calibration:
            return {}
        out = {}
        for c in self.topo.classes:
            if c.own is None:
                continue
            rate = calibration.common.get(c.own.name, calibration.common.get("link"))
            if rate is None:
                continue
            gross = float(c.own.gross)
            if rate > gross * (1 + 1e-9):
                raise UsageError(f"calibrated {self.path} link {c.own.name} = {rate / MB:g} MB/s exceeds its "
                                 f"rate {gross / MB:g} MB/s")
            out[c.key] = rate
        return out
