"""HPC Challenge's ring bandwidths on a network (docs/hpcc.md): every node
sends a message to each neighbour on a ring at once (model/traffic.py's
`ring` and `random-ring` patterns), and the model's per-node bandwidth
(loads.py: messages per node x rate / load of the busiest resource) is
what HPCC reports per process: the bytes a process sends each way over
the time of an iteration. The natural ring is the nodes in order; the
random rings' figure is HPCC's geometric mean over its rings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional

from ..errors import UsageError
from .loads import LoadResult, solve
from .traffic import Traffic


@dataclass(frozen=True)
class RingPrediction:
    natural: LoadResult
    randoms: tuple                   # a LoadResult per random ring

    @property
    def natural_Bps(self) -> float:
        return self.natural.per_node

    @property
    def random_Bps(self) -> Optional[float]:
        """The geometric mean of the random rings' per-node bandwidth (HPCC: size over the
        geometric mean of their latencies, the same number)."""
        if not self.randoms:
            return None
        return math.exp(sum(math.log(r.per_node) for r in self.randoms) / len(self.randoms))


def predict(topo, rates, orders: Iterable[tuple] = (), seeds: Iterable[int] = range(1, 11),
            method: str = "auto") -> RingPrediction:
    """The natural ring and the random rings on `topo`: those of `orders` (each the nodes in
    ring order, as a run's layouts placed them), or the model's own draws of `seeds`."""
    orders = [tuple(o) for o in orders]
    randoms = [Traffic("ring", ring=o) for o in orders] or [Traffic("random-ring", seed=s) for s in seeds]
    if not randoms:
        raise UsageError("the random rings need at least one seed or order")
    return RingPrediction(solve(topo, rates, Traffic("ring"), method),
                          tuple(solve(topo, rates, t, method) for t in randoms))


def order_of(peers: list) -> tuple:
    """A ring's nodes in order from a layout's peers (each rank's right neighbour), from rank 0."""
    order, q = [0], peers[0]
    while q != 0 and len(order) <= len(peers):
        order.append(q)
        q = peers[q]
    if sorted(order) != list(range(len(peers))):
        raise UsageError("the peers do not make one ring through every rank")
    return tuple(order)
