"""The message-rate view (docs/message-rate.md): the benchmarks that declare
view "message-rate" (osu_mbw_mr's and IMB's Uniband and Biband rules, run or
imported), their message rate against size, one line per run, benchmark and
window, and where a run measured several windows (osu_mbw_mr's -V profile)
against the window, one line per size. The rate is the point's own
(schema/records.py: messages per op over the op's time), as OSU prints
Messages/s and IMB Msg/sec."""

from __future__ import annotations

import re

from ..suite.benchmarks import REGISTRY, in_view
from ..units import fmt_bytes
from .curves import MAX_SERIES, SIZE, measured, pick
from .figure import Axis, Figure, Series
from .tables import group_name

RATE = Axis("message rate (messages/s)")
WINDOW = Axis("window (messages in flight per pair)", log=True, kind="pow2")
NOTE = ("messages every sending rank sends per op over the op's time: osu_mbw_mr's rule over the senders' mean "
        "time, IMB's Uniband and Biband over the slowest rank's (docs/message-rate.md)")


def window_of(bench: str, variant: str) -> tuple[int, str]:
    """(the window a point ran with, its variant without it): window=W in the variant, else the default."""
    parts = [p for p in variant.split(",") if p]
    rest = ",".join(p for p in parts if not p.startswith("window="))
    given = next((p.split("=", 1)[1] for p in parts if p.startswith("window=")), None)
    w = given if given and re.fullmatch(r"\d+", given) else REGISTRY[bench].defaults.get("window", "1")
    return int(w), rest


def message_rate(runs: list) -> list:
    figs = []
    for bench in measured(runs, in_view("message-rate")):
        figs += [f for f in (_vs_size(runs, bench), _vs_window(runs, bench)) if not f.empty()]
    return figs


def _rows(run, bench: str) -> list:
    return [r for r in run.rows if r.bench == bench and r.message_rate_per_s]


def _vs_size(runs: list, bench: str) -> Figure:
    fig = Figure(f"rate-{bench.split('.', 1)[1]}", f"{bench}: message rate vs size", SIZE, RATE, note=NOTE)
    for run in runs:
        lines: dict = {}
        for r in _rows(run, bench):
            lines.setdefault(r.variant, []).append(r)
        for variant, rs in sorted(lines.items(), key=lambda kv: window_of(bench, kv[0])):
            rs = sorted(rs, key=lambda r: r.size)
            label = (f"{run.name} " if len(runs) > 1 else "") + group_name(bench, variant)
            fig.series.append(Series(label, [r.size for r in rs], [r.message_rate_per_s for r in rs],
                                     hollow=[not r.converged for r in rs]))
    fig.series = fig.series[:MAX_SERIES]
    return fig


def _vs_window(runs: list, bench: str) -> Figure:
    """Message rate against the window where a run measured at least two, a line per size
    (at most MAX_SERIES sizes, spread over the sweep) and other settings."""
    fig = Figure(f"rate-window-{bench.split('.', 1)[1]}", f"{bench}: message rate vs window", WINDOW, RATE,
                 note=NOTE + "; osu_mbw_mr -V sweeps windows 1 .. 128")
    for run in runs:
        rows = _rows(run, bench)
        by: dict = {}
        for r in rows:
            w, rest = window_of(bench, r.variant)
            by.setdefault((rest, r.size), {})[w] = r
        if len({w for line in by.values() for w in line}) < 2:
            continue
        sizes = pick([s for _, s in by], MAX_SERIES)
        for (rest, size), line in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            if size not in sizes or len(line) < 2:
                continue
            ws = sorted(line)
            label = ((f"{run.name} " if len(runs) > 1 else "") + fmt_bytes(size) + (f" [{rest}]" if rest else ""))
            fig.series.append(Series(label, ws, [line[w].message_rate_per_s for w in ws],
                                     hollow=[not line[w].converged for w in ws]))
    fig.series = fig.series[:MAX_SERIES]
    return fig
