"""What `fabriclab model` and `model --collective` share: the node counts
parsed, the calibration the options give, tables aligned for a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..model.choices import MAX_NODES
from ..report.escape import terminal
from ..units import parse_size, parse_sizes

if TYPE_CHECKING:
    from ..model.calibration import Calibration

NODES, COLLECTIVE_NODES, COLLECTIVE_SIZES = "2:128", "16", "8:64M"
# Options of the traffic-pattern model alone, with the value meaning "not given".
PATTERN_ONLY = {"traffic": "all-to-all", "hotspot_target": 0, "published": False, "maxmin": False,
                "cost": False, "prices": None, "target": None, "payload": None, "method": "auto"}


def parse_nodes(spec: str) -> list:
    """'9', '4,9,16', '2:128' (every size if at most 256 sizes, else x2),
    '2:1024:x2' (geometric), '16:256:+16' (arithmetic); K means x1024.
    The sweep syntax is fabriclab's one (units.parse_sizes); only the default
    step differs: model curves want every size over short ranges."""
    parts = []
    for part in filter(None, (x.strip() for x in str(spec).split(","))):
        bits = part.split(":")
        if len(bits) == 2:
            lo, hi = parse_size(bits[0], "node count"), parse_size(bits[1], "node count")
            part += ":+1" if 0 <= hi - lo <= 255 else ":x2"
        parts.append(part)
    out = set(parse_sizes(",".join(parts), "node count")) if parts else set()
    if not out:
        raise UsageError("no node counts given")
    bad = [n for n in out if not 2 <= n <= MAX_NODES]
    if bad:
        raise UsageError(f"node counts must be between 2 and {MAX_NODES:,}, got {min(bad)}")
    if len(out) > 5000:
        raise UsageError(f"{len(out)} node counts are too many; use a geometric step such as 2:100000:x1.5")
    return sorted(out)


def calibration(args) -> Calibration:
    from ..model.calibration import load_file, parse_flags
    cal = parse_flags(args.calibrate)
    if args.calibration_file:
        cal = cal.merge(load_file(args.calibration_file))
    return cal


def table(rows: list, header: list) -> str:
    """Aligned columns; every cell on one line, control characters made visible (names come from files)."""
    rows = [[terminal(c) for c in r] for r in rows]
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    line = lambda r: "  ".join(str(c).rjust(w) if i < len(r) - 1 or i == 0 else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])
