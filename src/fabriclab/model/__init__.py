"""The modelling half of fabriclab: per-node bandwidth, bottleneck, cost and
crossovers of cluster networks, calibrated by measurement (see docs/model.md).

    from fabriclab.model import system, solve
    s = system("sci-2d")
    topo = s.build(9)
    result = solve(topo, s.rates(topo))
    result.per_node, result.bottleneck.label
"""

from .calibrate import Calibration
from .catalog import System, system, technologies, technology
from .evaluate import curve, evaluate
from .loads import LoadResult, solve
from .maxmin import max_min
from .traffic import Traffic

__all__ = ["Calibration", "System", "system", "technologies", "technology", "curve", "evaluate",
           "LoadResult", "solve", "max_min", "Traffic"]
