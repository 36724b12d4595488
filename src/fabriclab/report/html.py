"""`fabriclab report`: one self-contained HTML file of one or more runs.

Figures are inline SVG (svg.py), styles are inline CSS; nothing is fetched,
nothing runs, so the page reads the same offline, in any browser and on
paper. The order follows how a reader asks: what ran and how, what to worry
about, the ladder of levels (seed 000 Fig. 15-16), the cross-benchmark views
(figures.VIEWS), the applications' tables (app_views.py), the comparison of two
runs, then every benchmark's own figures."""

from __future__ import annotations

import time
from .escape import xml as escape

from .. import __version__
from ..schema.document import collector_paused
from ..units import fmt_bytes, fmt_rate, fmt_time
from . import app_views, coll_views, figures, layers, pair_views, svg
from .figure import Figure
from .summary import budget_line, warning_groups
from .tables import _first_line, group_name, skipped

CSS = """
body{font:14px/1.45 "DejaVu Sans",Helvetica,Arial,sans-serif;margin:0 auto;max-width:1320px;padding:0 18px 40px;
color:#1d1d1d;background:#fff}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:30px}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #d4d4d4;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.banner{border:2px solid #b00020;background:#fff0f0;padding:8px 12px;margin:10px 0;font-weight:bold}
.figs{display:flex;flex-wrap:wrap;gap:10px 18px}
figure{margin:6px 0;break-inside:avoid;page-break-inside:avoid;display:table}
figure svg{max-width:100%;height:auto;border:1px solid #e4e4e4;display:block}
figcaption{font-size:12px;color:#444;margin-top:3px;display:table-caption;caption-side:bottom}
code{font-size:12px;background:#f6f6f6;padding:1px 3px;word-break:break-all}
nav a{margin-right:12px}
.faster{color:#006400;font-weight:bold}.slower{color:#b00020;font-weight:bold}
@media print{body{max-width:none}nav{display:none}}
"""


def _td(v, num=False) -> str:
    return f'<td class="num">{escape(str(v))}</td>' if num else f"<td>{escape(str(v))}</td>"


def table(head: list, body: list, nums: set = frozenset()) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(_td(c, i in nums) for i, c in enumerate(row)) + "</tr>" for row in body]
    return "\n".join(out) + "</tbody></table>"


HOLLOW = "hollow markers: points that did not converge"


def figure_html(fig: Figure) -> str:
    """The figure and its caption: how to read it (the title is in the figure)."""
    note = fig.note
    if any(h for s in fig.series for h in (s.hollow or [])) and HOLLOW not in note:
        note = f"{note}; {HOLLOW}" if note else HOLLOW
    note = note[:1].upper() + note[1:]
    return f'<figure id="fig-{escape(fig.id)}">{svg.render(fig)}<figcaption>{escape(note)}.</figcaption></figure>'


def _figs(figs: list) -> str:
    return '<div class="figs">' + "\n".join(figure_html(f) for f in figs) + "</div>"


def _hosts(h) -> str:
    if h.hosts:
        counts: dict = {}
        for x in h.hosts:
            counts[x] = counts.get(x, 0) + 1
        return ", ".join(f"{k} ({v} ranks)" for k, v in counts.items())
    return h.host.get("hostname", "?")


def _launch_command(doc) -> str:
    first = next((r for r in doc.launches if r.command), None)
    return " ".join(first.command) if first else "-"


def run_facts(name: str, doc) -> list[tuple[str, str]]:
    """What ran, where and how: the facts a reader checks before any figure."""
    h, f = doc.header, doc.footer
    host, plan = h.host, h.plan
    benches = figures.in_registry_order(p.bench for p in doc.points)
    facts = [("run", f"{name} (id {h.run_id or '?'}), fabriclab {h.fabriclab_version or '?'}"),
             ("status", f.status + (f": {f.error}" if f.error else "")),
             ("started", str(h.start_time or h.extra.get("started") or "?")),
             ("hosts", _hosts(h)),
             ("CPU", f"{host.get('cpu_model', '?')} x{host.get('cpu_count', '?')}, kernel {host.get('kernel', '?')}"),
             ("MPI", _first_line(doc.hello.get("mpi_library")) or h.mpi.get("header_version") or "?"),
             ("ranks", str(h.nranks if h.nranks is not None else "?")),
             ("launcher", f"{h.launcher.get('launcher', '?')}, binding {h.launcher.get('binding', '?')}"),
             ("launch command", _launch_command(doc)),
             ("command", " ".join(h.argv or []) or "-"),
             ("cache state", ((plan.get("cache") or {}).get("state")) or "warm"),
             ("launches per point", str(plan.get("launches", 1))),
             ("time budget", budget_line(f.extra.get("budget"), always=True)
              or (f"{plan['budget_s']:g} s (what it did is in the footer, which this run lacks)"
                  if isinstance(plan.get("budget_s"), (int, float)) else "none")),
             ("benchmarks", f"{len(benches)}: " + ", ".join(benches))]
    facts += _level_facts(h.levels)
    imp = h.imported
    if imp:
        facts.insert(1, ("imported", f"from {imp.get('tool')} {imp.get('tool_version') or ''} output "
                                     f"{imp.get('source')}: summary figures only, no samples; "
                                     f"{imp.get('averaging', '')}"))
    return facts


def _level_facts(levels) -> list[tuple[str, str]]:
    """The levels below MPI: the library loaded, and each job's provider or transports and why."""
    out = []
    for level, rec in (levels or {}).items() if isinstance(levels, dict) else ():
        if not isinstance(rec, dict):
            continue
        lib = rec.get("library") or {}
        jobs = "; ".join(f"{j.get('bench')}: " + (f"provider {j.get('provider')} ({j.get('why')})" if "provider" in j
                                                  else f"UCX_TLS {j.get('tls')}")
                         for j in rec.get("jobs") or [] if isinstance(j, dict))
        out.append((f"{level} level", f"{lib.get('name', '?')} {lib.get('version', '?')} from {lib.get('path', '?')}"
                                      + (f"; {jobs}" if jobs else "")))
    return out


def _header(runs: list) -> list[str]:
    out = []
    for run in runs:
        f = run.doc.footer
        if f.status != "complete":
            out.append(f'<div class="banner">Run {escape(run.name)} ended early (status {escape(f.status)}'
                       f'{": " + escape(str(f.error)) if f.error else ""}): the figures show the '
                       "points it completed.</div>")
    out.append('<h2 id="runs">What ran, where and how</h2>')
    for run in runs:
        facts = run_facts(run.name, run.doc)
        out.append(table(["", run.name], [[k, v] for k, v in facts]))
    out.append('<h2 id="warnings">Warnings</h2>')
    for run in runs:
        groups = warning_groups(run.doc)
        if len(runs) > 1:
            out.append(f"<h3>{escape(run.name)}</h3>")
        if not groups:
            out.append("<p>None.</p>")
            continue
        out.append(table(["level", "kind", "count", "where", "what (first instance)", "advice"],
                         [[g["level"], g["code"], g["count"], g["where"] or "whole run", g["message"], g["advice"]]
                          for g in groups], nums={2}))
    return out + _skipped(runs)


def _skipped(runs: list) -> list[str]:
    """The points a kernel skipped (a size an MPI count cannot carry, a layout
    it cannot follow), so that a missing curve is explained where it is missed."""
    rows = [[run.name, g["bench"], ", ".join(g["where"]), len(g["where"]), g["reason"]]
            for run in runs for g in skipped(run.doc)]
    if not rows:
        return []
    return ['<h2 id="skipped">Skipped points</h2>',
            table(["run", "benchmark", "points", "count", "why"], rows, nums={3})]


def _copy_there(r) -> str:
    """memory.copy at a rung's working set, and how the run had it."""
    if r.copy_Bps is None:
        return "-" if r.level == "memory" or not r.working_set else "not measured"
    how = "" if r.copy_how == "measured" else f" ({r.copy_how})"
    return fmt_rate(r.copy_Bps) + how + (" (below this level)" if r.above else "")


def _ladder(runs: list, wire_Bps, wire_text, wire_name) -> list[str]:
    figs = figures.ladder(runs, wire_Bps, wire_text, wire_name)
    if not figs:
        return []
    out = ['<h2 id="ladder">Levels: best throughput and lowest latency</h2>', _figs(figs)]
    head = ["level"]
    for run in runs:
        pre = f"{run.name}: " if len(runs) > 1 else ""
        head += [pre + "best throughput", pre + "by", pre + "working set", pre + "memory.copy there",
                 pre + "lowest latency", pre + "by"]
    levels = list(dict.fromkeys(r.level for run in runs for r in figures.ladder_rows(run)))
    body = []
    for level in levels:
        row = [level]
        for run in runs:
            r = next((x for x in figures.ladder_rows(run) if x.level == level), None)
            row += ([fmt_rate(r.best_Bps) if r.best_Bps else "-",
                     f"{r.best_bench} at {fmt_bytes(r.best_size)}" if r.best_size is not None else "-",
                     fmt_bytes(r.working_set) if r.working_set else "-", _copy_there(r),
                     fmt_time(r.latency_s) if r.latency_s is not None else "-",
                     f"{r.latency_bench} at {fmt_bytes(r.latency_size)}" if r.latency_s is not None
                     else "-"] if r else ["-"] * 6)
        body.append(row)
    out.append(table(head, body))
    if not wire_Bps:
        out.append("<p>Efficiency against the wire rate: give <code>--wire-rate MBPS</code> or "
                   "<code>--technology NAME</code> (a catalog entry) to draw it.</p>")
    return out


def _layer_costs(run) -> list[str]:
    """MPI against each layer below it: latency at the smallest size both measured,
    bandwidth at the largest (report/layers.py)."""
    rows = layers.costs(run)
    picked = []
    for key in dict.fromkeys((c.upper, c.lower, c.metric) for c in rows):
        mine = [c for c in rows if (c.upper, c.lower, c.metric) == key]
        picked.append(mine[0] if key[2] == "latency" else mine[-1])
    if not picked:
        return []
    fmt = {"latency": fmt_time, "bandwidth": fmt_rate}
    body = [[c.upper, c.lower, c.metric, fmt_bytes(c.size), fmt[c.metric](c.upper_value),
             fmt[c.metric](c.lower_value), f"{c.ratio:.2f}"] for c in picked]
    return ['<h2 id="layers">The cost of each layer</h2>',
            "<p>MPI's figure over the same operation one layer down (libfabric, UCX), best variant of each: "
            "latency at the smallest size both measured (ratio above 1: MPI's cost), bandwidth at the largest "
            "(ratio below 1: the share MPI keeps). The <em>layers</em> figures show every size "
            "(seed 004 Fig. 4-5).</p>",
            table(["MPI", "layer below", "figure", "size", "MPI", "below", "MPI / below"], body, nums={4, 5, 6})]


def _apps(runs: list) -> list[str]:
    """The applications at their largest sizes: rate, speedup, time split; and
    the exchange phase beside the model's prediction where the run stored one."""
    out = []
    for run in runs:
        head, body = app_views.summary_table(run)
        if body:
            out += ([f"<h3>{escape(run.name)}</h3>"] if len(runs) > 1 else []) + [table(head, body, nums={2, 3, 5})]
    if not out:
        return []
    out = ['<h2 id="apps">Applications: rate, speedup and time split</h2>',
           "<p>Each app variant at its largest size, on every rank count measured: the median time per op (the "
           "whole application, the slowest rank's), its work rate, the speedup over 1 rank (strong scaling: "
           "t(1) / t(N); weak: the scaled speedup) and each phase's share of the op (the mean rank's; other: "
           "the rest). The figures above show every size.</p>"] + out
    for run in runs:
        head, body = app_views.exchange_table(run)
        of = f" ({escape(run.name)})" if len(runs) > 1 else ""
        if body:
            out += [f"<h3>Exchange phase: measured vs predicted by the model{of}</h3>",
                    "<p>The all-to-all exchange of the transpose and the sort, its measured median beside the time "
                    "the network model predicts for the bytes each rank sends (ratio above 1: slower than "
                    "predicted).</p>", table(head, body, nums={2, 3, 4, 5})]
    return out


def _congestion(runs: list) -> list[str]:
    """The victims' impact factors beside the model's (verdicts/congestion.py)."""
    from ..errors import UsageError
    from ..suite import congestion
    from ..verdicts import congestion as judged
    out = []
    for run in runs:
        doc = run.doc
        if not any(p.bench in congestion.BENCHES for p in doc.points):
            continue
        try:
            found = judged.impacts(doc.points, doc.header.hosts, doc.header.network)
        except UsageError:
            found = judged.impacts(doc.points)
        ci = lambda t: f"{t[0]:.2f} [{t[1]:.2f}, {t[2]:.2f}]"   # noqa: E731
        body = [[m.test, fmt_bytes(m.size), m.aggressor, f"{m.victims}/{m.aggressors}", fmt_time(m.isolated_s),
                 fmt_time(m.congested_s), ci(m.median), f"{ci(m.tail)} of {m.tail_of}",
                 f"{min(m.draws):.2f}-{max(m.draws):.2f}" if m.draws else "-",
                 f"{m.predicted.impact:.2f}" if m.predicted else "-",
                 ", ".join(m.predicted.shared) if m.predicted else "-"] for m in found]
        if body:
            of = f" ({escape(run.name)})" if len(runs) > 1 else ""
            out += [f'<h3 id="congestion">Congestion impact{of}</h3>',
                    "<p>The slowest victim's time per op with the aggressors loading the network over its time "
                    "with them idle (above 1: slower), for the median and the 99th percentile, 95% intervals over "
                    "launches and ring draws (the 99th percentile of single ops where the run timed them, --per-op, "
                    "else of the batched samples); the model's bandwidth impact on a known network, and the cables the "
                    "victims share with the aggressors.</p>",
                    table(["victim test", "size", "aggressor", "victims/aggressors", "isolated", "congested",
                           "impact, median", "impact, p99", "draws", "model", "shared cables"], body)]
    return out


def _coll_model(runs: list) -> list[str]:
    """Each collective point beside what the run's network allows (verdicts/coll_prediction.py)."""
    out = []
    for run in runs:
        head, body = coll_views.model_table(run)
        if body:
            of = f" ({escape(run.name)})" if len(runs) > 1 else ""
            out += [f'<h3 id="coll-model">Collectives: measured vs the network\'s model{of}</h3>',
                    "<p>Each collective point's median time beside the time the model gives its algorithm on "
                    "the network file the run crossed (the algorithm the library reported where the model has "
                    "it, else the fastest of the model's: what the network allows), the ratio (above 1: slower "
                    "than predicted) and the bottleneck of the costliest step.</p>",
                    table(head, body, nums={2, 3, 4, 5})]
    return out


def _cables(runs: list) -> list[str]:
    """A validation's cables at its largest size, ranked by measured over
    predicted utilization (testbed/cablecheck.py), with the emulation's own check."""
    out = []
    for run in runs:
        v = run.doc.validation or {}
        out += _interfaces(v, f" ({escape(run.name)})" if len(runs) > 1 else "")
        top = next((c for c in v.get("cables") or [] if c["size"] == v["per_size"][-1]["size"]), None)
        if not top:
            continue
        rows = sorted(top["cables"], key=lambda r: (r["ratio"] is None, r["ratio"] or 0))
        body = [[f"{r['from']} \u2192 {r['to']}", r.get("label") or "-", f"{r['flows']:g}",
                 f"{r['predicted_util']:.3f}", f"{r['measured_util']:.3f}",
                 f"{r['ratio']:.3f}" if r["ratio"] else "-", f"{r['p90_util']:.2f}", r["drops"]] for r in rows]
        emu = v.get("emulation") or {}
        said = ("faithful: every cable the model saturates reached its rate in its busiest windows, and the "
                f"kernel's packet work waited for a CPU {emu.get('softirq_wait', 0):.0%} of the time"
                if emu.get("faithful") else "NOT faithful: " + "; ".join(emu.get("reasons", [])))
        of = f" ({escape(run.name)})" if len(runs) > 1 else ""
        out += [f'<h3 id="cables">The model against measurement, cable by cable{of}</h3>',
                f"<p>At {escape(fmt_bytes(top['size']))}, every cable direction: the all-to-all flows that cross "
                "it, the utilization the calibrated model gives it (the bottleneck: 1), the utilization measured "
                "(wire bytes over its rate during the point), their ratio, the 90th percentile of its 100 ms "
                "windows, and its shaper's drops over the run. "
                f"{escape(v.get('explanation') or '')}. Emulation {escape(said)}.</p>",
                table(["cable", "link", "flows", "predicted", "measured", "measured / predicted",
                        "busiest windows", "drops"], body, nums={2, 3, 4, 5, 6, 7})]
        out += _validated_collectives(v, of)
    return out


def _validated_collectives(v: dict, of: str) -> list[str]:
    """A validation's collectives (testbed/coll_check.py): each against its calibrated schedule time."""
    rows = v.get("collectives") or []
    if not rows:
        return []
    body = [[group_name(r["bench"], r.get("variant", "")), fmt_bytes(r["size"]), fmt_time(r["measured_s"]),
             fmt_time(r["predicted_s"]), f"{r['ratio']:.3f}", r["verdict"], r.get("bottleneck") or "-",
             r.get("busiest_cable") or "-"] for r in rows]
    return [f'<h3 id="validated-collectives">The collectives against the calibrated model{of}</h3>',
            "<p>Each algorithm at the validation's largest size, one rank on each host: its median time beside "
            "its schedule's time on the network with the calibrated cables (docs/model.md §10), the "
            "bottleneck of its costliest step, and the cable direction the testbed measured busiest over "
            "the point.</p>",
            table(["collective", "size", "measured", "predicted", "measured / predicted", "verdict (10%)",
                   "bottleneck (model)", "busiest (measured)"], body, nums={2, 3, 4})]


def _interfaces(v: dict, of: str) -> list[str]:
    """A validation on real hosts: the links the file names by interface, their bytes against the model's flows."""
    rows = [r for r in v.get("interfaces") or []]
    if not rows:
        return []
    body = [[f"{r['from']} \u2192 {r['to']}", f"{r['host']} {r['iface']}", f"{r['flows']:g}",
             "-" if r["bytes"] is None else fmt_bytes(r["bytes"]),
             "-" if r["ratio"] is None else f"{r['ratio']:.3f}", "-" if r["util"] is None else f"{r['util']:.3f}"]
            for r in sorted(rows, key=lambda r: (r["ratio"] is None, r["ratio"] or 0))]
    return [f'<h3 id="interfaces">The model against measurement, link by link{of}</h3>',
            "<p>Every link the network file names by its host's interface (<code>iface</code>), both ways: the "
            "all-to-all flows the model routes over it, the bytes the interface moved over the all-to-all's "
            "launches (its counters, read through the launcher), its share of those bytes over its share of the "
            "flows (1: as routed; below 1: another path carried its traffic), and its utilization over the "
            "launches (a lower bound: a launch includes its start-up).</p>",
            table(["link", "interface", "flows", "bytes", "bytes share / flows share", "utilization"], body,
                   nums={2, 3, 4, 5})]


def _compare(runs: list) -> list[str]:
    from ..analysis.compare import compare
    base, new = runs
    changes = compare(base.doc, new.doc)
    counts: dict = {}
    for c in changes:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    out = [f'<h2 id="compare">{escape(new.name)} against {escape(base.name)}</h2>',
           "<p>" + ", ".join(f"{v} {k}" for k, v in counts.items()) + ". Ratio: new / base time per operation "
           "(above 1: slower), with its 95% interval over launches; a verdict needs the whole interval beyond "
           "1 &plusmn; 2%." + (" no-interval: one side is imported (another tool's printed figure, no samples), "
                                "so only the ratio is given." if counts.get("no-interval") else "") + "</p>"]
    shown = sorted((c for c in changes if c.verdict not in ("only-in-base", "only-in-new")),
                   key=lambda c: (c.verdict == "same", -abs((c.ratio if c.ratio == c.ratio else 1) - 1)))
    body = []
    for c in shown:
        ci = (f"{c.ratio_ci_low:.3f} .. {c.ratio_ci_high:.3f}" if c.ratio_ci_low == c.ratio_ci_low else "-")
        where = fmt_bytes(c.size) + (f" stride {c.stride}" if c.stride != 1 else "") + (
            f" {c.conns} conns" if c.conns != 1 else "") + (f" {c.active} active" if c.active is not None else "")
        body.append([group_name(c.bench, c.variant), where, fmt_time(c.base_median_s), fmt_time(c.new_median_s),
                     f"{c.ratio:.3f}" if c.ratio == c.ratio else "-", ci, c.verdict])
    if body:
        out.append(table(["benchmark", "point", "base", "new", "ratio", "95% interval", "verdict"], body,
                          nums={2, 3, 4}))
    else:
        out.append("<p>The two runs have no point in common (benchmark, variant and every axis).</p>")
    return out


def render(named_docs: list[tuple], wire_Bps: float | None = None, wire_text: str = "",
           wire_name: str = "", inputs: dict | None = None) -> str:
    """The report of runs given as (name, document); `inputs`: kind -> [plain data] of the
    inputs that are not runs (figures.INPUTS: a network file's facts)."""
    # Every row, curve and figure is kept until the page is written: collections would
    # walk them again and again (a third of a large import's report) and free nothing.
    with collector_paused():
        return _render(named_docs, wire_Bps, wire_text, wire_name, inputs or {})


def _inputs(inputs: dict) -> tuple[list[str], list[str]]:
    """(nav links, body) of the sections of inputs that are not runs."""
    nav, body = [], []
    for section in figures.INPUTS:
        if inputs.get(section.kind):
            nav.append(f'<a href="#{section.kind}">{escape(section.kind)}</a>')
            body += [f'<h2 id="{section.kind}">{escape(section.title)}</h2>', *section.build(inputs[section.kind])]
    return nav, body


def _render(named_docs: list[tuple], wire_Bps: float | None, wire_text: str, wire_name: str,
            inputs: dict) -> str:
    ranks = {doc.header.nranks for _, doc in named_docs}
    if len(ranks) > 1:      # runs of different shapes: say so wherever they are named
        named_docs = [(f"{name} ({doc.header.nranks if doc.header.nranks is not None else '?'} ranks)", doc)
                      for name, doc in named_docs]
    runs = [figures.RunView.of(name, doc) for name, doc in named_docs]
    title = "fabriclab report: " + ", ".join(r.name for r in runs)
    views = figures.views(runs)
    benches = figures.in_registry_order(b for run in runs for b in run.benches())
    nav = ['<a href="#runs">runs</a>', '<a href="#warnings">warnings</a>']
    more_nav, more = _inputs(inputs)
    nav += more_nav + ['<a href="#ladder">levels</a>']
    nav += [f'<a href="#view-{v.key}">{escape(v.key)}</a>' for v, _ in views]
    app_tables = _apps(runs)
    nav += ['<a href="#apps">apps</a>'] if app_tables else []
    pairs = pair_views.html(runs)
    nav += ['<a href="#pairs">pairs</a>'] if pairs else []
    nav += ['<a href="#compare">compare</a>'] if len(runs) == 2 else []
    nav += ['<a href="#benchmarks">benchmarks</a>']
    body = [f"<h1>{escape(title)}</h1>",
            f"<p>Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by fabriclab {__version__}. Sizes in bytes "
            "(K/M = 1024^n); MB/s are 10^6 payload bytes per second; intervals are 95%.</p>",
            "<nav>" + " ".join(nav) + "</nav>"]
    body += _header(runs)
    body += more
    body += _ladder(runs, wire_Bps, wire_text, wire_name)
    body += _layer_costs(runs[0])
    for v, figs in views:
        body += [f'<h2 id="view-{v.key}">{escape(v.title)}</h2>', _figs(figs)]
    body += _cables(runs)
    body += _coll_model(runs)
    body += pairs
    body += _congestion(runs)
    body += app_tables
    if len(runs) == 2:
        body += _compare(runs)
    body.append('<h2 id="benchmarks">Every benchmark</h2>')
    for bench in benches:
        figs = figures.for_benchmark(runs, bench)
        if figs:
            body += [f'<h3 id="bench-{escape(bench)}">{escape(bench)}</h3>', _figs(figs)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")
