"""The seed's own calibration (its measured 390 / 360 / 144 MB/s saturation
rates, stored in the catalog) and its worked example, shared by the figures
and the findings."""

from __future__ import annotations

from ...model.calibration import Calibration
from ...model.catalog import system
from ...model.loads import solve

SEED_CAL = Calibration(use_catalog=True)


def worked_example() -> dict:
    """Seed 001 §5: a calibrated 3×3 torus gives 8/20 × 360 = 144 MB/s, B-Link bound."""
    s = system("sci-2d")
    t = s.build(9)
    r = solve(t, s.rates(t, SEED_CAL.for_tech(s.tech)))
    return {"per_node": r.per_node, "bottleneck": r.bottleneck.label,
            "adapter_load": next(c.load for c in r.classes if c.key == "adapter_bus")}
