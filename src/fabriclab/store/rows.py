"""One document's rows, as plain mappings per table (store/tables.py names
the columns): what ingest.py makes of a document and add.py inserts in one
transaction. The store fills the keys that tie rows together (run_id,
point_id); a point's launches, raw samples and tails ride on the point,
under its "children" (the points table has columns named launches and
samples too: their counts)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Rows:
    run: dict                                          # the runs row, without id
    versions: list = field(default_factory=list)       # [{component, version}]
    points: list = field(default_factory=list)         # [{...points columns, "children": {"launches": [...], "samples": [...], "tails": [...]}}]
    pairs: list = field(default_factory=list)
    impacts: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    findings: list = field(default_factory=list)

    CHILDREN = ("launches", "samples", "tails")        # a point's child tables, keys of its "children"
