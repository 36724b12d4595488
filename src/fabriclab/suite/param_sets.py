"""The parameter sets and default sweeps that the registry's entries
(entries_*.py) share: sockets, MPI windows, the levels below MPI, the
applications, the collectives, halo exchanges and congestion."""

from __future__ import annotations

import ipaddress
import re

from ..errors import UsageError
from ..units import MAX_VALUE
from . import buffers, halo, udp
from .facts import Param, choice, integer, text

INT_MAX = (1 << 31) - 1  # a C int: the core's socket buffer sizes

STRIDES = "1:64:x2"
# Working sets from L1-sized to beyond 4x a 32 MiB last-level cache (2 x size).
MEMORY_SIZES = "16K:64M:x4"
# Scatter: segments of 8 B (one double, the seed's worst case) to 1 KiB.
SEGMENT_SIZES = "8:1K:x2"
# Connections: 1 to 128 by x2 (seed 002 Table 2 goes to 100).
CONNS = "1:128:x2"
# Socket parameters: the interface by name or address (empty: loopback on one
# host, else the first non-loopback IPv4 address), TCP_NODELAY, and buffer sizes
# (0 = the kernel's default); the values in force are recorded per point.
def ipv4(value, what: str) -> str:
    """addr= as the core's inet_pton(AF_INET) takes it: four decimal numbers up to 255 without
    leading zeros (ipaddress's rule too), or empty."""
    v = str(value)
    try:
        if v and re.fullmatch(r"[0-9.]+", v, re.ASCII):
            ipaddress.IPv4Address(v)
            return v
    except ValueError:
        pass
    if v:
        raise UsageError(f"{what} must be an IPv4 address (four numbers up to 255: 10.0.0.2), not {v[:40]!r}")
    return v


SOCKET = dict(iface=text(), addr=text("", ipv4), nodelay=integer(1, 0, 1), sndbuf=integer(0, 0, INT_MAX),
              rcvbuf=integer(0, 0, INT_MAX))
# udp.stream and udp.rr (udp.py): the tcp level's address choice, buffer sizes, and df=1 (IP_PMTUDISC_DO:
# a datagram over the path MTU is refused, not fragmented); a stream's rate in bits/s per flow (iperf3's -b,
# per stream; units.py's binary suffixes: 1G = 2^30) unless pacing=unlimited, its flows and direction, and
# the longest wait for a call's last datagrams; a transaction's timeout (10 ms: several scheduler slices of a
# crowded host, yet a loss costs a sample little). pacing_timer (us, iperf3's --pacing-timer) sends each
# timer tick's datagrams back to back as iperf3 does (1000: its default) instead of one every SIZE/rate.
UDP_SOCKET = dict(iface=text(), addr=text("", ipv4), sndbuf=integer(0, 0, INT_MAX), rcvbuf=integer(0, 0, INT_MAX),
                  df=choice("0", "1"))
UDP_STREAM = {**UDP_SOCKET, "pacing": choice(*udp.PACING),
              "rate": integer("1G", 1, udp.MAX_RATE, only=("pacing", "rate")),
              "pacing_timer": integer(0, 0, 1_000_000, only=("pacing", "rate")),
              "streams": integer(1, 1, 128), "direction": choice(*udp.DIRECTIONS),
              "drain_us": integer(10000, 1, 10_000_000)}
UDP_RR = {**UDP_SOCKET, "timeout_us": integer(10000, 1, 10_000_000)}
# sockperf's under-load mode (--mps, --reply-every; its defaults): messages a second
# (10M: beyond what one socket sends) and one reply asked every N messages.
UNDERLOAD_RATE = {"mps": integer(10000, 1, 10_000_000), "reply_every": integer(100, 1, 1 << 20)}
UNDERLOAD = {**UDP_SOCKET, **UNDERLOAD_RATE}
TCP_UNDERLOAD = {**SOCKET, **UNDERLOAD_RATE}
# Completion of MPI requests: MPI_Wait(all) blocks in the library; `test` spins
# on MPI_Test, the busy-polling analogue of seed 002's polling completion.
COMPLETION = choice("wait", "test")
# Messages in flight per window (one ack or completion each): the core keeps a
# request per message, so 2^20 bounds its memory (OSU's window is 64).
WINDOW = {"window": integer(64, 1, 1 << 20)}
# How the ops of a window share the cache state's buffers (buffers.py), each
# level as its anchor: a window of sends shares them, so from 64 KiB up every
# message goes from one buffer into one buffer (osu_bw, osu_bibw, IMB); a
# window of puts or gets takes a buffer per op on both sides (osu_put_bw's
# offsets). The other value is there to measure the difference.
SENDS = {**WINDOW, "window_buffers": choice(*buffers.LAYOUTS)}
PUTS = {**WINDOW, "window_buffers": choice(*reversed(buffers.LAYOUTS))}
# message.shift's pairs: 4 messages a flow (1 MiB at mpiGraph's 256 KiB) keep each pair at its
# share on the testbed (docs/acceptance.md), where 64 would make a window of a pair held to 5
# MB/s by a trunk last over 3 s.
SHIFT_WINDOW = {"window": integer(4, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]}
# message.alltoall's concurrent schedule posts a window of whole exchanges,
# 2(N-1)W requests: window 1 is one exchange per wait (the default, and the
# only value the one-at-a-time schedules take).
# window: exchanges in flight per wait; fill: at least this many bytes per flow
# per wait (the window grows at small sizes), both for the concurrent schedule.
ALLTOALL_WINDOW = {"window": integer(1, 1, 4096, only=("variant", "concurrent")),
                   "fill": integer(0, 0, 1 << 26, only=("variant", "concurrent")),
                   "window_buffers": Param(buffers.LAYOUTS[0], buffers.LAYOUTS, only=("variant", "concurrent"))}
SYNC = {"sync": choice("flush", "fence")}
HOTSPOT_VIEWS = ("hotspot", "fairness")
STORES = {"stores": choice("auto", "nt", "normal")}
# Scatter: segments per message, at most IOV_MAX (1024 on Linux) iovec entries.
SEGMENTS = {"segments": integer(32, 1, 1024)}

# The default suite runs the VI Architecture experiments (seed 002) at short
# sweeps, each with both ways of finding completions; polling, blocking and
# epoll request/response at the same sizes.
# With five launches per point (cli/run.py) the suite trims its slowest
# sweeps to stay within 3 minutes (docs/statistics.md, "How many launches"):
# request/response and the bidirectional stream every x16, the strided copies
# at strides 1, 8 and 64 up to 32 MiB (a working set of twice a 32 MiB
# last-level cache), the TCP stream at the levels' stream sizes (below), the
# MPI stream and postal pair every x8 and at 4 MiB, where they reach their peak,
# and the one-sided windows every x4 (a window of 64 puts or gets, each at its
# own offset, moves 64 x SIZE a turn: suite/buffers.py).
RR_SUITE = {"sizes": "0:4M:x16"}
RMA_WINDOW_SUITE = {"sizes": "0:4M:x4"}
ECT_SUITE = {"strides": "1,8,64", "sizes": "32K,512K,32M"}
POSTAL_SUITE = {"sizes": "0:2M:x8,4M"}
CONNS_SUITE = {"sizes": "64K", "conns": "1,8,64"}
# The fabric level (libfabric): the provider (empty: fabriclab chooses from
# fi_getinfo's answers, measure/fabrics.py, and records which and why) and the
# endpoint type. Sends of at most the provider's inject size go through
# fi_inject unless path=send; path=inject refuses larger ones.
FABRIC = {"provider": text(), "ep": choice("rdm", "msg")}
FABRIC_PATH = {"path": choice("auto", "inject", "send")}
# Completion of fi_write/fi_read: delivery (FI_DELIVERY_COMPLETE, the data is
# at the target) or transmit (FI_TRANSMIT_COMPLETE, the source may be reused).
FABRIC_RMA = {**FABRIC, "complete": choice("delivery", "transmit")}
# Atomics on one 8-byte word (fabric_atomic.c, ucx_atomic.c): the op, as the
# anchors name them (fabtests' fi_rdm_atomic -o; ucx_perftest's ucp_* tests).
FABRIC_ATOMIC = {"op": choice("add", "fetch_add", "cswap")}
# memory: the target's word allocated by UCP (as ucx_perftest's buffers: shared
# memory a transport may map, device atomics) or the program's own page. clock:
# per-op reads the clock after every op, as ucx_perftest's loop reads ucs_get_time();
# loop, around the measure call alone. target: progress polls the worker alone;
# perftest does as ucx_perftest's responder, which reads the word once its own
# loop is done (ucx_atomic.c).
UCX_ATOMIC = {"op": choice("add", "fadd", "swap", "cswap"), "memory": choice("ucx", "program"),
              "clock": choice("loop", "per-op"), "target": choice("progress", "perftest")}
# Message rate over several endpoints (perftest's -q): ENDPOINTS endpoints
# (workers, ucx) per rank, each streaming WINDOW messages per window.
# A window's Q x W messages share the buffers (window_buffers=shared, as
# fabric.stream and perftest, which sends every message of a queue pair from
# one buffer) or take one each (per-op; Bench.own_buffers).
ENDPOINTS = {"endpoints": integer(1, 1, 64), "window": integer(64, 1, 1 << 14),
             "window_buffers": SENDS["window_buffers"]}
RATE_SIZES = "1:64K:x4"
# The ucx level: UCX_TLS for the run (empty: UCX's own choice), recorded per point;
# transports joined by '+' ("posix+cma+self"), since a comma starts another variant.
UCX = {"tls": text()}
# The levels below MPI in the default suite: a latency ladder every x16 and the
# stream's upper sizes, where a layer's share of the bandwidth shows.
LEVEL_SUITE = {"sizes": "0:4M:x16"}
LEVEL_STREAM_SUITE = {"sizes": "64K:4M:x8"}
# Rank layouts of the traffic patterns (patterns.py assigns the roles).
PATTERNS = ("pairs", "bipairs", "hotspot", "all", "bisection", "app", "group")
# The applications (apps.py): SIZE is the problem (array or matrix side, key
# count); ACTIVE the ranks it is divided over, 1, 2, 4 .. N by default.
# `scale` fixes the whole problem (strong) or each rank's share (weak); the
# sort's keys are E bytes, the first 4 (E = 4) or 8 of them the key.
APP_SCALE = {"scale": choice("strong", "weak")}
APP_AXES = ("size", "active")
# How the transpose (packed) and the sort exchange: the MPI collective (its
# library's schedule), every message at once, or pairwise steps; the model
# predicts the last two as they run (docs/apps.md).
# `sync` (pairwise only): a barrier between steps (the default, the schedule the
# model adds step by step) or none, where ranks that drift run steps that overlap.
APP_EXCHANGE = {"exchange": choice("collective", "concurrent", "pairwise"),
                "sync": Param("barrier", ("barrier", "none"), only=("exchange", "pairwise"))}
# The collectives (collectives.py): each on the first ACTIVE ranks (2, 4, 8 .. N by
# default, as IMB's -npmin 2), in one of three forms; an element type (SIZE is
# bytes, a whole number of elements), a reduction where the operation reduces,
# a root (fixed, or moving every op as IMB's -root_shift) where it has one, in
# place where MPI allows it, and a barrier before each timed op or none.
COLL_SIZES = "4:4M:x4"
COLL_FORM = {"form": choice("blocking", "nonblocking", "persistent")}
COLL_DTYPE = {"dtype": choice("float", "double", "int8", "int32", "int64")}
COLL_REDUCE = {"reduce": choice("sum", "max", "min", "band", "bor", "bxor")}
COLL_ROOT = {"root": integer(0, 0, (1 << 24) - 1), "root_shift": choice("off", "on")}
COLL_IN_PLACE = {"in_place": choice("no", "yes")}
COLL_SYNC = {"sync": choice("barrier", "none")}
# The library's algorithm for the operation and form (coll_algorithms.py):
# auto leaves the choice to the library; another name is one its control accepts.
COLL_ALGORITHM = {"algorithm": text("auto")}
# The default suite: the collectives people measure most (IMB's default list,
# nccl-tests' own), each at a latency, a mid and a bandwidth size on the run's
# ranks (about 6 s of the 3 minutes for five launches each at two ranks).
COLL_SUITE_OPS = ("allreduce", "bcast", "allgather", "reduce_scatter", "barrier")
COLL_SUITE = {"sizes": "8,64K,1M"}
# Overlap (non-blocking form only): a compute loop as long as the op between
# its post and its wait, IMB-NBC's t_ovrl (csrc/families/coll_overlap.c); and the
# library's asynchronous progress (coll_algorithms.py) that lets the op advance meanwhile.
COLL_OVERLAP = {"overlap": Param("off", ("off", "on"), only=("form", "nonblocking")),
                "progress": choice("library", "thread")}


# Congestion (suite/congestion.py): the aggressors' traffic, each flow's
# message size and messages in flight (by default what a bandwidth victim's
# flow keeps in flight, 4 x 128 KiB: a queue shared in order of arrival gives
# flows shares in proportion to their bytes in flight, and equal ones are the
# model's max-min shares, docs/acceptance.md); how many victims (0: a fifth
# of the ranks) and the seeds of their choice and of their ring (a list of
# ring seeds runs a draw each).
CONGESTION = {"aggressor": choice("alltoall", "incast", "put_incast", "get_bcast", "pairs", "bipairs", "shift",
                                  "bisection"),
              "aggressor_size": integer("128K", 1, 1 << 24), "aggressor_window": integer(4, 1, 1024),
              "victims": integer(0, 0, 1 << 20), "split": integer(1, 0, MAX_VALUE),
              "seed": integer(1, 0, MAX_VALUE)}

# Halo exchanges (suite/halo.py, docs/halo.md): IMB-P2P's stencils, IMB's touches of the buffers
# on or off (-msgwr, -msgrd); MPI's neighbourhood collectives on OSU's Cartesian neighbourhood
# (dim, radius: OSU's -N cart:DIM:RAD, default 1:1), a graph file, or IMB's stencil grids.
HALO_SIZES = "1:1M:x4"
NEIGHBORHOOD = {"neighborhood": choice("cart", "graph", "stencil2d", "stencil3d"),
                "dim": integer(1, 1, halo.MAX_DIM, only=("neighborhood", "cart")),
                "radius": integer(1, 1, 1 << 10, only=("neighborhood", "cart")),
                "graph": Param("", only=("neighborhood", "graph")),
                **COLL_FORM, **COLL_SYNC}


STRIDED = ("size", "stride")
