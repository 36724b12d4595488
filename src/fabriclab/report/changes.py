"""`fabriclab compare`'s output formats (table, md, csv, json) for the
changes analysis/compare.py finds: one exporter per format, every value from
the documents escaped for the format that prints it."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict

from ..analysis.compare import FIELDS, Change
from ..units import fmt_bytes, fmt_time
from . import escape


def _num(v: float) -> float | None:
    return None if v != v else v


def tail_lines(changes, md: bool = False) -> list[str]:
    """Single ops' percentiles compared (analysis/tails.py), a line each, escaped for a terminal
    (or, md, for Markdown)."""
    out, esc = [], escape.markdown if md else escape.terminal
    for c in changes:
        bench, variant, size = c.key[:3]
        ci = f" [{c.ratio_ci_low:.3f}, {c.ratio_ci_high:.3f}]" if c.ratio_ci_low == c.ratio_ci_low else ""
        out.append(esc(
            f"per-op {c.quantile}: {bench}{f' [{variant}]' if variant else ''} at {fmt_bytes(size)}: "
            f"{fmt_time(c.base_s)} -> {fmt_time(c.new_s)}, new/base {c.ratio:.3f}{ci} {c.verdict}"))
    return out


def format_changes(changes: list[Change], fmt: str, base_name: str, new_name: str) -> str:
    if fmt == "json":
        return json.dumps([{k: _num(v) if isinstance(v, float) else v for k, v in asdict(c).items()}
                           for c in changes], indent=1) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows({k: escape.terminal(v) if isinstance(v, str) else v for k, v in asdict(c).items()} for c in changes)
        return buf.getvalue()
    head = ["bench", "size", "stride", "conns", "active", "base", "new", "new/base", "interval", "launches", "verdict"]
    body = [[c.bench + (f" [{c.variant}]" if c.variant else ""), fmt_bytes(c.size), str(c.stride), str(c.conns),
             "-" if c.active is None else str(c.active),
             fmt_time(c.base_median_s, 4) if c.base_median_s == c.base_median_s else "-",
             fmt_time(c.new_median_s, 4) if c.new_median_s == c.new_median_s else "-",
             f"{c.ratio:.3f}" if c.ratio == c.ratio else "-",
             f"{c.ratio_ci_low:.3f}..{c.ratio_ci_high:.3f}" if c.ratio_ci_low == c.ratio_ci_low else "-",
             f"{c.base_launches}/{c.new_launches}", c.verdict] for c in changes]
    counts = {v: sum(c.verdict == v for c in changes) for v in ("faster", "slower", "same", "no-interval")}
    summary = (f"{new_name} against {base_name}: {counts['faster']} faster, {counts['slower']} slower, "
               f"{counts['same']} same" + (f", {counts['no-interval']} no-interval" if counts["no-interval"] else "")
               + " (point estimate per operation; a verdict needs the ratio's interval beyond 1 +- the threshold)")
    if counts["no-interval"]:
        summary += ("\nnote: imported points hold another tool's printed figure and no samples, so their ratio "
                    "has no interval and no verdict (no-interval)")
    if any(c.base_launches == 1 or c.new_launches == 1 for c in changes
           if c.ratio == c.ratio and c.verdict != "no-interval"):
        summary += ("\nnote: a run measured in one launch: its intervals ignore launch-to-launch variation, "
                    "so verdicts may call noise a change; measure with --launches 5 or more")
    if fmt == "md":
        row = lambda cells: "| " + " | ".join(escape.markdown(c) for c in cells) + " |"  # noqa: E731
        lines = [f"# {escape.markdown(ln)}" if i == 0 else escape.markdown(ln)
                 for i, ln in enumerate(summary.splitlines())]
        return "\n".join(lines + ["", row(head), "|" + "---|" * len(head)] + [row(r) for r in body]) + "\n"
    body = [[escape.terminal(c) for c in r] for r in body]
    widths = [max(len(head[i]), *(len(r[i]) for r in body)) if body else len(head[i]) for i in range(len(head))]
    lines = [escape.terminal(ln) for ln in summary.splitlines()] + ["  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in body]
    return "\n".join(lines) + "\n"


