"""The applications' exchange phases against the model of the network the run crossed.

The transpose and the sort (suite/apps.py) exchange known bytes between
every pair of active ranks. With the network file the run crossed (a
testbed's own file, or `--network FILE` on real hosts, with `--calibration`
from `fabriclab calibrate`), every rank is placed on the file's node of its
host name, the bytes between ranks become flows between nodes (ranks that
share a node send nothing over the network), and model/exchange.py predicts
the phase's time: the busiest resource's work, summed over the steps of a
pairwise exchange. The run document stores the
prediction beside the measured phase (its median over the samples) as its
`exchange_model` block (docs/apps.md), which the report draws."""

from __future__ import annotations

from ..analysis import merge
from ..errors import UsageError
from ..model.calibration import load_file
from ..model.exchange import exchange_time
from ..model.netfile import NetworkFile
from ..suite.benchmarks import REGISTRY
from .placement import nodes_of

TOLERANCE = 0.15          # measured within 15% of the prediction: "agrees"


# MPICH's MPI_Alltoall sends blocks above MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE
# (32768 bytes) in pairwise exchange steps: at step k rank r exchanges with
# r XOR k where the rank count is a power of two, else sends to r + k
# (Thakur, Rabenseifner and Gropp, "Optimization of collective communication
# operations in MPICH", 2005). Its MPI_Alltoallv (uneven blocks,
# the sort) posts every message at once in batches of MPIR_CVAR_ALLTOALL_THROTTLE
# (32): every flow at once, as the other libraries' collectives are predicted.
MPICH_PAIRWISE_ABOVE = 32768


def _library_steps(p, params: dict, pairs: dict, flavour: str) -> list | None:
    """The steps of the MPI collective where the library's schedule is known
    (MPICH's MPI_Alltoall of even blocks above MPICH_PAIRWISE_ABOVE), else None."""
    n = p.active
    even = len(set(pairs.values())) == 1
    if (flavour != "mpich" or p.bench != "app.transpose" or params.get("mode", "packed") != "packed"
            or params.get("exchange", "collective") != "collective" or not even
            or next(iter(pairs.values())) <= MPICH_PAIRWISE_ABOVE):
        return None
    if n & (n - 1) == 0:
        return [[(r, r ^ k) for r in range(n)] for k in range(1, n)]
    return [[(r, (r + k) % n) for r in range(n)] for k in range(1, n)]


def _steps(p, nodes: list, flavour: str = "") -> tuple[list, str] | None:
    """The exchange of point p as the steps it runs in, each a list of
    (source node, destination node, bytes), and the schedule's name; None
    when a rank's host is not a node of the network (`nodes`: each rank's node or None). Every flow at once is
    one step; pairwise, step k sends from rank r to rank r + k (app.h); the
    MPI collective as its library runs it where that is known."""
    params = {**REGISTRY[p.bench].defaults, **p.params}
    where = [nodes[r] if r < len(nodes) else None for r in range(p.active)]
    if None in where:
        return None
    pairs = REGISTRY[p.bench].app.exchange(p.size, p.active, params)
    n = p.active
    pairwise = params.get("exchange") == "pairwise" and params.get("mode", "packed") == "packed"
    library = _library_steps(p, params, pairs, flavour)
    groups = ([[(r, (r + k) % n) for r in range(n)] for k in range(1, n)] if pairwise
              else library or [list(pairs)])
    steps = []
    for group in groups:
        total: dict = {}
        for a, b in group:
            if where[a] != where[b]:
                total[(where[a], where[b])] = total.get((where[a], where[b]), 0.0) + pairs[(a, b)]
        if total:
            steps.append([(s, d, b) for (s, d), b in total.items()])
    if library:
        return steps, ("MPICH's MPI_Alltoall: pairwise steps, partner rank XOR k" if n & (n - 1) == 0
                       else "MPICH's MPI_Alltoall: pairwise steps, rank r to r + k") + ", one after another"
    if pairwise and params.get("sync") == "none":
        return steps, SCHEDULES["pairwise, sync=none"]
    return steps, SCHEDULES[params.get("exchange", "collective") if params.get("mode", "packed") == "packed"
                            else "collective"]


# What the prediction assumes of each schedule (the `exchange` parameter).
SCHEDULES = {"concurrent": "every flow at once",
             "pairwise": "pairwise steps, each step's flows at once, a barrier between steps (app.h)",
             # Without the barrier the lockstep sum is what the steps would take one after another;
             # ranks that drift overlap them, and the measurement may exceed it (docs/apps.md).
             "pairwise, sync=none": "pairwise steps without a barrier, predicted as if they ran one after "
                                    "another",
             "collective": "the library's collective, predicted as every flow at once (its own schedule may "
                           "run in steps: exchange=concurrent or pairwise names one the model follows)"}
# The MPI library's flavour (the run header's mpi.flavour) decides _library_steps.


def rows(points: list, hosts: list, system, calibration=None, flavour: str = "") -> list[dict]:
    """One row per exchanging app point whose ranks sit on the network's nodes."""
    nodes = nodes_of(hosts, system.topo.node_names)
    out = []
    for p in points:
        measured = p.phase_medians.get("exchange")
        app = REGISTRY[p.bench].app if p.bench in REGISTRY else None
        if not app or not app.exchanges or not p.active or p.active < 2 or not measured:
            continue
        found = _steps(p, nodes, flavour)
        if not found or not found[0]:
            continue
        steps, schedule = found
        times = [exchange_time(system, flows, calibration) for flows in steps]
        ex = max(times, key=lambda e: e.seconds)
        predicted = sum(e.seconds for e in times)
        ratio = measured / predicted
        out.append({"bench": p.bench, "variant": p.variant, "size": p.size, "active": p.active,
                    "measured_s": measured, "predicted_s": predicted, "ratio": ratio,
                    "verdict": "agrees" if abs(ratio - 1) <= TOLERANCE else ("slower" if ratio > 1 else "faster"),
                    "bottleneck": ex.bottleneck, "bottleneck_rate_Bps": ex.rate_Bps, "schedule": schedule,
                    "steps": len(steps), "network_bytes": sum(b for flows in steps for _, _, b in flows)})
    return out


def read_network(network: str, calibration: str | None):
    """The network file as a system and the calibration's rates, read now (UsageError in one line)."""
    try:
        system = NetworkFile(network)
    except OSError as e:
        raise UsageError(f"cannot read the network file {network}: {e.strerror}") from None
    return system, load_file(calibration) if calibration else None


def predictor(network: str, calibration: str | None = None):
    """doc -> the document's `exchange_model` block ({} when no point exchanged
    across the network); the network and calibration files are read now, so
    a bad one ends a run before anything is launched."""
    system, cal = read_network(network, calibration)

    def block(doc) -> dict:
        found = rows(merge.merged(doc), doc.header.hosts or [], system, cal, doc.header.mpi.get("flavour", ""))
        if not found:
            return {}
        return {"exchange_model": {"network": str(network), "calibration": calibration, "tolerance": TOLERANCE,
                                   "rows": found}}
    return block
