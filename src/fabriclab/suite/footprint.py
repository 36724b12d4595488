"""What one point of a benchmark holds in memory, and which points a kernel cannot carry.

Every benchmark in the registry (benchmarks.py) declares a `Footprint`: for
each role a rank can take (the layout letters of patterns.py: `s` sender or
origin, `r` receiver or target of a pair, `t` hotspot target, `b` both, `i`
idle; two-rank benchmarks are rank 0 `s`, rank 1 `r`, the rest `i`), the
bytes of one point in two parts:

- `alloc`: what its kernel allocates, read off csrc/families: every
  fl_alloc in whole pages (util.c), MPI windows (fl_win_bytes, whole pages),
  UCX's mapped regions; send and receive regions of `buffers` slots of
  `size` bytes (the cache state, buffers.py), strided layouts that span
  size x stride bytes, the all-to-all's arrays of N blocks, a hotspot
  target's slots per sender, the kernel's state and request arrays (a page
  each where it takes them from fl_alloc), and what verify allocates. The
  core reports what each rank's kernel held from setup through verify
  (`rank_alloc_bytes`), and tests/integration/test_alloc_real.py holds this
  part of every benchmark within 15% of that report.
- `other`: what the point costs without the kernel allocating it: what TCP
  sockets may queue, the MPI library's buffers for unexpected messages, its
  request objects and collective scratch.

Each figure is an upper bound of what the point holds; capacity.py adds the
MPI library and the core, sums the ranks of each host and compares the
largest point with the memory there.

`limit` says which points the kernel skips without allocating, with the
core's reason: an MPI count is a C int, so sizes above INT_MAX bytes cannot
travel in one message (MPI-3.1 sec. 3.2.2: `int count`); strided deposits
need whole 8-byte words; the TCP stream, connections and scatter need a payload."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..units import parse_size
from . import apps, atomics, buffers
from .collectives import DTYPES
from .congestion import victim_count
from .halo import degrees as halo_degrees

INT_MAX = (1 << 31) - 1
PAGE = 4096
LINE = 64                    # memory.c: slots start on cache lines (SLOT_ALIGN)
STREAM_CHUNK = 4 << 20       # tcp.c: T_STREAM_CHUNK, the stream receiver's smallest region
MAX_BURST_OPS = 4096         # tcp.c: T_MAX_BURST_OPS
MIN_OPS_PER_ACK = 128        # via.h: ops per ack at least
# An MPI request handle: an int in MPICH, a pointer in Open MPI.
REQUEST = 8
# libfabric's struct fi_context2 (eight pointers), and fabric_plumbing.h's fab_net and
# fab_mr, which fabric.conns keeps one of per connection (x86-64 sizes).
FI_CONTEXT2 = 64
FAB_NET = 120
FAB_MR = 32
# Unexpected messages (full postal semantics) wait in the library's buffers
# only up to its eager limit; larger ones rendezvous and wait at the sender.
# Eager limits: MPICH ch4 16-64 KiB, Open MPI ob1 4-64 KiB; 64 KiB bounds both.
EAGER_MAX = 64 << 10
# The most a set of TCP connections moves per second on one host (memory
# bandwidth, above any loopback or NIC): bounds what a sample can leave
# queued in the sockets besides the ops before an ack.
TCP_RATE_MAX = 100e9


@dataclass(frozen=True)
class At:
    """One point as a kernel sees it in setup."""
    size: int
    buffers: int = 1
    stride: int = 1
    conns: int = 1
    nranks: int = 2
    senders: int = 0                 # hotspot: the ranks that address the target
    active: int = 0                  # apps: the ranks the problem is divided over
    params: dict = field(default_factory=dict)   # every parameter, defaults filled in
    sample_time: float = 2e-5
    sock_send: int = 4 << 20         # the most one socket may queue to send (tcp_wmem max, or 2 x sndbuf)
    sock_recv: int = 6 << 20         # ... and to receive (tcp_rmem max, or 2 x rcvbuf)

    def param(self, key: str) -> int:
        return parse_size(str(self.params[key]), key)

    @property
    def window(self) -> int:
        """Ops in flight per completion (the window param; 1 without one)."""
        return self.param("window") if "window" in self.params else 1

    @property
    def own(self) -> int:
        """Ops of a window that take a buffer of their own (window_buffers, buffers.py)."""
        return self.own_of(self.window)

    def own_of(self, window: int) -> int:
        return buffers.own(window, self.params.get("window_buffers", buffers.LAYOUTS[0]))

    @property
    def slots(self) -> int:
        """A region of `buffers` slots of `size` bytes, in whole pages: what ops rotate through."""
        return page(self.size * self.buffers)

    @property
    def wire(self) -> int:
        """TCP bytes per message: size, at least 1 (tcp.c)."""
        return max(self.size, 1)


Role = Callable[[At], int]


@dataclass(frozen=True)
class Footprint:
    """Bytes per rank of one point by role (what the kernel allocates, and
    what the point costs besides), and the points the kernel skips."""
    alloc: dict                                   # role letter -> Callable[[At], int]
    other: dict = field(default_factory=dict)     # role letter -> Callable[[At], int]
    limit: Callable[[At], str | None] = lambda at: None   # the core's skip reason, or None

    def allocated(self, role: str, at: At) -> int:
        """What the kernel of a rank in `role` allocates: what the core reports."""
        fn = self.alloc.get(role)
        return fn(at) if fn else 0

    def bytes(self, role: str, at: At) -> int:
        """All the point holds on a rank in `role`."""
        fn = self.other.get(role)
        return self.allocated(role, at) + (fn(at) if fn else 0)


# ---- the kernels' arithmetic ----

def page(n: int) -> int:
    """Whole pages, at least one: fl_alloc (util.c) and MPI windows (fl.h, fl_win_bytes)."""
    return PAGE if n <= 0 else -(-n // PAGE) * PAGE


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def const(n: int) -> Role:
    return lambda at: n


STATE = const(PAGE)          # a kernel state from fl_alloc (idle ranks hold it too)


def requests(n: int) -> int:
    """An array of n MPI requests from fl_alloc."""
    return page(REQUEST * n)


def unit_slots(at: At, units: int, own: int | None = None) -> int:
    """Slots per unit where one op takes `units` slot-sized pieces (fl.h,
    fl_unit_slots): the point's buffers shared among them, and a slot for
    each op of a window that takes its own (fl_own_slots) at least."""
    k = ceil_div(at.buffers, units) if units > 1 else at.buffers
    return max(k, at.own if own is None else own, 1)


def extent(at: At) -> int:
    """Bytes a strided deposit spans at the target: (words - 1) x stride + 1 words."""
    words = at.size // 8
    return ((words - 1) * at.stride + 1) * 8 if words else 0


def message(at: At, own: int | None = None) -> tuple[int, int]:
    """Scatter: (bytes of one message of `segments` segments, message slots per side)."""
    segments = at.param("segments")
    return segments * at.size, unit_slots(at, segments, own)


def sockets(at: At, conns: int, ops_per_ack: int, msg: int) -> int:
    """Bytes the kernel may queue in a rank's sockets: each connection's send
    and receive queues, but no more than a sample can leave in flight (the
    sender waits for an ack after every measure call: its ops plus what
    sample_time at TCP_RATE_MAX moves), twice over for the kernel's
    per-buffer overhead (skb truesize)."""
    per_conn = at.sock_send + at.sock_recv
    in_flight = ops_per_ack * msg + at.sample_time * TCP_RATE_MAX
    return int(min(conns * per_conn, 2 * in_flight))


# ---- limits: the reasons the core gives when it skips a point ----

def mpi_count(reason: str = "size above INT_MAX bytes (MPI int count)") -> Callable[[At], str | None]:
    """One message of `size` bytes: its count must fit a C int."""
    return lambda at: reason if at.size > INT_MAX else None


def strided_limit(at: At) -> str | None:
    """deposit.c: whole words, and the span at the target within an int count."""
    if at.size % 8:
        return "strided sizes are whole 8-byte words and strides >= 1"
    if at.size > INT_MAX or extent(at) > INT_MAX // 8 * 8:
        return "size x stride exceeds an MPI int count"
    return None


def scatter_limit(at: At) -> str | None:
    """via.c, scatter_segments: shared by message.scatter and tcp.scatter."""
    if at.size == 0:
        return "no payload to scatter"
    if at.size > INT_MAX // 2 // at.param("segments"):
        return "message above INT_MAX/2 bytes (MPI int count)"
    return None


def window_limit(at: At) -> str | None:
    """deposit_patterns.c: a window's slots are addressed with an int count."""
    if at.size > INT_MAX:
        return f"size {at.size} x {at.buffers} buffers does not fit an MPI window"
    return None


def payload(reason: str) -> Callable[[At], str | None]:
    return lambda at: reason if at.size == 0 else None


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

def _scatter_receiver(at: At) -> int:
    msg, slots = message(at)
    staged = at.params.get("mode") == "copy"
    return page(2 * msg * slots) + (page(msg * slots) if staged else 0)


MPI_SCATTER = Footprint({"s": lambda at: PAGE + page(message(at)[0] * message(at)[1]) + requests(at.window),
                         "r": lambda at: PAGE + _scatter_receiver(at) + requests(at.window), "i": STATE},
                        limit=scatter_limit)


# ---- tcp.c: request/response and stream, one connection made once per run;
# the sockets' queues are the kernel's memory, not the core's.
def _rr(at: At) -> int:
    return 2 * page(at.wire * at.buffers)


def _stream(at: At) -> int:
    region = at.wire * at.buffers
    return page(region) + page(max(region, STREAM_CHUNK))


def _stream_sockets(at: At) -> int:
    burst = min(MAX_BURST_OPS, max(1, ceil_div(at.param("burst"), at.wire)))
    both = at.params.get("direction") == "bidir"
    conns = int(at.params.get("streams", 1)) * (2 if both else 1)
    return sockets(at, conns, burst, at.wire) * (2 if both else 1)


def _streams_of(role: str):
    """tcp_streams.c (several streams, or both ways): a rank that sends holds SIZE x
    max(buffers, streams) (a verify message per stream), one that receives a region of
    max(SIZE x buffers, 4 MiB, SIZE x streams); forward rank 0 ("s") sends, reverse
    rank 1, bidir both. One stream each way is tcp.c's (_stream)."""
    def held(at: At) -> int:
        n, direction = int(at.params.get("streams", 1)), at.params.get("direction", "forward")
        if n == 1 and direction != "bidir":
            return _stream(at)
        sends = direction == "bidir" or (role == "s") == (direction == "forward")
        receives = direction == "bidir" or not sends
        return (page(at.wire * max(at.buffers, n)) if sends else 0) + \
            (page(max(at.wire * at.buffers, STREAM_CHUNK, at.wire * n)) if receives else 0)
    return held


TCP_RR = Footprint({"s": _rr, "r": _rr}, {"s": lambda at: sockets(at, 1, 1, at.wire),
                                          "r": lambda at: sockets(at, 1, 1, at.wire)})
TCP_STREAM = Footprint({"s": _streams_of("s"), "r": _streams_of("r")}, {"s": _stream_sockets, "r": _stream_sockets},
                       limit=payload("no payload to stream"))
# tcp_crr.c: as request/response; a connection per op, closed when it ends
TCP_CRR = TCP_RR


# udp_underload.c: send slots, and two messages (one received, rank 0's last reply),
# on ranks 0 and 1; what the sockets may queue besides.
UDP_HEADER = 24              # udp_plumbing.h UDP_HDR


def _underload(at: At) -> int:
    return page(at.size * at.buffers) + page(2 * at.size)


UDP_UNDERLOAD = Footprint({"s": _underload, "r": _underload},
                          {"s": lambda at: sockets(at, 1, 1, at.size), "r": lambda at: sockets(at, 1, 1, at.size)},
                          limit=lambda at: f"a message carries a {UDP_HEADER}-byte header" if at.size < UDP_HEADER
                          else None)
UL_STAGE = 64 << 10          # udp_underload.c: a TCP recv reads up to this after a message's rest


def _tcp_underload(at: At) -> int:
    return _underload(at) + page(at.size + UL_STAGE)


TCP_UNDERLOAD = Footprint({"s": _tcp_underload, "r": _tcp_underload},
                          {"s": lambda at: sockets(at, 1, 1, at.size), "r": lambda at: sockets(at, 1, 1, at.size)},
                          limit=UDP_UNDERLOAD.limit)


# udp.c: a datagram per flow to send and one receive region of 64 KiB, on ranks 0 and 1;
# the sockets queue what their buffers take.
UDP_HDR = 24   # udp_plumbing.h: flow, sequence number, send time


def _udp(at: At) -> int:
    return page(at.size * int(at.params.get("streams", 1))) + page(65536)


def _udp_sockets(at: At) -> int:
    return int(at.params.get("streams", 1)) * (at.sock_send + at.sock_recv)


UDP_STREAM = Footprint({"s": _udp, "r": _udp}, {"s": _udp_sockets, "r": _udp_sockets},
                       limit=lambda at: f"a datagram carries a {UDP_HDR}-byte header" if at.size < UDP_HDR else None)
UDP_RR = UDP_STREAM


# tcp_conns.c, tcp_scatter.c: connections opened per point.
def _tcp_conns_sockets(at: At) -> int:
    per_ack = ceil_div(MIN_OPS_PER_ACK, at.conns) * at.conns
    return sockets(at, at.conns, per_ack, at.size)


def _tcp_scatter(at: At, receiver: bool) -> int:
    msg, slots = message(at, own=1)
    if not receiver:
        return page(msg * slots)
    return page(2 * msg * slots) + (page(msg) if at.params.get("mode") == "copy" else 0)


TCP_CONNS = Footprint({"s": lambda at: at.slots, "r": lambda at: at.slots},
                      {"s": _tcp_conns_sockets, "r": _tcp_conns_sockets}, limit=payload("no payload to send"))
TCP_SCATTER = Footprint({"s": lambda at: _tcp_scatter(at, False), "r": lambda at: _tcp_scatter(at, True)},
                        {"s": lambda at: sockets(at, 1, MIN_OPS_PER_ACK, message(at, 1)[0]),
                         "r": lambda at: sockets(at, 1, MIN_OPS_PER_ACK, message(at, 1)[0])},
                        limit=scatter_limit)


# ---- fabric*.c: every rank's state and op contexts (2 per window op, and
# the acks'); send and receive regions of `buffers` slots, registered with the
# provider. No MPI count limits a transfer.

def contexts(n: int) -> int:
    return page(FI_CONTEXT2 * n)


def _fab(at: At, regions: int, rma: bool = False) -> int:
    """fabric.c: fab_begin's state and contexts, `regions` regions, and an RMA point's table of keys."""
    return PAGE + contexts(2 * at.window + 2) + regions * at.slots + (page(16 * at.nranks) if rma else 0)


FABRIC_PAIR = Footprint({"s": lambda at: _fab(at, 2), "r": lambda at: _fab(at, 2), "i": lambda at: _fab(at, 0)})
FABRIC_RMA = Footprint({"s": lambda at: _fab(at, 2, True), "r": lambda at: _fab(at, 2, True),
                        "i": lambda at: _fab(at, 0, True)})


def _fp(at: At, regions: int) -> int:
    """fabric_patterns.c: fp_begin's state and contexts, and `regions` regions."""
    return PAGE + contexts(2 * at.window + at.nranks + 2) + regions * at.slots


FABRIC_BOTH = Footprint({"b": lambda at: _fp(at, 1 + 1), "i": lambda at: _fp(at, 0)})
FABRIC_PAIRS = Footprint({"s": lambda at: _fp(at, 1), "r": lambda at: _fp(at, 1), "i": lambda at: _fp(at, 0)})
# A hotspot_put target holds a region per sender; every rank the senders and keys tables.
FABRIC_HOTSPOT = Footprint({"s": lambda at: _fp(at, 1) + page(4 * at.nranks) + page(16 * at.nranks),
                            "t": lambda at: _fp(at, 0) + page(at.senders * at.size * at.buffers)
                            + page(4 * at.nranks) + page(16 * at.nranks),
                            "i": lambda at: _fp(at, 0) + page(4 * at.nranks) + page(16 * at.nranks)})
# Registration: one buffer of SIZE bytes on rank 0, and every rank's state.
FABRIC_MR = Footprint({"s": lambda at: PAGE + page(at.size), "r": STATE, "i": STATE})


def _fabric_conns(at: At) -> int:
    """fabric_via.c: per connection an endpoint set (fab_net: its address
    table and control buffer, a page each), two registrations, an op count
    and a context; both regions on every rank; at the peak, set-up's table of
    linked ranks and the last endpoint's table of names."""
    c = at.conns
    book = page(FAB_NET * c) + 2 * page(FAB_MR * c) + page(8 * c) + contexts(c + 2)
    return PAGE + book + 2 * at.slots + 2 * PAGE * c + 2 * PAGE


def _fabric_scatter(at: At, receiver: bool) -> int:
    msg, slots = message(at)
    base = PAGE + contexts(2 * at.window + 2)
    if not receiver:
        return base + page(msg * slots)
    segments = at.param("segments")
    return base + _scatter_receiver(at) + page(16 * segments * at.window) + page(8 * segments)


FABRIC_CONNS = Footprint({"s": _fabric_conns, "r": _fabric_conns, "i": _fabric_conns},
                         limit=payload("no payload to send"))
FABRIC_SCATTER = Footprint({"s": lambda at: _fabric_scatter(at, False), "r": lambda at: _fabric_scatter(at, True),
                            "i": lambda at: PAGE + contexts(2 * at.window + 2)},
                           limit=lambda at: "no payload to scatter" if at.size == 0 else None)


# ---- ucx.c: the active ranks' send and receive regions, mapped with the
# context, and 2 x window request pointers; an RMA origin unpacks the
# target's key at set-up.
def _ucx(at: At, key: bool = False) -> int:
    return 2 * at.slots + page(16 * at.window) + (PAGE if key else 0)


UCX_PAIR = Footprint({"s": _ucx, "r": _ucx, "b": _ucx})
UCX_RMA = Footprint({"s": lambda at: _ucx(at, True), "r": _ucx})
UCX_MR = Footprint({"s": lambda at: page(at.size)})
# ucx_mt.c: the state, and on the active ranks a 48-byte entry per thread and one region per
# side holding every thread's `buffers` slots, mapped with the context.
UCX_MT_THREAD = 48


def _ucx_mt(at: At) -> int:
    threads = at.param("threads")
    return PAGE + page(UCX_MT_THREAD * threads) + 2 * page(at.size * at.buffers * threads)


UCX_MT = Footprint({"s": _ucx_mt, "r": _ucx_mt, "i": STATE})


# ---- the atomics (fabric_atomic.c, ucx_atomic.c) and the message rate over
# several endpoints (fabric_rate.c, ucx_rate.c).
def atomic_limit(at: At) -> str | None:
    """Both atomics kernels: one FI_UINT64 / 8-byte word per op."""
    return None if at.size == 8 else "atomics update one 8-byte word: size 8 only"


# fabric: every rank its state and every rank's key (fab_mr_share); the origin its operand and
# fetched values, the target its word, a page each.
FABRIC_ATOMIC = Footprint({"s": lambda at: 2 * PAGE + page(16 * at.nranks), "r": lambda at: 2 * PAGE
                           + page(16 * at.nranks), "i": lambda at: PAGE + page(16 * at.nranks)}, limit=atomic_limit)
# ucx: the origin's operand and replies and, at set-up, the target's packed key; the target's word, a
# page UCP allocates (memory=ucx, counted with fl_account) or one of the program's (program).
UCX_ATOMIC = Footprint({"s": const(3 * PAGE), "r": const(2 * PAGE), "i": STATE}, limit=atomic_limit)


def _fabric_rate(at: At, region: bool) -> int:
    """fabric_rate.c: Q endpoint sets (fab_net: a control buffer and, rdm, an address table each),
    Q registrations per side, Q x W + 2 contexts, one region; at the peak, set-up's table of linked
    ranks and the last endpoint's table of names (before its control buffer)."""
    q = at.param("endpoints")
    nets = page(FAB_NET * q) + 2 * page(FAB_MR * q) + q * (PAGE + page(8 * at.nranks))
    return (PAGE + nets + contexts(q * at.window + 2) + (at.slots if region else 0) + page(at.nranks)
            + page(256 * at.nranks) - PAGE)


FABRIC_RATE = Footprint({"s": lambda at: _fabric_rate(at, True), "r": lambda at: _fabric_rate(at, True),
                         "i": lambda at: _fabric_rate(at, False)})


def _ucx_rate(at: At) -> int:
    """ucx_rate.c: Q workers' and endpoints' handles, Q x W + 1 requests and one mapped region
    (a peer's worker address, a page at set-up, is freed before the region is mapped)."""
    q = at.param("endpoints")
    return PAGE + 2 * page(8 * q) + page(8 * (q * at.window + 1)) + at.slots


UCX_RATE = Footprint({"s": _ucx_rate, "r": _ucx_rate, "i": STATE})


# ---- app_*.c: the applications, per active rank (apps.py has the block
# arithmetic; the largest block is ceil(n / N) items); every rank its state.
def _rows(at: At, n: int) -> int:
    return ceil_div(n, max(at.active, 1))


def _app(at: At) -> int:
    """app.c, app_begin: an active rank's state and its 2N requests."""
    return PAGE + requests(2 * max(at.active, 1))


def _transpose(at: At) -> int:
    """A and B, row blocks of M words each, and the rows table; packed adds
    a send and a receive array as large and the counts; the datatype modes
    (datatype, deposit by put) a table of 3N datatypes and one of 3N counts;
    deposit by stores a table of the peers' B."""
    m = at.size
    block = page(_rows(at, m) * m * 8)
    mode, n = at.params.get("mode", "packed"), max(at.active, 1)
    tables = {"packed": 2 * block + page(16 * n),
              "datatype": page(8 * 3 * n) + page(12 * n)}.get(mode)
    if tables is None:   # deposit: stores where every active rank shares a node (one host), puts with datatypes
        tables = page(8 * n) if at.params.get("deposit", "auto") != "put" else page(24 * n) + page(12 * n)
    return _app(at) + page(16 * n) + 2 * block + tables


def _matmul(at: At) -> int:
    """Rows of A and C and all of B (gathered), n x n doubles, and the gather's counts."""
    n = apps.matmul_side(at.size, max(at.active, 1), at.params.get("scale", "strong"))
    rows = page(_rows(at, n) * n * 8)
    return _app(at) + 2 * rows + page(n * n * 8) + 2 * page(4 * max(at.active, 1))


def _sort(at: At) -> int:
    """The keys as drawn and the buckets (keys(r) elements each), what
    arrives and the radix sort's scratch (as many): four arrays (app_sort.c;
    the bucket pass only reads the drawn keys, so no working copy); five
    tables of N counts and the radix histograms (8 digits x 256 counts), and
    verify's table of N. What arrives may exceed keys(r) by the draw's
    spread, bounded here by 8 sqrt(keys) + 64 elements."""
    keys = _rows(at, apps.sort_keys(at.size, max(at.active, 1), at.params.get("scale", "strong")))
    e = int(at.params.get("elem", 8))
    arrive = keys + 8 * int(keys ** 0.5) + 64
    n = max(at.active, 1)
    return _app(at) + 2 * page(keys * e) + 2 * page(arrive * e) + 5 * page(8 * n) + page(8 * 256 * 4) + \
        page(24 * n)


APP_TRANSPOSE = Footprint({"b": _transpose, "i": STATE})
APP_MATMUL = Footprint({"b": _matmul, "i": STATE})
APP_SORT = Footprint({"b": _sort, "i": STATE})


# ---- coll: one collective call (coll.c, coll_ops.c)

def _coll_bytes(op: str, at: At) -> tuple[int, int]:
    """The send and receive buffers' bytes of an active rank (coll_ops.c, coll_sizes): the
    vector, or N blocks where the operation gathers or scatters; reduce_scatter's result is
    this rank's block of the vector (at most ceil(SIZE / N) elements), the whole vector in place."""
    e = DTYPES.get(at.params.get("dtype", "int8"), 1)
    c, n, in_place = at.size // e, max(at.active, 1), at.params.get("in_place") == "yes"
    snd = rcv = c
    if op == "bcast":
        snd = 0
    elif op in ("allgather", "allgatherv", "gather", "gatherv"):
        rcv = c * n
    elif op in ("scatter", "scatterv"):
        snd = c * n
    elif op in ("alltoall", "alltoallv"):
        snd = rcv = c * n
    elif op == "reduce_scatter":
        rcv = c if in_place else ceil_div(c, n)
    elif op == "reduce_scatter_block":
        snd = c // n * n
        rcv = snd if in_place else c // n
    elif op == "barrier":
        snd = rcv = 0
    return snd * e, rcv * e


def coll(op: str) -> Footprint:
    """An active rank holds its state, app_begin's 2N requests, both buffers, the counts and
    displacements (N ints each) and, persistent, a request per root; the library may take
    scratch as large as both buffers (a reduction's temporary vector, a gather's staging)."""
    def alloc(at: At) -> int:
        snd, rcv = _coll_bytes(op, at)
        n = max(at.active, 1)
        roots = n if at.params.get("root_shift") == "on" else 1
        persistent = page(REQUEST * roots) if at.params.get("form") == "persistent" else 0
        return _app(at) + page(snd) + page(rcv) + 2 * page(4 * n) + persistent

    return Footprint({"b": alloc, "i": STATE}, {"b": lambda at: sum(_coll_bytes(op, at))}, limit=_coll_limit)


def _coll_limit(at: At) -> str | None:
    """coll.c, check_point: N x count elements must fit an MPI int (a v form's displacement)."""
    items = at.size // DTYPES.get(at.params.get("dtype", "int8"), 1) * max(at.active, 1)
    return f"elements of one op's buffers: {items} items exceed an MPI int count" if items > INT_MAX else None


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


# ---- noise.c: a page of state and the record's integer nanoseconds (8 bytes each)
NOISE_DETOUR_KEPT = 1 << 17    # noise.c: DETOUR_CAP, the detours kept, a start and a length each
NOISE_FWQ = Footprint({"b": lambda at: PAGE + page(8 * max(at.param("quanta"), 1))})
NOISE_DETOUR = Footprint({"b": const(PAGE + page(16 * NOISE_DETOUR_KEPT))})
