"""Seed 000 (Kurmann and Stricker): Gigabit interconnects compared at three
levels (the raw deposit, message passing, TCP/IP) above the local memory
system, with strided transfers direct and by buffer packing, restricted and
full postal semantics, and the transpose they decide. The fabric level's
remote writes stand for the seed's raw deposit; MPI for BIP-MPI and PVM."""

from __future__ import annotations

from ..analysis.fit import half_peak_size
from ..report.figure import Axis, Figure, Mark, Series
from ..units import fmt_bytes
from . import draw
from .recipe import Finding, Runs, Step, Study

# The levels run with a cold cache: the seed's copies and messages went through
# the memory system (§V: "a large working set"), and on a modern host a warm
# 4 MiB copy never leaves the last-level cache. The strided deposits keep one
# layout whatever the cache state, so the strided and block steps run warm and
# the local copy beside them sees the same layout: 1 MiB of payload (spanning
# 64 MiB at stride 64, beyond the cache) at the seed's strides 1..64 of 8-byte
# words (Fig. 9-11). Each step's seconds: as measured on this 2-core machine
# under other users' load (15 on 2 cores); idle, the whole study takes 60 s.
QUICK = ("--launches", "3", "--point-time", "0.3")
STEPS = (
    Step("levels", ("memory.copy", "fabric.put_bw", "message.postal_restricted", "message.postal_full",
                    "tcp.stream", "-s", "256:4M:x4", *QUICK, "--cache", "cold"),
         "Fig. 13-16: local copy, the raw deposit (fabric writes), MPI with restricted and full postal "
         "semantics, TCP", seconds=175),
    Step("strided", ("memory.strided_store", "deposit.strided_direct", "deposit.strided_packed",
                     "deposit.strided_shm", "-s", "1M", "--strides", "1:64:x2", *QUICK),
         "Fig. 9-11: contiguous loads and strided stores, local, direct and by buffer packing", seconds=75),
    Step("blocks", ("deposit.strided_direct", "deposit.strided_packed", "deposit.strided_shm", "fabric.put_bw",
                    "-s", "64:1M:x4", "--strides", "1", *QUICK),
         "Fig. 12: the fastest deposit of contiguous blocks of each size", seconds=45),
    Step("transpose", ("app.transpose", "-p", "mode=packed,datatype,deposit", "-s", "512,1K,2K",
                       "--active", "2", *QUICK),
         "the transpose: packed, derived datatypes, one-sided deposit", seconds=45),
)

_DIRECT = (("direct, vector put", "deposit.strided_direct"), ("direct, mapped stores", "deposit.strided_shm"))
_STRIDED = (("local copy", "memory.strided_store"), *_DIRECT, ("buffer packing", "deposit.strided_packed"))
# Fig. 15's bars, short enough to stand under a bar: the levels measured here, then the seed's systems
_LEVELS = (("copy", "memory.copy"), ("deposit", "fabric.put_bw"), ("MPI rstr", "message.postal_restricted"),
           ("MPI full", "message.postal_full"), ("TCP", "tcp.stream"))
_SEED_LEVELS = (("PPro", "pentium-pro-memory-copy"), ("SCI raw", "sci-peak"), ("BIP-MPI", "bip-mpi-peak"),
                ("PVM", "t3d-pvm-peak"), ("Myr TCP", "myrinet-tcp"), ("BIP-TCP", "myrinet-bip-tcp"),
                ("SCI TCP", "sci-tcp"))
# Fig. 16: the seed's best software rate over its full-duplex wire rate, one way
_SEED_EFFICIENCY = (("Myrinet", "bip-mpi-peak", "myrinet-link"), ("SCI", "sci-peak", "sci-link"))
STRIDE = Axis("stride (8-byte words)", log=True, kind="pow2")


def _rows(runs: Runs, bench: str) -> list:
    """A benchmark's rows in the step that measures it for the level figures."""
    return runs.rows("levels", bench)


def _best(rows: list):
    return draw.peak(rows)


def _copy(runs: Runs):
    """The local memory copy at its largest size: the memory system's rate, as the seed measured it with
    a large working set (§V), not a small copy's cache-resident peak."""
    rows = [r for r in _rows(runs, "memory.copy") if r.bandwidth_Bps]
    return rows[-1] if rows else None


def _by_stride(rows: list) -> dict:
    return {r.stride: r for r in rows if r.bandwidth_Bps}


# ---- figures -------------------------------------------------------------------------------

def figures(runs: Runs, ref) -> list:
    return [_strided_figure(runs, ref), _blocks_figure(runs, ref), _postal_figure(runs, ref),
            _levels_figure(runs, ref), *_efficiency_figure(runs, ref), _transpose_figure(runs)]


def _strided_figure(runs: Runs, ref) -> Figure:
    series = [draw.measured(label, runs.rows("strided", bench), x="stride", color=c)
              for c, (label, bench) in enumerate(_STRIDED)]
    xs = [x for s in series for x in s.x]
    series += [draw.level("Pentium Pro copy (§V)", ref.get("pentium-pro-memory-copy"), xs, color=0),
               draw.level("SCI strided stores, at most (Fig. 10)", ref.get("sci-strided-deposit"), xs, color=2),
               draw.level("T3D local strided reads (§III.D)", ref.get("t3d-local-read-strided"), xs, color=4)]
    return draw.figure("ks-strided", "Strided transfers: local, direct and packed (Fig. 9-11)", STRIDE,
                       draw.BANDWIDTH, series, "contiguous loads and stores every S-th 8-byte word, 1 MiB of "
                       "payload, cold cache: copied locally, deposited directly (a vector-datatype put, or "
                       "stores through a shared-memory window) or packed, put contiguously and unpacked at "
                       "the target")


def _blocks(runs: Runs) -> list:
    """(label, rows) of each contiguous deposit mode by block size."""
    return [(label, runs.rows("blocks", bench)) for label, bench in
            (*_DIRECT, ("buffer packing", "deposit.strided_packed"), ("raw deposit (fabric)", "fabric.put_bw"))]


def fastest(runs: Runs) -> list:
    """(block size, bandwidth B/s, mode) of the fastest deposit of each block size."""
    best = {}
    for label, rows in _blocks(runs):
        for r in rows:
            if r.bandwidth_Bps and (r.size not in best or r.bandwidth_Bps > best[r.size][0]):
                best[r.size] = (r.bandwidth_Bps, label)
    return [(size, bw, label) for size, (bw, label) in sorted(best.items())]


def _blocks_figure(runs: Runs, ref) -> Figure:
    series = [draw.measured(label, rows, color=c) for c, (label, rows) in enumerate(_blocks(runs))]
    top = fastest(runs)
    series.append(Series("fastest", [s for s, _, _ in top], [b / draw.MBPS for _, b, _ in top], color=6))
    xs = [s for s, _, _ in top]
    series += [draw.level("Myrinet and T3D, large blocks (Abstract)", ref.get("myrinet-t3d-large-transfers"),
                          xs, color=5),
               draw.level("SCI peak, at least (Abstract)", ref.get("sci-peak"), xs, color=7)]
    fig = draw.figure("ks-blocks", "Fastest transfer of each block size (Fig. 12)", draw.SIZE, draw.BANDWIDTH,
                      series, "contiguous blocks deposited each way; the black curve is the fastest (it covers "
                      "a way that is fastest throughout), and a dotted line marks the size from which "
                      "another way is fastest, named beside it")
    fig.marks = [Mark(b[0], b[2]) for a, b in zip(top, top[1:]) if a[2] != b[2]]
    return fig


def _postal_figure(runs: Runs, ref) -> Figure:
    series = [draw.measured("restricted (receives first)", _rows(runs, "message.postal_restricted"), color=0),
              draw.measured("full (sends first, buffered)", _rows(runs, "message.postal_full"), color=1),
              draw.measured("local memory copy", _rows(runs, "memory.copy"), color=2)]
    xs = [x for s in series for x in s.x]
    series += [draw.published("BIP-MPI on Myrinet, blocking (§V.B)", [ref.get("bip-mpi-peak")], color=0),
               draw.published("PVM on the T3D (§V.B)", [ref.get("t3d-pvm-peak")], color=4),
               draw.level("Pentium Pro copy (§V)", ref.get("pentium-pro-memory-copy"), xs, color=2)]
    return draw.figure("ks-postal", "Restricted vs full postal semantics (Fig. 13-14)", draw.SIZE,
                       draw.BANDWIDTH, series, "MPI: receives posted before the ready-mode sends (restricted) "
                       "or sends posted before any receive, which the library must buffer (full); the local "
                       "word copy beside them")


def _levels_figure(runs: Runs, ref) -> Figure:
    bars = [(label, _mb(_copy(runs) if bench == "memory.copy" else _best(_rows(runs, bench))))
            for label, bench in _LEVELS]
    if not any(v for _, v in bars):
        return Figure("ks-levels", "Summary per level (Fig. 15)", Axis("level", log=False), draw.BANDWIDTH)
    bars += [(label, ref.get(key).si() / draw.MBPS) for label, key in _SEED_LEVELS]
    return Figure("ks-levels", "Summary per level (Fig. 15)", Axis("level", log=False),
                  Axis("best throughput (MB/s)", log=True), bars=bars,
                  note="the first five bars: the best point of each level measured here (the local word copy "
                       "at its largest size, "
                       "fabric writes as the raw deposit, MPI with restricted and full postal semantics, TCP); "
                       "then the seed's published rates: the Pentium Pro's copy, SCI's raw rate (a lower "
                       "bound), BIP-MPI on Myrinet, PVM on the T3D, Myricom's TCP, BIP-TCP and SCI's TCP (§V)")


def _mb(row):
    return row.bandwidth_Bps / draw.MBPS if row is not None else None


def _one_host(runs: Runs) -> str:
    """What to add to an efficiency when every rank of the levels ran on one host."""
    levels = runs.docs.get("levels")
    hosts = set((levels.header.hosts if levels else None) or [])
    return "; every rank ran on one host, so no transfer crossed that wire" if len(hosts) == 1 else ""


def _efficiency_figure(runs: Runs, ref) -> list:
    """Fig. 16, only when the run was given a wire rate: on one host no wire is crossed."""
    wire = runs.wire_Bps
    if not wire:
        return []
    bars = [(label, 100 * row.bandwidth_Bps / wire)
            for label, bench in _LEVELS[1:] if (row := _best(_rows(runs, bench))) is not None]
    bars += [(name, 100 * ref.get(rate).si() / ref.get(link).si())
             for name, rate, link in _SEED_EFFICIENCY]
    return [Figure("ks-efficiency", "Efficiency against the wire rate (Fig. 16)", Axis("level", log=False),
                   Axis("best throughput / wire rate (%)", log=False), bars=bars,
                   note=f"the best point of each transfer level measured here over {runs.wire}; then the "
                        "seed's: BIP-MPI over Myrinet's 1.28 Gbit/s, SCI's half a Gigabit/s over its 1.6 Gbit/s "
                        "(both one way)" + _one_host(runs))]


def _transpose_figure(runs: Runs) -> Figure:
    series = [draw.measured(mode, runs.rows("transpose", "app.transpose", f"mode={mode}"), color=c)
              for c, mode in enumerate(("packed", "datatype", "deposit"))]
    fig = draw.figure("ks-transpose", "Distributed transpose by mode (§I, §II.A)",
                      Axis("array side M (8-byte words)", log=True, kind="size"), draw.BANDWIDTH, series,
                      "the array's 8 M^2 bytes per second on 2 ranks: packed (pack, MPI_Alltoall, unpack), "
                      "derived datatypes (MPI_Alltoallw) or a one-sided deposit")
    return fig


# ---- findings ------------------------------------------------------------------------------

def findings(runs: Runs, ref) -> list:
    return [_copy_bound(runs, ref), _strided_collapse(runs, ref), _packing_wins(runs, ref),
            _packing_at_copy(runs, ref), _remote_vs_local(runs, ref), _small_blocks(runs, ref),
            _blocking_matches_raw(runs, ref), _full_postal(runs, ref), _half_peak(runs, ref),
            _tcp(runs, ref), _efficiency(runs, ref), _transpose(runs, ref)]


def _copy_bound(runs: Runs, ref) -> Finding:
    f = Finding("ks-1", "The local memory copy is much slower than the interconnect's peak, so any copy in "
                "the memory system is a bottleneck", "§V, Fig. 9-11",
                f"Pentium Pro copy {draw.quoted(ref.get('pentium-pro-memory-copy'))}; BIP-MPI and the raw "
                f"deposit {draw.stated(ref.get('bip-mpi-peak'))}")
    copy, raw = _copy(runs), _best(_rows(runs, "fabric.put_bw"))
    if copy is None or raw is None:
        return f.unmeasured(runs.missing("levels"))
    ratio = copy.bandwidth_Bps / raw.bandwidth_Bps
    # "much less": at most half the raw deposit (the seed's 45 of 126 MB/s is 0.36)
    return f.judged(f"local copy {draw.mbps(copy)}, raw deposit {draw.mbps(raw)} (copy/deposit {ratio:.2f})",
                    ratio <= 0.5, f"the local copy reaches {ratio:.2f}x the raw deposit, more than half of it")


def _strided_fraction(rows: list):
    """(the best rate at a stride of 2 or more over the contiguous rate, that stride), or None."""
    by = _by_stride(rows)
    wide = [s for s in by if s >= 2]
    if 1 not in by or not wide:
        return None
    s = max(wide, key=lambda k: by[k].bandwidth_Bps)
    return by[s].bandwidth_Bps / by[1].bandwidth_Bps, s


def _strided_collapse(runs: Runs, ref) -> Finding:
    f = Finding("ks-2", "Direct deposit of strided data collapses: below 1/10 of the contiguous rate",
                "§IV.B, §V.A, Fig. 7, 10", f"SCI strided stores {draw.quoted(ref.get('sci-strided-deposit'))}, "
                f"{draw.quoted(ref.get('sci-strided-fraction'))} of the maximal bandwidth")
    got = [(label, fr) for label, bench in _DIRECT
           if (fr := _strided_fraction(runs.rows("strided", bench))) is not None]
    if not got:
        return f.unmeasured(runs.missing("strided"))
    text = "; ".join(f"{label}: at best {fr:.2f} of stride 1 (stride {s})" for label, (fr, s) in got)
    # below 1/10 at every stride of 2..64, as SCI's single stream buffer allowed (§IV.B)
    held = [fr < 0.1 for _, (fr, _) in got]
    return f.judged(text, all(held), "a direct mode keeps more than 1/10 of its contiguous rate at a stride "
                    "of 2 or more")


def _packed_vs_direct(runs: Runs) -> list:
    """(stride, packed B/s, best direct B/s, which direct) at each stride both were measured."""
    packed = _by_stride(runs.rows("strided", "deposit.strided_packed"))
    direct = {label: _by_stride(runs.rows("strided", bench)) for label, bench in _DIRECT}
    out = []
    for s in sorted(packed):
        have = [(d[s].bandwidth_Bps, label) for label, d in direct.items() if s in d]
        if have:
            bw, label = max(have)
            out.append((s, packed[s].bandwidth_Bps, bw, label))
    return out


def crossover(pairs: list):
    """The smallest stride from which packing beats direct at every larger stride, or None."""
    at = None
    for s, packed, direct, _ in reversed(pairs):
        if packed <= direct:
            break
        at = s
    return at


def _packing_wins(runs: Runs, ref) -> Finding:
    f = Finding("ks-3", "For strided data, packing a buffer and unpacking it at the receiver is faster than a "
                "direct deposit (Myrinet, SCI; only the T3D was best direct)", "§V.A, Fig. 9-11",
                "curves only: the text states no number for the crossover")
    pairs = [p for p in _packed_vs_direct(runs) if p[0] >= 2]
    if not pairs:
        return f.unmeasured(runs.missing("strided"))
    wins = sum(packed > direct for _, packed, direct, _ in pairs)
    at = crossover(_packed_vs_direct(runs))
    text = (f"packing beats the best direct deposit at {wins} of {len(pairs)} strides from 2 to "
            f"{pairs[-1][0]}; " + (f"from stride {at} on" if at else "at no stride onwards") + "; "
            + ", ".join(f"stride {s}: {p / direct:.2f}x" for s, p, direct, _ in pairs))
    # at most of the strides 2..64: the seed's PCI adapters lost to packing throughout that range
    return f.judged(text, wins * 2 > len(pairs), f"the direct deposit was faster at {len(pairs) - wins} of "
                    f"{len(pairs)} strides, as on the T3D")


def _packing_at_copy(runs: Runs, ref) -> Finding:
    f = Finding("ks-4", "Buffer packing with the main processor performs at about the local memory copy "
                "bandwidth", "§V.A, §VI, Fig. 9",
                f"Pentium Pro copy {draw.quoted(ref.get('pentium-pro-memory-copy'))}")
    packed = _by_stride(runs.rows("strided", "deposit.strided_packed"))
    local = _by_stride(runs.rows("strided", "memory.strided_store"))
    ratios = sorted(packed[s].bandwidth_Bps / local[s].bandwidth_Bps for s in packed if s in local)
    if not ratios:
        return f.unmeasured(runs.missing("strided"))
    mid = ratios[len(ratios) // 2]
    # "about": the median over the strides within a factor of two of the local strided copy
    return f.judged(f"packed over local strided copy, strides 1..64: {ratios[0]:.2f}x to {ratios[-1]:.2f}x, "
                    f"median {mid:.2f}x", 0.5 <= mid <= 2, f"packing runs at {mid:.2f}x the local copy, "
                    "beyond a factor of two of it")


def _remote_vs_local(runs: Runs, ref) -> Finding:
    f = Finding("ks-5", "A direct deposit of contiguous blocks is faster than a local copy, since two memory "
                "systems share the work (the T3D; not the PCs)", "§V.A, Fig. 11",
                "curves only: the text states no number for it")
    local = _by_stride(runs.rows("strided", "memory.strided_store")).get(1)
    direct = [d.get(1) for d in (_by_stride(runs.rows("strided", b)) for _, b in _DIRECT) if d.get(1)]
    if local is None or not direct:
        return f.unmeasured(runs.missing("strided"))
    best = max(direct, key=lambda r: r.bandwidth_Bps)
    ratio = best.bandwidth_Bps / local.bandwidth_Bps
    # "faster": by more than 10%, beyond the launch-to-launch spread of a loaded host
    return f.judged(f"at stride 1: direct deposit {draw.mbps(best)} ({best.bench}), local copy "
                    f"{draw.mbps(local)} ({ratio:.2f}x)", ratio > 1.1,
                    f"the direct deposit reaches only {ratio:.2f}x the local copy")


def _small_blocks(runs: Runs, ref) -> Finding:
    f = Finding("ks-6", "Both adapters have the same problem with small blocks: their fastest transfer of a "
                "small block is far below that of a large one", "§V.A, Fig. 12",
                f"large contiguous blocks {draw.quoted(ref.get('myrinet-t3d-large-transfers'))}")
    top = fastest(runs)
    if len(top) < 2:
        return f.unmeasured(runs.missing("blocks"))
    (small, bw_small, how_small), peak = top[0], max(top, key=lambda t: t[1])
    frac = bw_small / peak[1]
    # "far below": under half of the fastest large-block rate at the smallest block measured
    return f.judged(f"fastest for blocks of {fmt_bytes(small)}: {bw_small / draw.MBPS:.1f} MB/s ({how_small}); "
                    f"of {fmt_bytes(peak[0])}: {peak[1] / draw.MBPS:.1f} MB/s ({peak[2]}); {frac:.2f} of it",
                    frac < 0.5, f"blocks of {fmt_bytes(small)} already reach {frac:.2f} of the peak")


def _blocking_matches_raw(runs: Runs, ref) -> Finding:
    f = Finding("ks-7", "Blocking MPI (restricted postal semantics) matches the raw deposit",
                "§V.B, §V.D, Fig. 13, 15", f"BIP-MPI {draw.quoted(ref.get('bip-mpi-peak'))}, as the raw deposit")
    mpi, raw = _best(_rows(runs, "message.postal_restricted")), _best(_rows(runs, "fabric.put_bw"))
    if mpi is None or raw is None:
        return f.unmeasured(runs.missing("levels"))
    ratio = mpi.bandwidth_Bps / raw.bandwidth_Bps
    # "matches about": at least 80% of the raw deposit's peak
    return f.judged(f"MPI restricted {draw.mbps(mpi)}, raw deposit {draw.mbps(raw)} ({ratio:.2f}x)",
                    ratio >= 0.8, f"MPI keeps only {ratio:.2f}x of the raw deposit")


LARGE = 64 * 1024      # past the 64 KByte Myrinet buffered on the card without a copy (§V.B)


def _full_postal(runs: Runs, ref) -> Finding:
    f = Finding("ks-8", "Full postal semantics (sends before receives) force buffering: large blocks fall "
                "to the local memory copy", "§V.B, §V.D, Fig. 13-15",
                f"Pentium Pro copy {draw.quoted(ref.get('pentium-pro-memory-copy'))}; BIP-MPI blocking "
                f"{draw.stated(ref.get('bip-mpi-peak'))}; on the card, "
                f"{draw.quoted(ref.get('bip-mpi-lanai-buffering'))}")
    full, restricted = (_best([r for r in _rows(runs, b) if r.size >= LARGE])
                        for b in ("message.postal_full", "message.postal_restricted"))
    copy = _copy(runs)
    if full is None or restricted is None or copy is None:
        return f.unmeasured(runs.missing("levels"))
    drop, to_copy = full.bandwidth_Bps / restricted.bandwidth_Bps, full.bandwidth_Bps / copy.bandwidth_Bps
    # "falls": at least 20% under the restricted case; "to the copy": no more than 1.2x the copy rate
    return f.judged(f"from {fmt_bytes(LARGE)}: full {draw.mbps(full)}, restricted {draw.mbps(restricted)} "
                    f"({drop:.2f}x), local copy {draw.mbps(copy)} (full {to_copy:.2f}x of it)",
                    drop <= 0.8 and to_copy <= 1.2,
                    f"full postal semantics keep {drop:.2f}x of the restricted rate" if drop > 0.8
                    else f"full postal semantics run {to_copy:.2f}x the local copy")


def _half_peak(runs: Runs, ref) -> Finding:
    f = Finding("ks-9", "MPI reaches half of its peak with messages of roughly 8 KByte", "§V.B, Fig. 13",
                f"BIP-MPI {draw.stated(ref.get('bip-mpi-peak'))}, half at {draw.quoted(ref.get('bip-mpi-half-peak'))}"
                f"; PVM on the T3D {draw.stated(ref.get('t3d-pvm-peak'))}, half at "
                f"{draw.quoted(ref.get('t3d-pvm-half-peak'))}")
    rows = [r for r in _rows(runs, "message.postal_restricted") if r.bandwidth_Bps]
    if len(rows) < 2:
        return f.unmeasured(runs.missing("levels"))
    peak, half = _best(rows), half_peak_size([r.size for r in rows], [r.bandwidth_Bps for r in rows])
    want = ref.get("bip-mpi-half-peak").si()
    if half is None:
        return f.judged(f"MPI restricted peak {draw.mbps(peak)}; half of it already at {fmt_bytes(rows[0].size)}",
                        False, f"half of the peak is reached below {fmt_bytes(rows[0].size)}")
    # "roughly": within a factor of two of 8 KByte
    return f.judged(f"MPI restricted peak {draw.mbps(peak)}, half of it at {fmt_bytes(round(half))}",
                    want / 2 <= half <= want * 2, f"half of the peak is reached at {fmt_bytes(round(half))}, "
                    "beyond a factor of two of 8 KByte")


def _tcp(runs: Runs, ref) -> Finding:
    f = Finding("ks-10", "TCP/IP stays well below MPI: its copies in main memory cost it a factor of 2-3",
                "§II.C, §V.C, Fig. 15", f"Myricom TCP {draw.quoted(ref.get('myrinet-tcp'))}, BIP-TCP "
                f"{draw.quoted(ref.get('myrinet-bip-tcp'))}, SCI {draw.quoted(ref.get('sci-tcp'))}; BIP-MPI "
                f"{draw.stated(ref.get('bip-mpi-peak'))}")
    tcp, mpi = _best(_rows(runs, "tcp.stream")), _best(_rows(runs, "message.postal_restricted"))
    if tcp is None or mpi is None:
        return f.unmeasured(runs.missing("levels"))
    ratio = tcp.bandwidth_Bps / mpi.bandwidth_Bps
    # the lower end of §II.C's "factor of 2-3": TCP at most half of MPI's peak
    return f.judged(f"TCP {draw.mbps(tcp)}, MPI restricted {draw.mbps(mpi)} ({ratio:.2f}x)", ratio <= 0.5,
                    f"TCP reaches {ratio:.2f}x of MPI, more than half")


def _efficiency(runs: Runs, ref) -> Finding:
    myri = ref.get("bip-mpi-peak").si() / ref.get("myrinet-link").si()
    f = Finding("ks-11", "The raw deposit sustains most of the wire rate for large contiguous transfers",
                "Abstract, §V.D, Fig. 16",
                f"Myrinet: BIP-MPI at the raw rate, {draw.quoted(ref.get('bip-mpi-peak'))}, of "
                f"{draw.quoted(ref.get('myrinet-link'))} ({myri:.0%}); SCI {draw.quoted(ref.get('sci-peak'))} "
                f"of {draw.quoted(ref.get('sci-link'))}")
    wire = runs.wire_Bps
    if not wire:
        return f.unmeasured("no wire rate given (study run --wire-rate MBPS or --technology NAME); on one host "
                            "the ranks share memory and no wire is crossed")
    raw = _best(_rows(runs, "fabric.put_bw"))
    if raw is None:
        return f.unmeasured(runs.missing("levels"))
    eff = raw.bandwidth_Bps / wire
    # "most": at least 75%, rounding down Myrinet's 126 MB/s of 160 MB/s (79%)
    return f.judged(f"raw deposit {draw.mbps(raw)} over {runs.wire}: {eff:.0%}{_one_host(runs)}", eff >= 0.75,
                    f"the raw deposit reaches {eff:.0%} of the wire rate")


def _transpose(runs: Runs, ref) -> Finding:
    f = Finding("ks-12", "A transpose is decided by strided copies: the way that moves strided data fastest "
                "(packing on the PCs, direct on the T3D) transposes fastest", "§I, §II.A, §IV.B",
                "no transpose number: the seed proposes it as the generic test case")
    modes = {m: runs.rows("transpose", "app.transpose", f"mode={m}") for m in ("packed", "datatype", "deposit")}
    top = max((m for m in modes if modes[m]), key=lambda m: modes[m][-1].bandwidth_Bps or 0, default=None)
    pairs = [p for p in _packed_vs_direct(runs) if p[0] >= 2]
    if top is None or not pairs:
        return f.unmeasured(runs.missing("transpose" if top is None else "strided"))
    size = modes[top][-1].size
    packing = sum(p > d for _, p, d, _ in pairs) * 2 > len(pairs)
    text = (f"at M = {size}: " + ", ".join(f"{m} {modes[m][-1].bandwidth_Bps / draw.MBPS:.0f} MB/s"
                                            for m in modes if modes[m])
            + f"; strided transfers favour {'packing' if packing else 'the direct deposit'}")
    # the transpose's direct ways are the derived datatypes and the deposit; its packed way is `packed`
    return f.judged(text, (top == "packed") == packing, f"the transpose is fastest {top}, the strided "
                    f"transfers by {'packing' if packing else 'the direct deposit'}")


STUDY = Study(
    "kurmann-stricker", "000", "Levels of a Gigabit interconnect: memory, raw deposit, MPI, TCP; strided "
    "transfers; postal semantics; the transpose",
    "The local memory copy, the fabric level's remote writes as the raw deposit, MPI with restricted and full "
    "postal semantics, and TCP; strided transfers of 8-byte words at strides 1..64 copied locally, deposited "
    "directly and by buffer packing; the fastest deposit per block size; and a distributed transpose packed, "
    "with derived datatypes and by deposit (seed 000's Fig. 9-16). The efficiency against the wire rate "
    "(Fig. 16) needs --wire-rate or --technology.",
    STEPS, figures, findings, wire=True)
