"""What one point of a benchmark holds in memory, and which points a kernel cannot carry.

Every benchmark in the registry (benchmarks.py) declares a `Footprint`: for
each role a rank can take (the layout letters of patterns.py: `s` sender or
origin, `r` receiver or target of a pair, `t` hotspot target, `b` both, `i`
idle; two-rank benchmarks are rank 0 `s`, rank 1 `r`, the rest `i`), the
bytes its kernel allocates for one point, read off the kernel in csrc/:
send and receive regions of `buffers` slots of `size` bytes (the cache
state, buffers.py), MPI windows rounded up to whole pages (fl_win_bytes),
strided layouts that span size x stride bytes, the all-to-all's N blocks
per array, a hotspot target's slots per sender, and, for TCP, what the
kernel may queue in the sockets. Each figure is an upper bound of what the
kernel asks for; resources.py adds the MPI library and the core, sums the
ranks of each host and compares the largest point with the memory there.

`limit` says which points the kernel skips without allocating, with the
core's reason: an MPI count is a C int, so sizes above INT_MAX bytes cannot
travel in one message (MPI-3.1 sec. 3.2.2: `int count`); strided deposits
need whole 8-byte words; the TCP stream, connections and scatter need a payload."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..units import parse_size
from . import apps

INT_MAX = (1 << 31) - 1
PAGE = 4096
LINE = 64                    # memory.c: slots start on cache lines (SLOT_ALIGN)
STREAM_CHUNK = 4 << 20       # tcp.c: T_STREAM_CHUNK, the stream receiver's smallest region
MAX_BURST_OPS = 4096         # tcp.c: T_MAX_BURST_OPS
MIN_OPS_PER_ACK = 128        # via.h: ops per ack at least
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
    def slots(self) -> int:
        """A region of `buffers` slots of `size` bytes: what ops rotate through."""
        return self.size * self.buffers

    @property
    def wire(self) -> int:
        """TCP bytes per message: size, at least 1 (tcp.c)."""
        return max(self.size, 1)


@dataclass(frozen=True)
class Footprint:
    """Bytes per rank of one point by role, and the points the kernel skips."""
    roles: dict                                   # role letter -> Callable[[At], int]
    limit: Callable[[At], str | None] = lambda at: None   # the core's skip reason, or None

    def bytes(self, role: str, at: At) -> int:
        fn = self.roles.get(role)
        return fn(at) if fn else 0


# ---- the kernels' arithmetic ----

def page(n: int) -> int:
    """MPI window bytes: whole pages, at least one (fl.h, fl_win_bytes)."""
    return PAGE if n <= 0 else -(-n // PAGE) * PAGE


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def shared(at: At, units: int) -> int:
    """A region that `units` peers share, ceil(buffers / units) slots each
    (message_patterns.c, share_slots): about buffers x size bytes in all."""
    units = max(units, 1)
    return max(1, ceil_div(at.buffers, units)) * units * at.size


def extent(at: At) -> int:
    """Bytes a strided deposit spans at the target: (words - 1) x stride + 1 words."""
    words = at.size // 8
    return ((words - 1) * at.stride + 1) * 8 if words else 0


def message(at: At) -> tuple[int, int]:
    """Scatter: (bytes of one message of `segments` segments, message slots per side)."""
    segments = at.param("segments")
    return segments * at.size, max(1, ceil_div(at.buffers, segments))


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


# ---- the footprints of the families, as the kernels allocate ----

# memory.c: rank 0 copies between two regions of `buffers` slots, each slot
# rounded up to a cache line.
COPY = Footprint({"s": lambda at: 2 * at.buffers * ceil_div(at.size, LINE) * LINE})

# deposit.c: ranks 0 and 1 expose `buffers` slots in a window each.
RMA_PAIR = Footprint({"s": lambda at: page(at.slots), "r": lambda at: page(at.slots)},
                     mpi_count(reason="size x stride exceeds an MPI int count"))
# One contiguous slot at the origin; the target spans the strided layout, and
# --validate builds the expected words (size) beside it.
STRIDED_DIRECT = Footprint({"s": lambda at: page(at.size), "r": lambda at: page(extent(at)) + at.size},
                           strided_limit)
STRIDED_PACKED = Footprint({"s": lambda at: page(at.size),
                            "r": lambda at: page(at.size) + max(extent(at), 8) + at.size}, strided_limit)
STRIDED_SHM = Footprint({"s": lambda at: page(0) + max(at.size, 8),
                         "r": lambda at: page(extent(at)) + at.size}, strided_limit)
# deposit_patterns.c: every rank allocates a window, idle ranks one page.
RMA_BIPAIRS = Footprint({"b": lambda at: page(2 * at.slots), "i": lambda at: page(0)}, window_limit)
RMA_HOTSPOT_PUT = Footprint({"s": lambda at: page(at.slots), "t": lambda at: page(at.senders * at.slots),
                             "i": lambda at: page(0)}, window_limit)
RMA_HOTSPOT_GET = Footprint({"s": lambda at: page(at.slots), "t": lambda at: page(at.slots),
                             "i": lambda at: page(0)}, window_limit)

# message.c, via_message.c (conns): send and receive regions on ranks 0 and 1.
MPI_PAIR = Footprint({"s": lambda at: 2 * at.slots, "r": lambda at: 2 * at.slots}, mpi_count())
# Full postal semantics: the receiver's library also holds a window of
# unexpected messages, up to its eager limit each.
MPI_POSTAL_FULL = Footprint({"s": lambda at: 2 * at.slots,
                             "r": lambda at: 2 * at.slots + at.param("window") * min(at.size, EAGER_MAX)},
                            mpi_count())
# message_patterns.c
MPI_BOTH = Footprint({"b": lambda at: 2 * at.slots}, mpi_count())
MPI_PAIRS = Footprint({"s": lambda at: at.slots, "r": lambda at: at.slots}, mpi_count())
MPI_HOTSPOT = Footprint({"s": lambda at: at.slots, "t": lambda at: shared(at, at.senders)}, mpi_count())
# Send and receive arrays of N blocks, ceil(buffers / N) of each. MPI_Alltoall
# may add a scratch array of N blocks: Bruck's algorithm, the one of MPICH's
# and Open MPI's that takes one, serves blocks of at most 256 and 200 bytes by
# default (MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE; coll_tuned's decision), so
# blocks are counted up to BRUCK_MAX.
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


def _alltoall(at: At) -> int:
    arrays = 2 * shared(at, at.nranks)
    variant = at.params.get("variant", "collective")
    if variant == "collective":
        return arrays + at.nranks * min(at.size, BRUCK_MAX)
    if variant == "pairwise":
        return arrays
    fill = at.param("fill") if "fill" in at.params else 0
    flows = (at.nranks - 1) * max(at.param("window"), min(-(-fill // at.size), FILL_WINDOW_MAX) if at.size else 0)
    return arrays + 2 * flows * REQUEST_BYTES + flows * min(at.size, EAGER_MAX)


MPI_ALLTOALL = Footprint({"b": _alltoall}, mpi_count())


def _scatter_receiver(at: At, staged: bool) -> int:
    msg, slots = message(at)
    return 2 * msg * slots + (msg * slots if staged else 0)


MPI_SCATTER = Footprint({"s": lambda at: message(at)[0] * message(at)[1],
                         "r": lambda at: _scatter_receiver(at, at.params.get("mode") == "copy")},
                        scatter_limit)


# tcp.c: request/response and stream, one connection made once per run.
def _rr(at: At) -> int:
    return 2 * at.wire * at.buffers + sockets(at, 1, 1, at.wire)


def _stream(at: At) -> int:
    region = at.wire * at.buffers
    burst = min(MAX_BURST_OPS, max(1, ceil_div(at.param("burst"), at.wire)))
    return region + max(region, STREAM_CHUNK) + sockets(at, 1, burst, at.wire)


TCP_RR = Footprint({"s": _rr, "r": _rr})
TCP_STREAM = Footprint({"s": _stream, "r": _stream}, payload("no payload to stream"))


# via_tcp.c: connections opened per point.
def _tcp_conns(at: At) -> int:
    per_ack = ceil_div(MIN_OPS_PER_ACK, at.conns) * at.conns
    return at.slots + sockets(at, at.conns, per_ack, at.size)


def _tcp_scatter(at: At, receiver: bool) -> int:
    msg, slots = message(at)
    mine = (2 * msg * slots + (msg if at.params.get("mode") == "copy" else 0)) if receiver else msg * slots
    return mine + sockets(at, 1, MIN_OPS_PER_ACK, msg)


TCP_CONNS = Footprint({"s": _tcp_conns, "r": _tcp_conns}, payload("no payload to send"))
TCP_SCATTER = Footprint({"s": lambda at: _tcp_scatter(at, False), "r": lambda at: _tcp_scatter(at, True)},
                        scatter_limit)


# fabric*.c and ucx*.c: send and receive regions of `buffers` slots per side,
# registered (pinned) with the library; no MPI count limits a transfer.
FABRIC_PAIR = Footprint({"s": lambda at: 2 * at.slots, "r": lambda at: 2 * at.slots})
FABRIC_BOTH = Footprint({"b": lambda at: 2 * at.slots})
FABRIC_PAIRS = Footprint({"s": lambda at: at.slots, "r": lambda at: at.slots})
FABRIC_HOTSPOT = Footprint({"s": lambda at: at.slots, "t": lambda at: at.senders * at.slots})
# Registration: one buffer of SIZE bytes on rank 0.
FABRIC_MR = Footprint({"s": lambda at: at.size})
FABRIC_CONNS = Footprint({"s": lambda at: at.slots, "r": lambda at: at.slots}, payload("no payload to send"))
FABRIC_SCATTER = Footprint({"s": lambda at: message(at)[0] * message(at)[1],
                            "r": lambda at: _scatter_receiver(at, at.params.get("mode") == "copy")},
                           lambda at: "no payload to scatter" if at.size == 0 else None)


# app_*.c: the applications, per active rank (apps.py has the block
# arithmetic). The largest block is ceil(n / N) items.
def _rows(at: At, n: int) -> int:
    return ceil_div(n, max(at.active, 1))


def _transpose(at: At) -> int:
    """A and B, row blocks of M words each; packed adds a send and a receive
    array as large; deposit exposes B in a window (whole pages)."""
    m = at.size
    block = _rows(at, m) * m * 8
    arrays = 4 if at.params.get("mode") == "packed" else 2
    return arrays * block + PAGE


def _matmul(at: At) -> int:
    """Rows of A and C and all of B (gathered), n x n doubles."""
    n = apps.matmul_side(at.size, max(at.active, 1), at.params.get("scale", "strong"))
    return (2 * _rows(at, n) * n + n * n) * 8


def _sort(at: At) -> int:
    """The keys as drawn and the buckets (keys(r) elements each), what
    arrives and the radix sort's scratch (as many): four arrays (app_sort.c;
    the bucket pass only reads the drawn keys, so no working copy). What
    arrives may exceed keys(r) by the draw's spread, bounded here by
    8 sqrt(keys) + 64 elements."""
    keys = _rows(at, apps.sort_keys(at.size, max(at.active, 1), at.params.get("scale", "strong")))
    e = int(at.params.get("elem", 8))
    arrive = keys + 8 * int(keys ** 0.5) + 64
    return (2 * keys + 2 * arrive) * e


APP_TRANSPOSE = Footprint({"b": _transpose})
APP_MATMUL = Footprint({"b": _matmul})
APP_SORT = Footprint({"b": _sort})
