"""Derived figures and exporters (table, md, csv, json) for a run document.

Every format is built from the same row type (report/rows.py), so CSV and
JSON cannot drift apart. Units are SI in rows; the table and md formats scale them
for reading and say the unit in the column title. Pattern points add their
aggregate bandwidth, fairness and message rate; the JSON format also carries
each point's per-rank figures."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass

from ..errors import UsageError
from ..analysis import fit, merge, ranks
from ..suite.benchmarks import REGISTRY, coll_of
from ..units import fmt_bytes, fmt_time
from . import FORMATS, cpu_cost, escape, hpcc_view, stream_view, udp_view
from .rows import ROW_FIELDS, Row, rows
from .work import app_of, phase_split

def group_name(bench: str, variant: str) -> str:
    return f"{bench} [{variant}]" if variant else bench


def _groups(rs: list[dict]) -> dict:
    by: dict[str, list[dict]] = {}
    for r in rs:
        by.setdefault(group_name(r.bench, r.variant), []).append(r)
    return by


def derived(doc, rs: list | None = None) -> dict:
    """Per benchmark variant: peak bandwidth, half-peak size and a Hockney fit
    over its size sweep (one stride, one connection count, all participants);
    for a saturation pattern, the plateau of aggregate bandwidth vs active
    pairs at each size."""
    out = {}
    for name, rs in _groups(rs if rs is not None else rows(doc)).items():
        bench = REGISTRY.get(rs[0].bench)
        top = max((r.active for r in rs if r.active is not None), default=None)
        line = [r for r in rs if r.stride == 1 and r.conns == rs[0].conns and r.active == top
                and r.size > 0 and r.bandwidth_Bps]
        d = {}
        if app_of(rs[0].bench):               # an app: its best rate and speedup, not a transfer's peak
            d = _app_derived(rs)
        elif len(line) >= 2:
            sizes = [r.size for r in line]
            bws = [r.bandwidth_Bps for r in line]
            peak, at = fit.peak_bandwidth(sizes, bws)
            d = {"peak_bandwidth_Bps": peak, "peak_at_size": at, "half_peak_size": fit.half_peak_size(sizes, bws)}
            # Hockney and LogGP describe one transfer's time; for pipelined (streaming)
            # kernels the per-op time is a gap between messages, so they are not fitted.
            if bench is not None and bench.metric == "latency" and not bench.concurrent:
                times = [r.latency_s for r in line]
                try:
                    h = fit.hockney(sizes, times)
                    g = fit.loggp(sizes, times)
                    d.update(hockney_latency_s=h.alpha, hockney_rinf_Bps=h.r_inf, hockney_n_half=h.n_half,
                             loggp_G_s_per_byte=g.G, loggp_L_plus_2o_s=g.L_plus_2o)
                except ValueError:
                    pass
        if bench is not None and bench.pattern == "pairs":
            sat = {}
            for size in sorted({r.size for r in rs}):
                at = [r for r in rs if r.size == size and r.active is not None]
                p = ranks.plateau([r.active for r in at], [r.aggregate_bandwidth_Bps for r in at])
                if p:
                    sat[size] = p
            if sat:
                d["saturation"] = sat
        if d:
            out[name] = d
    return out


def _app_derived(rs: list) -> dict:
    """An app variant's best work rate (its registry facts) and where, and its
    speedup on the most ranks at the largest size."""
    rate = lambda r: r.work_per_s  # noqa: E731
    best = max((r for r in rs if rate(r)), key=rate, default=None)
    if best is None:
        return {}
    d = {"best_rate_per_s": rate(best), "best_at_size": best.size, "best_at_active": best.active}
    top = max(r.size for r in rs)
    far = max((r for r in rs if r.size == top and r.speedup is not None), key=lambda r: r.active or 0,
              default=None)
    if far is not None:
        d.update(speedup=far.speedup, speedup_at_size=top, speedup_at_active=far.active)
    return d


def _fmt_mbps(x) -> str:
    return f"{x / 1e6:.1f}" if x else "-"


@dataclass(frozen=True)
class _Columns:
    """Which optional columns a benchmark variant's table has."""
    strided: bool
    conns: bool
    pattern: bool
    ect: bool
    multi: bool
    imported: bool     # another tool's figures only: no interval, percentiles or ranks
    app: str | None = None      # an app: its rate column (its registry facts) instead of per-rank figures
    phases: tuple = ()          # an app's phase names, a column each
    coll: bool = False          # a collective: bus bandwidth and t_min, t_avg, t_max instead of per-rank rates
    overlap: bool = False       # a non-blocking collective's overlap with computation
    rate: bool = False          # a message rate of its own (the *.msg_rate benchmarks): Gb/s and Mmsg/s
    cpu: str | None = None      # a socket benchmark's CPU: what its service demand is per (report/cpu_cost.py)

    @classmethod
    def of(cls, rs: list) -> "_Columns":
        app = rs[0].bench if app_of(rs[0].bench) else None
        phases = tuple(dict.fromkeys(x.name for r in rs for x in phase_split(r.phases_s, r.median_s))) if app else ()
        return cls(any(r.stride != 1 for r in rs), any(r.conns != 1 for r in rs),
                   any(r.active is not None for r in rs), any(r.vs_best_copy is not None for r in rs),
                   any(r.launches > 1 for r in rs), all(r.imported for r in rs), app, phases,
                   coll_of(rs[0].bench) is not None, any(r.overlap for r in rs),
                   any(r.active is None and r.message_rate_per_s for r in rs),
                   cpu=next((r.cpu_demand_per for r in rs if r.cpu_demand_per), None))

    @property
    def ranked(self) -> bool:
        return self.pattern and not self.imported and not self.app and not self.coll

    def head(self) -> list[str]:
        size = REGISTRY[self.app].size_label if self.app else "size"
        return ([size] + (["stride"] if self.strided else []) + (["conns"] if self.conns else [])
                + (["active"] if self.pattern else [])
                + (["median", "n", "MB/s"] if self.imported else
                   ["median", "95% CI", "p5", "p99", "min", "max", "n", "MB/s"])
                + (["rank MB/s min..max", "Jain", "Mmsg/s"] if self.ranked else [])
                + (["busbw MB/s", "t_min", "t_avg", "t_max", "slowest"] if self.coll else [])
                + (["overlap %", "compute"] if self.overlap else [])
                + (["Gb/s", "Mmsg/s"] if self.rate else [])
                + ([h.format(per=self.cpu) for h in cpu_cost.HEAD] if self.cpu else [])
                + ([app_of(self.app).rate.label, "speedup"] if self.app else []) + list(self.phases)
                + (["vs best copy"] if self.ect else []) + (["launches", "between"] if self.multi else [])
                + ["stop", "warnings"])


def _cells(r: Row, c: _Columns) -> list[str]:
    """One row of the table, times per transfer (the point's own rule), rates in MB/s."""
    def t(key):
        v = getattr(r, key)
        return "-" if v is None else fmt_time(r.per_transfer(v), 4)
    n = "-" if r.n is None else str(r.n)
    # With n <= 5 the 95% CI of the median is [min, max]: no interval worth printing.
    ci = f"+-{r.ci_rel * 100:.1f}%" if r.ci_rel is not None and (r.n or 0) > 5 else f"n={n}"
    row = ([fmt_bytes(r.size)] + ([str(r.stride)] if c.strided else []) + ([str(r.conns)] if c.conns else [])
           + (["-" if r.active is None else str(r.active)] if c.pattern else [])
           + ([t("median_s"), n] if c.imported else
              [t("median_s"), ci, t("p5_s"), t("p99_s"), t("min_s"), t("max_s"), n])
           + [_fmt_mbps(r.bandwidth_Bps)])
    if c.ranked:
        row += [f"{_fmt_mbps(r.rank_bandwidth_min_Bps)}..{_fmt_mbps(r.rank_bandwidth_max_Bps)}",
                f"{r.fairness_jain:.3f}" if r.fairness_jain is not None else "-",
                f"{r.message_rate_per_s / 1e6:.3g}" if r.message_rate_per_s else "-"]
    if c.coll:
        slow = r.slowest_rank
        row += [_fmt_mbps(r.bus_bandwidth_Bps), t("t_min_s"), t("t_avg_s"), t("t_max_s"),
                "-" if slow is None else f"rank {slow[0]}" + (f" ({escape.terminal(slow[1])})" if slow[1] else "")]
    if c.overlap:
        row += _overlap_cells(r.overlap)
    if c.rate:  # perftest's -q units: BW in Gb/s (10^9 bits), MsgRate in Mpps
        row += [f"{r.bandwidth_Bps * 8 / 1e9:.3f}" if r.bandwidth_Bps else "-",
                f"{r.message_rate_per_s / 1e6:.3f}" if r.message_rate_per_s else "-"]
    if c.cpu:
        row += cpu_cost.cells(r)
    if c.app:
        row += [app_of(c.app).rate.text(r.work_per_s), f"{r.speedup:.2f}" if r.speedup is not None else "-"]
        split = {x.name: x for x in phase_split(r.phases_s, r.median_s)}
        row += [_part(split.get(k)) for k in c.phases]
    if c.ect:
        row.append(f"{r.vs_best_copy:.3f}" if r.vs_best_copy is not None else "-")
    if c.multi:
        row += [str(r.launches), f"+-{r.between_launch_rel * 100:.1f}%" if r.between_launch_rel is not None else "-"]
    return row + [r.stop or "", r.warnings or ""]


def _overlap_cells(o) -> list[str]:
    """The overlap at the median with its interval, and the compute loop's time during the op over alone."""
    if not o:
        return ["-", "-"]
    slow = o.get("compute_slowdown")
    return [f"{o['percent']:.0f} ({o['low']:.0f}..{o['high']:.0f})", f"{slow:.2f}x" if slow is not None else "-"]


def _part(x) -> str:
    """A phase's cell: its median time per op and its share of the op's."""
    if x is None:
        return "-"
    return f"{fmt_time(x.seconds) if x.seconds else '0'} {x.share:.0%}"


def _note(first: Row, c: _Columns) -> str:
    if c.app:
        rate = app_of(c.app).rate
        return (f"time per op: the whole {first.bench[4:]} on ACTIVE ranks, the slowest rank's; "
                f"{rate.label} in {rate.unit}; speedup: that rate over the rate on 1 rank; "
                "phases: the mean active rank's median time per op and its share of the op's (other: the "
                "slowest rank's time beyond them); "
                "MB/s = 10^6 bytes/s of the problem's data")
    if c.coll:
        return ("time per op: one collective call, the slowest rank's (IMB's t_max per sample); MB/s = the op's "
                "bytes (nccl-tests' S) over it; busbw = MB/s times the operation's bus factor; t_min, t_avg, "
                "t_max: the taking ranks' own median times, slowest: the rank (and host) of t_max; MB/s = 10^6 bytes/s"
                + ("; overlap % (IMB-NBC): how much of the op hid behind an equal compute loop, with its 95% "
                   "interval; compute: the loop's time during the op over its time alone" if c.overlap else ""))
    if first.concurrent:
        note = "time per op, all transfers at once; MB/s = all ranks' payload"
    else:
        note = "time per transfer (one leg)" if first.legs_per_op > 1 else "time per operation"
    if c.pattern and not first.concurrent:
        note += "; MB/s = all ranks' payload over the slowest rank's time"
    if c.imported:
        note += "; imported: the tool's figure, no samples"
    if c.cpu:
        note += "; " + cpu_cost.note(c.cpu)
    return f"{note}; MB/s = 10^6 payload bytes/s"


def _table_blocks(all_rows: list):
    """(title, header, body rows) per benchmark variant, with scaled units."""
    for name, rs in _groups(all_rows).items():
        c = _Columns.of(rs)
        yield f"{name}  ({_note(rs[0], c)})", c.head(), [_cells(r, c) for r in rs]


def _derived_lines(doc, rs: list) -> list[str]:
    lines = []
    for name, d in derived(doc, rs).items():
        if "peak_bandwidth_Bps" in d:
            hp = d["half_peak_size"]
            text = (f"{name}: peak {d['peak_bandwidth_Bps'] / 1e6:.1f} MB/s at {fmt_bytes(d['peak_at_size'])}, "
                    f"half-peak size {fmt_bytes(hp) if hp else 'not reached'}")
            if "hockney_latency_s" in d:
                text += (f"; Hockney fit: latency {d['hockney_latency_s'] * 1e6:.2f} us, "
                         f"r_inf {d['hockney_rinf_Bps'] / 1e6:.1f} MB/s, n_1/2 {fmt_bytes(d['hockney_n_half'])}; "
                         f"LogGP: G {d['loggp_G_s_per_byte'] * 1e12:.1f} ps/B, "
                         f"L+2o {d['loggp_L_plus_2o_s'] * 1e6:.2f} us")
            lines.append(text)
        if "best_rate_per_s" in d:
            lines.append(_app_line(name, d))
        for size, p in d.get("saturation", {}).items():
            state = (f"plateau from {p['active']} active pairs" if p["reached"]
                     else f"not saturated; highest at {p['active']} active pairs")
            lines.append(f"{name} at {fmt_bytes(size)}: saturation throughput {p['rate_Bps'] / 1e6:.1f} MB/s, "
                         f"{state}")
    return lines


def _app_line(name: str, d: dict) -> str:
    bench = name.split(" ", 1)[0]
    rate, label = app_of(bench).rate, REGISTRY[bench].size_label
    text = (f"{name}: best {rate.text(d['best_rate_per_s'])} {rate.label} at {label} "
            f"{fmt_bytes(d['best_at_size'])} on {d['best_at_active']} ranks")
    if "speedup" in d:
        text += (f"; speedup {d['speedup']:.2f} on {d['speedup_at_active']} ranks at {label} "
                 f"{fmt_bytes(d['speedup_at_size'])}")
    return text


def _first_line(text) -> str:
    return " ".join(str(text).splitlines()[0].split()) if text else ""


def _imported_lines(h) -> list[str]:
    imp = h.imported
    lines = [f"imported from {imp.get('tool', '?').upper()} {imp.get('tool_version') or '(version not printed)'} "
             f"output {imp.get('source')} (sha256 {str(imp.get('sha256'))[:12]}), {h.nranks or '?'} ranks: "
             + ", ".join(imp.get("benchmarks") or []),
             f"averaging: {imp.get('averaging')}"]
    if imp.get("ignored"):
        lines.append("not imported (no fabriclab counterpart): " + ", ".join(imp["ignored"]))
    return lines


def header_lines(doc) -> list[str]:
    h, f = doc.header, doc.footer
    first = f"fabriclab {h.fabriclab_version or '?'} run {h.run_id or ''}: status {f.status}"
    if doc.imported:
        return [first, *_imported_lines(h)]
    cache = h.plan.get("cache") or {}
    lines = [first,
             f"host {h.host.get('hostname', '?')}, {h.host.get('cpu_model', '?')} x{h.host.get('cpu_count', '?')}; "
             f"MPI {_first_line(h.mpi_library) or h.mpi.get('header_version', '?')}; "
             f"{h.nranks if h.nranks is not None else '?'} ranks via {h.launcher.get('launcher', '?')}"
             + (f"; cache {cache['state']}" if cache.get("state") else "")]
    placement = h.placement or {}
    if placement.get("oversubscribed"):
        lines.append("oversubscribed: " + ", ".join(f"{k} {v['ranks']} ranks on {v['cpus']} CPUs"
                                                    for k, v in placement["hosts"].items()))
    if f.error:
        lines.append(f"error: {f.error}")
    return lines


def skipped(doc) -> list[dict]:
    """The points a kernel skipped, once each however many launches skipped
    them, grouped by benchmark variant and reason: {bench, reason, where}."""
    groups: dict = {}
    for s in doc.skips:
        key = (group_name(s.bench, s.variant), s.reason or "no reason given")
        groups.setdefault(key, {})[(s.size, s.stride, s.conns, s.active)] = None
    return [{"bench": bench, "reason": reason, "where": [_at(*p) for p in sorted(pts, key=_order)]}
            for (bench, reason), pts in groups.items()]


def _order(point: tuple) -> tuple:
    return tuple(-1 if x is None else x for x in point)


def _at(size, stride, conns, active) -> str:
    return (fmt_bytes(size) + (f" stride {stride}" if stride != 1 else "") + (f" conns {conns}" if conns != 1 else "")
            + (f" active {active}" if active is not None else ""))


def skip_lines(doc) -> list[str]:
    """One line per skipped group: which points and why."""
    return [f"skipped: {g['bench']} at {', '.join(g['where'])} ({len(g['where'])} point"
            f"{'s' if len(g['where']) != 1 else ''}): {g['reason']}" for g in skipped(doc)]


def finding_lines(doc) -> list[str]:
    """The run's findings (analysis/findings.py), a line each: what most points
    share, said once instead of at every point."""
    return [f"finding: {d['code']}: {d['message']}" for d in merge.run_findings(doc)["run"]]


def model_lines(doc) -> list[str]:
    """Each collective point against the model of the network the run crossed (the
    document's coll_model block, verdicts/coll_prediction.py), a line each."""
    tol = (doc.blocks.get("coll_model") or {}).get("tolerance", 0.1)
    out = []
    for r in doc.coll_predictions:
        name = group_name(r["bench"], r.get("variant", ""))
        within = f" within {tol:.0%}" if r["verdict"] == "agrees" else ""
        out.append(f"model: {name} at {fmt_bytes(r['size'])} on {r['active']} ranks: measured "
                   f"{fmt_time(r['measured_s'])}, {r['ratio']:.2f}x the model's {fmt_time(r['predicted_s'])} "
                   f"({r['algorithm']}, {r.get('as', '')}; bottleneck {r.get('bottleneck') or '-'}): "
                   f"{r['verdict']}{within}")
    return out


def pair_lines(doc) -> list[str]:
    """The N x N pair matrix of a message.shift run and what its low pairs name (verdicts/pair_matrix.py)."""
    from ..verdicts import pair_matrix
    if not any(p.bench == pair_matrix.BENCH for p in merge.merged(doc)) or not doc.header.hosts:
        return []
    try:
        ms = pair_matrix.matrices(merge.merged(doc), doc.header.hosts, doc.header.network)
    except UsageError:       # the network file is gone: the matrix against the median pair
        ms = pair_matrix.matrices(merge.merged(doc), doc.header.hosts)
    return pair_matrix.lines(ms)


def congestion_lines(doc) -> list[str]:
    """The congestion impact factors of the victim benchmarks (verdicts/congestion.py), beside the
    model's on a known network."""
    from ..suite import congestion
    from ..verdicts import congestion as judged
    if not any(p.bench in congestion.BENCHES for p in doc.points):
        return []
    try:
        found = judged.impacts(doc.points, doc.header.hosts, doc.header.network)
    except UsageError:       # the network file is gone: the measured factors alone
        found = judged.impacts(doc.points)
    return judged.lines(found)


def tail_lines(doc) -> list[str]:
    """Each point timed op by op (`run --per-op`, analysis/tails.py): its single ops' percentiles
    with their intervals over launches, the largest op and the timer's share, a line each."""
    from ..analysis.tails import QUANTILES, TIMER_SHARE, tails

    def one(est) -> str:
        m, lo, hi = est
        return fmt_time(m) + (f" [{fmt_time(lo)}, {fmt_time(hi)}]" if math.isfinite(lo) else "")
    out = []
    for t in tails(doc.points):
        bench, variant, size = t.key[:3]
        flag = (f"; the timer is {t.timer_share:.0%} of p50, above {TIMER_SHARE:.0%}: single ops carry its cost"
                if t.flagged else f"; timer {t.timer_share:.1%} of p50")
        each = f"{t.ops} timings of a window of {t.ops_per_timing} ops" if t.ops_per_timing > 1 else f"{t.ops} ops"
        out.append(f"per-op: {group_name(bench, variant)} at {fmt_bytes(size)}: "
                   + ", ".join(f"{name} {one(t.estimates[name])}" for name, _ in QUANTILES)
                   + f", max {fmt_time(t.estimates['max'][0])} ({each}, {t.launches} launches{flag})")
    return out


def _json(doc) -> str:
    rs = rows(doc)
    per_rank = [{"bench": p.bench, "variant": p.variant, "size": p.size, "active": p.active,
                 "ranks": [x.to_dict() for x in p.ranks]} for p in (r.point for r in rs) if p.ranks is not None]
    return json.dumps({"header": doc.header.to_dict(), "footer": doc.footer.to_dict(),
                       "rows": [r.to_dict() for r in rs], "derived": derived(doc, rs), "ranks": per_rank,
                       "cpu": cpu_cost.per_rank(rs, doc.header.timer),
                       "skipped": skipped(doc), "findings": merge.run_findings(doc),
                       "coll_model": doc.blocks.get("coll_model")}, indent=1) + "\n"


def _csv(doc) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
    w.writeheader()
    # a dict (an app's phases) as JSON in its cell, not Python's repr; text from the document with
    # its control characters visible (a CSV is read on terminals too)
    w.writerows({k: json.dumps(v) if isinstance(v, dict) else escape.terminal(v) if isinstance(v, str) else v
                 for k, v in r.to_dict().items()} for r in rows(doc))
    return buf.getvalue()


def _md(doc) -> str:
    """Markdown: every value from the document escaped (report/escape.py)."""
    rs = rows(doc)
    row = lambda cells: "| " + " | ".join(escape.markdown(c) for c in cells) + " |"  # noqa: E731
    out = ["# fabriclab run", ""] + [f"- {escape.markdown(ln)}" for ln in header_lines(doc)] + [""]
    for title, head, body in _table_blocks(rs):
        out += [f"## {escape.markdown(title)}", "", row(head), "|" + "---|" * len(head)]
        out += [row(r) for r in body] + [""]
    found = finding_lines(doc)
    out += (["## Findings", ""] + [f"- {escape.markdown(ln)}" for ln in found] + [""]) if found else []
    model = model_lines(doc)
    out += (["## Against the network's model", ""] + [f"- {escape.markdown(ln)}" for ln in model] + [""]) \
        if model else []
    skips = skip_lines(doc)
    out += (["## Skipped", ""] + [f"- {escape.markdown(ln)}" for ln in skips] + [""]) if skips else []
    out += ["## Derived", ""] + [f"- {escape.markdown(ln)}" for ln in _derived_lines(doc, rs)]
    return "\n".join(out) + "\n"


def _table(doc) -> str:
    """Aligned text: control characters from the document made visible."""
    rs = rows(doc)
    out = [escape.terminal(ln) for ln in header_lines(doc)] + [""]
    for title, head, body in _table_blocks(rs):
        body = [[escape.terminal(c) for c in r] for r in body]
        widths = [max(len(head[i]), *(len(r[i]) for r in body)) for i in range(len(head))]
        out.append(escape.terminal(title))
        out.append("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        out += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in body]
        out.append("")
    out += [escape.terminal(ln) for ln in finding_lines(doc) + model_lines(doc) + tail_lines(doc)
            + pair_lines(doc) + congestion_lines(doc) + hpcc_view.lines(doc) + udp_view.lines(doc)
            + stream_view.lines(doc) + skip_lines(doc)
            + _derived_lines(doc, rs)]
    return "\n".join(out) + "\n"


# One exporter per format behind one interface (hyperfine's export/).
EXPORTERS = {"table": _table, "json": _json, "csv": _csv, "md": _md}
assert tuple(EXPORTERS) == FORMATS, "report.FORMATS and the exporters disagree"


def format_doc(doc, fmt: str) -> str:
    return EXPORTERS[fmt](doc)
