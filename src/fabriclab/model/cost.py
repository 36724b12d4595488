"""Network cost: adapters, switches or enclosures, and cables, and what a MB/s costs.

Seed 001 §5 (Fig. 14-15) weighs total network cost against per-node bandwidth.
Cost effectiveness here is total cost / (N × per-node bandwidth): the dollars
per MB/s of bandwidth delivered to each node, per node. Prices come from
data/prices.yaml (example prices, labelled so) or a user file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import UsageError
from .catalog import prices as catalog_prices
from .resources import MB, Sourced

PARTS = ("adapter", "switch", "enclosure", "cable")
_COUNT = {"adapter": "adapters", "switch": "switches", "enclosure": "enclosures", "cable": "cables"}


@dataclass
class Cost:
    total: float
    parts: dict = field(default_factory=dict)        # part -> (count, unit price, item name)
    sources: dict = field(default_factory=dict)      # item -> Sourced

    def per_mbps(self, n: int, per_node_bytes: float) -> float:
        """Dollars per MB/s of per-node bandwidth, per node: total / (N · B_node)."""
        return self.total / (n * per_node_bytes / MB) if per_node_bytes > 0 else float("inf")

    def to_dict(self) -> dict:
        return {"total_usd": self.total,
                "parts": {k: {"count": c, "unit_usd": u, "item": i} for k, (c, u, i) in self.parts.items()},
                "price_sources": {k: {"source": s.source, "date": s.date} for k, s in self.sources.items()}}


def price_list(path: Optional[str] = None) -> dict:
    """The catalog prices, overridden by the items of a user file."""
    base = dict(catalog_prices())
    if path:
        base.update(catalog_prices(str(path)))
    return base


def network_cost(system, topo, prices: Optional[dict] = None) -> Optional[Cost]:
    """Cost of the parts of `topo`; None when the system names no prices."""
    items = system.price_items
    if not items:
        return None
    prices = price_list() if prices is None else prices
    inv = topo.inventory()
    total, parts, sources = 0.0, {}, {}
    for part in PARTS:
        count = int(inv.get(_COUNT[part], 0))
        if count == 0:
            continue
        item = items.get(part)
        if item is None:
            if part == "switch" and "enclosure" in items:
                continue        # switches inside enclosures are priced with the enclosure
            raise UsageError(f"system {system.key} has {count} {_COUNT[part]} but no price item for them")
        if isinstance(item, Sourced):      # a price given in place (networks from files)
            p, item = item, f"{system.key}: {part}"
        elif item not in prices:
            raise UsageError(f"price item {item!r} of system {system.key} is not in the price list")
        else:
            p = prices[item]
        total += count * p.value
        parts[part] = (count, p.value, item)
        sources[item] = p
    return Cost(total, parts, sources)
