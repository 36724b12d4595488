"""Seed 003 (George, Todd and Phipps, 1998): the raw limits of a workstation
(memory bus, I/O bus) first, then one-way throughput and round trip per
communication layer (raw network, lightweight messaging, TCP/IP), then the
speedup of a matrix multiply and the rate of a bucket sort over the nodes.

What stands for what on a cluster today:
- processor to memory (Fig. 2-3): a copy within one process, `memory.copy`
  (the word loop) beside libc's `memcpy`; a copy's time is a read then a
  write, the seed's two-way latency;
- processor to I/O bus (Fig. 2-3; the seed copied into SRAM on an SBus card):
  the fabric level's `fi_write` with local completion only
  (`complete=transmit`): the bytes handed over to the provider, the adapter's
  side, before any delivery is confirmed;
- raw network (Fig. 4-5; SCI SHM, Myrinet mapped): the same `fi_write`
  delivered (`complete=delivery`, the data is at the target);
- lightweight messaging (Fig. 8-11; SCALE Messages, GAM, FM): the fabric
  level's send/receive and MPI; TCP/IP (Fig. 6-7, netperf): `tcp.stream` and
  `tcp.rr_poll` with the seed's 64 KiB socket buffers.
"""

from __future__ import annotations

from . import draw
from .recipe import Finding, Runs, Step, Study
from ..report.figure import Axis, Series
from ..units import fmt_time

QUICK = ("--launches", "3", "--point-time", "0.3")
SIZES = ("-s", "4:256K:x4")
# netperf ran with "The socket size on both sender and receiver ports was set to 65536 bytes"
# (the `myrinet-tcp` value's `at.socket_buffer`; the unit test holds the two together)
SOCKET = ("-p", "sndbuf=64K", "-p", "rcvbuf=64K")
MATRIX_SIDES = (256, 512, 1024)            # Fig. 12's 256x256, 512x512 and 1024x1024
SORT_KEYS = 100000                         # "a 100,000-element sort" (Fig. 13)
ELEMENTS = (4, 8, 16, 32, 64)              # the seed's 64-256 bytes are beyond app.sort's largest

STEPS = (
    Step("memory", ("memory.copy", "memory.memcpy", "-s", "64:64M:x4", *QUICK),
         "Fig. 2-3: processor to memory, a copy's throughput and its read-then-write time", seconds=35),
    Step("io-raw", ("fabric.put_bw", "fabric.put_lat", *SIZES, "-p", "complete=transmit,delivery", *QUICK),
         "Fig. 2-5: fi_write handed to the provider (the I/O bus) and delivered (the raw network)",
         seconds=35),
    Step("messaging", ("fabric.stream", "fabric.pingpong", "message.stream", "message.pingpong", *SIZES,
                       *QUICK),
         "Fig. 8-11: lightweight messaging, the fabric level's send/receive and MPI", seconds=30),
    Step("tcp", ("tcp.stream", "tcp.rr_poll", *SIZES, *SOCKET, *QUICK),
         "Fig. 6-7: TCP/IP one-way stream and round trip, 64 KiB socket buffers", seconds=30),
    Step("matmul", ("app.matmul", "-s", ",".join(map(str, MATRIX_SIDES)), *QUICK),
         "Fig. 12: matrix-multiply speedup over ranks (1, 2, 4 .. N)", scales=True, seconds=15),
    Step("sort", ("app.sort", "-s", str(SORT_KEYS), "-p", "elem=" + ",".join(map(str, ELEMENTS)), *QUICK),
         "Fig. 13: bucket-sort rate over ranks, per element size", scales=True, seconds=20),
)

# (label, step, one-way benchmark, round-trip benchmark, parameters, color)
MEMORY = (("memory copy loop", "memory", "memory.copy", "memory.copy", None, 0),
          ("memcpy", "memory", "memory.memcpy", "memory.memcpy", None, 1))
IO = ("I/O: fi_write handed to the provider", "io-raw", "fabric.put_bw", "fabric.put_lat", "complete=transmit", 2)
RAW = ("raw: fi_write delivered", "io-raw", "fabric.put_bw", "fabric.put_lat", "complete=delivery", 0)
MESSAGING = (("fabric send/receive", "messaging", "fabric.stream", "fabric.pingpong", None, 1),
             ("MPI", "messaging", "message.stream", "message.pingpong", None, 2))
TCP = ("TCP", "tcp", "tcp.stream", "tcp.rr_poll", None, 3)
LAYERS = (RAW, *MESSAGING, TCP)

BOUND_SLACK = 1.10    # one peak "exceeds" another only beyond 10%: two peaks each known to a few percent
MARGINAL = 0.85       # "only a slight degradation": within 15% of the raw peak (the seed: 48 of 48 MB/s)
FAR_BEHIND = 10.0     # "much too high": an order of magnitude (the seed's 0.5 ms over 23 us is 22x)
NEAR_LINEAR = 0.80    # "near-linear": 80% of the ideal speedup (the seed's best is 14 of 16, 88%)
NOISE = 0.90          # a rate "rises" unless it falls by more than 10%, a loaded machine's spread


def _stream(runs: Runs, layer: tuple) -> list:
    return runs.rows(layer[1], layer[2], layer[4])


def _trip(runs: Runs, layer: tuple) -> list:
    return runs.rows(layer[1], layer[3], layer[4])


def _least_trip(runs: Runs, layer: tuple):
    """The row of the lowest round trip (one op: a copy, a write and its completion, a ping-pong)."""
    rows = _trip(runs, layer)
    return min(rows, key=lambda r: r.median_s) if rows else None


def figures(runs: Runs, ref) -> list:
    return [*_limit_figures(runs, ref), *_layer_figures(runs, ref), _speedup_figure(runs, ref),
            _sort_figure(runs)]


def _limit_figures(runs: Runs, ref) -> list:
    bw = [draw.measured(l[0], _stream(runs, l), color=l[5]) for l in (*MEMORY, IO)]
    trip = [draw.measured(l[0], _trip(runs, l), "op", color=l[5]) for l in (*MEMORY, IO)]
    xs = [x for s in bw + trip for x in s.x]
    bw += [draw.level("UltraSPARC-2 processor to memory (Fig. 2)", ref.get("memory-bus-throughput"), xs, color=0),
           draw.level("processor to SBus (Fig. 2)", ref.get("sbus-throughput"), xs, color=2)]
    trip += [draw.level("processor to memory, least (Fig. 3)", ref.get("memory-bus-round-trip"), xs,
                        draw.US, color=0),
             draw.level("processor to SBus, least (Fig. 3)", ref.get("sbus-round-trip"), xs, draw.US, color=2)]
    return [draw.figure("gtp-limits-bw", "Processor to memory and to the I/O side, one-way (Fig. 2)", draw.SIZE,
                        draw.BANDWIDTH, bw, "a copy within one process (buffers reused: in cache up to the "
                        "last-level cache, from memory beyond it) and the fabric level's fi_write completed "
                        "locally, the bytes handed to the provider, standing for the seed's copy into SBus SRAM"),
            draw.figure("gtp-limits-rt", "Processor to memory and to the I/O side, read then write (Fig. 3)",
                        draw.SIZE, draw.LATENCY, trip, "median time of one copy (a read then a write) and of "
                        "one locally completed fi_write")]


def _layer_figures(runs: Runs, ref) -> list:
    bw = [draw.measured(l[0], _stream(runs, l), color=l[5]) for l in LAYERS]
    trip = [draw.measured(l[0], _trip(runs, l), "op", color=l[5]) for l in LAYERS]
    xs = [x for s in bw + trip for x in s.x]
    bw += [draw.level("Myrinet raw, mapped (Fig. 4)", ref.get("myrinet-mapped-peak"), xs, color=0),
           draw.level("Myrinet GAM and FM, DMA (Fig. 10)", ref.get("myrinet-dma-fm-gam"), xs, color=1),
           draw.level("Myrinet TCP/IP (Fig. 6)", ref.get("myrinet-tcp"), xs, color=3)]
    trip += [draw.level("SCI SHM raw (Fig. 5)", ref.get("sci-shm-round-trip"), xs, draw.US, color=0),
             draw.level("SCALE Messages over SCI (Fig. 9)", ref.get("scale-messages-sci-round-trip"), xs,
                        draw.US, color=1),
             draw.level("TCP/IP, small messages, 0.5 ms (Fig. 7)", ref.get("tcp-round-trip-low"), xs, draw.US,
                        color=3),
             draw.level("TCP/IP, small messages, 1 ms (Fig. 7)", ref.get("tcp-round-trip-high"), xs, draw.US,
                        color=3)]
    return [draw.figure("gtp-layers-bw", "One-way throughput per layer (Fig. 4, 6, 8, 10)", draw.SIZE,
                        draw.BANDWIDTH, bw, "raw: windows of fi_write delivered; lightweight messaging: "
                        "windows of fi_tsend and of MPI_Isend; TCP: a stream with 64 KiB socket buffers"),
            draw.figure("gtp-layers-rt", "Round trip per layer (Fig. 5, 7, 9, 11)", draw.SIZE, draw.LATENCY,
                        trip, "median round trip: fi_write and its delivery, a ping-pong of fi_tsend or "
                        "MPI_Send, a TCP request and response (busy polling)")]


def _speedup_figure(runs: Runs, ref) -> object:
    mm = runs.rows("matmul", "app.matmul")
    series = []
    for c, n in enumerate(sorted({r.size for r in mm})):
        rows = [r for r in mm if r.size == n and r.speedup is not None]
        series.append(Series(f"{n} x {n}", [r.active for r in rows], [r.speedup for r in rows],
                             hollow=[r.stop != "converged" for r in rows], color=c))
    best = draw.published("the seed's best: 8 UltraSPARC-1 + 8 UltraSPARC-2 (Fig. 12)",
                          [ref.get("matmul-best-speedup")], x="processors", scale=1, color=len(series))
    top = max([x for s in series for x in s.x] + (best.x if series else []), default=0)
    ideal = Series("ideal (speedup = N)", [1, top], [1, top], dashed=True, markers=False, color=6)
    return draw.figure("gtp-matmul", "Matrix multiplication speedup (Fig. 12)",
                       Axis("ranks", log=True, kind="count"), Axis("speedup over 1 rank", log=True),
                       [*series, ideal, best] if series else [],
                       "C = A B of n x n doubles by row blocks, B gathered; the time on 1 rank over the time "
                       "on N, one curve per matrix side")


def _sort_figure(runs: Runs) -> object:
    series = [draw.measured(f"{e}-byte elements", _sort_rows(runs, e), x="active", color=i)
              for i, e in enumerate(ELEMENTS)]
    return draw.figure("gtp-sort", "In-core sorting rate (Fig. 13)", Axis("ranks", log=True, kind="count"),
                       Axis("sort rate (MB/s of elements)", log=True), series,
                       f"bucket sort of {SORT_KEYS} elements spread over N ranks, by key range, "
                       "MPI_Alltoallv, local radix sort; the seed's rates are not stated in its text")


def _sort_rows(runs: Runs, elem: int) -> list:
    """The sort's rows of one element size at its largest key count, by rank count."""
    rows = runs.rows("sort", "app.sort", f"elem={elem}")
    top = max((r.size for r in rows), default=None)
    return sorted((r for r in rows if r.size == top), key=lambda r: r.active or 0)


def findings(runs: Runs, ref) -> list:
    return [_memory_bounds(runs, ref), _io_below_memory(runs, ref), _raw_bounds(runs, ref),
            _marginal_overhead(runs, ref), _tcp_round_trip(runs, ref), _tcp_throughput(runs, ref),
            _matmul_speedup(runs, ref), _sort_vs_nodes(runs, ref), _sort_vs_element(runs, ref),
            _sort_share(runs, ref)]


def _peaks(runs: Runs, layers: tuple) -> dict:
    """label -> the row of the layer's highest one-way throughput, for the layers measured."""
    out = {l[0]: draw.peak(_stream(runs, l)) for l in layers}
    return {k: v for k, v in out.items() if v is not None}


def _memory_bounds(runs: Runs, ref) -> Finding:
    f = Finding("gtp-1", "The memory bus is a hard limit: no layer above it reaches its throughput or its "
                "round trip", "Raw Performance Experiments, Fig. 2-11; §2.0",
                f"processor to memory {draw.quoted(ref.get('memory-bus-throughput'))}, "
                f"{draw.quoted(ref.get('memory-bus-round-trip'))}; the best network layer "
                f"{draw.stated(ref.get('myrinet-mapped-peak'))}")
    mem, layers = _peaks(runs, MEMORY), _peaks(runs, (IO, *LAYERS))
    if not mem or not layers:
        return f.unmeasured(runs.missing("memory" if not mem else "io-raw"))
    limit = max(mem.values(), key=lambda r: r.bandwidth_Bps)
    quick = min(r.median_s for r in _trips(runs, MEMORY).values())
    trips = _trips(runs, (IO, *LAYERS))
    over = [k for k, r in layers.items() if r.bandwidth_Bps > limit.bandwidth_Bps * BOUND_SLACK]
    under = [f"{k} (round trip)" for k, r in trips.items() if r.median_s * BOUND_SLACK < quick]
    fastest = max(layers, key=lambda k: layers[k].bandwidth_Bps)
    least = min(trips, key=lambda k: trips[k].median_s) if trips else None
    shown = f"; the least layer round trip, {least}, {fmt_time(trips[least].median_s)}" if least else ""
    return f.judged(f"memory copy peak {draw.mbps(limit)}, least copy time {fmt_time(quick)}; the fastest "
                    f"layer, {fastest}, {draw.mbps(layers[fastest])}{shown}",
                    not over and not under, "beyond the memory copy: " + ", ".join(over + under))


def _trips(runs: Runs, layers: tuple) -> dict:
    """label -> the row of the layer's lowest round trip, for the layers measured."""
    out = {l[0]: _least_trip(runs, l) for l in layers}
    return {k: v for k, v in out.items() if v is not None}


def _io_below_memory(runs: Runs, ref) -> Finding:
    f = Finding("gtp-2", "The I/O bus does not keep pace with main memory", "Raw Performance Experiments, Fig. 2-3",
                f"SBus {draw.quoted(ref.get('sbus-throughput'))} and {draw.quoted(ref.get('sbus-round-trip'))} "
                f"against memory {draw.stated(ref.get('memory-bus-throughput'))} and "
                f"{draw.stated(ref.get('memory-bus-round-trip'))}")
    mem, io = _peaks(runs, MEMORY), draw.peak(_stream(runs, IO))
    if not mem or io is None:
        return f.unmeasured(runs.missing("memory" if not mem else "io-raw"))
    limit = max(mem.values(), key=lambda r: r.bandwidth_Bps)
    ratio = limit.bandwidth_Bps / io.bandwidth_Bps
    io_trip = _least_trip(runs, IO)
    trip = f"; least round trip {fmt_time(io_trip.median_s)}" if io_trip is not None else ""
    # the seed's gap is 4.5x; a gap beyond the peaks' noise says the I/O side is the narrower one
    return f.judged(f"fi_write handed to the provider {draw.mbps(io)}{trip}; memory copy {draw.mbps(limit)} "
                    f"({ratio:.1f}x)", ratio > BOUND_SLACK,
                    f"the I/O side reached {1 / ratio:.2f}x the memory copy, within {BOUND_SLACK - 1:.0%} of it "
                    "or above")


def _raw_bounds(runs: Runs, ref) -> Finding:
    f = Finding("gtp-3", "The raw network bounds lightweight messaging from above",
                "Lightweight Protocol Experiments, Fig. 8-11; §3.0",
                f"SCI raw {draw.quoted(ref.get('sci-raw-round-trip'))} vs SCALE Messages "
                f"{draw.quoted(ref.get('scale-messages-sci-round-trip'))}; Myrinet raw "
                f"{draw.stated(ref.get('myrinet-mapped-peak'))} vs FM and GAM "
                f"{draw.stated(ref.get('myrinet-dma-fm-gam'))}")
    raw, raw_trip, msg = draw.peak(_stream(runs, RAW)), _least_trip(runs, RAW), _peaks(runs, MESSAGING)
    if raw is None or raw_trip is None or not msg:
        return f.unmeasured(runs.missing("io-raw" if raw is None or raw_trip is None else "messaging"))
    trips = _trips(runs, MESSAGING)
    over = [f"{k} streams {draw.mbps(r)}" for k, r in msg.items() if r.bandwidth_Bps > raw.bandwidth_Bps * BOUND_SLACK]
    under = [f"{k}'s round trip is {fmt_time(r.median_s)}" for k, r in trips.items()
             if r.median_s * BOUND_SLACK < raw_trip.median_s]
    shown = "; ".join(f"{k} {draw.mbps(r)}" + (f", {fmt_time(trips[k].median_s)}" if k in trips else "")
                      for k, r in msg.items())
    return f.judged(f"raw {draw.mbps(raw)}, least round trip {fmt_time(raw_trip.median_s)}; {shown}",
                    not over and not under, "above the raw network: " + "; ".join(over + under))


def _marginal_overhead(runs: Runs, ref) -> Finding:
    f = Finding("gtp-4", "Lightweight messaging costs only a slight degradation of the raw throughput",
                "Lightweight Protocol Experiments, Fig. 8 and 10",
                f"SCALE Channels {draw.quoted(ref.get('scale-channels-myrinet'))}, raw Myrinet "
                f"{draw.quoted(ref.get('myrinet-mapped-peak'))}")
    raw, msg = draw.peak(_stream(runs, RAW)), _peaks(runs, MESSAGING)
    if raw is None or not msg:
        return f.unmeasured(runs.missing("io-raw" if raw is None else "messaging"))
    best = max(msg, key=lambda k: msg[k].bandwidth_Bps)
    ratio = msg[best].bandwidth_Bps / raw.bandwidth_Bps
    return f.judged(f"{best} {draw.mbps(msg[best])}, raw {draw.mbps(raw)} ({ratio:.2f} of raw)",
                    ratio >= MARGINAL, f"the best messaging layer reached only {ratio:.2f} of the raw peak")


def _tcp_round_trip(runs: Runs, ref) -> Finding:
    low, lw = ref.get("tcp-round-trip-low"), ref.get("scale-messages-sci-round-trip")
    f = Finding("gtp-5", "TCP/IP round trips are much too high beside lightweight messaging",
                "TCP/IP Performance Experiments, Fig. 7 and 9",
                f"TCP {draw.quoted(low)} for small messages vs SCALE Messages {draw.stated(lw)} "
                f"({low.si() / lw.si():.0f}x and more)")
    tcp = _trip(runs, TCP)
    msg = {l[0]: _trip(runs, l)[0] for l in MESSAGING if _trip(runs, l)}
    if not tcp or not msg:
        return f.unmeasured(runs.missing("tcp" if not tcp else "messaging"))
    best = min(msg, key=lambda k: msg[k].median_s)
    ratio = tcp[0].median_s / msg[best].median_s
    return f.judged(f"smallest messages: TCP {fmt_time(tcp[0].median_s)} at {tcp[0].size} B, {best} "
                    f"{fmt_time(msg[best].median_s)} at {msg[best].size} B ({ratio:.1f}x)",
                    ratio >= FAR_BEHIND, f"TCP's round trip is only {ratio:.1f}x the lightweight layer's")


def _tcp_throughput(runs: Runs, ref) -> Finding:
    tcp_v, lw_v = ref.get("myrinet-tcp"), ref.get("scale-channels-myrinet")
    f = Finding("gtp-6", "Lightweight messaging streams faster than TCP/IP", "Fig. 6 and 10",
                f"Myrinet TCP {draw.quoted(tcp_v)}, SCALE {draw.stated(lw_v)} ({lw_v.si() / tcp_v.si():.2f}x)")
    tcp, msg = draw.peak(_stream(runs, TCP)), _peaks(runs, MESSAGING)
    if tcp is None or not msg:
        return f.unmeasured(runs.missing("tcp" if tcp is None else "messaging"))
    best = max(msg, key=lambda k: msg[k].bandwidth_Bps)
    ratio = msg[best].bandwidth_Bps / tcp.bandwidth_Bps
    # the seed's lead is 1.37x; a lead within the peaks' noise is no lead
    return f.judged(f"{best} {draw.mbps(msg[best])}, TCP {draw.mbps(tcp)} ({ratio:.2f}x)", ratio > BOUND_SLACK,
                    f"TCP streamed {1 / ratio:.2f}x the best lightweight layer")


def _matmul_speedup(runs: Runs, ref) -> Finding:
    best = ref.get("matmul-best-speedup")
    f = Finding("gtp-7", "The larger matrices reach near-linear speedup", "Parallel Processing Experiments, Fig. 12",
                f"{draw.quoted(best)} on {best.at['processors']} processors")
    mm = [r for r in runs.rows("matmul", "app.matmul") if r.speedup is not None and (r.active or 0) > 1]
    if not mm:
        return f.unmeasured(runs.missing("matmul") + " on more than one rank")
    top = max(r.active for r in mm)
    at_top = sorted((r for r in mm if r.active == top), key=lambda r: r.size)
    big = at_top[-1]
    shown = ", ".join(f"n = {r.size}: {r.speedup:.2f}" for r in at_top)
    return f.judged(f"speedup on {top} ranks: {shown}", big.speedup >= NEAR_LINEAR * top,
                    f"the largest matrix reached {big.speedup / top:.0%} of the ideal {top}, under "
                    f"{NEAR_LINEAR:.0%}")


def _sort_ends(runs: Runs) -> dict:
    """elem -> (row on 1 rank, row on the most ranks), for the element sizes measured on both."""
    out = {}
    for e in ELEMENTS:
        rows = [r for r in _sort_rows(runs, e) if r.bandwidth_Bps]
        if len(rows) > 1 and rows[0].active == 1:
            out[e] = (rows[0], rows[-1])
    return out


def _sort_vs_nodes(runs: Runs, ref) -> Finding:
    f = Finding("gtp-8", "For a fixed data set the sort rate rises with the cluster's size",
                "Parallel Processing Experiments, Fig. 13",
                "stated without numbers: each node sorts proportionally less, though the network demand grows")
    ends = _sort_ends(runs)
    if not ends:
        return f.unmeasured(runs.missing("sort") + " on 1 rank and more")
    top = max(hi.active for _, hi in ends.values())
    ups = {e: hi.bandwidth_Bps / lo.bandwidth_Bps for e, (lo, hi) in ends.items()}
    fell = [e for e, u in ups.items() if u <= 1]
    share = [f"{e} B: the exchange {_share(ends[e][1], 'exchange'):.0%} of the op" for e in fell]
    return f.judged(f"rate on {top} ranks over 1 rank: " + ", ".join(f"{e} B {u:.2f}x" for e, u in ups.items()),
                    not fell, "the rate did not rise for " + "; ".join(share))


def _sort_vs_element(runs: Runs, ref) -> Finding:
    f = Finding("gtp-9", "On a fixed cluster the sort rate rises with the element size (the data set's size)",
                "Parallel Processing Experiments, Fig. 13", "stated without numbers, for 64, 128 and 256-byte "
                "elements")
    top = _most_ranks(runs)
    if top is None:
        return f.unmeasured(runs.missing("sort"))
    rates = top[1]
    pairs = list(zip(rates, rates[1:]))
    fell = [f"{a[0]} B to {b[0]} B" for a, b in pairs if b[1] < a[1] * NOISE]
    return f.judged(f"MB/s of elements on {top[0]} ranks: " + ", ".join(f"{e} B {v / draw.MBPS:.1f}"
                                                                        for e, v in rates),
                    len(rates) > 1 and not fell, "the rate fell by more than 10% from " + ", ".join(fell)
                    if fell else "only one element size was measured")


def _sort_share(runs: Runs, ref) -> Finding:
    f = Finding("gtp-10", "As the elements grow, the local sort takes a larger share of the time",
                "Parallel Processing Experiments, Fig. 13",
                "stated without numbers: the percentage of total execution time attributed to qsort increases")
    top = _most_ranks(runs, rows=True)
    if top is None or len(top[1]) < 2:
        return f.unmeasured(runs.missing("sort") + " at two element sizes")
    shares = [(e, _share(r, "sort")) for e, r in top[1]]
    return f.judged(f"the sort phase's share on {top[0]} ranks: " + ", ".join(f"{e} B {s:.0%}" for e, s in shares),
                    shares[-1][1] > shares[0][1], f"the share at {shares[-1][0]} B is no larger than at "
                    f"{shares[0][0]} B")


def _most_ranks(runs: Runs, rows: bool = False):
    """(rank count, [(elem, rate or row)]) of the sort on the most ranks measured, by element size."""
    by = {e: _sort_rows(runs, e) for e in ELEMENTS}
    counts = [r.active for rs in by.values() for r in rs if r.bandwidth_Bps]
    if not counts:
        return None
    top = max(counts)
    got = [(e, next(r for r in rs if r.active == top)) for e, rs in by.items()
           if any(r.active == top and r.bandwidth_Bps for r in rs)]
    return top, got if rows else [(e, r.bandwidth_Bps) for e, r in got]


def _share(row, phase: str) -> float:
    return (row.phases_s or {}).get(phase, 0.0) / row.median_s


STUDY = Study(
    "george-todd-phipps", "003", "Memory and I/O limits, throughput and round trip per layer, matrix multiply "
    "and sort over the nodes",
    "A copy's throughput and time (the memory bus) and the fabric level's write handed to the provider (the "
    "I/O side) first; then one-way throughput and round trip per layer: raw writes delivered, lightweight "
    "messaging (the fabric level's send/receive, MPI) and TCP; then a matrix multiply's speedup and a bucket "
    "sort's rate over 1, 2, 4 .. N ranks (seed 003's Fig. 2-13).",
    STEPS, figures, findings)
