"""What one point of the memory, deposit and message families holds (memory.c,
deposit*.c, message*.c, message_congestion.c), on footprint.py's model: each
family's `Footprint`, read off its kernels' allocations."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from . import atomics
from .congestion import victim_count
from .halo import degrees as halo_degrees
from .footprint import (EAGER_MAX, LINE, PAGE, STATE, At, Footprint, Role, ceil_div, const, extent, message,
                        mpi_count, page, requests, scatter_limit, scatter_receiver, strided_limit, unit_slots,
                        window_limit)


# ---- memory.c: rank 0 copies between two regions of `buffers` slots, each
# slot rounded up to a cache line; every rank holds its state.

def _copy(at: At) -> int:
    return 2 * page(at.buffers * ceil_div(at.size, LINE) * LINE) + PAGE


COPY = Footprint({"s": _copy, "r": STATE, "i": STATE})

# ---- deposit.c: ranks 0 and 1 expose `buffers` slots in a window each.
# Besides the window, the library's one-sided state: under MPICH 5.0.2 two ranks
# putting windows of 64 slots of 1 MiB held 193-194 MiB of PSS where the slots and
# RANK_BASE come to 192 MiB, so each side is given 8 MiB more.
RMA_LIBRARY = const(8 << 20)
RMA_PAIR = Footprint({"s": lambda at: at.slots, "r": lambda at: at.slots},
                     other={"s": RMA_LIBRARY, "r": RMA_LIBRARY},
                     limit=mpi_count(reason="size x stride exceeds an MPI int count"))
# One contiguous slot at the origin; the target spans the strided layout, and
# verify builds the expected words (size) beside it.
STRIDED_DIRECT = Footprint({"s": lambda at: page(at.size), "r": lambda at: page(extent(at)) + page(at.size)},
                           limit=strided_limit)
# The target's window is a contiguous staging slot, and it unpacks into an array of its own.
STRIDED_PACKED = Footprint({"s": lambda at: page(at.size),
                            "r": lambda at: 2 * page(at.size) + page(max(extent(at), 8))}, limit=strided_limit)
# The origin's window is one page; it stores from a private source array.
STRIDED_SHM = Footprint({"s": lambda at: PAGE + page(at.size),
                         "r": lambda at: page(extent(at)) + page(at.size)}, limit=strided_limit)
# deposit_patterns.c: every rank allocates a window, idle ranks one page.
RMA_BIPAIRS = Footprint({"b": lambda at: page(2 * at.size * at.buffers), "i": const(PAGE)}, limit=window_limit)
RMA_HOTSPOT_PUT = Footprint({"s": lambda at: at.slots, "t": lambda at: page(at.senders * at.size * at.buffers),
                             "i": const(PAGE)}, limit=window_limit)
RMA_HOTSPOT_GET = Footprint({"s": lambda at: at.slots, "t": lambda at: at.slots, "i": const(PAGE)},
                            limit=window_limit)


# deposit_atomic.c: ranks 0 and 1 (both issue ops under fence and pscw) hold a
# window of SIZE and one block: the operand, a scratch vector, a result slot per
# op of an aggregate flush (atomics.window) or one, and CAS's four values.
def _atomic(at: At) -> int:
    results = atomics.window(at.size, at.param("ops_per_flush")) if at.params.get("mode") == "aggregate" else 1
    return page(at.size) + page(at.size * (2 + results) + 32)


ATOMIC = Footprint({"s": _atomic, "r": _atomic}, limit=mpi_count())

# ---- message.c: a round trip keeps send and receive regions on both ranks;
# the windowed kernels the one their role uses.
MPI_PAIR = Footprint({"s": lambda at: 2 * at.slots + PAGE + requests(1),
                      "r": lambda at: 2 * at.slots + PAGE + requests(1), "i": STATE}, limit=mpi_count())


def _one_way(at: At) -> int:
    return at.slots + PAGE + requests(at.window)


MPI_STREAM = Footprint({"s": _one_way, "r": _one_way, "i": STATE}, limit=mpi_count())
# Full postal semantics: the receiver's library also holds a window of
# unexpected messages, up to its eager limit each.
MPI_POSTAL_FULL = Footprint({"s": _one_way, "r": _one_way, "i": STATE},
                            {"r": lambda at: at.window * min(at.size, EAGER_MAX)}, limit=mpi_count())
# message_conns.c: both regions on both ranks, a request and an op count per connection.
MPI_CONNS = Footprint({"s": lambda at: 2 * at.slots + PAGE + 2 * page(8 * at.conns),
                       "r": lambda at: 2 * at.slots + PAGE + 2 * page(8 * at.conns), "i": STATE},
                      limit=mpi_count())


# ---- message_mt.c: a pool's state, a 56-byte entry per thread of the run (idle ranks
# too), and per thread of an active rank both regions (and IMB-MT's 2 x window requests).
MT_THREAD = 56


def _mt_pool(entries: int, active: int, per_thread: int) -> int:
    return PAGE + page(MT_THREAD * entries) + active * per_thread


MPI_LATENCY_MT = Footprint(
    {"s": lambda at: _mt_pool(at.param("senders"), at.param("senders"), 2 * at.slots),
     "r": lambda at: _mt_pool(at.param("receivers"), at.param("receivers"), 2 * at.slots),
     "i": lambda at: _mt_pool(at.param("receivers"), 0, 0)}, limit=mpi_count())


def _mt_band(at: At) -> int:
    return _mt_pool(at.param("threads"), at.param("threads"), 2 * at.slots + requests(2 * at.window))


MPI_MT_BAND = Footprint({"s": _mt_band, "r": _mt_band, "i": lambda at: _mt_pool(at.param("threads"), 0, 0)},
                        limit=mpi_count())


# ---- message_patterns.c: every rank holds its state; a rank's regions by role.

def _flows(at: At, sends: int, receives: int) -> int:
    return PAGE + (sends + receives) * at.slots + requests((sends + receives) * at.window)


def _hotspot_target(at: At) -> int:
    senders = max(at.senders, 1)
    region = page(unit_slots(at, senders) * senders * at.size)
    return PAGE + page(4 * at.nranks) + region + requests(senders * at.window + at.nranks)


MPI_BOTH = Footprint({"b": lambda at: _flows(at, 1, 1), "i": STATE}, limit=mpi_count())
MPI_PAIRS = Footprint({"s": lambda at: _flows(at, 1, 0), "r": lambda at: _flows(at, 0, 1), "i": STATE},
                      limit=mpi_count())
MPI_HOTSPOT = Footprint({"s": lambda at: _flows(at, 1, 0), "t": _hotspot_target, "i": STATE}, limit=mpi_count())
# message_halo.c: IMB-P2P's stencils keep a send and a receive buffer per neighbour (4 or 6)
# and a request for each message; coll_neighbor.c: a neighbourhood collective's source and
# destination lists, its blocks (allgather sends one), and counts, displacements and types
# for the v and w forms (an MPI_Datatype: an int in MPICH, a pointer in Open MPI).
def _stencil(nb: int) -> Role:
    return lambda at: PAGE + 2 * page(nb * at.size) + requests(2 * nb)


def _neighbor(gathers: bool) -> Role:
    def held(at: At) -> int:
        ins, outs = (max(d, 1) for d in halo_degrees(at.params, at.nranks))
        lists = 2 * page(4 * (max(ins, outs) + 1)) + page(4 * max(ins, outs))   # and the weights
        blocks = page((1 if gathers else outs) * at.size) + page(ins * at.size)
        return PAGE + lists + blocks + 2 * page(4 * outs) + 2 * page(4 * ins) + 2 * page(8 * outs) + 2 * page(8 * ins)
    return held


HALO_2D = Footprint({"b": _stencil(4)}, limit=mpi_count())
HALO_3D = Footprint({"b": _stencil(6)}, limit=mpi_count())
NEIGHBOR_GATHER = Footprint({"b": _neighbor(True)}, limit=mpi_count())
NEIGHBOR_ALLTOALL = Footprint({"b": _neighbor(False)}, limit=mpi_count())
# message_ring.c: HPCC's ring keeps its four messages in two regions (to the right and left, from
# the left and right) and four requests, on every rank; its cross ping-pong is MPI_PAIR's.
MPI_RING = Footprint({"b": lambda at: PAGE + 2 * page(2 * at.size) + requests(4)}, limit=mpi_count())
# MPI_Alltoall may add a scratch array of N blocks: Bruck's algorithm, the one
# of MPICH's and Open MPI's that takes one, serves blocks of at most 256 and
# 200 bytes by default (MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE; coll_tuned's
# decision), so blocks are counted up to BRUCK_MAX.
BRUCK_MAX = 64 << 10
# The concurrent schedule keeps 2(N-1)W requests in flight, each a library
# object: 1.2-1.5 KiB a request measured (peak RSS of 4 ranks of 8-byte
# blocks, window 1 against 2048 and 4096, MPICH 5.0 and Open MPI 5.0), so
# REQUEST_BYTES bounds it. A rank a window ahead may leave that window's
# (N-1)W messages unexpected at a peer, each buffered up to the eager limit
# (as in full postal semantics); no rank gets further ahead, since finishing
# a window needs every peer's sends of it.
REQUEST_BYTES = 2 << 10
FILL_WINDOW_MAX = 4096        # the most exchanges fill= puts in a window (message_patterns.c)


def _alltoall_window(at: At) -> int:
    """Exchanges per window: the window param, grown by fill= at small sizes (concurrent only)."""
    if at.params.get("variant", "collective") != "concurrent":
        return 1
    fill = at.param("fill") if "fill" in at.params else 0
    grown = min(ceil_div(fill, at.size), FILL_WINDOW_MAX) if at.size and fill else 0
    return max(at.window, grown)


def _alltoall(at: At) -> int:
    """Send and receive regions of arrays of N blocks, a window of arrays at least under per-op."""
    w = _alltoall_window(at)
    arrays = unit_slots(at, at.nranks, at.own_of(w))
    return PAGE + 2 * page(arrays * at.nranks * at.size) + requests(2 * at.nranks * w)


def _alltoall_library(at: At) -> int:
    variant = at.params.get("variant", "collective")
    if variant == "collective":
        return at.nranks * min(at.size, BRUCK_MAX)
    if variant == "pairwise":
        return 0
    flows = (at.nranks - 1) * _alltoall_window(at)
    return 2 * flows * REQUEST_BYTES + flows * min(at.size, EAGER_MAX)


MPI_ALLTOALL = Footprint({"b": _alltoall}, {"b": _alltoall_library}, limit=mpi_count())


# ---- message_scatter.c: the sender's message slots, the receiver's blocks
# of twice a message (and, mode=copy, its staging slots).

MPI_SCATTER = Footprint({"s": lambda at: PAGE + page(message(at)[0] * message(at)[1]) + requests(at.window),
                         "r": lambda at: PAGE + scatter_receiver(at) + requests(at.window), "i": STATE},
                        limit=scatter_limit)


# ---- message_congestion.c: a victim's ring slots or vectors; an aggressor's
# flows (each of the A - 1 others both ways at most: alltoall, an incast's
# hotspot, a pattern's roles s r b t) or its one-sided slots and window.
MPI_STATUS = 32              # an MPI_Status: 20 bytes in MPICH, 24 in Open MPI; 32 bounds both


def _victim(at: At, allreduce: bool) -> int:
    if allreduce:
        return PAGE + 2 * page(at.size)
    w = at.param("window") if "window" in at.params else 1
    return PAGE + page(w * at.size) + page(2 * w * at.size) + requests(4 * w)


def _flows_held(at: At, ndst: int, nsrc: int) -> int:
    """A two-sided aggressor's flows: a window of send slots, a window of receive slots per
    source, a request, an index and a status per message in flight, the sources' end marks."""
    w, m = at.param("aggressor_window"), at.param("aggressor_size")
    reqs = (ndst + nsrc) * w
    return (PAGE + page(w * m) + page(nsrc * w * m) + requests(reqs) + page(4 * reqs)
            + page(MPI_STATUS * reqs) + page(nsrc + 1) + 2 * page(4 * at.nranks))


def _one_sided(at: At, hotspot: bool) -> int:
    """A one-sided aggressor: its slots both ways, a request per message, and its part of the
    window (the hotspot's every origin's slots for put, one window's for get)."""
    w, m, origins = at.param("aggressor_window"), at.param("aggressor_size"), max(at.active - 1, 1)
    window = (origins * w * m if at.params.get("aggressor") == "put_incast" else w * m) if hotspot else 0
    return PAGE + 2 * page(w * m) + requests(w) + page(window)


def _aggressor(role: str) -> Callable[[At], int]:
    """By role: 'a' every other aggressor both ways (alltoall) or a one-sided origin; a
    pattern's s (one destination), r (one source), b (one each), t (every sender, or the
    one-sided hotspot)."""
    def held(at: At) -> int:
        others = max(at.active - 1, 1)
        if at.params.get("aggressor") in ("put_incast", "get_bcast"):
            return _one_sided(at, role == "t")
        return _flows_held(at, *{"a": (others, others), "s": (1, 0), "r": (0, 1), "b": (1, 1),
                                 "t": (0, others)}[role])
    return held


def congestion(allreduce: bool = False) -> Footprint:
    return Footprint({"v": lambda at: _victim(at, allreduce), "i": STATE,
                      **{role: _aggressor(role) for role in "asrbt"}}, limit=mpi_count())


def congestion_of(bench: Callable[[str], object]) -> Footprint:
    """message_victim.c: a victim holds the congestion state, its run of the benchmark the
    param `victim` names (`bench(name)`, a registry entry: a page, and a pattern benchmark's
    layout of the victims) and what that benchmark's point holds on the victims' communicator,
    every victim active in a pattern benchmark's, the larger of ranks 0 and 1 in a two-rank
    one's (what its init allocates, a kernel's small state, is not stated)."""
    def inner(at: At):
        b = bench(str(at.params.get("victim")))
        v = victim_count(at.nranks, int(at.params.get("victims") or 0))
        return b, replace(at, nranks=v, active=v, senders=0, params=dict(b.defaults)), ("b",) if b.pattern else "sr"

    def alloc(at: At) -> int:
        b, a, roles = inner(at)
        layout = page(a.nranks) + page(4 * a.nranks) if b.pattern else 0
        return 2 * PAGE + layout + max(b.footprint.allocated(r, a) for r in roles)

    def other(at: At) -> int:
        b, a, roles = inner(at)
        return max(b.footprint.bytes(r, a) - b.footprint.allocated(r, a) for r in roles)
    return Footprint({"v": alloc, "i": STATE, **{role: _aggressor(role) for role in "asrbt"}},
                     {"v": other}, limit=mpi_count())
