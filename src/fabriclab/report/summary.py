"""The one-screen summary `fabriclab run` ends with: a row per benchmark
variant, each warning kind once with its count and advice, and where the
results are. The full per-point tables stay with `fabriclab show` (and
`run --tables`)."""

from __future__ import annotations

from ..measure.benchmarks import REGISTRY
from ..units import fmt_bytes, fmt_rate, fmt_time
from . import escape
from .tables import derived, group_name, header_lines, rows, skip_lines
from .work import RATES

# Warnings that describe a noisy machine rather than a point: counted, never
# listed point by point.
MACHINE_NOISE = ("outliers", "unstable-point", "time-cap", "too-few-samples", "steal-time",
                 "unstable-across-launches", "timer-overhead", "timer-resolution")


def benchmark_rows(doc: dict) -> list[list[str]]:
    """Per benchmark variant: latency at its smallest size, peak bandwidth and
    where (an app: its best work rate, at which size on how many ranks),
    half-peak size, points converged / total, warnings."""
    rs = rows(doc)
    der = derived(doc, rs)
    by: dict[str, list[dict]] = {}
    for r in rs:
        by.setdefault(group_name(r.bench, r.variant), []).append(r)
    out = []
    order = {b: i for i, b in enumerate(REGISTRY)}     # levels in order, whatever order the launches ran
    for name, group in sorted(by.items(), key=lambda kv: (order.get(kv[1][0].bench, len(order)), kv[0])):
        smallest = min(group, key=lambda r: (r.size, r.stride, r.conns, -(r.active or 0)))
        d = der.get(name, {})
        peak = max((r for r in group if r.bandwidth_Bps), key=lambda r: r.bandwidth_Bps, default=None)
        converged = sum(r.stop == "converged" for r in group)
        imported = all(r.stop == "imported" for r in group)
        warned = sum(bool(r.warnings) for r in group)
        out.append([name, f"{fmt_time(smallest.latency_s)} at {fmt_bytes(smallest.size)}",
                    _best_rate(group[0].bench, d) if "best_rate_per_s" in d else
                    f"{fmt_rate(peak.bandwidth_Bps)} at {fmt_bytes(peak.size)}" if peak else "-",
                    fmt_bytes(d["half_peak_size"]) if d.get("half_peak_size") else "-",
                    "imported" if imported else f"{converged}/{len(group)}",
                    f"{warned} with warnings" if warned else "ok"])
    return out


def _best_rate(bench: str, d: dict) -> str:
    """An app's best work rate (work.RATES) instead of a transfer's peak bandwidth."""
    rate = RATES[bench]
    return (f"{rate.text(d['best_rate_per_s'])} {rate.label} at {fmt_bytes(d['best_at_size'])} "
            f"on {d['best_at_active']} ranks")


def warning_groups(diags: list) -> list[dict]:
    """Each warning kind once: its count, first message and advice; where a
    warning is about one point and not the machine, the benchmarks it hit."""
    groups: dict[str, list] = {}
    for d in diags:
        groups.setdefault(d.code, []).append(d)
    out = []
    for code, ds in groups.items():
        benches = sorted({d.bench for d in ds if d.bench})
        where = "" if code in MACHINE_NOISE or not benches else ", ".join(benches[:4]) + (
            f" (+{len(benches) - 4} more)" if len(benches) > 4 else "")
        out.append({"code": code, "count": len(ds), "where": where, "message": ds[0].message,
                    "advice": ds[0].advice})
    return out


def warning_lines(diags: list) -> list[str]:
    """Each warning kind on one line (warning_groups)."""
    return [f"warning: {g['code']} ({g['count']}x{' in ' + g['where'] if g['where'] else ''}): "
            f"{g['message']}. {g['advice']}" for g in warning_groups(diags)]


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    body = [[escape.terminal(c) for c in r] for r in body]
    widths = [max(len(head[i]), *(len(r[i]) for r in body)) if body else len(head[i]) for i in range(len(head))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return [fmt(head)] + [fmt(r) for r in body]


def summary(doc: dict, diags: list, paths: dict) -> str:
    """The text printed at the end of a run."""
    head = ["benchmark", "latency (smallest)", "peak bandwidth", "half-peak", "converged", "status"]
    lines = [escape.terminal(ln) for ln in header_lines(doc)] + [""] + _table(head, benchmark_rows(doc)) + [""]
    lines += [escape.terminal(ln) for ln in skip_lines(doc)] + warning_lines(diags)
    lines += [f"result {paths['result']}  (stream {paths['stream']})",
              f"figures: fabriclab report {paths['result']}   tables: fabriclab show {paths['result']}   "
              f"compare: fabriclab compare BASE.json {paths['result']}"]
    return "\n".join(lines) + "\n"
