"""`fabriclab compare BASE NEW`: what changed between two runs, point by point.

For every point measured in both runs (benchmark, variant and every axis):
the ratio NEW/BASE of the point estimates (the median of launch medians;
above 1: NEW is slower) with a two-level bootstrap interval that resamples
launches and then samples within them (analysis/launches.py). A verdict is
called only when the whole interval lies beyond 1 +- threshold, so
launch-to-launch noise and trivial shifts both read as "same". Runs of a
single launch still compare, but their intervals then ignore launch-to-launch
variation, and the output says so.

An imported point (another tool's printed figure, no samples) has no
distribution to resample: where either side is imported the ratio of the two
point figures is given, with no interval and the verdict `no-interval`
(never faster or slower)."""

from __future__ import annotations

import csv
import io
import json
import statistics
from dataclasses import asdict, dataclass

from ..errors import UsageError
from ..schema import imported
from ..units import fmt_bytes, fmt_time
from . import launches
from .merge import groups

FIELDS = ("bench", "variant", "size", "stride", "conns", "active", "base_median_s", "new_median_s", "ratio",
          "ratio_ci_low", "ratio_ci_high", "base_launches", "new_launches", "verdict")
NAN = float("nan")


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
    ratio: float          # new / base point estimate of the time per operation
    ratio_ci_low: float
    ratio_ci_high: float
    base_launches: int
    new_launches: int
    verdict: str          # faster | slower | same | no-interval | only-in-base | only-in-new


def _estimate(ps: list[dict]) -> float:
    """The point estimate: the median of the launch medians (launches.hierarchical_ci's)."""
    return statistics.median(p["summary"]["median"] for p in ps)


def compare(base: dict, new: dict, alpha: float = 0.05, threshold: float = 0.02) -> list[Change]:
    """Changes point by point; the intervals' confidence is 1 - alpha."""
    if not 0 < alpha < 1 or not 0 <= threshold < 1:
        raise UsageError("--alpha must be in (0, 1) and --threshold in [0, 1)")
    a, b = groups(base), groups(new)
    out = []
    for key in sorted(a.keys() | b.keys(), key=lambda k: tuple((x is None, x) for x in k)):
        pa, pb = a.get(key, []), b.get(key, [])
        xs, ys = [p["samples"] for p in pa], [p["samples"] for p in pb]
        if not xs or not ys:
            med = _estimate(pa or pb)
            out.append(Change(*key, med if xs else NAN, med if ys else NAN, NAN, NAN, NAN, len(xs), len(ys),
                              "only-in-base" if xs else "only-in-new"))
            continue
        if any(imported(p) for p in pa + pb):
            mx, my = _estimate(pa), _estimate(pb)
            out.append(Change(*key, mx, my, my / mx if mx > 0 else NAN, NAN, NAN, len(xs), len(ys),
                              "no-interval"))
            continue
        ratio, lo, hi = launches.ratio_ci(xs, ys, confidence=1 - alpha)
        mx = launches.hierarchical_ci(xs, resamples=200)[0]
        out.append(Change(*key, mx, mx * ratio, ratio, lo, hi, len(xs), len(ys),
                          launches.verdict(lo, hi, threshold)))
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
        lines = [f"# {summary}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body]) + "\n"
    widths = [max(len(head[i]), *(len(r[i]) for r in body)) if body else len(head[i]) for i in range(len(head))]
    lines = [summary, "  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in body]
    return "\n".join(lines) + "\n"
