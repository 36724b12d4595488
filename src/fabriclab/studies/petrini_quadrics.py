"""Seed 004 (Petrini, Hoisie, Feng and Graham): unidirectional and
bidirectional ping latency and bandwidth per library level, and read and
write hotspots, re-run on the fabric level (libfabric: Elan3lib's place, the
lowest user-level interface), UCX (tagged messages, as Tports) and MPI.

The seed places buffers in main or in Elan (NIC) memory; fabriclab places
them in host memory only, so the device-memory step is declared and skipped."""

from __future__ import annotations

from . import draw
from .recipe import Finding, Runs, Step, Study
from ..report.figure import Axis, Series
from ..units import fmt_bytes

LEVELS = (("fabric", "fabric level"), ("ucx", "UCX"), ("message", "MPI"))   # in Elan3lib's, Tports' and MPI's places
QUICK = ("--launches", "3", "--point-time", "0.3")
PING_SIZES = "0,64,256,1K,4K"         # Fig. 5 and 7: the seed's 0..4 KB
STREAM_SIZES = "256:1M:x4"            # Fig. 4 and 6: up to the asymptote
DEVICE = ("fabriclab places every buffer in host memory: it cannot place buffers in device memory "
          "yet (the seed's Elan-memory placements), so host memory is what runs")


def _benches(kind: str) -> tuple:
    return tuple(f"{lvl}.{kind}" for lvl, _ in LEVELS)


# Seconds: measured on a loaded 2-core machine (the whole study 2:16 without
# -n, 2:46 with -n 4). Every ping step runs a pair of ranks; the hotspot runs 4 (one target, up to
# 3 readers or writers; -n 8 gives 7). Fig. 7's bidirectional latency is a
# bibw of one message each way (window=1): a message and an ack per direction.
STEPS = (
    Step("ping", (*_benches("pingpong"), "-s", PING_SIZES, *QUICK),
         "Fig. 5: unidirectional ping latency per level", seconds=30),
    Step("stream", (*_benches("stream"), "-s", STREAM_SIZES, *QUICK),
         "Fig. 4: unidirectional bandwidth per level", seconds=40),
    Step("bibw", (*_benches("bibw"), "-s", STREAM_SIZES, *QUICK),
         "Fig. 6: bidirectional bandwidth per level, per direction", seconds=45),
    Step("bibw-latency", (*_benches("bibw"), "-s", PING_SIZES, "-p", "window=1", *QUICK),
         "Fig. 7: latency under bidirectional traffic per level", seconds=25),
    Step("device-memory", (*_benches("stream"), "-s", STREAM_SIZES, *QUICK),
         "Fig. 4-6: buffers in device memory (the seed's Elan memory)", gpu=True, seconds=0, blocked=DEVICE),
    Step("hotspot", ("deposit.hotspot_get", "deposit.hotspot_put", "message.hotspot", "-s", "64K", *QUICK),
         "Fig. 8: read and write hotspot as processes grow", ranks=4, scales=True, seconds=25),
)

COUNT = Axis("processes reading or writing", log=False, kind="count")


def _per_direction(label: str, rows: list, color: int) -> Series:
    """Fig. 6's curves: each sender's rate (half a pair's traffic), as the seed halves its bidirectional sum."""
    return Series(label, [r.size for r in rows],
                  [r.rank_bandwidth_mean_Bps and r.rank_bandwidth_mean_Bps / draw.MBPS for r in rows],
                  hollow=[r.stop != "converged" for r in rows], color=color)


def _per_leg(label: str, rows: list, color: int) -> Series:
    """Fig. 7's curves: half the op of a one-message bibw (a message, then an ack, each way at once)."""
    return Series(label, [r.size for r in rows], [r.median_s / 2 / draw.US for r in rows],
                  hollow=[r.stop != "converged" for r in rows], color=color)


def _per_process(label: str, rows: list, color: int) -> Series:
    """Fig. 8's lower curves: the aggregate shared out among the processes."""
    return Series(label, [r.active for r in rows],
                  [r.aggregate_bandwidth_Bps and r.aggregate_bandwidth_Bps / r.active / draw.MBPS for r in rows],
                  hollow=[r.stop != "converged" for r in rows], color=color)


def figures(runs: Runs, ref) -> list:
    g = ref.get
    uni = [draw.measured(name, runs.rows("stream", f"{lvl}.stream"), color=c) for c, (lvl, name) in enumerate(LEVELS)]
    xs = [x for s in uni for x in s.x]
    uni += [draw.level(f"QsNET {what} (§5.1)", g(key), xs, color=c)
            for what, key, c in (("Elan3lib, Elan to Elan", "uni-elan-to-elan", 0), ("MPI", "uni-mpi", 2))]
    lat = [draw.measured(name, runs.rows("ping", f"{lvl}.pingpong"), "latency", color=c)
           for c, (lvl, name) in enumerate(LEVELS)]
    sizes = [x for s in lat for x in s.x if x]
    lat += [draw.published("QsNET Elan3lib (§5.1)", [g("uni-latency-small")], scale=draw.US, color=0),
            draw.level("QsNET Tports (§5.1)", g("uni-latency-tports"), sizes, scale=draw.US, color=1),
            draw.level("QsNET MPI (§5.1)", g("uni-latency-mpi"), sizes, scale=draw.US, color=2)]
    bi = [_per_direction(name, runs.rows("bibw", f"{lvl}.bibw"), c) for c, (lvl, name) in enumerate(LEVELS)]
    xs = [x for s in bi for x in s.x]
    bi += [draw.level("QsNET best, main to Elan (§5.2)", g("bi-per-direction"), xs, color=0),
           draw.level("QsNET main to main, all libraries (§5.2)", g("bi-main-to-main"), xs, color=2)]
    bilat = [_per_leg(name, runs.rows("bibw-latency", f"{lvl}.bibw", "window=1"), c)
             for c, (lvl, name) in enumerate(LEVELS)]
    hot = [draw.measured(label, runs.rows("hotspot", bench), "aggregate", x="active", color=c)
           for c, (label, bench) in enumerate(_HOTSPOTS)]
    hot += [_per_process(f"{label}, per process", runs.rows("hotspot", bench), c)
            for c, (label, bench) in enumerate(_HOTSPOTS)]
    xs = [x for s in hot for x in s.x]
    hot += [draw.level(f"QsNET {what} hotspot, aggregate (§5.3)", g(f"hotspot-{what}"), xs, color=c)
            for c, what in enumerate(("read", "write"))]
    return [draw.figure("pq-uni-bw", "Unidirectional bandwidth per level (Fig. 4)", draw.SIZE, draw.BANDWIDTH, uni,
                        "a window of sends to pre-posted receives; buffers in host memory (the seed's main "
                        "memory); the seed's asymptotes dashed"),
            draw.figure("pq-uni-lat", "Unidirectional ping latency per level (Fig. 5)", draw.SIZE, draw.LATENCY,
                        lat, "half a ping-pong round trip; the seed's Elan3lib, Tports and MPI latencies dashed"),
            draw.figure("pq-bi-bw", "Bidirectional bandwidth per direction (Fig. 6)", draw.SIZE, draw.BANDWIDTH,
                        bi, "both ranks of a pair stream at each other at once; each sender's rate, half the "
                        "pair's traffic, as the seed reports it"),
            draw.figure("pq-bi-lat", "Latency under bidirectional traffic (Fig. 7)", draw.SIZE, draw.LATENCY,
                        bilat, "one message each way at once, then an ack each way: half that op; the seed's "
                        "text gives no number for Fig. 7"),
            draw.figure("pq-hotspot", "Read and write hotspot (Fig. 8)", COUNT, draw.BANDWIDTH, hot,
                        "N processes read from (get) or write into (put, MPI send) rank 0 at once, 64 KiB "
                        "messages; upper curves the aggregate, lower each process's rate")]


_HOTSPOTS = (("read (MPI_Get)", "deposit.hotspot_get"), ("write (MPI_Put)", "deposit.hotspot_put"),
             ("write (MPI send)", "message.hotspot"))


def findings(runs: Runs, ref) -> list:
    return [_latency(runs, ref), _bandwidth(runs, ref), _bidirectional(runs, ref), _level_latency(runs, ref),
            _level_bandwidth(runs, ref), _hotspot_flat(runs, ref), _read_vs_write(runs, ref),
            _placement(runs, ref)]


def _trouble(runs: Runs, step: str) -> str:
    """Why `step`'s times say nothing of the fabric: the step missing, or more
    ranks than CPUs, so the ranks take turns on the CPUs (a pair waits on the
    idle ranks' time slices; hotspot senders run one after another instead of
    contending at the target)."""
    doc = runs.docs.get(step)
    if doc is None:
        return runs.missing(step)
    head = doc.header
    if (head.placement or {}).get("oversubscribed"):
        return (f"the run {step} placed {head.nranks} ranks on {head.host.get('cpu_count')} "
                "CPUs: the ranks take turns on the CPUs, so its times are the scheduler's; give each rank a CPU "
                "(without -n the ping steps run 2 ranks; the hotspot needs 4 CPUs or several hosts)")
    return ""


def _latency(runs: Runs, ref) -> Finding:
    bound, zero = ref.get("abstract-latency"), ref.get("uni-latency-zero")
    f = Finding("pq-1", "User-level latency is under 2 us at the lowest library level", "Abstract, §5.1, Fig. 5",
                f"{draw.quoted(bound)}; {draw.stated(zero)} at 0 bytes with Elan3lib")
    row = draw.at(runs.rows("ping", "fabric.pingpong"), 0)
    why = _trouble(runs, "ping")
    if why or row is None or not row.latency_s:
        return f.unmeasured(why or runs.missing("ping"))
    # the abstract's own bound: at most 2 us one way at 0 bytes
    return f.judged(f"fabric level, 0 bytes: {draw.usec(row.latency_s)} one way", row.latency_s <= bound.si(),
                    f"the fabric level takes {draw.usec(row.latency_s)}, above {draw.stated(bound)}")


def _bandwidth(runs: Runs, ref) -> Finding:
    bound, peak_v = ref.get("abstract-bandwidth"), ref.get("uni-elan-to-elan")
    f = Finding("pq-2", "User-level bandwidth is over 300 MB/s at the lowest library level",
                "Abstract, §5.1, Fig. 4",
                f"{draw.quoted(bound)}; peak {draw.quoted(peak_v)}")
    row = draw.peak(runs.rows("stream", "fabric.stream"))
    why = _trouble(runs, "stream")
    if why or row is None:
        return f.unmeasured(why or runs.missing("stream"))
    # the abstract's own bound: at least 300 MB/s
    return f.judged(f"fabric level peak {draw.mbps(row)}", row.bandwidth_Bps >= bound.si(),
                    f"the fabric level peaks at {draw.mbps(row)}, under {draw.stated(bound)}")


def _bidirectional(runs: Runs, ref) -> Finding:
    bi_v, uni_v = ref.get("bi-per-direction"), ref.get("uni-elan-to-elan")
    f = Finding("pq-3", "Bidirectional traffic is not carried at the full rate each way: the gap exposes "
                "bottlenecks in the network interface and the links", "§5.2, Fig. 6",
                f"{draw.quoted(bi_v)} per direction against {draw.stated(uni_v)} one way, "
                f"{bi_v.si() / uni_v.si():.0%}")
    uni, bi = draw.peak(runs.rows("stream", "fabric.stream")), runs.rows("bibw", "fabric.bibw")
    best = max((r for r in bi if r.rank_bandwidth_mean_Bps), key=lambda r: r.rank_bandwidth_mean_Bps, default=None)
    why = _trouble(runs, "stream") or _trouble(runs, "bibw")
    if why or uni is None or best is None:
        return f.unmeasured(why or runs.missing("bibw"))
    share = best.rank_bandwidth_mean_Bps / uni.bandwidth_Bps
    # a gap: under 90% of the one-way peak each way (the seed's is 84%); at 90% or
    # more the fabric carries both directions at about the full rate, within noise
    return f.judged(f"fabric level: {best.rank_bandwidth_mean_Bps / draw.MBPS:.1f} MB/s per direction at "
                    f"{fmt_bytes(best.size)} against {draw.mbps(uni)} one way ({share:.0%})", share < 0.9,
                    f"each direction keeps {share:.0%} of the one-way peak")


def _zero_latency(runs: Runs) -> dict:
    rows = {lvl: draw.at(runs.rows("ping", f"{lvl}.pingpong"), 0) for lvl, _ in LEVELS}
    return {lvl: r.latency_s for lvl, r in rows.items() if r is not None and r.latency_s}


def _level_latency(runs: Runs, ref) -> Finding:
    low, tports, mpi = ref.get("uni-latency-zero"), ref.get("uni-latency-tports"), ref.get("uni-latency-mpi")
    f = Finding("pq-4", "Libraries above the lowest level add latency (tag matching): MPI's is well above "
                "the lowest level's", "§5.1, Fig. 5",
                f"{draw.stated(low)} Elan3lib, {draw.stated(tports)} Tports, {draw.stated(mpi)} MPI "
                f"({mpi.si() / low.si():.1f}x)")
    lat, why = _zero_latency(runs), _trouble(runs, "ping")
    lower = [lat[k] for k in ("fabric", "ucx") if k in lat]
    if why or "message" not in lat or not lower:
        return f.unmeasured(why or runs.missing("ping"))
    ratio = lat["message"] / min(lower)
    # well above: at least 1.5x (the seed's MPI is 2.6x, Tports 2.3x); launch noise is a few percent
    return f.judged("0 bytes: " + ", ".join(f"{name} {draw.usec(lat[lvl])}" for lvl, name in LEVELS if lvl in lat)
                    + f"; MPI {ratio:.1f}x the lowest", ratio >= 1.5,
                    f"MPI costs only {ratio:.1f}x the lowest level's latency")


def _level_bandwidth(runs: Runs, ref) -> Finding:
    mpi, top = ref.get("uni-mpi"), ref.get("uni-elan-to-elan")
    f = Finding("pq-5", "The asymptotic bandwidth of every library level lies in a narrow range", "§5.1, Fig. 4",
                f"{draw.quoted(mpi)} to {draw.stated(top)} ({mpi.si() / top.si():.0%})")
    peaks = {name: draw.peak(runs.rows("stream", f"{lvl}.stream")) for lvl, name in LEVELS}
    peaks = {k: r for k, r in peaks.items() if r is not None}
    why = _trouble(runs, "stream")
    if why or len(peaks) < 2:
        return f.unmeasured(why or runs.missing("stream"))
    low, high = min(r.bandwidth_Bps for r in peaks.values()), max(r.bandwidth_Bps for r in peaks.values())
    # narrow: the slowest level keeps at least 84% of the fastest, twice the seed's
    # 8% spread, for launch-to-launch noise on a shared machine
    return f.judged("peaks: " + ", ".join(f"{k} {draw.mbps(r)}" for k, r in peaks.items())
                    + f"; slowest {low / high:.0%} of fastest", low / high >= 0.84,
                    f"the slowest level reaches only {low / high:.0%} of the fastest")


def _hotspot_counts(runs: Runs) -> dict:
    """bench -> its rows by processes, for hotspots measured at 2 counts or more."""
    out = {bench: runs.rows("hotspot", bench) for _, bench in _HOTSPOTS}
    return {b: [r for r in rows if r.aggregate_bandwidth_Bps] for b, rows in out.items()
            if len([r for r in rows if r.aggregate_bandwidth_Bps]) >= 2}


def _hotspot_flat(runs: Runs, ref) -> Finding:
    f = Finding("pq-6", "Hotspot bandwidth does not fall as processes grow: contention is resolved well",
                "§5.3, Fig. 8", f"aggregate read {draw.stated(ref.get('hotspot-read'))}, write "
                f"{draw.stated(ref.get('hotspot-write'))}, \"remarkably flat\" up to the cluster's 16 nodes")
    counts, why = _hotspot_counts(runs), _trouble(runs, "hotspot")
    if why or not counts:
        return f.unmeasured(why or runs.missing("hotspot") + " (at 2 process counts or more: -n 3 or more)")
    # flat: the aggregate at the most processes keeps at least 85% of its best
    # count's; contention that costs more than 15% is a drop, not launch noise
    kept = {b: rows[-1].aggregate_bandwidth_Bps / max(r.aggregate_bandwidth_Bps for r in rows)
            for b, rows in counts.items()}
    text = "; ".join(f"{b}: {rows[0].aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s at {rows[0].active}, "
                     f"{rows[-1].aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s at {rows[-1].active} "
                     f"({kept[b]:.0%} of its best)" for b, rows in counts.items())
    worst = min(kept, key=kept.get)
    return f.judged(text, kept[worst] >= 0.85,
                    f"{worst} keeps only {kept[worst]:.0%} of its best aggregate at the most processes")


def _read_vs_write(runs: Runs, ref) -> Finding:
    rd, wr = ref.get("hotspot-read"), ref.get("hotspot-write")
    f = Finding("pq-7", "Read and write hotspots reach about the same aggregate bandwidth", "§5.3, Fig. 8",
                f"read {draw.quoted(rd)}, write {draw.quoted(wr)}")
    counts, why = _hotspot_counts(runs), _trouble(runs, "hotspot")
    get, put = counts.get("deposit.hotspot_get"), counts.get("deposit.hotspot_put")
    if why or not get or not put:
        return f.unmeasured(why or runs.missing("hotspot") + " (at 2 process counts or more: -n 3 or more)")
    g, p = get[-1], put[-1]
    ratio = g.aggregate_bandwidth_Bps / p.aggregate_bandwidth_Bps
    # about the same: within 15% either way (the seed's read is 2% above its write)
    return f.judged(f"at {g.active} processes: read {g.aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s, write "
                    f"{p.aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s (read/write {ratio:.2f})",
                    0.85 <= ratio <= 1 / 0.85, f"read is {ratio:.2f}x write")


def _placement(runs: Runs, ref) -> Finding:
    v = ref.get("uni-elan-to-elan")
    f = Finding("pq-8", "The peak is reached with both buffers in the NIC's memory; the PCI bus is not the "
                "bottleneck", "§5.1, Fig. 4",
                f"{draw.quoted(v)}; PCI {draw.quoted(ref.get('uni-elan3lib-read'))}, "
                f"{draw.quoted(ref.get('uni-elan3lib-write'))}")
    return f.unmeasured(runs.skipped.get("device-memory") or DEVICE)


STUDY = Study(
    "petrini-quadrics", "004", "QsNET: ping latency and bandwidth per library level, bidirectional, hotspot",
    "Unidirectional and bidirectional ping latency and bandwidth on the fabric level (libfabric, in "
    "Elan3lib's place), UCX (tagged messages, in Tports' place) and MPI, and read and write hotspots "
    "(one-sided get and put, and MPI sends) from a growing number of processes into one (seed 004's "
    "Fig. 4-8). Buffers are in host memory; the seed's placements in NIC memory are declared and skipped.",
    STEPS, figures, findings)
