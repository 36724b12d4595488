""""Is this collective's figure normal?": each coll point against the model of
the network the run crossed (model/schedules.py, schedule_time.py).

With a network file (a testbed's own, or `--network FILE` on real hosts),
each active rank is placed on the file's node of its host name (placement.py), and the
point's operation is timed on the network as a schedule: the algorithm the
library reports in force (or was asked for) where the model has it, else
(`auto`, or a name the model has no schedule for) the fastest of the model's
algorithms, the best the network allows. alpha and gamma come from the
calibration file (`fabriclab calibrate RUN.json --collectives`), else the
model's assumed values, and the block says which. The run document stores
the prediction beside the measured median as its `coll_model` block
(docs/collectives.md), which show and the report read."""

from __future__ import annotations

import numpy as np

from ..analysis import merge
from ..errors import UsageError
from ..model.calibration import load_file
from ..model.collective import ALPHA, GAMMA
from ..model.netfile import NetworkFile
from ..model.schedule_time import Network
from ..model.schedules import ALGORITHMS, LIBRARY_NAMES, schedule
from .placement import nodes_of

TOLERANCE = 0.10          # measured within 10% of the prediction: "agrees"
# The v forms with equal counts, and the block reduce-scatter, move what their plain forms move.
AS_MODELLED = {"allgatherv": "allgather", "gatherv": "gather", "scatterv": "scatter", "alltoallv": "alltoall",
               "reduce_scatter_block": "reduce_scatter"}
FASTEST = "fastest"


def modelled(bench: str) -> str | None:
    """The model's operation for a coll benchmark, None where it has no schedules."""
    op = bench.partition(".")[2] if bench.startswith("coll.") else ""
    op = AS_MODELLED.get(op, op)
    return op if op in ALGORITHMS else None


def cost_sources(items) -> tuple:
    """(the point alpha is read from, the point gamma is read from), None where the run has
    none, from merged points or report rows alike: message.pingpong at its smallest size
    (its one-way time), coll.reduce_local at its largest size on the fewest ranks (ranks
    reducing at once share the memory's bandwidth; one over its bandwidth)."""
    ping = [x for x in items if x.bench == "message.pingpong" and x.latency_s]
    red = [x for x in items if x.bench == "coll.reduce_local" and x.bandwidth_Bps]
    alpha = min(ping, key=lambda x: (x.size, x.latency_s)) if ping else None
    big = max((x.size for x in red), default=None)
    gamma = min((x for x in red if x.size == big), key=lambda x: (x.active or 1, x.median_s)) if red else None
    return alpha, gamma


def _algorithm(op: str, p) -> str:
    """The model's schedule for the point: what the library ran, else what was asked, else FASTEST."""
    for name in ((p.info or {}).get("algorithm_in_force"), (p.params or {}).get("algorithm")):
        mapped = LIBRARY_NAMES.get(op, {}).get(str(name))
        if mapped:
            return mapped
    return FASTEST


def row(p, net: Network, where: list, alpha: float, gamma: float) -> dict:
    """One point's prediction; `where` is the node of each active rank."""
    op = modelled(p.bench)
    root = int((p.params or {}).get("root", 0) or 0)
    times = {a: net.time(schedule(op, a, p.active, p.size, root % p.active), alpha, gamma, where)
             for a in ALGORITHMS[op]}
    alg = _algorithm(op, p)
    chosen = min(times, key=lambda a: times[a].seconds) if alg == FASTEST else alg
    t = times[chosen]
    measured = p.summary.median
    ratio = measured / t.seconds if t.seconds > 0 else float("inf")
    return {"bench": p.bench, "variant": p.variant or "", "size": p.size, "active": p.active,
            "algorithm": chosen, "as": "fastest of the model's" if alg == FASTEST else "the library's",
            "measured_s": measured, "predicted_s": t.seconds, "ratio": ratio,
            "verdict": "agrees" if abs(ratio - 1) <= TOLERANCE else ("slower" if ratio > 1 else "faster"),
            "bottleneck": t.bottleneck, "busiest": t.busiest,
            "predictions": {a: x.seconds for a, x in times.items()}}


def rows(points: list, hosts: list, system, alpha: float, gamma: float, calibration=None) -> list[dict]:
    """One row per coll point of an operation the model has, on 2 or more ranks whose hosts
    are nodes of the network, with bytes to move."""
    on = nodes_of(hosts, system.topo.node_names)
    net = Network(system, calibration=calibration)
    out = []
    for p in points:
        if not modelled(p.bench) or not p.active or p.active < 2 or p.size <= 0 or not p.summary.median:
            continue
        where = [on[r] if r < len(on) else None for r in range(p.active)]
        if None in where:
            continue
        out.append(row(p, net, where, alpha, gamma))
    return out


def calibrated(calibration: str | None) -> tuple:
    """(the calibration or None, alpha, gamma, {cost: "calibrated" | "assumed"}): alpha and
    gamma from the calibration file where it has them, else the model's assumed values."""
    cal = load_file(calibration) if calibration else None
    alpha = cal.alpha_s if cal and cal.alpha_s is not None else ALPHA
    gamma = cal.gamma_s_per_byte if cal and cal.gamma_s_per_byte is not None else GAMMA
    costs = {"alpha": "calibrated" if cal and cal.alpha_s is not None else "assumed",
             "gamma": "calibrated" if cal and cal.gamma_s_per_byte is not None else "assumed"}
    return cal, alpha, gamma, costs


def system(network: str):
    """The network file as the model's system; UsageError in one line when it cannot be read."""
    try:
        return NetworkFile(network)
    except OSError as e:
        raise UsageError(f"cannot read the network file {network}: {e.strerror}") from None


def placed(network: str | None, hosts: list, calibration: str | None = None) -> tuple:
    """(the model's Network of the file, each rank's node index) where every
    host of the run is a node of the network file; (None, None) otherwise."""
    if not network:
        return None, None
    net = system(network)
    where = nodes_of(hosts, net.topo.node_names)
    if not hosts or None in where:
        return None, None
    cal, _, _, _ = calibrated(calibration)
    return Network(net, calibration=cal), np.array(where)


def predictor(network: str, calibration: str | None = None):
    """doc -> the document's `coll_model` block ({} when no point could be predicted); the
    files are read now, so a bad one ends a run before anything is launched."""
    net = system(network)
    cal, alpha, gamma, costs = calibrated(calibration)

    def block(doc) -> dict:
        found = rows(merge.merged(doc), doc.header.hosts or [], net, alpha, gamma, cal)
        if not found:
            return {}
        return {"coll_model": {"network": str(network), "calibration": calibration, "tolerance": TOLERANCE,
                               "alpha_s": alpha, "gamma_s_per_byte": gamma, "costs_from": costs, "rows": found}}
    return block
