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
(hotspot, saturation, all-to-all, bisection) run only when named."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..errors import UsageError
from ..units import MAX_VALUE, parse_size
from . import apps, atomics, buffers, footprint as fp
from .collectives import COLLECTIVES, Collective
from . import halo
from . import noise
from . import streams as st
from . import udp

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


@dataclass(frozen=True)
class Param:
    """One parameter of a benchmark: its default and the values it accepts.

    Three kinds: listed `choices` (the first is the default); an integer in
    lo..hi, typed in units.py's grammar (window=4K); or free text. `canonical`
    turns what a user typed into the one form the core receives: the choice
    itself, a plain decimal integer, or the text. `only` = (key, value): a
    value other than the default means something only while parameter key
    has that value (Bench.idle). The core checks the same rules, generated
    from these (build.py), and accepts nothing else."""
    default: str                # as written here, shown by `fabriclab list` ("32M")
    choices: tuple = ()
    lo: int | None = None       # an integer parameter's range, inclusive
    hi: int | None = None
    only: tuple = ()            # ("variant", "concurrent"), or () for always
    # a text parameter's own rule: check(value, what) raises UsageError in one line (noise.threshold)
    check: Callable | None = None

    @property
    def integer(self) -> bool:
        return self.lo is not None

    @property
    def core_default(self) -> str:
        return self.canonical(self.default, "default")

    def __str__(self) -> str:
        """The listing's form: "a|b" for choices, else the default."""
        return "|".join(self.choices) if self.choices else self.default

    def canonical(self, value: str, what: str) -> str:
        """`value` in the core's form; UsageError naming `what` if it is not accepted."""
        if self.choices:
            if value not in self.choices:
                raise UsageError(f"{what} must be one of {', '.join(self.choices)}, not {value!r}")
            return value
        if not self.integer:
            if self.check:
                self.check(value, what)
            return value
        try:
            n = parse_size(value)
        except UsageError as e:  # keep units.py's reason, after its "malformed size '...': "
            raise UsageError(f"{what} takes an integer {self.lo}..{self.hi}, not {value!r}: "
                             f"{str(e).split(': ', 1)[-1]}") from None
        if not self.lo <= n <= self.hi:
            raise UsageError(f"{what} must be {self.lo}..{self.hi}, not {value}"
                             + (f" (= {n})" if str(n) != value else ""))
        return str(n)


def choice(*values: str) -> Param:
    return Param(values[0], tuple(values))


def integer(default, lo: int, hi: int, only: tuple = ()) -> Param:
    return Param(str(default), lo=lo, hi=hi, only=only)


def text(default: str = "", check: Callable | None = None) -> Param:
    return Param(default, check=check)


INT_MAX = (1 << 31) - 1  # a C int: the core's socket buffer sizes

# Message-size sweep shared by the transfer levels: 0 B .. 4 MiB by x2.
TRANSFER_SIZES = "0:4M:x2"
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
SOCKET = dict(iface=text(), addr=text(), nodelay=integer(1, 0, 1), sndbuf=integer(0, 0, INT_MAX),
              rcvbuf=integer(0, 0, INT_MAX))
# udp.stream and udp.rr (udp.py): the tcp level's address choice, buffer sizes, and df=1 (IP_PMTUDISC_DO:
# a datagram over the path MTU is refused, not fragmented); a stream's rate in bits/s per flow (iperf3's -b,
# per stream; units.py's binary suffixes: 1G = 2^30) unless pacing=unlimited, its flows and direction, and
# the longest wait for a call's last datagrams; a transaction's timeout (10 ms: several scheduler slices of a
# crowded host, yet a loss costs a sample little). pacing_timer (us, iperf3's --pacing-timer) sends each
# timer tick's datagrams back to back as iperf3 does (1000: its default) instead of one every SIZE/rate.
UDP_SOCKET = dict(iface=text(), addr=text(), sndbuf=integer(0, 0, INT_MAX), rcvbuf=integer(0, 0, INT_MAX),
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
# memory a transport may map, device atomics) or the program's own page.
UCX_ATOMIC = {"op": choice("add", "fadd", "swap", "cswap"), "memory": choice("ucx", "program")}
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

# In the default suite each app is one size on 1 and 2 ranks, with its
# default parameters (the packed transpose, the sort at E = 8): five launches
# of each cost about 14 s of the 3 minutes (a launch takes about 0.6 s before
# its first point); the other modes and sizes run when named.


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


@dataclass(frozen=True)
class Bench:
    name: str
    summary: str
    metric: str                 # "latency" or "bandwidth": the figure that leads its table
    sizes: str = TRANSFER_SIZES
    axes: tuple = ("size",)
    params: dict = field(default_factory=dict)   # name -> Param
    min_ranks: int = 2
    legs: int = 1               # one-way transfers per op, in a row (sequential benchmarks)
    concurrent: bool = False    # the op's transfers overlap: its time is the figure
    # How a sample reduces over the ranks that time (the core's runner): the slowest rank's time,
    # or "senders-mean", the senders' mean (osu_mbw_mr; the kernel's shape sets mean_timed)
    reduce: str = "slowest"
    pattern: str | None = None  # rank layout of a traffic pattern, None: ranks 0 and 1 (or 0 alone)
    strides: str = "1"
    conns: str = "1"
    # In the default suite with these overrides of the sweeps (and "params":
    # parameter values, "a,b" for a variant each); None: run only when named.
    suite: dict | None = field(default_factory=dict)
    # The report's views across benchmarks that show it (report/figures.py VIEWS).
    views: tuple = ()
    # A memory copy: "contiguous" (the bound of strided copies) or "strided" (read against it).
    copy: str | None = None
    # What SIZE is, as the x axis of its figures says, and in what unit.
    size_label: str = "message size"
    size_unit: str = "bytes"
    # What its kernel allocates per point and rank, and the points it skips
    # (footprint.py); resources.py checks a run's memory with it before launching.
    footprint: fp.Footprint | None = None
    # fabric level: the fi_getinfo capabilities its kernel asks for ("msg", "rma");
    # the provider chosen must offer them (fabrics.py).
    caps: tuple = ()
    # An application: its problem, work, rate and exchange phase (apps.py);
    # None for the transfer benchmarks.
    app: apps.App | None = None
    # A collective operation: what SIZE is, its bytes and bus bandwidth (collectives.py).
    coll: Collective | None = None
    # A check of its points before launch beyond each parameter's own (halo.py's grids and
    # neighbourhoods): rules(name, sizes, params, nranks) raises UsageError in one line.
    rules: Callable | None = None
    # Several threads per rank make MPI calls at once: the core asks MPI for
    # MPI_THREAD_MULTIPLE for it alone (csrc/main.c; the rest keep MPI_Init's level).
    threads: bool = False
    # Its kernel's counters (the point's rank_counters, analysis/counters.py): each
    # counter's name, without a ".K" stream suffix, to its kind: "sum" (a count kept
    # since setup: a sample's figure is its growth over the sample) or "level" (a
    # current value: a sample's figure is its value after the sample).
    counters: dict = field(default_factory=dict)

    def for_suite(self) -> "Bench":
        """This benchmark with the default suite's (shorter) sweeps."""
        sweeps = {k: v for k, v in (self.suite or {}).items() if k != "params"}
        return replace(self, **sweeps) if sweeps else self

    @property
    def suite_params(self) -> dict:
        return dict((self.suite or {}).get("params", {}))

    @property
    def level(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def defaults(self) -> dict:
        """Parameter defaults in the core's form (burst=32M: "33554432")."""
        return {k: p.core_default for k, p in self.params.items()}

    @property
    def has_stride(self) -> bool:
        return "stride" in self.axes

    @property
    def even_ranks(self) -> bool:
        """Pair patterns split the ranks into two halves."""
        return self.pattern in ("pairs", "bipairs", "bisection")

    @property
    def params_spec(self) -> str:
        """The core's listing: space-separated key=default, a|b listing choices."""
        return " ".join(f"{k}={'|'.join(p.choices) or p.core_default}" for k, p in self.params.items())

    def own_buffers(self, params: dict) -> int:
        """Ops in flight between two completions that each take a buffer of
        their own (buffers.py): the `window` under window_buffers=per-op, else 1;
        a window on each of `endpoints` endpoints (*.msg_rate) is endpoints x window ops."""
        have = {**self.defaults, **params}
        ops = int(have.get("window", 1)) * int(have.get("endpoints", 1))
        return buffers.own(ops, have.get("window_buffers", buffers.LAYOUTS[0]))

    def canonical(self, key: str, value: str) -> str:
        """A value of parameter `key` as the core receives it; UsageError if refused."""
        return self.params[key].canonical(value, f"{self.name}: parameter {key}")

    def idle(self, params: dict) -> dict:
        """The parameters of one variant (canonical values) that mean nothing
        beside the others: away from their default while the parameter their
        `only` names has another value; each with why, in one line."""
        have = {**self.defaults, **params}
        return {k: f"{self.name}: parameter {k}={have[k]} applies only with {p.only[0]}={p.only[1]}, "
                   f"not {p.only[0]}={have[p.only[0]]}"
                for k, p in self.params.items()
                if p.only and have[k] != p.core_default and have[p.only[0]] != p.only[1]}

    def check_ranks(self, nranks: int) -> None:
        if nranks < self.min_ranks:
            raise UsageError(f"{self.name} needs at least {self.min_ranks} ranks; this run has {nranks}")
        if self.even_ranks and nranks % 2:
            raise UsageError(f"{self.name} pairs rank i with rank i + N/2 and needs an even number of "
                             f"ranks; this run has {nranks}")


# The socket levels: every benchmark of theirs shows its CPU per byte or per
# transaction (netperf's service demand; view "cpu", report/cpu_views.py).
SOCKET_LEVELS = ("tcp", "udp")


def _b(name, summary, metric, **kw) -> Bench:
    params = kw.pop("params", {})
    if name.split(".", 1)[0] in SOCKET_LEVELS:
        kw["views"] = (*kw.get("views", ()), "cpu")
    return Bench(name, summary, metric, params=dict(params), **kw)


def _coll(op: str, summary: str) -> Bench:
    """A collective's entry: its parameters follow from what the operation takes."""
    c = COLLECTIVES[op]
    if c.local:     # MPI_Reduce_local: one form, nothing in place, no algorithm, nothing to overlap
        params = {**COLL_DTYPE, **COLL_REDUCE, **COLL_SYNC}
        return Bench(f"coll.{op}", summary, "bandwidth", sizes=COLL_SIZES, axes=("size", "active"), params=params,
                     pattern="group", concurrent=True, views=("collectives",), coll=c, min_ranks=1,
                     size_label="vector size", footprint=fp.coll(op))
    params = {**COLL_FORM, **(COLL_DTYPE if c.data else {}), **(COLL_REDUCE if c.reduces else {}),
              **(COLL_ROOT if c.rooted else {}), **(COLL_IN_PLACE if c.data and op != "bcast" else {}), **COLL_SYNC,
              **COLL_ALGORITHM, **COLL_OVERLAP}
    return Bench(f"coll.{op}", summary, "bandwidth" if c.data else "latency",
                 sizes=COLL_SIZES if c.data else "0", axes=("size", "active"), params=params,
                 pattern="group", concurrent=True, views=("collectives",), coll=c,
                 suite=(COLL_SUITE if c.data else {}) if op in COLL_SUITE_OPS else None,
                 size_label="vector size" if not c.blocks else "block size", footprint=fp.coll(op))


def _atomic(name: str, summary: str, sizes: str, suite: dict | None = None) -> Bench:
    """An atomic's entry (atomics.py): OSU's syncs, IMB's aggregate mode, the ops and types its call takes."""
    a = atomics.ATOMICS[name]
    params = {"sync": choice(*a.syncs), "mode": Param("osu", atomics.MODES, only=("sync", "flush")),
              "ops_per_flush": integer(atomics.IMB_MSGS_PER_SAMPLE, 1, 1 << 16, only=("mode", "aggregate")),
              **({"op": choice(*a.ops)} if a.ops else {}), "type": choice(*a.types),
              # per-op: the clock read around every op as OSU's loops read it (deposit_atomic.c, docs/atomics.md)
              "clock": Param("loop", ("loop", "per-op"), only=("mode", "osu"))}
    return _b(name, summary, "latency", sizes=sizes, params=params, suite=suite, views=("atomics",),
              footprint=fp.ATOMIC)


# Halo exchanges (suite/halo.py, docs/halo.md): IMB-P2P's stencils, IMB's touches of the buffers
# on or off (-msgwr, -msgrd); MPI's neighbourhood collectives on OSU's Cartesian neighbourhood
# (dim, radius: OSU's -N cart:DIM:RAD, default 1:1), a graph file, or IMB's stencil grids.
HALO_SIZES = "1:1M:x4"
NEIGHBORHOOD = {"neighborhood": choice("cart", "graph", "stencil2d", "stencil3d"),
                "dim": integer(1, 1, halo.MAX_DIM, only=("neighborhood", "cart")),
                "radius": integer(1, 1, 1 << 10, only=("neighborhood", "cart")),
                "graph": Param("", only=("neighborhood", "graph")),
                **COLL_FORM, **COLL_SYNC}


def _neighbor(op: str, summary: str, footprint) -> Bench:
    # 3 ranks at least: OSU's default neighbourhood (dim 1, radius 1) needs a side of 3
    return _b(f"coll.neighbor_{op}", summary, "latency", sizes=HALO_SIZES, concurrent=True, pattern="all",
              min_ranks=3, params=NEIGHBORHOOD, suite=None, views=("halo",), size_label="block size", footprint=footprint,
              rules=halo.check_neighbourhood)


STRIDED = ("size", "stride")

REGISTRY: dict[str, Bench] = {b.name: b for b in [
    # ---- memory: one process copies (rank 0; others idle)
    _b("memory.memcpy", "libc memcpy of SIZE bytes (reference)", "bandwidth", sizes=MEMORY_SIZES, min_ranks=1,
       copy="contiguous", size_label="copy size", footprint=fp.COPY),
    _b("memory.copy", "8-byte word copy loop, contiguous loads and stores", "bandwidth", sizes=MEMORY_SIZES,
       min_ranks=1, params=STORES, copy="contiguous", size_label="copy size", footprint=fp.COPY),
    _b("memory.strided_store", "ECT: contiguous loads, stores at a stride of S words", "bandwidth",
       sizes="32K,512K,64M", axes=STRIDED, strides=STRIDES, min_ranks=1, params=STORES,
       suite=ECT_SUITE, views=("strided",), copy="strided", size_label="copy size", footprint=fp.COPY),
    _b("memory.strided_load", "ECT: loads at a stride of S words, contiguous stores", "bandwidth",
       sizes="32K,512K,64M", axes=STRIDED, strides=STRIDES, min_ranks=1, params=STORES,
       suite=ECT_SUITE, views=("strided",), copy="strided", size_label="copy size", footprint=fp.COPY),
    # ---- deposit: one-sided, origin rank 0 and target rank 1, or a pattern
    _b("deposit.put_lat", "MPI_Put of SIZE bytes then completion (flush or fence)", "latency", params=SYNC,
       footprint=fp.RMA_PAIR),
    _b("deposit.get_lat", "MPI_Get of SIZE bytes then completion (flush or fence)", "latency", params=SYNC,
       footprint=fp.RMA_PAIR),
    _b("deposit.put_bw", "a window of MPI_Put then one completion", "bandwidth", params={**SYNC, **PUTS},
       suite=RMA_WINDOW_SUITE, views=("bidirectional",), footprint=fp.RMA_PAIR),
    _b("deposit.get_bw", "a window of MPI_Get then one completion", "bandwidth", params={**SYNC, **PUTS},
       suite=RMA_WINDOW_SUITE, footprint=fp.RMA_PAIR),
    _b("deposit.strided_direct", "strided deposit with a vector-datatype MPI_Put", "bandwidth",
       sizes="4K,256K", axes=STRIDED, strides=STRIDES, params=SYNC,
       views=("strided",), footprint=fp.STRIDED_DIRECT),
    _b("deposit.strided_packed", "strided deposit by buffer packing: contiguous put, unpack at the target",
       "bandwidth", sizes="4K,256K", axes=STRIDED, strides=STRIDES, params={"sync": choice("fence", "flush")},
       views=("strided",), footprint=fp.STRIDED_PACKED),
    _b("deposit.strided_shm", "strided deposit by direct stores into a shared-memory window", "bandwidth",
       sizes="4K,256K", axes=STRIDED, strides=STRIDES, views=("strided",), footprint=fp.STRIDED_SHM),
    _b("deposit.put_bibw", "both ranks of a pair put a window into each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params=PUTS, suite=None,
       views=("bidirectional",), footprint=fp.RMA_BIPAIRS),
    _b("deposit.hotspot_put", "ACTIVE ranks put windows into rank 0 at once (hotspot write)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params=PUTS, suite=None,
       views=HOTSPOT_VIEWS, footprint=fp.RMA_HOTSPOT_PUT),
    _b("deposit.hotspot_get", "ACTIVE ranks get windows from rank 0 at once (hotspot read)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params=PUTS, suite=None,
       views=HOTSPOT_VIEWS, footprint=fp.RMA_HOTSPOT_GET),
    _atomic("deposit.fop", "MPI_Fetch_and_op of one element then OSU's sync (or IMB's aggregate flush)", "8",
            suite={}),
    _atomic("deposit.cas", "MPI_Compare_and_swap of one element then OSU's sync (or IMB's aggregate flush)", "8"),
    _atomic("deposit.acc", "MPI_Accumulate of SIZE bytes then OSU's sync (or IMB's aggregate flush)", "8:4M:x2"),
    _atomic("deposit.get_acc", "MPI_Get_accumulate of SIZE bytes then OSU's sync (or IMB's aggregate flush)",
            "8:4M:x2"),
    # ---- message: two-sided MPI
    _b("message.pingpong", "MPI_Send/MPI_Recv round trip between two ranks", "latency", legs=2,
       params={"completion": COMPLETION}, suite={"params": {"completion": "wait,test"}}, views=("layers",),
       footprint=fp.MPI_PAIR),
    _b("message.stream", "a window of MPI_Isend to pre-posted receives, acked per window", "bandwidth",
       params={**SENDS, "completion": COMPLETION}, suite=POSTAL_SUITE,
       views=("layers", "postal", "bidirectional"), footprint=fp.MPI_STREAM),
    _b("message.postal_restricted", "restricted postal semantics: receives posted before the sends",
       "bandwidth", params={**SENDS, "mode": choice("ready", "ssend")}, suite=POSTAL_SUITE, views=("postal",),
       footprint=fp.MPI_STREAM),
    _b("message.postal_full", "full postal semantics: sends posted before the receives (library buffers)",
       "bandwidth", params=SENDS, suite=POSTAL_SUITE, views=("postal",), footprint=fp.MPI_POSTAL_FULL),
    _b("message.bibw", "both ranks of a pair stream a window at each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params=SENDS, suite=RR_SUITE,
       views=("bidirectional",), footprint=fp.MPI_BOTH),
    _b("message.hotspot", "ACTIVE ranks stream windows to rank 0 at once (hotspot write)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params=SENDS, suite=None,
       views=HOTSPOT_VIEWS, footprint=fp.MPI_HOTSPOT),
    _b("message.saturation", "ACTIVE pairs (i, i+N/2) stream at once; the plateau is the link's rate",
       "bandwidth", axes=("size", "active"), pattern="pairs", params=SENDS, suite=None,
       views=("saturation", "fairness"), footprint=fp.MPI_PAIRS),
    _b("message.alltoall", "all-to-all personalized exchange: SIZE bytes to every other rank", "bandwidth",
       concurrent=True, pattern="all", min_ranks=2,
       params={"variant": choice("collective", "pairwise", "concurrent"), **ALLTOALL_WINDOW},
       suite=None, views=("alltoall", "validation"), footprint=fp.MPI_ALLTOALL),
    _b("message.bisection", "a seeded random perfect matching; every pair streams both ways at once",
       "bandwidth", concurrent=True, pattern="bisection", params={**SENDS, "seed": integer(1, 0, MAX_VALUE)},
       suite=None,
       views=("alltoall",), footprint=fp.MPI_BOTH),
    _b("message.shift", "every rank streams to rank + ACTIVE and receives from rank - ACTIVE at once: mpiGraph's "
       "step, all steps the N x N pair matrix", "bandwidth", axes=("size", "active"), concurrent=True,
       pattern="shift", min_ranks=2, params=SHIFT_WINDOW, suite=None, views=(), footprint=fp.MPI_BOTH),
    # message rate, timed as the anchors time it (csrc/families/message_rate.c, docs/message-rate.md):
    # every pair (k, k+N/2) at once; `window=1,2,4,8,16,32,64,128` is osu_mbw_mr's -V profile
    _b("message.mbw_mr", "every pair (i, i+N/2) streams windows at once, a barrier before each: osu_mbw_mr's "
       "MB/s and messages/s over the senders' mean time", "bandwidth", sizes="1:4M:x2", concurrent=True,
       pattern="pairs", params={"window": integer(64, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]},
       reduce="senders-mean", suite={"sizes": "8,4K,64K"}, views=("message-rate",), footprint=fp.MPI_PAIRS),
    _b("message.uniband", "every pair (i, i+N/2) streams windows at once: IMB-MPI1 Uniband's Mbytes/sec and "
       "Msg/sec over the slowest rank's time", "bandwidth", concurrent=True, pattern="pairs",
       params={"window": integer(256, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]},
       suite=None, views=("message-rate",), footprint=fp.MPI_PAIRS),
    _b("message.biband", "both ranks of every pair stream windows at each other at once: IMB-MPI1 Biband's "
       "Mbytes/sec and Msg/sec over the slowest rank's time", "bandwidth", concurrent=True, pattern="bipairs",
       params={"window": integer(256, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]},
       suite=None, views=("message-rate",), footprint=fp.MPI_BOTH),
    # HPC Challenge's network figures (csrc/families/message_ring.c, analysis/hpcc.py, docs/hpcc.md):
    # ping-pong between every ordered pair in turn, and the natural and random rings in HPCC's two ways
    _b("message.cross_pingpong", "MPI_Send/MPI_Recv round trip between the ACTIVE-th ordered pair of ranks, the "
       "others idle: HPCC's ping-pong over pairs", "latency", sizes="8,2000000", axes=("size", "active"), legs=2,
       pattern="cross", suite=None, views=("hpcc",), footprint=fp.MPI_PAIR),
    _b("message.ring", "every rank sends SIZE bytes to both ring neighbours and receives from both: HPCC's "
       "naturally or randomly ordered ring, by two MPI_Sendrecv or by MPI_Irecv/MPI_Isend", "latency",
       sizes="8,2000000", concurrent=True, pattern="ring", suite=None, views=("hpcc",),
       params={"order": choice("natural", "random"), "method": choice("sendrecv", "irecv"),
               "seed": integer(1, 0, MAX_VALUE, only=("order", "random"))}, footprint=fp.MPI_RING),
    # threads per rank (csrc/families/message_mt.c, docs/threads.md): osu_latency_mt's S:R
    # threads, IMB-MT's T threads each on a communicator of its own; suite/threads.py bounds them
    _b("message.latency_mt", "SENDERS threads of rank 0 ping-pong with RECEIVERS threads of rank 1 at once: "
       "osu_latency_mt's latency", "latency", sizes="0:64K:x4", legs=2, threads=True,
       params={"senders": integer(1, 1, 127), "receivers": integer(2, 1, 127),
               # per-op: a sender thread's round trips timed one by one, OSU's t_total (message_mt.c)
               "clock": choice("loop", "per-op")}, suite=None,
       views=("threads",), footprint=fp.MPI_LATENCY_MT),
    _b("message.mt_uniband", "THREADS thread pairs stream windows from rank 0 to rank 1 at once, a "
       "communicator each: IMB-MT's UniBandMT", "bandwidth", sizes="1:4M:x4", concurrent=True, threads=True,
       params={"threads": integer(2, 1, 127), **SENDS}, suite=None,
       views=("threads",), footprint=fp.MPI_MT_BAND),
    _b("message.mt_biband", "THREADS thread pairs stream windows both ways between ranks 0 and 1 at once: "
       "IMB-MT's BiBandMT", "bandwidth", sizes="1:4M:x4", concurrent=True, threads=True,
       params={"threads": integer(2, 1, 127), **SENDS}, suite=None,
       views=("threads",), footprint=fp.MPI_MT_BAND),
    # halo exchange (csrc/families/message_halo.c): IMB-P2P's Stencil2D and Stencil3D
    _b("message.stencil2d", "IMB-P2P Stencil2D: every rank exchanges SIZE bytes with its 4 neighbours on a periodic "
       "2-D grid of the ranks (Irecv, Isend, Waitall)", "bandwidth", sizes=HALO_SIZES, concurrent=True,
       pattern="all", min_ranks=4, params={"touch": choice("on", "off")}, suite=None, views=("halo",),
       footprint=fp.HALO_2D, rules=halo.check_stencil),
    _b("message.stencil3d", "IMB-P2P Stencil3D: every rank exchanges SIZE bytes with its 6 neighbours on a periodic "
       "3-D grid of the ranks (Irecv, Isend, Waitall)", "bandwidth", sizes=HALO_SIZES, concurrent=True,
       pattern="all", min_ranks=8, params={"touch": choice("on", "off")}, suite=None, views=(),
       footprint=fp.HALO_3D, rules=halo.check_stencil),
    # congestion (GPCNeT): victims on a seeded random ring time a test while the other ranks
    # load the network (suite/congestion.py); ACTIVE is 0 (isolated) or every aggressor
    _b("message.victim_latency", "victims on a random ring exchange SIZE bytes with both neighbours while the "
       "aggressors load the network (GPCNeT's random ring latency)", "latency", sizes="8",
       axes=("size", "active"), concurrent=True, pattern="congestion", min_ranks=4, params=CONGESTION,
       suite=None, views=(), footprint=fp.congestion()),
    _b("message.victim_bandwidth", "victims on a random ring stream a window of SIZE bytes to and from both "
       "neighbours while the aggressors load the network (GPCNeT's random ring bandwidth)", "bandwidth",
       sizes="128K", axes=("size", "active"), concurrent=True, pattern="congestion", min_ranks=4,
       params={**CONGESTION, "window": integer(4, 1, 1024)}, suite=None, views=(), footprint=fp.congestion()),
    _b("message.victim_allreduce", "the victims allreduce SIZE bytes of doubles while the aggressors load the "
       "network (GPCNeT's 8-byte allreduce)", "latency", sizes="8", axes=("size", "active"), concurrent=True,
       pattern="congestion", min_ranks=4, params=CONGESTION, suite=None, views=(),
       footprint=fp.congestion(allreduce=True)),
    _b("message.victim", "the victims run the benchmark param VICTIM names among themselves, with its default "
       "parameters, while the aggressors load the network", "latency", sizes="8", axes=("size", "active"),
       concurrent=True, pattern="congestion", min_ranks=4, params={**CONGESTION, "victim": text("message.pingpong")},
       suite=None, views=(), footprint=fp.congestion_of(lambda name: REGISTRY[name])),
    _b("message.conns", "CONNS receives on CONNS tags, completed by MPI_Waitany or a round-robin MPI_Test",
       "bandwidth", sizes="4K,64K", axes=("size", "conns"), conns=CONNS, params={"check": choice("waitany", "scan")},
       suite={**CONNS_SUITE, "params": {"check": "waitany,scan"}}, views=("via-conns",), footprint=fp.MPI_CONNS),
    _b("message.scatter", "32 segments of SIZE bytes at a stride in the receiver: datatype or unpack",
       "bandwidth", sizes=SEGMENT_SIZES, params={"mode": choice("datatype", "copy"), **SEGMENTS, **SENDS},
       suite={"sizes": "8,64,1K", "params": {"mode": "datatype,copy"}},
       views=("via-scatter",), size_label="segment size", footprint=fp.MPI_SCATTER),
    # ---- tcp: sockets between ranks 0 and 1
    _b("tcp.rr_poll", "TCP request/response, busy-polling receive", "latency", legs=2, params=SOCKET,
       suite=RR_SUITE, views=("layers", "via-latency"), footprint=fp.TCP_RR),
    _b("tcp.rr_block", "TCP request/response, blocking receive", "latency", legs=2, params=SOCKET,
       suite=RR_SUITE, views=("via-latency",), footprint=fp.TCP_RR),
    _b("tcp.rr_epoll", "TCP request/response, receive after blocking in epoll_wait", "latency", legs=2,
       params=SOCKET, suite=RR_SUITE, views=("via-latency",), footprint=fp.TCP_RR),
    _b("tcp.stream", "TCP streaming, SIZE bytes per send, over STREAMS connections one way or both ways",
       "bandwidth", sizes="1:4M:x2",
       params={**SOCKET, "burst": integer("32M", 1, 1 << 40),
               # iperf3 -P N, -R, --bidir (docs/sockets.md, "Streams and directions")
               "streams": integer(1, 1, 1 << 20), "direction": choice(*st.DIRECTIONS)},
       suite=LEVEL_STREAM_SUITE, views=("layers", "stream-fairness"), footprint=fp.TCP_STREAM,
       rules=st.check_streams, counters={"received_bytes": "sum"}),
    _b("tcp.crr", "TCP connect, request and response of SIZE bytes, close, per op (netperf's TCP_CRR)",
       "latency", sizes="1", params={**SOCKET, "close": choice("server", "reset")}, suite=None,
       footprint=fp.TCP_CRR),
    _b("tcp.conns", "TCP stream round-robin over CONNS connections; completion by epoll or a scan",
       "bandwidth", sizes="4K,64K", axes=("size", "conns"), conns=CONNS,
       params={**SOCKET, "check": choice("epoll", "scan")}, suite={**CONNS_SUITE, "params": {"check": "epoll,scan"}},
       views=("via-conns",), footprint=fp.TCP_CONNS),
    _b("tcp.scatter", "TCP messages of 32 segments of SIZE bytes: readv into place or receive and copy",
       "bandwidth", sizes=SEGMENT_SIZES, params={**SOCKET, "mode": choice("iovec", "copy"), **SEGMENTS},
       suite={"sizes": "8,64,1K", "params": {"mode": "iovec,copy"}},
       views=("via-scatter",), size_label="segment size", footprint=fp.TCP_SCATTER),
    _b("tcp.underload", "TCP messages of SIZE bytes at MPS a second, every REPLY_EVERY-th echoed: its "
       "latency (RTT/2)", "bandwidth", sizes="64,1K,16K", params=TCP_UNDERLOAD, suite=None,
       counters={"sent": "sum", "asked": "sum", "back": "sum", "lost": "sum", "latency_s": "sum"},
       footprint=fp.TCP_UNDERLOAD),
    # ---- udp: a stream at a set rate or unlimited, and request/response that survives a loss (udp.c,
    # docs/sockets.md "UDP"); their counters' kinds in udp.py
    _b("udp.stream", "UDP datagrams of SIZE bytes at RATE bits/s per flow (or unlimited) over STREAMS flows, "
       "one way or both: loss, jitter, reordering", "bandwidth", sizes="1K,8K", params=UDP_STREAM, suite=None,
       views=("udp-rate", "stream-fairness"),
       footprint=fp.UDP_STREAM, rules=udp.check, counters=udp.STREAM_COUNTERS),
    _b("udp.rr", "UDP request and response of SIZE bytes; a reply not back within TIMEOUT_US is a lost "
       "transaction and the loop goes on", "latency", legs=2, sizes="64,1K", params=UDP_RR, suite=None,
       footprint=fp.UDP_RR, counters=udp.RR_COUNTERS),
    # ---- udp: latency under load, sockperf's under-load mode (udp_underload.c, docs/sockets.md)
    _b("udp.underload", "UDP messages of SIZE bytes at MPS a second, every REPLY_EVERY-th echoed: its "
       "latency (RTT/2)", "bandwidth", sizes="64,1K,16K", params=UNDERLOAD, suite=None,
       counters={"sent": "sum", "asked": "sum", "back": "sum", "lost": "sum", "latency_s": "sum"},
       views=("underload",), footprint=fp.UDP_UNDERLOAD),
    # ---- fabric: libfabric, ranks 0 and 1 or a pattern (MPI only sets up: addresses, keys)
    _b("fabric.pingpong", "fi_tsend/fi_trecv round trip (fi_inject up to the inject size)", "latency", legs=2,
       params={**FABRIC, **FABRIC_PATH, "completion": choice("poll", "block")},
       suite={**LEVEL_SUITE, "params": {"completion": "poll,block"}}, views=("layers", "via-latency"),
       caps=("msg",), footprint=fp.FABRIC_PAIR),
    _b("fabric.stream", "a window of fi_tsend to pre-posted receives, acked per window", "bandwidth",
       params={**FABRIC, **FABRIC_PATH, **SENDS}, suite=LEVEL_STREAM_SUITE, caps=("msg",), views=("layers",),
       footprint=fp.FABRIC_PAIR),
    _b("fabric.bibw", "both ranks of a pair stream a window of fi_tsend at each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params={**FABRIC, **FABRIC_PATH, **SENDS}, suite=None,
       views=("bidirectional",), caps=("msg",), footprint=fp.FABRIC_BOTH),
    _b("fabric.put_lat", "fi_write of SIZE bytes into a registered remote buffer, then its completion",
       "latency", params=FABRIC_RMA, suite=None, caps=("rma",), footprint=fp.FABRIC_RMA),
    _b("fabric.put_bw", "a window of fi_write, then their completions", "bandwidth",
       params={**FABRIC_RMA, **PUTS}, suite=None, caps=("rma",), footprint=fp.FABRIC_RMA),
    _b("fabric.get_bw", "a window of fi_read, then their completions", "bandwidth",
       params={**FABRIC_RMA, **PUTS}, suite=None, caps=("rma",), footprint=fp.FABRIC_RMA),
    _b("fabric.hotspot_put", "ACTIVE ranks fi_write windows into rank 0 at once (hotspot write)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params={**FABRIC_RMA, **PUTS}, suite=None,
       views=HOTSPOT_VIEWS, caps=("rma",), footprint=fp.FABRIC_HOTSPOT),
    _b("fabric.saturation", "ACTIVE pairs (i, i+N/2) stream fi_tsend at once; the plateau is the link's rate",
       "bandwidth", axes=("size", "active"), pattern="pairs", params={**FABRIC, **FABRIC_PATH, **SENDS},
       suite=None, views=("saturation", "fairness"), caps=("msg",), footprint=fp.FABRIC_PAIRS),
    _b("fabric.mr_reg", "fi_mr_reg then fi_close of a SIZE-byte buffer: the price of zero copy", "latency",
       sizes="4K:64M:x4", min_ranks=1, params=FABRIC, suite=None, size_label="region size", views=("registration",),
       footprint=fp.FABRIC_MR),
    _b("fabric.conns", "CONNS endpoints; completions from one shared CQ or a CQ per endpoint checked in turn",
       "bandwidth", sizes="4K,64K", axes=("size", "conns"), conns=CONNS,
       params={**FABRIC, "check": choice("cq", "scan")}, suite=None, views=("via-conns",),
       caps=("msg",), footprint=fp.FABRIC_CONNS),
    _b("fabric.scatter", "32 segments of SIZE bytes: an iovec receive by the provider, or receive and copy",
       "bandwidth", sizes=SEGMENT_SIZES, params={**FABRIC, "mode": choice("iovec", "copy"), **SEGMENTS, **SENDS},
       suite=None, views=("via-scatter",), size_label="segment size", caps=("msg",), footprint=fp.FABRIC_SCATTER),
    _b("fabric.atomic", "one 8-byte fi_atomic, fi_fetch_atomic or fi_compare_atomic on the target's word, then "
       "its completion (fabtests' fi_rdm_atomic)", "latency", sizes="8", params={**FABRIC, **FABRIC_ATOMIC},
       suite=None, size_label="operand size", caps=("atomic",), footprint=fp.FABRIC_ATOMIC),
    _b("fabric.msg_rate", "ENDPOINTS endpoints each stream a window of fi_tsend, acked per window "
       "(perftest's ib_send_bw -q)", "bandwidth", sizes=RATE_SIZES, params={**FABRIC, **FABRIC_PATH, **ENDPOINTS},
       suite=None, caps=("msg",), footprint=fp.FABRIC_RATE),
    # ---- ucx: UCP, ranks 0 and 1 or a pattern (MPI only sets up: worker addresses, remote keys)
    _b("ucx.pingpong", "ucp_tag_send_nbx/ucp_tag_recv_nbx round trip", "latency", legs=2, params=UCX,
       suite=LEVEL_SUITE, views=("layers",), footprint=fp.UCX_PAIR),
    _b("ucx.stream", "a window of ucp_tag_send_nbx to pre-posted receives, acked per window", "bandwidth",
       params={**UCX, **SENDS}, suite=LEVEL_STREAM_SUITE, views=("layers",), footprint=fp.UCX_PAIR),
    _b("ucx.bibw", "both ranks of a pair stream a window of tagged sends at each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params={**UCX, **SENDS}, suite=None, views=("bidirectional",),
       footprint=fp.UCX_PAIR),
    _b("ucx.put_bw", "a window of ucp_put_nbx into a mapped remote buffer, then a flush", "bandwidth",
       params={**UCX, **PUTS}, suite=None, footprint=fp.UCX_RMA),
    _b("ucx.get_bw", "a window of ucp_get_nbx from a mapped remote buffer, then a flush", "bandwidth",
       params={**UCX, **PUTS}, suite=None, footprint=fp.UCX_RMA),
    _b("ucx.mr_reg", "ucp_mem_map then ucp_mem_unmap of a SIZE-byte buffer", "latency", sizes="4K:64M:x4",
       min_ranks=1, params=UCX, suite=None, size_label="region size", views=("registration",), footprint=fp.UCX_MR),
    _b("ucx.atomic", "one ucp_atomic_op_nbx on the target's 8-byte word, then its completion (ucx_perftest's "
       "ucp_add, ucp_fadd, ucp_swap, ucp_cswap)", "latency", sizes="8", params={**UCX, **UCX_ATOMIC}, suite=None,
       size_label="operand size", footprint=fp.UCX_ATOMIC),
    _b("ucx.msg_rate", "ENDPOINTS workers each stream a window of tagged sends, acked per window "
       "(perftest's ib_send_bw -q)", "bandwidth", sizes=RATE_SIZES, params={**UCX, **ENDPOINTS}, suite=None,
       footprint=fp.UCX_RATE),
    # ucx_perftest -T THREADS -M THREAD_MODE's tag_lat: a UCP worker per thread (csrc/families/ucx_mt.c,
    # docs/threads.md); its threads make no MPI call, the core asks MPI_THREAD_MULTIPLE as for every `threads`
    _b("ucx.mt_pingpong", "THREADS threads of rank 0 ping-pong tagged messages with THREADS of rank 1 at once, a "
       "UCP worker each: ucx_perftest -T's tag_lat", "latency", sizes="0:64K:x4", legs=2, threads=True,
       params={**UCX, "threads": integer(2, 1, 127), "thread_mode": choice("single", "serialized", "multi")},
       suite=None, views=("threads",), footprint=fp.UCX_MT),
    # ---- app: the seeds' applications on the first ACTIVE ranks
    _b("app.transpose", "M x M array of 8-byte words by row blocks transposed: pack+alltoall+unpack, "
       "derived datatypes, or one-sided deposit", "bandwidth", sizes="256:4K:x2", axes=APP_AXES, min_ranks=1,
       pattern="app", concurrent=True,
       params={"mode": choice("packed", "datatype", "deposit"), "deposit": choice("auto", "put", "stores"),
               **APP_EXCHANGE},
       suite={"sizes": "1K"},
       views=("transpose", "phases"), size_label="array side M", size_unit="words", footprint=fp.APP_TRANSPOSE,
       app=apps.TRANSPOSE),
    # n = 2048 takes about 1.1 s an op on one rank of a 2-core host, 5.5 s a launch at five ops:
    # the default sweep stops at 1K so that it runs within 60 s on 2 ranks.
    _b("app.matmul", "C = A B of n x n doubles by row blocks, B gathered (MPI_Allgatherv), local BLAS dgemm",
       "latency", sizes="256:1K:x2", axes=APP_AXES, min_ranks=1, pattern="app", concurrent=True,
       params={**APP_SCALE, "local": choice("auto", "blas", "loop")}, suite={"sizes": "512"},
       views=("speedup", "phases"), size_label="matrix side n", size_unit="elements", footprint=fp.APP_MATMUL,
       app=apps.MATMUL),
    # 16M keys take 0.4-1 s an op on one rank of a 2-core host and a point runs at least five ops
    # per launch: the default sweep stops at 4M so that it runs within 60 s on 2 ranks.
    _b("app.sort", "bucket sort of E-byte keys: bucket by key range, MPI_Alltoallv, local radix sort",
       "bandwidth", sizes="64K:4M:x4", axes=APP_AXES, min_ranks=1, pattern="app", concurrent=True,
       params={"elem": choice("8", "4", "16", "32", "64"), **APP_SCALE, "seed": integer(1, 0, MAX_VALUE),
               **APP_EXCHANGE},
       suite={"sizes": "256K"},
       views=("speedup", "sort-rate", "phases"), size_label="keys", size_unit="keys", footprint=fp.APP_SORT,
       app=apps.SORT),
    # ---- coll: MPI's collective operations on the first ACTIVE ranks
    _coll("allreduce", "MPI_Allreduce of a SIZE-byte vector: every rank gets the reduction"),
    _coll("bcast", "MPI_Bcast of SIZE bytes from the root"),
    _coll("reduce", "MPI_Reduce of a SIZE-byte vector to the root"),
    _coll("allgather", "MPI_Allgather: every rank gets every rank's SIZE-byte block"),
    _coll("allgatherv", "MPI_Allgatherv with equal SIZE-byte blocks"),
    _coll("reduce_scatter", "MPI_Reduce_scatter of a SIZE-byte vector, a block of it to each rank"),
    _coll("reduce_scatter_block", "MPI_Reduce_scatter_block of a SIZE-byte vector in N equal blocks"),
    _coll("gather", "MPI_Gather of every rank's SIZE-byte block to the root"),
    _coll("gatherv", "MPI_Gatherv with equal SIZE-byte blocks"),
    _coll("scatter", "MPI_Scatter of a SIZE-byte block from the root to each rank"),
    _coll("scatterv", "MPI_Scatterv with equal SIZE-byte blocks"),
    _coll("alltoall", "MPI_Alltoall: a SIZE-byte block from every rank to every rank"),
    _coll("alltoallv", "MPI_Alltoallv with equal SIZE-byte blocks"),
    _coll("scan", "MPI_Scan of a SIZE-byte vector: rank r gets the reduction over ranks 0..r"),
    _coll("barrier", "MPI_Barrier"),
    _coll("reduce_local", "MPI_Reduce_local of a SIZE-byte vector on each rank alone (the cost of reducing: "
                          "the model's gamma)"),
    # neighbourhood collectives (csrc/families/coll_neighbor.c) on every rank's neighbourhood
    _neighbor("allgather", "MPI_Neighbor_allgather: every rank gets each source neighbour's SIZE-byte block",
              fp.NEIGHBOR_GATHER),
    _neighbor("allgatherv", "MPI_Neighbor_allgatherv with equal SIZE-byte blocks", fp.NEIGHBOR_GATHER),
    _neighbor("alltoall", "MPI_Neighbor_alltoall: a SIZE-byte block to and from each neighbour",
              fp.NEIGHBOR_ALLTOALL),
    _neighbor("alltoallv", "MPI_Neighbor_alltoallv with equal SIZE-byte blocks", fp.NEIGHBOR_ALLTOALL),
    _neighbor("alltoallw", "MPI_Neighbor_alltoallw with equal SIZE-byte blocks of MPI_BYTE", fp.NEIGHBOR_ALLTOALL),
    # ---- noise: every rank on its own core (suite/noise.py, csrc/families/noise.c, docs/noise.md)
    _b("noise.fwq", "a fixed work quantum (WORK multiply-adds) timed back to back on every rank's core, every "
       "quantum of the record kept (LLNL's FWQ)", "latency", sizes="0", concurrent=True, pattern="all",
       min_ranks=1, params={"work": integer(noise.FWQ_WORK, 1, 1 << 30),
                            "quanta": integer(noise.FWQ_QUANTA, 1, 1 << 22)},
       suite=None, views=("noise",), size_label="size (none)", footprint=fp.NOISE_FWQ),
    _b("noise.detour", "a tight loop reading the clock on every rank's core: gaps above THRESHOLD x the "
       "shortest are detours, each kept (the selfish detour)", "latency", sizes="0", concurrent=True,
       pattern="all", min_ranks=1, params={"threshold": text(noise.DETOUR_THRESHOLD, noise.threshold),
                                           "record_ms": integer(noise.DETOUR_RECORD_MS, 1, 60000)},
       suite=None, views=("noise",), size_label="size (none)", footprint=fp.NOISE_DETOUR),
]}


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
