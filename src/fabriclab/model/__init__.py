"""The modelling half of fabriclab: per-node bandwidth, bottleneck, cost and
crossovers of cluster networks, calibrated by measurement (see docs/model.md).

    from fabriclab.model import system, solve
    s = system("sci-2d")
    topo = s.build(9)
    result = solve(topo, s.rates(topo))
    result.per_node, result.bottleneck.label
"""

# The names below load on first use (PEP 562), so that importing a light
# module of this package (choices) does not pull in numpy and the catalog.
_EXPORTS = {"Calibration": "calibrate", "System": "catalog", "system": "catalog",
            "technologies": "catalog", "technology": "catalog", "curve": "evaluate",
            "evaluate": "evaluate", "LoadResult": "loads", "solve": "loads", "max_min": "maxmin",
            "Traffic": "traffic"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
