"""The benchmark facts, as data: the one place they are written.

Each entry names a kernel of the C core and says everything else about it:
its summary, the figure that leads its table (`metric`), its axes, its
parameters (`Param`: a default and the values accepted), the ranks it needs,
how its time becomes figures (`legs`, `concurrent`), the rank layout of a traffic
pattern (`pattern`) and its default sweep. The core is compiled with these
facts (build.py generates its table from REGISTRY, parameter rules
included), so the two cannot drift; `fabriclab-core --list` prints them back
and names any kernel without facts.

Time to figures (IMB's scale_time/scale_bw): an op of a `sequential`
benchmark is `legs` one-way transfers in a row, so one transfer takes
sample / legs (ping-pong: 2). A `concurrent` op moves all its transfers at
once (bidirectional, all-to-all), so the op's time is the figure and the
bytes of all ranks count together.

`sizes` and the other sweeps are the defaults of `fabriclab run BENCH`. The
default suite (`fabriclab run` alone) runs the benchmarks whose `suite` is not
None, with the sweeps that `suite` shortens, so that it finishes within 3
minutes on a 2-core machine; patterns that need more ranks to mean anything
(hotspot, saturation, all-to-all, bisection) run only when named.

The entries are written by family (entries_memory.py, entries_message.py,
entries_sockets.py, entries_below_mpi.py, entries_collective.py) with the
types of facts.py and the shared parameter sets of param_sets.py; REGISTRY
joins them here in this order."""

from __future__ import annotations

from ..errors import UsageError
from . import entries_below_mpi, entries_collective, entries_memory, entries_message, entries_sockets
from .collectives import Collective
from .facts import Bench

LEVELS = {
    "memory": "local copy throughput of one process (ECT: contiguous and strided loads/stores)",
    "deposit": "one-sided remote deposit: MPI_Put/MPI_Get and stores through a shared-memory window",
    "message": "two-sided MPI message passing: ping-pong, streaming, postal semantics, traffic patterns",
    "tcp": "TCP/IP sockets between ranks: request/response (busy-poll, blocking, epoll), streaming, "
           "many connections, scatter",
    "udp": "UDP sockets between ranks: a stream at a set rate (loss, jitter, reordering), request/response "
           "that survives a lost datagram, latency under load (sockperf's under-load mode)",
    "fabric": "libfabric below MPI: send/receive, RMA write/read, registration, patterns and the VI "
              "Architecture experiments on a provider (shm, tcp, verbs, efa, cxi, ...)",
    "ucx": "UCX's UCP below MPI: tagged send/receive, put/get with remote keys, memory mapping",
    "app": "the seeds' applications on 1..N ranks: distributed transpose (seed 000), matrix multiply and "
           "bucket sort (seed 003), each op timed by phase",
    "coll": "MPI collectives on 2..N ranks: blocking, non-blocking and persistent, with bus bandwidth "
            "(nccl-tests' factors)",
    "noise": "the machine's own noise on every rank's core: fixed work quanta (FWQ) and selfish detours",
}
# The levels that need a library to be built (measure/libraries.py); a core
# without it lists their benchmarks as unavailable.
LIBRARY_LEVELS = ("fabric", "ucx")

REGISTRY: dict[str, Bench] = {b.name: b for b in [
    *entries_memory.ENTRIES, *entries_message.entries(lambda name: REGISTRY[name]), *entries_sockets.ENTRIES,
    *entries_below_mpi.ENTRIES, *entries_collective.ENTRIES]}


def coll_of(name: str) -> Collective | None:
    """The collective a benchmark runs (collectives.py), None for any other or an unknown name."""
    b = REGISTRY.get(name)
    return b.coll if b else None


def in_view(key: str) -> tuple:
    """The benchmarks a report view shows, in registry order."""
    return tuple(b.name for b in REGISTRY.values() if key in b.views)


def suite() -> list[Bench]:
    """The default suite, in registry order, with its sweeps."""
    return [b.for_suite() for b in REGISTRY.values() if b.suite is not None]


def select(names: list[str] | None) -> list[Bench]:
    """Benchmarks named by levels ("message") or full names ("message.pingpong").

    None or an empty list selects the default suite (`suite`); a level
    selects all its benchmarks, in registry order."""
    if not names:
        return suite()
    chosen: list[Bench] = []
    for name in names:
        if name in LEVELS:
            picked = [b for b in REGISTRY.values() if b.level == name]
        elif name in REGISTRY:
            picked = [REGISTRY[name]]
        else:
            raise UsageError(f"unknown benchmark or level {name!r}; `fabriclab list` shows them")
        chosen.extend(b for b in picked if b not in chosen)
    return chosen
