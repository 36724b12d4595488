"""The figure builders: one registry, keyed by benchmark or family, that both
`fabriclab report` and `fabriclab plot` draw from.

Every benchmark gets its size figures (latency and bandwidth vs size, the
median with its 95% interval as a band and p5..p95 as lighter shading, the
Hockney fit and its residuals, the half-peak size, hollow markers where a
point did not converge) from `per_benchmark`, unless BUILDERS names another
builder for it or its family. VIEWS are figures across benchmarks, as the
seed studies drew them: strided modes (seed 000 Fig. 9-11), postal semantics
(Fig. 13-14), the level ladder (Fig. 15) and efficiency (Fig. 16), uni- vs
bidirectional and hotspot curves (seed 004 Fig. 4-8), saturation vs senders
(seed 001 Fig. 12), the VI Architecture experiments (seed 002) and the
applications' views (report/app_views.py: transpose by mode, speedup, sort rate,
time split) and the collectives' (report/coll_views.py). A new benchmark adds its figure here, in one place."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

from ..analysis import fit
from ..suite.benchmarks import LEVELS, REGISTRY, in_view
from ..units import fmt_bytes, fmt_rate
# RunView, in_registry_order and sweep are read from here too (report/html.py, `fabriclab plot`)
from .curves import (METRICS, SIZE, STATS_NOTE, XAXES, RunView, in_registry_order, measured, pick,  # noqa: F401
                     series_of, sweep, variant_name)
from . import app_views, atomic_views, coll_views, halo_views, hpcc_view, network, rate_views, tail_views, thread_views
from . import cpu_views, socket_views
from . import noise_views
from .figure import Axis, Figure, Mark, Series, slug
from .ladder import Rung, ladder, ladder_rows  # noqa: F401  (report/html.py reads them from here)
from .layers import costs
from .tables import group_name


def _main_line(rs: list) -> list:
    """A benchmark's size sweep: stride 1 (or its smallest), the first
    connection count, the most active senders."""
    if not rs:
        return []
    stride = min(r.stride for r in rs)
    conns = rs[0].conns
    top = max((r.active for r in rs if r.active is not None), default=None)
    return [r for r in rs if r.stride == stride and r.conns == conns and r.active == top]




def _by_variant(run, bench: str) -> dict:
    """variant -> the run's rows of `bench`, in the run's order (one pass, not one a variant)."""
    by: dict = {}
    for r in run.rows:
        if r.bench == bench:
            by.setdefault(r.variant, []).append(r)
    return by


def per_benchmark(runs: list, bench: str) -> list[Figure]:
    """Latency and bandwidth vs size, with the fit, its residuals and the half-peak size."""
    figs = []
    by_run = [_by_variant(run, bench) for run in runs]
    variants = list(dict.fromkeys(v for by in by_run for v in by))
    for variant in variants:
        name = group_name(bench, variant)
        lines = [(run, _main_line(by.get(variant, []))) for run, by in zip(runs, by_run)]
        lines = [(run, [r for r in line if r.size > 0]) for run, line in lines]
        if max((len(line) for _, line in lines), default=0) < 2:
            other = _other_axes([replace(run, rows=by.get(variant, [])) for run, by in zip(runs, by_run)],
                                bench, variant)
            figs += other
            if other or not any(line for _, line in lines):
                continue                         # drawn along another axis, or only size 0: nothing on log axes
        base = slug(name)
        drawn = [(run, line) for run, line in lines if line]
        one = len(drawn) == 1                     # one run's curve: its fit, marks and intervals
        active = {r.active for _, line in drawn for r in line}
        at = f" ({active.pop()} active)" if len(active) == 1 and None not in active else ""
        if REGISTRY.get(bench) and REGISTRY[bench].has_stride:
            at += f" (stride {min(r.stride for _, line in drawn for r in line)})"
        name = variant_name(bench, variant, variants)
        lat = Figure(f"{base}-latency", f"{name}: time per transfer vs size{at}", SIZE, METRICS["latency"].axis,
                     note=STATS_NOTE)
        bw = Figure(f"{base}-bandwidth", f"{name}: bandwidth vs size{at}", SIZE, METRICS["bandwidth"].axis,
                    note=STATS_NOTE)
        for i, (run, line) in enumerate(lines):
            if not line:
                continue
            label = run.name if not one else "measured"
            lat.series.append(series_of(label, line, "latency", "size", color=i))
            bw.series.append(series_of(label, line, "bandwidth", "size", color=i))
        d = drawn[0][0].derived.get(group_name(bench, variant), {})
        if one and d.get("half_peak_size"):
            bw.marks.append(Mark(d["half_peak_size"], f"half-peak {fmt_bytes(d['half_peak_size'])}"))
        if one and d.get("peak_bandwidth_Bps"):
            bw.note += f". Peak {fmt_rate(d['peak_bandwidth_Bps'])} at {fmt_bytes(d['peak_at_size'])}"
        figs += [lat, bw]
        if one and "hockney_latency_s" in d:
            figs.append(_hockney(lat, drawn[0][1], d, base, name))
        b = REGISTRY.get(bench)
        for fig in (lat, bw):
            fig.x = replace(fig.x, label=f"{b.size_label} ({b.size_unit})") if b else fig.x
    return figs


def _other_axes(runs: list, bench: str, variant: str) -> list[Figure]:
    """A benchmark measured at one size: its figure along the axes that vary (conns, stride, active).
    `runs`: views holding this variant's rows alone (sweep reads every row it is given)."""
    b = REGISTRY.get(bench)
    metric = b.metric if b else "bandwidth"
    out = []
    for axis in (b.axes if b else ()):
        if axis == "size":
            continue
        fig = sweep(runs, [bench], metric, axis, where=lambda r: r.variant == variant,
                    fid=f"{slug(group_name(bench, variant))}-{metric}-vs-{axis}",
                    title=f"{group_name(bench, variant)}: {metric} vs {axis}", note=STATS_NOTE)
        if max((len([y for y in s.y if y is not None]) for s in fig.series), default=0) >= 2:
            out.append(fig)
    return out


def _hockney(lat: Figure, line: list, d: dict, base: str, name: str) -> Figure:
    """Adds the Hockney line t(n) = t0 + n / r_inf (Hockney 1994) to the
    latency figure and returns the figure of its residuals."""
    alpha, rinf = d["hockney_latency_s"], d["hockney_rinf_Bps"]
    h = fit.HockneyFit(alpha, rinf, alpha * rinf, float("nan"), len(line))
    xs = sorted(r.size for r in line)
    lat.series.append(Series(f"Hockney fit: {d['hockney_latency_s'] * 1e6:.3g} \u00b5s + n / "
                             f"{fmt_rate(d['hockney_rinf_Bps'])}", xs, [h.predict(n) * 1e6 for n in xs],
                             dashed=True, markers=False, color=6))
    meas = {r.size: METRICS["latency"].value(r) for r in line}
    res = [(meas[n] / (h.predict(n) * 1e6) - 1) * 100 for n in xs]
    return Figure(f"{base}-residuals", f"{name}: Hockney fit residuals", SIZE,
                  Axis("(measured - fit) / fit (%)", log=False),
                  [Series("residual", xs, res, color=6)],
                  note=f"n_1/2 = {fmt_bytes(d['hockney_n_half'])}; residuals beyond a few % show where "
                       "one latency and one rate do not describe the transfer (a protocol switch, a cache edge)")


# ---- views across benchmarks ----------------------------------------------------------------

def _copy(bench: str) -> str | None:
    b = REGISTRY.get(bench)
    return b.copy if b else None


def strided(runs: list) -> list[Figure]:
    """Throughput vs stride, one curve per mode (local copy, direct, packed,
    shared-memory window), one figure per working set (seed 000 Fig. 9-11)."""
    benches = measured(runs, in_view("strided"))
    sizes = []
    for level in dict.fromkeys(b.split(".", 1)[0] for b in benches):   # working sets of each level
        sizes += pick([r.size for run in runs for r in run.rows
                        if r.bench in benches and r.bench.startswith(level + ".") and r.size > 0], 3)
    figs = []
    for size in sorted(set(sizes)):
        fig = sweep(runs, benches, "bandwidth", "stride", where=lambda r, s=size: r.size == s,
                    title=f"Strided transfers of {fmt_bytes(size)}: throughput vs stride",
                    fid=f"strided-{size}", note="payload bytes (the strided elements) per second; "
                    "memory.*: local copy, deposit.strided_direct: one put per element, "
                    "strided_packed: pack, put, unpack, strided_shm: stores through a shared-memory window")
        best = _best_copy(runs[0], size)
        strides = sorted({x for s in fig.series for x in s.x})
        if best and strides and any(REGISTRY[b].copy for b in benches):
            fig.series.append(Series("best contiguous copy", strides, [best / 1e6] * len(strides), dashed=True,
                                     markers=False, color=6))
        if not fig.empty():
            figs.append(fig)
    return figs


def _best_copy(run: RunView, size: int) -> float | None:
    """The best contiguous copy's bandwidth at `size`, interpolated in log size
    between the copy sizes measured around it (the bound of strided copies)."""
    best: dict = {}
    for r in run.rows:
        if _copy(r.bench) == "contiguous" and r.bandwidth_Bps and r.size > 0:
            best[r.size] = max(best.get(r.size, 0.0), r.bandwidth_Bps)
    if size in best:
        return best[size]
    lo = max((k for k in best if k < size), default=None)
    hi = min((k for k in best if k > size), default=None)
    if lo is None or hi is None:
        return None
    f = math.log(size / lo) / math.log(hi / lo)
    return best[lo] + f * (best[hi] - best[lo])


def _pair_view(runs: list, benches: tuple, title: str, fid: str, note: str, metric: str = "bandwidth"):
    have = measured(runs, benches)
    if len(have) < 2:          # a view compares benchmarks; one benchmark's runs overlay in its own figures
        return []
    main = {id(r) for run in runs for bench in have for rs in _by_variant(run, bench).values()
            for r in _main_line(rs)}
    fig = sweep(runs, have, metric, "size", where=lambda r: id(r) in main, title=title, fid=fid, note=note)
    return [] if fig.empty() else [fig]


def postal(runs: list) -> list[Figure]:
    return _pair_view(runs, in_view("postal"),
                      "Postal semantics: restricted vs full", "postal",
                      "restricted: the receive is posted before the message arrives (ready or synchronous send); "
                      "full: the library buffers whatever arrives (seed 000 Fig. 13-14)")


def bidirectional(runs: list) -> list[Figure]:
    out = []
    for level in LEVELS:
        pair = tuple(b for b in in_view("bidirectional") if b.startswith(level + "."))
        out += _pair_view(runs, pair, f"{level}: unidirectional vs bidirectional bandwidth", f"bidir-{level}",
                          "bidirectional: both ranks send at once; bandwidth counts the payload of both directions "
                          "(seed 004 Fig. 4-5)")
    return out


def _each_run(runs: list, benches) -> list:
    """(id suffix, title prefix, [run]) for each run that measured any of the
    benchmarks: figures of one run's pattern, not overlays."""
    return [(f"-{i}" if len(runs) > 1 else "", f"{run.name}: " if len(runs) > 1 else "", [run])
            for i, run in enumerate(runs) if set(run.benches()) & set(benches)]


def hotspot(runs: list) -> list[Figure]:
    """Aggregate, per-sender and slowest-sender bandwidth vs active senders, at the largest size."""
    figs = []
    for suffix, pre, (run,) in _each_run(runs, in_view("hotspot")):
        for bench in measured([run], in_view("hotspot")):
            rs = [r for r in run.rows if r.bench == bench and r.active is not None]
            for size in pick([r.size for r in rs if r.size > 0], 2)[-1:]:
                at = [r for r in rs if r.size == size]
                fig = Figure(f"hotspot-{slug(bench)}-{size}{suffix}",
                             f"{pre}{bench} at {fmt_bytes(size)}: bandwidth vs active senders",
                             XAXES["active"], Axis("bandwidth (MB/s)"),
                             [series_of(m, at, m, "active", color=i)
                              for i, m in enumerate(("aggregate", "per-process", "slowest"))],
                             note="every active sender targets one rank (seed 004 Fig. 6-8); aggregate: all "
                                  "payload over the slowest sender's time")
                for s in fig.series:
                    s.label = {"aggregate": "aggregate", "per-process": "per sender (mean)",
                               "slowest": "slowest sender"}.get(s.label, s.label)
                if not fig.empty():
                    figs.append(fig)
    return figs


def saturation(runs: list) -> list[Figure]:
    """Aggregate bandwidth vs active pairs, one curve per size, the plateau marked (seed 001 Fig. 12)."""
    figs = []
    benches = in_view("saturation")
    for suffix, pre, one in _each_run(runs, benches):
        fig = sweep(one, list(benches), "aggregate", "active", title=f"{pre}Link saturation: aggregate "
                    "bandwidth vs active pairs", fid=f"saturation{suffix}",
                    note="pairs stream at once; the plateau is the first count after which one more pair gains "
                         "less than 2% (seed 001 Fig. 12)")
        for name, d in one[0].derived.items():
            bench = name.split(" ", 1)[0]
            if bench in benches:
                for size, p in list(d.get("saturation", {}).items())[-1:]:
                    if p["reached"]:
                        # A plateau holds its rate with more pairs; a curve that falls after it peaked.
                        after = [r.aggregate_bandwidth_Bps for r in one[0].rows
                                 if r.bench == bench and r.size == size
                                 and (r.active or 0) > p["active"] and r.aggregate_bandwidth_Bps]
                        word = "plateau" if all(v >= 0.95 * p["rate_Bps"] for v in after) else "peak"
                        fig.marks.append(Mark(p["active"], f"{word} at {fmt_bytes(size)}: "
                                                          f"{fmt_rate(p['rate_Bps'])}"))
        if not fig.empty():
            figs.append(fig)
    return figs


def alltoall(runs: list) -> list[Figure]:
    """Per-node bandwidth vs size of all-to-all and bisection exchanges."""
    have = measured(runs, in_view("alltoall"))
    if not have:
        return []
    fig = Figure("alltoall", "All-to-all and bisection: bandwidth per rank vs size", SIZE,
                 Axis("bandwidth per rank (MB/s)"),
                 note="all payload sent per op over its time, divided by the ranks taking part "
                      "(the model's per-node bandwidth, with one rank per node)")
    for i, run in enumerate(runs):
        for bench in have:
            for variant, rs in _by_variant(run, bench).items():
                rs = sorted((r for r in rs if r.size > 0), key=lambda r: r.size)
                label = (f"{run.name} " if len(runs) > 1 else "") + group_name(bench, variant)
                fig.series.append(Series(label, [r.size for r in rs],
                                         [r.bandwidth_Bps / run.nranks / 1e6 if r.bandwidth_Bps else None
                                          for r in rs], hollow=[not r.converged for r in rs]))
    return [] if fig.empty() else [fig]


def fairness(runs: list) -> list[Figure]:
    figs = []
    for suffix, pre, one in _each_run(runs, in_view("fairness")):
        have = measured(one, in_view("fairness"))
        top = max(r.size for r in one[0].rows if r.bench in have)
        fig = sweep(one, have, "fairness", "active", where=lambda r, t=top: r.size == t,
                    title=f"{pre}Fairness among senders at {fmt_bytes(top)}", fid=f"fairness{suffix}",
                    note="Jain's index (sum x)^2 / (n sum x^2) of the senders' bandwidths (Jain, Chiu & Hawe "
                         "1984): 1 when all get the same share, 1/n when one gets all")
        if not fig.empty():
            figs.append(fig)
    return figs


def via_latency(runs: list) -> list[Figure]:
    return _pair_view(runs, in_view("via-latency"),
                      "Request/response: polling vs blocking vs epoll", "via-latency",
                      "seed 002 (VI Architecture): busy-polling completion against blocking reads and epoll",
                      metric="latency")


def via_conns(runs: list) -> list[Figure]:
    figs = []
    for bench in measured(runs, in_view("via-conns")):
        how = " vs ".join(str(REGISTRY[bench].params.get("check", "")).split("|"))
        if how:
            fig = sweep(runs, [bench], "bandwidth", "conns", title=f"{bench}: throughput vs connections ({how})",
                        fid=f"via-conns-{slug(bench)}",
                        note="seed 002 Table 2: finding the ready connection by one wait call vs scanning them all")
            if not fig.empty():
                figs.append(fig)
    return figs


def registration(runs: list) -> list[Figure]:
    """Registration time vs region size at each level that measured it."""
    have = measured(runs, in_view("registration"))
    if not have:
        return []
    fig = sweep(runs, have, "latency", "size", title="Memory registration: register and deregister vs size",
                fid="registration", note="fi_mr_reg + fi_close, ucp_mem_map + ucp_mem_unmap of one region: "
                                         "the price of zero copy (seed 002, VIA)")
    fig.x = replace(fig.x, label="region size (bytes)")
    fig.y = replace(fig.y, label="register + deregister (\u00b5s)")
    return [] if fig.empty() else [fig]


def via_scatter(runs: list) -> list[Figure]:
    figs = _pair_view(runs, in_view("via-scatter"),
                      "Scatter: throughput vs segment size, transport vs program", "via-scatter",
                      "size = one segment; iovec/datatype: the transport gathers the segments, copy: the program "
                      "packs them first (seed 002)")
    for fig in figs:
        fig.x = replace(fig.x, label="segment size (bytes)")
    return figs


# ---- each library level and the cost of each layer (seed 004 Fig. 4-5; report/layers.py) ----

def _cost_figure(run, fid: str, metric: str) -> Figure:
    rows = [c for c in costs(run) if c.metric == metric and c.size > 0]
    series = []
    for lower in dict.fromkeys(c.lower for c in rows):
        mine = [c for c in rows if c.lower == lower]
        series.append(Series(f"{mine[0].upper} / {lower}", [c.size for c in mine], [c.ratio for c in mine]))
    what = ("MPI's time per transfer over the lower layer's (1 = no cost)" if metric == "latency"
            else "MPI's bandwidth over the lower layer's (1 = MPI keeps all of it)")
    return Figure(fid, f"The cost of MPI over the layers below it: {metric}", SIZE,
                  Axis(f"{'latency' if metric == 'latency' else 'bandwidth'} ratio (MPI / layer below)"),
                  series, note=f"{what}; the best variant of each benchmark at each size (seed 004 Fig. 4-5)")


def layers_view(runs: list) -> list[Figure]:
    """Latency and bandwidth of every level on one axis each, then the cost of MPI (first run)."""
    shown = in_view("layers")
    lat = [b for b in shown if REGISTRY[b].metric == "latency"]
    bw = [b for b in shown if REGISTRY[b].metric == "bandwidth"]
    figs = [sweep(runs, lat, "latency", "size", title="Each library level: latency vs size",
                  fid="layers-latency", note="ping-pong at every level the run measured (seed 004 Fig. 4)"),
            sweep(runs, bw, "bandwidth", "size", title="Each library level: bandwidth vs size",
                  fid="layers-bandwidth", note="streaming at every level the run measured (seed 004 Fig. 5)"),
            _cost_figure(runs[0], "layer-cost-latency", "latency"),
            _cost_figure(runs[0], "layer-cost-bandwidth", "bandwidth")]
    out = [f for f in figs if not f.empty()]
    return out if len(out) > 2 or any(len(f.series) > 1 for f in out) else []


def validation(runs: list) -> list[Figure]:
    """The model against measurement (`fabriclab testbed validate`): measured
    per-node all-to-all bandwidth by size beside the calibrated and the
    nominal prediction."""
    figs = []
    for suffix, pre, (run,) in _each_run(runs, in_view("validation")):
        v = run.doc.validation
        if not v:
            continue
        xs = [r["size"] for r in v["per_size"]]
        on = v["testbed"] or v["network"]
        fig = Figure(f"validation{suffix}", f"{pre}Model vs measurement: all-to-all on {on}", SIZE,
                     Axis("bandwidth per node (MB/s)"),
                     [Series("measured", xs, [r["measured_Bps"] / 1e6 for r in v["per_size"]]),
                      Series(f"calibrated model ({v['predicted_bottleneck']})", xs,
                             [v["predicted_Bps"] / 1e6] * len(xs), dashed=True, markers=False, color=1),
                      Series("nominal model", xs, [v["nominal_Bps"] / 1e6] * len(xs), dashed=True, markers=False,
                             color=6)],
                     note=f"{v['network']}: the bottleneck cable saturated at "
                          f"{v['calibrated_rate_Bps'] / 1e6:.2f} MB/s per direction replaces its nominal rate "
                          f"(seed 001 §5); at the largest size the measurement is "
                          f"{v['per_size'][-1]['ratio']:.3f} of the prediction ({v['verdict']}, "
                          f"tolerance {v['tolerance']:.0%})")
        figs.append(fig)
        figs += _validation_cables(v, suffix, pre)
    return figs


LOADED = 0.5        # cable directions the model loads to this share of their rate get a bar
MAX_BARS = 24


def _validation_cables(v: dict, suffix: str, pre: str) -> list[Figure]:
    """Every cable direction at the largest size, ranked by measured over
    predicted utilization (testbed/cablecheck.py): the cables below 1 idled
    where the model keeps them busy, those above carried more than it says."""
    top = next((c for c in v.get("cables") or [] if c["size"] == v["per_size"][-1]["size"]), None)
    rows = sorted((r for r in (top or {}).get("cables", []) if r.get("ratio") and r["predicted_util"] >= LOADED),
                  key=lambda r: r["ratio"])
    if not rows:
        return []
    shown = rows if len(rows) <= MAX_BARS else rows[:MAX_BARS // 2] + rows[-MAX_BARS // 2:]
    emu = v.get("emulation") or {}
    faithful = "faithful" if emu.get("faithful") else "NOT faithful: " + "; ".join(emu.get("reasons", []))
    return [Figure(f"validation-cables{suffix}", f"{pre}Model vs measurement, cable by cable",
                   Axis("cable direction"), Axis("measured / predicted utilization"),
                   bars=[(_direction(r), r["ratio"]) for r in shown],
                   note=f"at {fmt_bytes(top['size'])}: each cable direction's wire bytes over its rate during the "
                        "point, over the utilization the calibrated model gives it under all-to-all (1: as "
                        f"predicted); the directions the model loads to half their rate or more"
                        + (f", the {MAX_BARS // 2} lowest and highest of {len(rows)}" if len(rows) > MAX_BARS else "")
                        + f" (the report's table lists every one). {v.get('explanation') or ''}. "
                        f"Emulation {faithful}")]


def _direction(r: dict) -> str:
    """A cable direction as the model names it, `link NAME (A\u2192B)`, where the cable has a name."""
    return f"{r['label']} ({r['from']}\u2192{r['to']})" if r.get("label") else f"{r['from']}->{r['to']}"


@dataclass(frozen=True)
class View:
    """A figure across benchmarks; which benchmarks it shows is theirs to
    declare (suite/benchmarks.py `views`): a new benchmark joins a view by
    naming it. The view is drawn when its builder finds something to compare."""
    key: str
    title: str
    build: Callable

    @property
    def benches(self) -> tuple:
        return in_view(self.key)


VIEWS = (
    View("strided", "Strided transfers", strided),
    View("postal", "Postal semantics", postal),
    View("bidirectional", "Unidirectional vs bidirectional", bidirectional),
    View("hotspot", "Hotspot", hotspot),
    View("saturation", "Link saturation", saturation),
    View("alltoall", "All-to-all and bisection", alltoall),
    View("fairness", "Fairness", fairness),
    View("via-latency", "VI Architecture: completion by polling, blocking, epoll", via_latency),
    View("via-conns", "VI Architecture: many connections", via_conns),
    View("via-scatter", "VI Architecture: scatter", via_scatter),
    View("layers", "Each library level and the cost of each layer", layers_view),
    View("registration", "Memory registration", registration),
    View("validation", "The model against measurement", validation),
    View("transpose", "Applications: the distributed transpose by mode", app_views.transpose),
    View("speedup", "Applications: speedup vs ranks", app_views.speedup),
    View("sort-rate", "Applications: bucket sort rate vs ranks and element size", app_views.sort_rate),
    View("phases", "Applications: the time split of each op", app_views.phases),
    View("collectives", "Collectives: bus bandwidth vs size, one curve per form and rank count", coll_views.collectives),
    View("message-rate", "Message rate vs size and window (osu_mbw_mr, IMB Uniband and Biband)", rate_views.message_rate),
    View("hpcc", "HPC Challenge's network figures: ping-pong over pairs, natural and random rings", hpcc_view.view),
    View("halo", "Halo exchange: neighbourhood collectives beside IMB-P2P's stencils at equal bytes per rank",
         halo_views.view),
    View("atomics", "Atomics and accumulate: latency per sync mode (OSU's syncs, IMB's aggregate mode)",
         atomic_views.atomics),
    View("threads", "Threads per rank: latency and bandwidth vs threads (osu_latency_mt, IMB-MT, ucx_perftest -T)",
         thread_views.scaling),
    View("udp-rate", "UDP: loss, jitter and received rate vs offered rate (iperf3 -u -b)", socket_views.udp_rate),
    View("stream-fairness", "Parallel streams: each stream's rate and Jain's index (iperf3 -P)",
         socket_views.stream_fairness),
    View("underload", "UDP latency under load (sockperf's under-load mode)", socket_views.underload),
    View("cpu", "CPU per byte: the socket benchmarks' service demand vs size (netperf's us/KB, us/Tr)",
         cpu_views.view),
    View("noise", "The machine's noise per core beside a small collective (FWQ, selfish detour)", noise_views.view),
)


@dataclass(frozen=True)
class Input:
    """A section drawn from an input that is not a run: `kind` is what cli/report.py hands the report
    (plain data: the report imports neither the model nor topology), `build` its items -> HTML."""
    kind: str
    title: str
    build: Callable


INPUTS = (
    Input("network", "The network", network.section),      # a network file: topology/facts.py
)


def memory_figures(runs: list, bench: str) -> list[Figure]:
    """A memory copy's size figures with the first run's cache sizes marked: a
    copy's throughput steps down where its working set (2 x size) leaves a
    cache level (seed 000's ECT measurements read the same edges)."""
    figs = per_benchmark(runs, bench)
    caches = runs[0].doc.header.caches
    for fig in figs:
        if fig.id.endswith(("-latency", "-bandwidth")):
            # The working set is source and destination: it leaves a cache of C bytes at size C / 2.
            fig.marks += [Mark(c / 2, f"{name} / 2") for name, c in caches.items() if c]
            fig.note += ". Dotted lines: each cache's size over two (source and destination share it)"
    return figs


# Per-benchmark builders by benchmark name or family ("memory"); the rest use per_benchmark.
BUILDERS: dict[str, Callable] = {"memory": memory_figures, "app": app_views.app_figures}


def for_benchmark(runs: list, bench: str) -> list[Figure]:
    build = BUILDERS.get(bench) or BUILDERS.get(bench.split(".", 1)[0]) or per_benchmark
    return build(runs, bench) + tail_views.distribution(runs, bench)


def views(runs: list) -> list[tuple[View, list[Figure]]]:
    have = {b for run in runs for b in run.benches()}
    out = []
    for v in VIEWS:
        if have & set(v.benches):
            figs = v.build(runs)
            if figs:
                out.append((v, figs))
    return out
