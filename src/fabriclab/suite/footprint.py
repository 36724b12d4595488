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
need whole 8-byte words; the TCP stream, connections and scatter need a payload.

This module holds the model (At, Footprint), the kernels' arithmetic and the
limits; each family's footprints are beside it: footprint_mpi.py (memory.c,
deposit*.c, message*.c), footprint_sockets.py (tcp*.c, udp*.c),
footprint_levels.py (fabric*.c, ucx*.c), footprint_apps.py (app_*.c, coll*.c,
noise.c)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..units import parse_size
from . import buffers

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


def scatter_receiver(at: At) -> int:
    """Scatter: a receiver's blocks of twice a message (and, mode=copy, its staging slots)."""
    msg, slots = message(at)
    staged = at.params.get("mode") == "copy"
    return page(2 * msg * slots) + (page(msg * slots) if staged else 0)


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
