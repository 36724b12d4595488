"""Rows, derived figures and exporters (table, md, csv, json) for a run document.

Every format is built from the same row type (`ROW_FIELDS`), so CSV and JSON
cannot drift apart. Units are SI in rows; the table and md formats scale them
for reading and say the unit in the column title. Pattern points add their
aggregate bandwidth, fairness and message rate; the JSON format also carries
each point's per-rank figures."""

from __future__ import annotations

import csv
import io
import json

from ..analysis import fit, ranks
from ..analysis.merge import merged
from . import FORMATS
from ..measure.benchmarks import REGISTRY
from ..units import fmt_bytes, fmt_time

ROW_FIELDS = ("bench", "variant", "size", "stride", "conns", "active", "n", "median_s", "ci_low_s", "ci_high_s",
              "ci_rel", "p5_s", "p25_s", "p75_s", "p95_s", "p99_s", "min_s", "max_s", "mean_s", "stdev_s",
              "latency_s", "bandwidth_Bps", "bytes_per_op", "legs_per_op", "concurrent",
              "aggregate_bandwidth_Bps", "rank_bandwidth_min_Bps", "rank_bandwidth_mean_Bps",
              "rank_bandwidth_max_Bps", "fairness_jain",
              "fairness_min_max", "message_rate_per_s", "vs_best_copy", "launches", "within_launch_rel",
              "between_launch_rel", "cache", "buffers", "batch", "stop",
              "validation_errors", "warnings")


def _rank_bw(r: dict, pick) -> float | None:
    bws = [x["bandwidth_Bps"] for x in r.get("ranks") or [] if x["role"] in ("sender", "both")
           and x["bandwidth_Bps"] is not None]
    return pick(bws) if bws else None


# ECT (seed 000): strided copies are read against the best contiguous copy of
# the same working set, the bound every packing mode lives under.
CONTIGUOUS_COPIES = ("memory.memcpy", "memory.copy")
STRIDED_COPIES = ("memory.strided_store", "memory.strided_load")


def _best_copies(pts: list[dict]) -> dict:
    """(size, cache) -> the best contiguous copy bandwidth measured in the run."""
    best: dict = {}
    for r in pts:
        if r["bench"] in CONTIGUOUS_COPIES and r.get("bandwidth_Bps"):
            key = (r["size"], r.get("cache"))
            best[key] = max(best.get(key, 0.0), r["bandwidth_Bps"])
    return best


def rows(doc: dict) -> list[dict]:
    """One row per point, its launches merged (analysis/merge.py)."""
    out = []
    pts = merged(doc)
    best = _best_copies(pts)
    for r in pts:
        s = r["summary"]
        val = r.get("validation")
        fair = r.get("fairness") or {}
        out.append({
            "bench": r["bench"], "variant": r.get("variant", ""), "size": r["size"], "stride": r["stride"],
            "conns": r.get("conns", 1), "active": r.get("active"), "n": s["n"],
            "median_s": s["median"], "ci_low_s": s["ci_low"], "ci_high_s": s["ci_high"],
            "ci_rel": s["ci_rel"], "p5_s": s["p5"], "p25_s": s["p25"], "p75_s": s["p75"],
            "p95_s": s["p95"], "p99_s": s["p99"], "min_s": s["min"], "max_s": s["max"],
            "mean_s": s["mean"], "stdev_s": s["stdev"], "latency_s": r["latency_s"],
            "bandwidth_Bps": r["bandwidth_Bps"], "bytes_per_op": r["bytes_per_op"],
            "legs_per_op": r["legs_per_op"], "concurrent": bool(r.get("concurrent", False)),
            "aggregate_bandwidth_Bps": r.get("aggregate_bandwidth_Bps"),
            "rank_bandwidth_min_Bps": _rank_bw(r, min), "rank_bandwidth_max_Bps": _rank_bw(r, max),
            "rank_bandwidth_mean_Bps": _rank_bw(r, lambda xs: sum(xs) / len(xs)),
            "fairness_jain": fair.get("jain"), "fairness_min_max": fair.get("min_max_ratio"),
            "message_rate_per_s": r.get("message_rate_per_s"),
            "vs_best_copy": (r["bandwidth_Bps"] / best[(r["size"], r.get("cache"))]
                             if r["bench"] in STRIDED_COPIES and r["bandwidth_Bps"]
                             and best.get((r["size"], r.get("cache"))) else None),
            "launches": len(r["launches"]), "within_launch_rel": r["spread"]["within_rel"],
            "between_launch_rel": r["spread"]["between_rel"] if len(r["launches"]) > 1 else None,
            "cache": r.get("cache"),
            "buffers": r.get("buffers"), "batch": r.get("batch"), "stop": r.get("stop"),
            "validation_errors": None if val is None else val.get("errors"),
            "warnings": " ".join(d["code"] for d in r.get("diagnostics", [])),
        })
    return out


def group_name(bench: str, variant: str) -> str:
    return f"{bench} [{variant}]" if variant else bench


def _groups(rs: list[dict]) -> dict:
    by: dict[str, list[dict]] = {}
    for r in rs:
        by.setdefault(group_name(r["bench"], r["variant"]), []).append(r)
    return by


def derived(doc: dict, rs: list | None = None) -> dict:
    """Per benchmark variant: peak bandwidth, half-peak size and a Hockney fit
    over its size sweep (one stride, one connection count, all participants);
    for a saturation pattern, the plateau of aggregate bandwidth vs active
    pairs at each size."""
    out = {}
    for name, rs in _groups(rs if rs is not None else rows(doc)).items():
        bench = REGISTRY.get(rs[0]["bench"])
        top = max((r["active"] for r in rs if r["active"] is not None), default=None)
        line = [r for r in rs if r["stride"] == 1 and r["conns"] == rs[0]["conns"] and r["active"] == top
                and r["size"] > 0 and r["bandwidth_Bps"]]
        d = {}
        if len(line) >= 2:
            sizes = [r["size"] for r in line]
            bws = [r["bandwidth_Bps"] for r in line]
            peak, at = fit.peak_bandwidth(sizes, bws)
            d = {"peak_bandwidth_Bps": peak, "peak_at_size": at, "half_peak_size": fit.half_peak_size(sizes, bws)}
            # Hockney and LogGP describe one transfer's time; for pipelined (streaming)
            # kernels the per-op time is a gap between messages, so they are not fitted.
            if bench is not None and bench.metric == "latency" and not bench.concurrent:
                times = [r["latency_s"] for r in line]
                try:
                    h = fit.hockney(sizes, times)
                    g = fit.loggp(sizes, times)
                    d.update(hockney_latency_s=h.alpha, hockney_rinf_Bps=h.r_inf, hockney_n_half=h.n_half,
                             loggp_G_s_per_byte=g.G, loggp_L_plus_2o_s=g.L_plus_2o)
                except ValueError:
                    pass
        if bench is not None and bench.pattern == "pairs":
            sat = {}
            for size in sorted({r["size"] for r in rs}):
                at = [r for r in rs if r["size"] == size and r["active"] is not None]
                p = ranks.plateau([r["active"] for r in at], [r["aggregate_bandwidth_Bps"] for r in at])
                if p:
                    sat[size] = p
            if sat:
                d["saturation"] = sat
        if d:
            out[name] = d
    return out


def _fmt_mbps(x) -> str:
    return f"{x / 1e6:.1f}" if x else "-"


def _table_blocks(all_rows: list):
    """(title, header, body rows) per benchmark variant, with scaled units."""
    for name, rs in _groups(all_rows).items():
        legs = rs[0]["legs_per_op"] or 1
        concurrent = rs[0]["concurrent"]
        strided = any(r["stride"] != 1 for r in rs)
        conns = any(r["conns"] != 1 for r in rs)
        pattern = any(r["active"] is not None for r in rs)
        ect = any(r["vs_best_copy"] is not None for r in rs)
        multi = any(r["launches"] > 1 for r in rs)
        # Imported points hold another tool's figure and nothing else: no interval, percentiles or ranks.
        imported = all(r["stop"] == "imported" for r in rs)
        ranked = pattern and not imported
        head = (["size"] + (["stride"] if strided else []) + (["conns"] if conns else [])
                + (["active"] if pattern else [])
                + (["median", "n", "MB/s"] if imported else
                   ["median", "95% CI", "p5", "p99", "min", "max", "n", "MB/s"])
                + (["rank MB/s min..max", "Jain", "Mmsg/s"] if ranked else [])
                + (["vs best copy"] if ect else []) + (["launches", "between"] if multi else [])
                + ["stop", "warnings"])
        body = []
        for r in rs:
            per = 1 if concurrent else legs
            t = lambda k: "-" if r[k] is None else fmt_time(r[k] / per, 4)  # noqa: E731 - per-transfer time
            n = "-" if r["n"] is None else str(r["n"])
            # With n <= 5 the 95% CI of the median is [min, max]: no interval worth printing.
            ci = f"+-{r['ci_rel'] * 100:.1f}%" if r["ci_rel"] is not None and r["n"] > 5 else f"n={n}"
            row = ([fmt_bytes(r["size"])] + ([str(r["stride"])] if strided else [])
                   + ([str(r["conns"])] if conns else [])
                   + (["-" if r["active"] is None else str(r["active"])] if pattern else [])
                   + ([t("median_s"), n] if imported else
                      [t("median_s"), ci, t("p5_s"), t("p99_s"), t("min_s"), t("max_s"), n])
                   + [_fmt_mbps(r["bandwidth_Bps"])])
            if ranked:
                row += [f"{_fmt_mbps(r['rank_bandwidth_min_Bps'])}..{_fmt_mbps(r['rank_bandwidth_max_Bps'])}",
                        f"{r['fairness_jain']:.3f}" if r["fairness_jain"] is not None else "-",
                        f"{r['message_rate_per_s'] / 1e6:.3g}" if r["message_rate_per_s"] else "-"]
            if ect:
                row.append(f"{r['vs_best_copy']:.3f}" if r["vs_best_copy"] is not None else "-")
            if multi:
                row += [str(r["launches"]), f"+-{r['between_launch_rel'] * 100:.1f}%"
                        if r["between_launch_rel"] is not None else "-"]
            body.append(row + [r["stop"] or "", r["warnings"] or ""])
        if concurrent:
            note = "time per op, all transfers at once; MB/s = all ranks' payload"
        else:
            note = "time per transfer (one leg)" if legs > 1 else "time per operation"
        if pattern and not concurrent:
            note += "; MB/s = all ranks' payload over the slowest rank's time"
        if imported:
            note += "; imported: the tool's figure, no samples"
        yield f"{name}  ({note}; MB/s = 10^6 payload bytes/s)", head, body


def _derived_lines(doc: dict, rs: list) -> list[str]:
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
        for size, p in d.get("saturation", {}).items():
            state = (f"plateau from {p['active']} active pairs" if p["reached"]
                     else f"not saturated; highest at {p['active']} active pairs")
            lines.append(f"{name} at {fmt_bytes(size)}: saturation throughput {p['rate_Bps'] / 1e6:.1f} MB/s, "
                         f"{state}")
    return lines


def _first_line(text) -> str:
    return " ".join(str(text).splitlines()[0].split()) if text else ""


def _imported_lines(h: dict) -> list[str]:
    imp = h["imported"]
    lines = [f"imported from {imp.get('tool', '?').upper()} {imp.get('tool_version') or '(version not printed)'} "
             f"output {imp.get('source')} (sha256 {str(imp.get('sha256'))[:12]}), {h.get('nranks') or '?'} ranks: "
             + ", ".join(imp.get("benchmarks") or []),
             f"averaging: {imp.get('averaging')}"]
    if imp.get("ignored"):
        lines.append("not imported (no fabriclab counterpart): " + ", ".join(imp["ignored"]))
    return lines


def header_lines(doc: dict) -> list[str]:
    h, f = doc["header"], doc["footer"]
    if "imported" in h:
        return [f"fabriclab {h.get('fabriclab_version', '?')} run {h.get('run_id', '')}: status {f.get('status')}",
                *_imported_lines(h)]
    mpi = h.get("mpi", {})
    cache = (h.get("plan") or {}).get("cache") or {}
    lines = [f"fabriclab {h.get('fabriclab_version', '?')} run {h.get('run_id', '')}: status {f.get('status')}",
             f"host {h.get('host', {}).get('hostname', '?')}, {h.get('host', {}).get('cpu_model', '?')} "
             f"x{h.get('host', {}).get('cpu_count', '?')}; MPI {_first_line(mpi.get('library')) or mpi.get('header_version', '?')}; "
             f"{h.get('nranks', '?')} ranks via {h.get('launcher', {}).get('launcher', '?')}"
             + (f"; cache {cache['state']}" if cache.get("state") else "")]
    placement = h.get("placement") or {}
    if placement.get("oversubscribed"):
        lines.append("oversubscribed: " + ", ".join(f"{k} {v['ranks']} ranks on {v['cpus']} CPUs"
                                                    for k, v in placement["hosts"].items()))
    if f.get("error"):
        lines.append(f"error: {f['error']}")
    return lines


def skipped(doc: dict) -> list[dict]:
    """The points a kernel skipped, once each however many launches skipped
    them, grouped by benchmark variant and reason: {bench, reason, where}."""
    groups: dict = {}
    for r in doc["records"]:
        if r.get("kind") == "skip":
            key = (group_name(r.get("bench", "?"), r.get("variant", "")), str(r.get("reason") or "no reason given"))
            point = (r.get("size", 0), r.get("stride", 1), r.get("conns", 1), r.get("active"))
            groups.setdefault(key, {})[point] = None
    return [{"bench": bench, "reason": reason, "where": [_at(*p) for p in sorted(pts, key=_order)]}
            for (bench, reason), pts in groups.items()]


def _order(point: tuple) -> tuple:
    return tuple(-1 if x is None else x for x in point)


def _at(size, stride, conns, active) -> str:
    return (fmt_bytes(size) + (f" stride {stride}" if stride != 1 else "") + (f" conns {conns}" if conns != 1 else "")
            + (f" active {active}" if active is not None else ""))


def skip_lines(doc: dict) -> list[str]:
    """One line per skipped group: which points and why."""
    return [f"skipped: {g['bench']} at {', '.join(g['where'])} ({len(g['where'])} point"
            f"{'s' if len(g['where']) != 1 else ''}): {g['reason']}" for g in skipped(doc)]


def _json(doc: dict) -> str:
    per_rank = [{"bench": p["bench"], "variant": p.get("variant", ""), "size": p["size"], "active": p.get("active"),
                 "ranks": p["ranks"]} for p in merged(doc) if "ranks" in p]
    rs = rows(doc)
    return json.dumps({"header": doc["header"], "footer": doc["footer"], "rows": rs,
                       "derived": derived(doc, rs), "ranks": per_rank, "skipped": skipped(doc)}, indent=1) + "\n"


def _csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows(doc))
    return buf.getvalue()


def _md(doc: dict) -> str:
    rs = rows(doc)
    out = ["# fabriclab run", ""] + [f"- {ln}" for ln in header_lines(doc)] + [""]
    for title, head, body in _table_blocks(rs):
        out += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(row) + " |" for row in body] + [""]
    skips = skip_lines(doc)
    out += (["## Skipped", ""] + [f"- {ln}" for ln in skips] + [""]) if skips else []
    out += ["## Derived", ""] + [f"- {ln}" for ln in _derived_lines(doc, rs)]
    return "\n".join(out) + "\n"


def _table(doc: dict) -> str:
    rs = rows(doc)
    out = header_lines(doc) + [""]
    for title, head, body in _table_blocks(rs):
        widths = [max(len(head[i]), *(len(row[i]) for row in body)) for i in range(len(head))]
        out.append(title)
        out.append("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        out += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in body]
        out.append("")
    out += skip_lines(doc) + _derived_lines(doc, rs)
    return "\n".join(out) + "\n"


# One exporter per format behind one interface (hyperfine's export/).
EXPORTERS = {"table": _table, "json": _json, "csv": _csv, "md": _md}
assert tuple(EXPORTERS) == FORMATS, "report.FORMATS and the exporters disagree"


def format_doc(doc: dict, fmt: str) -> str:
    return EXPORTERS[fmt](doc)
