"""The limits on what the model's data files may hold (docs/model.md, "Limits
on network files"), in one place; nothing here imports anything heavy.

Reading: a file of at most MAX_FILE_BYTES holds at most MAX_VALUES values
nested at most MAX_DEPTH deep (fabriclab/datafile.py, the reader of every
JSON or YAML file, holds them). Numbers: physical ranges, so that
every figure derived from them (rates, times, costs) stays a finite positive
double: a per-node rate is at least 1 B/s × 1e-6 efficiency / 1e10 flows,
far above the smallest double, and a cost at most 1e9 $ × 700,000 parts.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_NAME_CHARS = 200             # names of networks, nodes, switches, links, price items and sources


@dataclass(frozen=True)
class Range:
    """A closed range of a file's numbers, with its unit for error lines."""

    lo: float
    hi: float
    unit: str = ""

    def __str__(self) -> str:
        return f"from {self.lo:g} to {self.hi:g}{' ' + self.unit if self.unit else ''}"


# 1 B/s to 1 PB/s: a thousand times the fastest link of the catalog (NVLink 5, 900 GB/s a direction)
RATE_MBPS = Range(1e-6, 1e9, "MB/s (1 B/s to 1 PB/s)")
EFFICIENCY = Range(1e-6, 1.0)
PACKET_BYTES = Range(1.0, 1e9, "bytes")
OVERHEAD_BYTES = Range(0.0, 1e9, "bytes")
PRICE = Range(0.0, 1e9, "dollars")
CATALOG_MAX = 1e12               # any catalog number: above every rate (MB/s), size (B) and price ($)

# What timing a collective's schedule may route (schedule_time.py): route entries a
# topology lists to count its loads (a torus lists none: it counts by intervals), and
# the entries of one pattern shared max-min flow by flow (about 100 bytes each with
# the filling's indexes, so 8 M stay under 1 GB). 50 M entries list in about 5 s.
MAX_ROUTED_ENTRIES = 50_000_000
MAX_FILLED_ENTRIES = 8_000_000
# Flows x times of a repeated step whose flows move at different rates, timed window by
# window (about 10 ns a cell: 2 s).
MAX_TIMED_CELLS = 200_000_000
