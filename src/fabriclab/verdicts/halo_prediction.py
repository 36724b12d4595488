"""The halo exchanges against the model of the network the run crossed.

An op of IMB-P2P's stencils (message.stencil2d/3d) and of a neighbourhood
collective (coll.neighbor_*) sends SIZE bytes from every rank to each of
its neighbours (suite/halo.py: destinations), every message at once
(Irecv, Isend, Waitall). With the network file the run crossed, every rank
is placed on the file's node of its host name (verdicts/placement.py), the
messages become flows between nodes (ranks that share a node send nothing
over the network), and model/exchange.py predicts the op's time as for
the applications' exchange phases (verdicts/exchange_prediction.py): the
busiest resource's work, one step. The measured op time is the point's
median (the slowest rank's). The run document keeps the rows as its
`halo_model` block, in the form of the apps' `exchange_model`."""

from __future__ import annotations

from ..analysis import merge
from ..model.exchange import exchange_time
from ..suite import halo
from ..suite.benchmarks import REGISTRY
from .exchange_prediction import TOLERANCE, read_network
from .placement import nodes_of

SCHEDULE = "every message at once (Irecv, Isend, Waitall): one step"


def modelled(bench: str) -> bool:
    """Whether the model predicts the benchmark's op (a stencil or a neighbourhood collective)."""
    return bench.startswith("message.stencil") or bench.startswith("coll.neighbor_")


def flows(p, nodes: list) -> list | None:
    """Point p's op as flows (source node, destination node, bytes) between the network's
    nodes; None where a rank's host is no node or the neighbours are unknown."""
    n = len(p.roles or "") or p.active or 0
    where = [nodes[r] if r < len(nodes) else None for r in range(n)]
    params = {**REGISTRY[p.bench].defaults, **(p.params or {})}
    dest = halo.destinations(p.bench, params, n) if n else None
    if not dest or None in where:
        return None
    total: dict = {}
    for r, qs in enumerate(dest):
        for q in qs:
            if where[r] != where[q]:
                total[(where[r], where[q])] = total.get((where[r], where[q]), 0.0) + p.size
    return [(s, d, b) for (s, d), b in total.items()]


def rows(points: list, hosts: list, system, calibration=None) -> list[dict]:
    """One row per halo point whose ranks sit on the network's nodes and send across it."""
    nodes = nodes_of(hosts, system.topo.node_names)
    out = []
    for p in points:
        if not modelled(p.bench) or p.bench not in REGISTRY or p.size <= 0 or p.summary.median <= 0:
            continue
        found = flows(p, nodes)
        if not found:
            continue
        ex = exchange_time(system, found, calibration)
        ratio = p.summary.median / ex.seconds
        out.append({"bench": p.bench, "variant": p.variant, "size": p.size, "active": p.active or len(nodes),
                    "measured_s": p.summary.median, "predicted_s": ex.seconds, "ratio": ratio,
                    "verdict": "agrees" if abs(ratio - 1) <= TOLERANCE else ("slower" if ratio > 1 else "faster"),
                    "bottleneck": ex.bottleneck, "bottleneck_rate_Bps": ex.rate_Bps, "schedule": SCHEDULE,
                    "steps": 1, "network_bytes": sum(b for _, _, b in found)})
    return out


def predictor(network: str, calibration: str | None = None):
    """doc -> the document's `halo_model` block ({} when no halo point crossed the network);
    the files are read now, so a bad one ends a run before anything is launched."""
    system, cal = read_network(network, calibration)

    def block(doc) -> dict:
        found = rows(merge.merged(doc), doc.header.hosts or [], system, cal)
        if not found:
            return {}
        return {"halo_model": {"network": str(network), "calibration": calibration, "tolerance": TOLERANCE,
                               "rows": found}}
    return block
