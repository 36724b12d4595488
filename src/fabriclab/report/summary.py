"""The one-screen summary `fabriclab run` ends with: a row per benchmark
variant with a status a user can act on, the run's findings once, each
point-level warning kind once naming its points, and where the results are.
The full per-point tables stay with `fabriclab show` (and `run --tables`)."""

from __future__ import annotations

import textwrap

from ..analysis import merge
from ..suite.benchmarks import REGISTRY
from ..units import fmt_bytes, fmt_rate, fmt_time
from . import escape
from .tables import derived, group_name, header_lines, rows, skip_lines
from .work import app_of


def benchmark_rows(doc) -> list[list[str]]:
    """Per benchmark variant: latency at its smallest size, peak bandwidth and
    where (an app: its best work rate, at which size on how many ranks),
    half-peak size, points converged / total, status (status())."""
    rs = rows(doc)
    der = derived(doc, rs)
    by: dict[str, list] = {}
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
        out.append([name, f"{fmt_time(smallest.latency_s)} @{fmt_bytes(smallest.size)}",
                    _best_rate(group[0].bench, d) if "best_rate_per_s" in d else
                    f"{fmt_rate(peak.bandwidth_Bps)} @{fmt_bytes(peak.size)}" if peak else "-",
                    fmt_bytes(d["half_peak_size"]) if d.get("half_peak_size") else "-",
                    "imported" if imported else f"{converged}/{len(group)}", status(group)])
    return out


def status(group: list) -> str:
    """What a user can act on for one benchmark variant: the points to look
    at and why (their point-level warnings), else "converged" (every launch
    of every point reached the target) or "interval" (some stopped at the
    cap), with the median relative half-width of its points' intervals."""
    flagged = [r for r in group if r.warnings]
    if flagged:
        named = [f"{r.point.diagnostics[0]['code'].replace('-', ' ')} at {_where(r)}" for r in flagged]
        return "; ".join(named[:2]) + (f"; +{len(named) - 2} more" if len(named) > 2 else "")
    widths = sorted(r.ci_rel for r in group if r.ci_rel is not None)
    if not widths:
        return "imported" if all(r.imported for r in group) else "-"
    mid = widths[len(widths) // 2]
    state = "converged" if all(r.stop == "converged" for r in group) else "interval"
    return f"{state} +-{mid:.1%}"


def _where(r) -> str:
    return (fmt_bytes(r.size) + (f" stride {r.stride}" if r.stride != 1 else "")
            + (f" conns {r.conns}" if r.conns != 1 else "") + (f" active {r.active}" if r.active is not None else ""))


def _best_rate(bench: str, d: dict) -> str:
    """An app's best work rate (its registry facts) instead of a transfer's peak bandwidth."""
    rate = app_of(bench).rate
    return f"{rate.text(d['best_rate_per_s'])} {rate.label} @{fmt_bytes(d['best_at_size'])} n={d['best_at_active']}"


def budget_line(b, always: bool = False) -> str | None:
    """What the run's time budget did (the footer's `budget`, measure/pace.py), when it lowered
    a cap or was not met (`always`: also when it did nothing); None without one, or a malformed one."""
    keys = ("budget_s", "point_time_s", "launches", "launches_lowered", "lowest_point_time_s", "launches_s")
    if not isinstance(b, dict) or not all(isinstance(b.get(k), (int, float)) and not isinstance(b.get(k), bool)
                                          for k in keys):
        return None
    took, over = f"the launches took {b['launches_s']:.1f} s", b.get("met") is False
    if b["launches_lowered"]:
        return (f"to keep the {b['budget_s']:g} s time budget, {b['launches_lowered']:g} of {b['launches']:g} "
                f"launches capped points at {b['lowest_point_time_s']:.3g}-{b['point_time_s']:.3g} s instead of "
                f"--point-time {b['point_time_s']:g} s; {took}" + (", over the budget" if over else "")
                + " (--budget 0: no budget)")
    if over:
        return f"{took}, over the {b['budget_s']:g} s time budget (--budget 0: no budget)"
    return f"{took} of the {b['budget_s']:g} s time budget; no cap lowered" if always else None


def warning_groups(doc) -> list[dict]:
    """The run's warnings, each once: its findings (analysis/findings.py),
    then its run-level diagnostic records by kind (with the benchmarks they
    hit), then each point-level kind with the points it names. Each group:
    level (finding, run or point), code, count, where, message (the first), advice."""
    out = [{"level": "finding", "code": d["code"], "count": 1, "where": "", "message": d["message"],
            "advice": d["advice"]} for d in merge.run_findings(doc)["run"]]
    out += _grouped([d.to_dict() for d in doc.diagnostics], "run", lambda d: d.get("bench"))
    points = [(d, p) for p in merge.merged(doc) for d in p.diagnostics]   # a point's axes as its row's
    out += _grouped(points, "point", lambda dr: f"{group_name(dr[1].bench, dr[1].variant)} at {_where(dr[1])}")
    return out


def _grouped(items: list, level: str, where) -> list[dict]:
    groups: dict = {}
    for it in items:
        d = it[0] if isinstance(it, tuple) else it
        groups.setdefault(d["code"], []).append(it)
    out = []
    for code, its in groups.items():
        first = its[0][0] if isinstance(its[0], tuple) else its[0]
        names = list(dict.fromkeys(w for w in map(where, its) if w))
        out.append({"level": level, "code": code, "count": len(its), "message": first["message"],
                    "advice": first.get("advice", ""),
                    "where": ", ".join(names[:4]) + (f" (+{len(names) - 4} more)" if len(names) > 4 else "")})
    return out


def warning_lines(doc) -> list[str]:
    """Each finding and warning kind on one line (warning_groups)."""
    out = []
    for g in warning_groups(doc):
        if g["level"] == "finding":
            out.append(f"finding: {g['code']}: {g['message']}. {g['advice']}")
        else:
            out.append(f"warning: {g['code']} ({g['count']}x{' in ' + g['where'] if g['where'] else ''}): "
                       f"{g['message']}. {g['advice']}")
    return out



# The summary fits a terminal this wide: the table's rows are compacted (a
# long name on a line of its own, the status wrapped under its column) and
# prose lines wrap with an indent.
WIDTH = 100
STATUS = 18      # "converged +-12.3%" whole


def summary(doc, paths: dict, width: int = WIDTH) -> str:
    """The text printed at the end of a run, every line at most `width` columns."""
    head = ["benchmark", "latency", "peak bandwidth", "half-peak", "conv.", "status"]
    prose = [escape.terminal(ln) for ln in header_lines(doc)] + [""]
    lines = [w for ln in prose for w in _wrap(ln, width)] + _fit(head, benchmark_rows(doc), width) + [""]
    lines += [w for ln in skip_lines(doc) + warning_lines(doc) for w in _wrap(escape.terminal(ln), width)]
    lines += [f"result {paths['result']}", f"  stream {paths['stream']}",
              f"figures: fabriclab report {paths['result']}", f"tables:  fabriclab show {paths['result']}",
              f"compare: fabriclab compare BASE.json {paths['result']}"]
    return "\n".join(lines) + "\n"


def _wrap(line: str, width: int) -> list[str]:
    """A prose line in lines of at most width columns, the rest indented (paths and names stay whole)."""
    if len(line) <= width:
        return [line]
    return textwrap.wrap(line, width, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)


def _fit(head: list[str], body: list[list[str]], width: int) -> list[str]:
    """The table in `width` columns: the first column as wide as the figures
    leave it (a longer name takes a line of its own, the figures follow on the
    next), the last column (the status) wrapped under itself."""
    body = [[escape.terminal(c) for c in r] for r in body]
    cols = range(1, len(head) - 1)
    widths = {i: max([len(head[i])] + [len(r[i]) for r in body]) for i in cols}
    figures = sum(widths.values()) + 2 * (len(head) - 1)
    name_w = min(max([len(head[0])] + [len(r[0]) for r in body]), max(12, width - figures - STATUS))
    status_w = max(STATUS, width - name_w - figures)

    def row(r: list[str]) -> list[str]:
        mid = "  ".join(r[i].rjust(widths[i]) for i in cols)
        status = textwrap.wrap(r[-1], status_w, break_long_words=False) or [""]
        lead = [r[0]] if len(r[0]) > name_w else []
        first = ("" if lead else r[0]).ljust(name_w)
        pad = " " * (name_w + 2 + len(mid) + 2)
        return lead + [f"{first}  {mid}  {status[0]}".rstrip()] + [pad + s for s in status[1:]]
    return [out for r in [head] + body for out in row(r)]
