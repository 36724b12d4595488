"""The model's word before anything is measured: on a known network (a
testbed's file or --network), the algorithms it predicts to be more than
`factor` times slower than the best one at every size are left out
(verdicts/coll_prediction.py's schedules, alpha and gamma). An algorithm the
model has no schedule for is always measured."""

from __future__ import annotations

from ..verdicts import coll_prediction
from ..verdicts.placement import nodes_of
from ..model.schedule_time import Network
from ..model.schedules import LIBRARY_NAMES, schedule
from . import FACTOR


def prune(op: str, names, sizes, hosts, network: str | None, calibration: str | None = None,
          factor: float = FACTOR) -> tuple[list, dict]:
    """(the names to measure, {name: why left out}); every name where the model
    cannot place the ranks (no network, a host not in it)."""
    names = list(names)
    mop = coll_prediction.modelled(f"coll.{op}")
    sizes = [s for s in sizes if s > 0]
    if not mop or not network or not hosts or not sizes:
        return names, {}
    net_file = coll_prediction.system(network)
    where = nodes_of(hosts, net_file.topo.node_names)
    if None in where or len(where) < 2:
        return names, {}
    cal, alpha, gamma, _ = coll_prediction.calibrated(calibration)
    net = Network(net_file, calibration=cal)
    times = {n: [net.time(schedule(mop, LIBRARY_NAMES[mop][n], len(where), s), alpha, gamma, where).seconds
                 for s in sizes]
             for n in names if n in LIBRARY_NAMES.get(mop, {})}
    if len(times) < 2:
        return names, {}
    best = [min(ts[i] for ts in times.values()) for i in range(len(sizes))]
    out = {n: f"the model predicts it more than {factor:g}x slower than the best at every size"
           for n, ts in times.items() if all(t > factor * b for t, b in zip(ts, best))}
    return [n for n in names if n not in out], out
