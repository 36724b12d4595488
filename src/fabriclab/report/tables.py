"""Rows, derived figures and exporters (table, md, csv, json) for a run document.

Every format is built from the same row type (`ROW_FIELDS`), so CSV and JSON
cannot drift apart. Units are SI in rows; the table and md formats scale them
for reading and say the unit in the column title."""

from __future__ import annotations

import csv
import io
import json

from ..analysis import fit
from ..measure.benchmarks import REGISTRY
from ..schema import points
from ..units import fmt_bytes, fmt_time

ROW_FIELDS = ("bench", "size", "stride", "n", "median_s", "ci_low_s", "ci_high_s", "ci_rel",
              "p5_s", "p25_s", "p75_s", "p95_s", "p99_s", "min_s", "max_s", "mean_s", "stdev_s",
              "latency_s", "bandwidth_Bps", "bytes_per_op", "legs_per_op", "batch", "stop",
              "validation_errors", "warnings")


def rows(doc: dict) -> list[dict]:
    out = []
    for r in points(doc):
        s = r["summary"]
        val = r.get("validation")
        out.append({
            "bench": r["bench"], "size": r["size"], "stride": r["stride"], "n": s["n"],
            "median_s": s["median"], "ci_low_s": s["ci_low"], "ci_high_s": s["ci_high"],
            "ci_rel": s["ci_rel"], "p5_s": s["p5"], "p25_s": s["p25"], "p75_s": s["p75"],
            "p95_s": s["p95"], "p99_s": s["p99"], "min_s": s["min"], "max_s": s["max"],
            "mean_s": s["mean"], "stdev_s": s["stdev"], "latency_s": r["latency_s"],
            "bandwidth_Bps": r["bandwidth_Bps"], "bytes_per_op": r["bytes_per_op"],
            "legs_per_op": r["legs_per_op"], "batch": r.get("batch"), "stop": r.get("stop"),
            "validation_errors": None if val is None else val.get("errors"),
            "warnings": " ".join(d["code"] for d in r.get("diagnostics", [])),
        })
    return out


def derived(doc: dict) -> dict:
    """Per benchmark: peak bandwidth, half-peak size and a Hockney fit over its size sweep."""
    by: dict[str, list[dict]] = {}
    for r in rows(doc):
        if r["stride"] == 1:
            by.setdefault(r["bench"], []).append(r)
    out = {}
    for bench, rs in by.items():
        rs = [r for r in rs if r["size"] > 0 and r["bandwidth_Bps"]]
        if len(rs) < 2:
            continue
        sizes = [r["size"] for r in rs]
        bws = [r["bandwidth_Bps"] for r in rs]
        peak, at = fit.peak_bandwidth(sizes, bws)
        d = {"peak_bandwidth_Bps": peak, "peak_at_size": at,
             "half_peak_size": fit.half_peak_size(sizes, bws)}
        # Hockney and LogGP describe one transfer's time; for pipelined (streaming)
        # kernels the per-op time is a gap between messages, so they are not fitted.
        if REGISTRY.get(bench) is not None and REGISTRY[bench].metric == "latency":
            times = [r["latency_s"] for r in rs]
            try:
                h = fit.hockney(sizes, times)
                g = fit.loggp(sizes, times)
                d.update(hockney_latency_s=h.alpha, hockney_rinf_Bps=h.r_inf, hockney_n_half=h.n_half,
                         loggp_G_s_per_byte=g.G, loggp_L_plus_2o_s=g.L_plus_2o)
            except ValueError:
                pass
        out[bench] = d
    return out


def _table_blocks(doc: dict):
    """(title, header, body rows) per benchmark, with scaled units."""
    by: dict[str, list[dict]] = {}
    for r in rows(doc):
        by.setdefault(r["bench"], []).append(r)
    for bench, rs in by.items():
        legs = rs[0]["legs_per_op"] or 1
        strided = any(r["stride"] != 1 for r in rs)
        head = ["size"] + (["stride"] if strided else []) + [
            "median", "95% CI", "p5", "p99", "min", "max", "n", "MB/s", "stop", "warnings"]
        body = []
        for r in rs:
            t = lambda k: fmt_time(r[k] / legs, 4)  # noqa: E731 - per-leg time with its unit
            # With n <= 5 the 95% CI of the median is [min, max]: no interval worth printing.
            ci = f"+-{r['ci_rel'] * 100:.1f}%" if r["n"] > 5 and r["ci_rel"] is not None else f"n={r['n']}"
            body.append([fmt_bytes(r["size"])] + ([str(r["stride"])] if strided else []) + [
                t("median_s"), ci, t("p5_s"), t("p99_s"), t("min_s"), t("max_s"),
                str(r["n"]), f"{r['bandwidth_Bps'] / 1e6:.1f}" if r["bandwidth_Bps"] else "-",
                r["stop"] or "", r["warnings"] or ""])
        note = "time per transfer (one leg)" if legs > 1 else "time per operation"
        yield f"{bench}  ({note}; MB/s = 10^6 payload bytes/s)", head, body


def _derived_lines(doc: dict) -> list[str]:
    lines = []
    for bench, d in derived(doc).items():
        hp = d["half_peak_size"]
        text = (f"{bench}: peak {d['peak_bandwidth_Bps'] / 1e6:.1f} MB/s at {fmt_bytes(d['peak_at_size'])}, "
                f"half-peak size {fmt_bytes(hp) if hp else 'not reached'}")
        if "hockney_latency_s" in d:
            text += (f"; Hockney fit: latency {d['hockney_latency_s'] * 1e6:.2f} us, "
                     f"r_inf {d['hockney_rinf_Bps'] / 1e6:.1f} MB/s, n_1/2 {fmt_bytes(d['hockney_n_half'])}; "
                     f"LogGP: G {d['loggp_G_s_per_byte'] * 1e12:.1f} ps/B, L+2o {d['loggp_L_plus_2o_s'] * 1e6:.2f} us")
        lines.append(text)
    return lines


def warning_lines(diags: list) -> list[str]:
    """Diagnostics grouped by code: where each occurred, then its advice once."""
    groups: dict[str, list] = {}
    for d in diags:
        groups.setdefault(d.code, []).append(d)
    lines = []
    for code, ds in groups.items():
        where: dict[str, list[str]] = {}
        for d in ds:
            if d.bench:
                label = fmt_bytes(d.size) + (f"/s{d.stride}" if d.stride and d.stride > 1 else "")
                where.setdefault(d.bench, []).append(label)
        places = "; ".join(f"{b} {', '.join(v[:6])}" + (f" (+{len(v) - 6} more)" if len(v) > 6 else "")
                           for b, v in where.items())
        lines.append(f"warning: {code} ({len(ds)}x){': ' + places if places else ''}")
        lines.append(f"  e.g. {ds[0].message}. {ds[0].advice}")
    return lines


def _first_line(text) -> str:
    return " ".join(str(text).splitlines()[0].split()) if text else ""


def header_lines(doc: dict) -> list[str]:
    h, f = doc["header"], doc["footer"]
    mpi = h.get("mpi", {})
    lines = [f"fabriclab {h.get('fabriclab_version', '?')} run {h.get('run_id', '')}: status {f.get('status')}",
             f"host {h.get('host', {}).get('hostname', '?')}, {h.get('host', {}).get('cpu_model', '?')} "
             f"x{h.get('host', {}).get('cpu_count', '?')}; MPI {_first_line(mpi.get('library')) or mpi.get('header_version', '?')}; "
             f"{h.get('nranks', '?')} ranks via {h.get('launcher', {}).get('launcher', '?')}"]
    if f.get("error"):
        lines.append(f"error: {f['error']}")
    return lines


def format_doc(doc: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"header": doc["header"], "footer": doc["footer"], "rows": rows(doc),
                           "derived": derived(doc)}, indent=1) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows(doc))
        return buf.getvalue()
    out = []
    if fmt == "md":
        out += ["# fabriclab run", ""] + [f"- {ln}" for ln in header_lines(doc)] + [""]
        for title, head, body in _table_blocks(doc):
            out += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(row) + " |" for row in body] + [""]
        out += ["## Derived", ""] + [f"- {ln}" for ln in _derived_lines(doc)]
        return "\n".join(out) + "\n"
    out += header_lines(doc) + [""]
    for title, head, body in _table_blocks(doc):
        widths = [max(len(head[i]), *(len(row[i]) for row in body)) for i in range(len(head))]
        out.append(title)
        out.append("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        out += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in body]
        out.append("")
    out += _derived_lines(doc)
    return "\n".join(out) + "\n"


FORMATS = ("table", "json", "csv", "md")
