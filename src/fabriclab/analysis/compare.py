"""`fabriclab compare BASE NEW`: what changed between two runs, point by point.

For every (benchmark, size, stride) measured in both runs: the ratio of the
medians NEW/BASE (above 1: NEW is slower) with a bootstrap confidence
interval, and a Mann-Whitney U test on the raw samples. A change is called
only when it is significant (p < alpha) and larger than the threshold, so
noise and trivial shifts both read as "same"."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass

from . import stats
from ..errors import UsageError
from ..schema import point_key, points
from ..units import fmt_bytes, fmt_time

FIELDS = ("bench", "variant", "size", "stride", "conns", "active", "base_median_s", "new_median_s", "ratio", "ratio_ci_low",
          "ratio_ci_high", "p_value", "verdict")


@dataclass(frozen=True)
class Change:
    bench: str
    variant: str
    size: int
    stride: int
    conns: int
    active: int | None
    base_median_s: float
    new_median_s: float
    ratio: float          # new / base median time per operation
    ratio_ci_low: float
    ratio_ci_high: float
    p_value: float
    verdict: str          # faster | slower | same | only-in-base | only-in-new


def compare(base: dict, new: dict, alpha: float = 0.05, threshold: float = 0.02,
            confidence: float = 0.95) -> list[Change]:
    if not 0 < alpha < 1 or not 0 <= threshold < 1:
        raise UsageError("--alpha must be in (0, 1) and --threshold in [0, 1)")
    a = {point_key(p): p for p in points(base)}
    b = {point_key(p): p for p in points(new)}
    out = []
    for key in sorted(a.keys() | b.keys(), key=lambda k: tuple((x is None, x) for x in k)):
        if key not in b or key not in a:
            only = a.get(key) or b.get(key)
            med = only["summary"]["median"]
            out.append(Change(*key, med if key in a else float("nan"), med if key in b else float("nan"),
                              float("nan"), float("nan"), float("nan"), float("nan"),
                              "only-in-base" if key in a else "only-in-new"))
            continue
        x, y = a[key]["samples"], b[key]["samples"]
        mx, my = stats.summarize(x).median, stats.summarize(y).median
        ratio = my / mx if mx > 0 else float("nan")
        lo, hi = stats.median_ratio_ci(x, y, confidence)
        _, p = stats.mann_whitney(x, y)
        verdict = "same"
        if p < alpha and abs(ratio - 1.0) > threshold:
            verdict = "slower" if ratio > 1 else "faster"
        out.append(Change(*key, mx, my, ratio, lo, hi, p, verdict))
    return out


def _num(v: float) -> float | None:
    return None if v != v else v


def format_changes(changes: list[Change], fmt: str, base_name: str, new_name: str) -> str:
    if fmt == "json":
        return json.dumps([{k: _num(v) if isinstance(v, float) else v for k, v in asdict(c).items()}
                           for c in changes], indent=1) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(asdict(c) for c in changes)
        return buf.getvalue()
    head = ["bench", "size", "stride", "conns", "active", "base", "new", "new/base", "95% CI", "p", "verdict"]
    body = [[c.bench + (f" [{c.variant}]" if c.variant else ""), fmt_bytes(c.size), str(c.stride), str(c.conns),
             "-" if c.active is None else str(c.active),
             fmt_time(c.base_median_s, 4) if c.base_median_s == c.base_median_s else "-",
             fmt_time(c.new_median_s, 4) if c.new_median_s == c.new_median_s else "-",
             f"{c.ratio:.3f}" if c.ratio == c.ratio else "-",
             f"{c.ratio_ci_low:.3f}..{c.ratio_ci_high:.3f}" if c.ratio_ci_low == c.ratio_ci_low else "-",
             f"{c.p_value:.2g}" if c.p_value == c.p_value else "-", c.verdict] for c in changes]
    counts = {v: sum(c.verdict == v for c in changes) for v in ("faster", "slower", "same")}
    summary = (f"{new_name} against {base_name}: {counts['faster']} faster, {counts['slower']} slower, "
               f"{counts['same']} same (median time per operation; a verdict needs p < alpha and a "
               f"change beyond the threshold)")
    if fmt == "md":
        lines = [f"# {summary}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body]) + "\n"
    widths = [max(len(head[i]), *(len(r[i]) for r in body)) if body else len(head[i]) for i in range(len(head))]
    lines = [summary, "  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in body]
    return "\n".join(lines) + "\n"
