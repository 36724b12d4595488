"""Each library level on the same axes, and the cost of each layer: MPI against the layers below it.

Seed 004 (Quadrics, Fig. 4-5) measured each library level of one network,
Elan3lib, Tports and MPI, so that the cost of each layer shows; seed 000
(Fig. 15) drew the ladder of levels. Here the levels are MPI two-sided
(`message`), the interfaces below it (`fabric`: libfabric, `ucx`: UCX's
UCP) and TCP sockets: their ping-pongs and streams share the axes of one
figure each, and a layer's cost is MPI's figure over the lower layer's at
the same size (latency: how many times slower; bandwidth: which share MPI
keeps). Where a benchmark ran in several variants (providers, completion by
polling or blocking), its best value at each size stands for it. The
figures are built from these by report/figures.py (the `layers` view)."""

from __future__ import annotations

from dataclasses import dataclass

# (MPI benchmark, the benchmarks of the layers below it that do the same op)
PAIRS = (("message.pingpong", ("fabric.pingpong", "ucx.pingpong")),
         ("message.stream", ("fabric.stream", "ucx.stream")))


@dataclass(frozen=True)
class LayerCost:
    """MPI's figure against a lower layer's at one size."""
    upper: str
    lower: str
    metric: str            # "latency" (seconds per transfer) or "bandwidth" (bytes/s)
    size: int
    upper_value: float
    lower_value: float

    @property
    def ratio(self) -> float:
        """upper / lower: latency x times the lower layer's, or the share of its bandwidth."""
        return self.upper_value / self.lower_value


def _best(rows: list, metric: str) -> dict:
    """size -> the best value of one benchmark's rows over its variants (lowest latency, highest bandwidth)."""
    out: dict = {}
    for r in rows:
        v = r.latency_s if metric == "latency" else r.bandwidth_Bps
        if not v or r.active is not None:
            continue
        keep = out.get(r.size)
        if keep is None or (v < keep if metric == "latency" else v > keep):
            out[r.size] = v
    return out


def costs(run) -> list[LayerCost]:
    """Every (MPI, lower layer, size) that both measured, by size."""
    out = []
    by_bench: dict = {}       # one pass over the rows, not one a benchmark of every pair
    for r in run.rows:
        by_bench.setdefault(r.bench, []).append(r)
    for upper, lowers in PAIRS:
        metric = "latency" if upper.endswith("pingpong") else "bandwidth"
        up = _best(by_bench.get(upper, []), metric)
        for lower in lowers:
            low = _best(by_bench.get(lower, []), metric)
            out += [LayerCost(upper, lower, metric, s, up[s], low[s]) for s in sorted(set(up) & set(low))]
    return out
