"""A network from a file (`fabriclab model --topology-file FILE`) as a system beside the catalog's.

It exists at one size, its own; its links carry their own rates and packet
formats (so --payload applies where a link gives payload_B and overhead_B);
`-c link=MBPS` calibrates every link of the file, `-c NAME=MBPS` the links
named NAME and `-c 'links[I]=MBPS'` the file's link I, counted from 0 (a
measured rate replaces the nominal one, seed 001 §5); the file's `prices`
name the items its adapters, switches and cables cost.
"""

from __future__ import annotations

from typing import Optional

from ..errors import UsageError
from .resources import MB, Rates
from .topologies import NodeModel, load_network_file


class NetworkFile:
    """The system of one network file."""

    family = "custom"
    tech = None
    params: dict = {}

    def __init__(self, path: str, node_model: NodeModel = NodeModel(), topo=None):
        """The file at path, or `topo` when it has been read from there already."""
        self.path = str(path)
        self.topo = topo if topo is not None else load_network_file(self.path, node_model)
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
        """What `-c NAME=MBPS` may name for this file: 'link', every link name and every links[I]."""
        own = [c for c in self.topo.classes if c.own is not None]
        return {"link"} | {c.own.name for c in own} | {link_key(c.key) for c in own}

    def calibrated(self, calibration) -> dict:
        """Class key -> measured bytes/s: the link's index first, then its name, then 'link';
        never above its gross rate when the calibration is capped."""
        if not calibration:
            return {}
        out = {}
        common = calibration.common
        for c in self.topo.classes:
            if c.own is None:
                continue
            rate = common.get(link_key(c.key), common.get(c.own.name, common.get("link")))
            if rate is None:
                continue
            gross = float(c.own.gross)
            if calibration.capped and rate > gross * (1 + 1e-9):
                raise UsageError(f"calibrated {self.path} link {c.own.name} = {rate / MB:g} MB/s exceeds its "
                                 f"rate {gross / MB:g} MB/s")
            out[c.key] = rate
        return out


def link_key(class_key: str) -> str:
    """'links[3]' of a file link's class key ('links[3].ab', 'links[3].ba' or, half duplex, 'links[3]')."""
    return class_key.partition(".")[0]
