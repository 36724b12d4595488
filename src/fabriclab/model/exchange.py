"""The time of one exchange of given bytes between the nodes of a network.

An application's exchange phase (the transpose's and the sort's all-to-all,
suite/apps.py) sends a known number of bytes from each node to each
other; every flow starts at once. Its completion time under max-min fair
sharing is at least the busiest resource's work, max over resources l of
(sum over the flows crossing l of weight x bytes) / rate_l, and equals it
when the flows are equal (maxmin.py: the flows of the busiest resource get
its fair share, the lowest, for the whole time). For unequal flows (blocks
that differ by a row, buckets that differ by a few keys) the bound is the
prediction: the differences are within a fraction of a per cent of a flow.
Flows between ranks of one node never reach the network and are left out
by the caller."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from .loads import class_rates, display_label, resource_capacity


@dataclass(frozen=True)
class Exchange:
    seconds: float
    bottleneck: str          # the busiest resource's label
    rate_Bps: float          # its rate (nominal or calibrated)
    calibrated: bool


def exchange_time(system, flows: list, calibration=None) -> Exchange:
    """The predicted time of `flows` [(source node, destination node, bytes)]
    on `system` (a model.netfile.NetworkFile): the busiest resource's work."""
    topo = system.build(system.n_nodes)
    flows = [(int(s), int(d), float(b)) for s, d, b in flows if s != d and b > 0]
    if not flows:
        raise UsageError("the exchange sends nothing between nodes of the network")
    n = topo.n_nodes
    if any(not (0 <= s < n and 0 <= d < n) for s, d, _ in flows):
        raise UsageError(f"a flow names a node outside the network's {n} nodes")
    src, dst, size = (np.array(x) for x in zip(*flows))
    paths = topo.paths(src.astype(np.int64), dst.astype(np.int64))
    per_entry = np.repeat(np.arange(len(flows)), np.diff(paths.indptr))
    work = np.bincount(paths.res, weights=paths.weight * size[per_entry], minlength=topo.n_resources)
    rates = system.rates(topo, system.calibrated(calibration))
    by_class = class_rates(topo, rates)
    cap = resource_capacity(topo, by_class)
    busiest = int(np.argmax(work / cap))
    ci = int(topo.class_of(np.array([busiest]))[0])
    return Exchange(float(work[busiest] / cap[busiest]), display_label(topo.classes[ci], rates),
                    float(cap[busiest]), bool(by_class[ci][2]))
