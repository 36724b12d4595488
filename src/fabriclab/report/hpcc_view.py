"""HPC Challenge's network figures of a run (analysis/hpcc.py, docs/hpcc.md):
the table `fabriclab run hpcc` ends with and `fabriclab show` prints, in
hpccoutf.txt's names and units, by HPCC's rule (each point's fastest
measurement) beside fabriclab's median; the ratios of the ring bandwidths
to the ping-pong bandwidth beside those of HPCC's header; and the report's
view "hpcc", the five figures as bars per run."""

from __future__ import annotations

from ..analysis import hpcc
from .figure import Axis, Figure

NOTE = ("HPCC's rules (hpcc/src/bench_lat_bw_1.5.2.c): latency = an op's time / 2 at 8 B, bandwidth = the size "
        "over it at 2,000,000 B; the fastest measurement of each point; ping-pong the worst pair, each ring the "
        "better of MPI_Sendrecv and MPI_Irecv/MPI_Isend, random rings' geometric mean (docs/hpcc.md)")
LATENCIES = (("max ping-pong", "max_pingpong_latency_s"), ("natural ring", "natural_ring_latency_s"),
             ("random ring", "random_ring_latency_s"))
BANDWIDTHS = (("min ping-pong", "min_pingpong_bandwidth_Bps"), ("natural ring", "natural_ring_bandwidth_Bps"),
              ("random ring", "random_ring_bandwidth_Bps"))


def _has(points) -> bool:
    return any(p.bench in (hpcc.PINGPONG, hpcc.RING) for p in points)


def _num(x, scale: float) -> str:
    return "-" if x is None else f"{x * scale:.6g}"


def lines(doc) -> list[str]:
    """HPCC's summary figures and ratios of a run, or [] where it ran neither benchmark."""
    if not _has(doc.points):
        return []
    best, median = hpcc.figures(doc.points, "hpcc"), hpcc.figures(doc.points, "median")
    width = max(len(name) for name, _, _ in hpcc.SUMMARY)
    counted = (f"{best.pairs} ping-pong pairs, {best.rings} random rings" if best.pairs or best.rings
               else "as HPCC printed them")
    out = [f"HPCC network figures ({doc.header.nranks} ranks, {counted}; latency at {best.latency_bytes} B, "
           f"bandwidth at {best.bandwidth_bytes} B)",
           f"  {'':{width}}  {'HPCC rule':>12}  {'median':>12}"]
    for name, attr, scale in hpcc.SUMMARY:
        out.append(f"  {name:{width}}  {_num(getattr(best, attr), scale):>12}  "
                   f"{_num(getattr(median, attr), scale):>12}")
    r = best.ratios
    out.append("  ping-pong : natural ring : random ring bandwidth = 1 : "
               + " : ".join("-" if r[k] is None else f"{r[k]:.3g}" for k in ("natural", "random")))
    out.append("  HPCC's reading of the ratios:")
    out += [f"    {'1/n' if nat is None else f'{nat:.3g}':>4} : {'1/n' if rnd is None else f'{rnd:.3g}':>4}  {name}"
            for name, _, nat, rnd in hpcc.RATIO_TABLE]
    return out


def view(runs: list) -> list:
    """The report's view "hpcc": the HPCC rule's latencies and bandwidths, a bar each per run."""
    got = [(run, hpcc.figures(run.doc.points, "hpcc")) for run in runs if _has(run.doc.points)]
    if not got:
        return []
    sizes = {(f.latency_bytes, f.bandwidth_bytes) for _, f in got}
    lat_b, bw_b = next(iter(sizes)) if len(sizes) == 1 else (None, None)
    lat = Figure("hpcc-latency", f"HPCC: latencies ({f'{lat_b:,} B' if lat_b else 'each run its smallest size'})",
                 Axis("figure"), Axis("latency (us)"), note=NOTE)
    bw = Figure("hpcc-bandwidth", f"HPCC: bandwidths ({f'{bw_b:,} B' if bw_b else 'each run its largest size'})",
                Axis("figure"), Axis("bandwidth (GB/s)"), note=NOTE)
    for run, f in got:
        pre = f"{run.name} " if len(runs) > 1 else ""
        lat.bars += [(pre + name, _scaled(getattr(f, attr), 1e6)) for name, attr in LATENCIES]
        bw.bars += [(pre + name, _scaled(getattr(f, attr), 1e-9)) for name, attr in BANDWIDTHS]
    return [fig for fig in (lat, bw) if fig.bars and not fig.empty()]


def _scaled(x, scale):
    return None if x is None else x * scale
