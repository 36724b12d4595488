"""The applications' figures, as the seed studies drew them.

- `speedup`: speedup vs the ranks a problem runs on, one curve per size and
  variant, with the ideal line speedup = N (seed 003 Fig. 12, the matrix
  multiply; the bucket sort alike). Speedup is the work rate on N ranks over
  the rate on 1 (report/work.py): t(1)/t(N) for a fixed problem, the scaled
  speedup when each rank's share is fixed (`scale=weak`).
- `sort-rate`: keys per second and MB/s vs ranks, one curve per element
  size E (seed 003 Fig. 13).
- `transpose`: bytes of the array transposed per second vs its side M, one
  curve per mode (packed, datatype, deposit), at the most ranks (seed 000).
- `phases`: each point's time split into its phases (pack / exchange /
  unpack, gather / multiply, bucket / exchange / sort) as stacked bars.
- Per benchmark (figures.BUILDERS): time per op and work rate vs size per
  rank count; for the multiply, GFLOP/s vs ranks and the share of its time
  spent gathering B (communicating).

The HTML report's tables of the apps (`summary_table`, `exchange_table`)
are here too; the model's prediction of the exchange phase is the one the
run stored (its document's exchange_model block, verdicts/exchange_prediction.py)."""

from __future__ import annotations

from ..suite.benchmarks import REGISTRY, in_view
from ..units import fmt_bytes, fmt_time
from .curves import MAX_SERIES, STATS_NOTE, measured, pick, series_of, variant_name
from .figure import Axis, Figure, Series, slug
from .tables import group_name
from ..suite.apps import scale_of
from .work import app_of, phase_split

IDEAL = 6      # the palette's black: the ideal line, as the fits are drawn


def size_text(bench: str, size: int, scale: str = "strong") -> str:
    """A point's problem in words (its registry facts): with weak scaling SIZE
    is each rank's share (suite/apps.py)."""
    app = app_of(bench)
    text = app and (app.weak_text if scale == "weak" else None) or (app.size_text if app else "{}")
    return text.format(fmt_bytes(size))


def _size_of(r) -> str:
    return size_text(r.bench, r.size, scale_of(r.point))


def _size_axis(bench: str) -> Axis:
    b = REGISTRY[bench]
    unit = "count" if b.size_unit == b.size_label else b.size_unit      # "keys (count)", not "keys (keys)"
    return Axis(f"{b.size_label} ({unit})", log=True, kind="size")


def _ranks_axis(actives) -> Axis:
    """Ranks on a linear axis, on a log2 one when they span more than x16."""
    wide = bool(actives) and max(actives) >= 16 * min(actives)
    return Axis("ranks the problem runs on, N (count)", log=wide, kind="pow2" if wide else "count")


def _rows(run, bench: str, variant: str | None = None) -> list:
    return [r for r in run.rows if r.bench == bench and r.active is not None
            and (variant is None or r.variant == variant)]


def _variants(runs: list, bench: str) -> list[str]:
    """The variants measured, ordered by their parameters: numbers by value
    (E = 4, 8, 64), choices as the registry lists them (packed, datatype, deposit)."""
    first = {}
    for run in runs:
        for r in _rows(run, bench):
            first.setdefault(r.variant, r.point.params)
    return sorted(first, key=lambda v: _param_order(bench, first[v]))


def _param_order(bench: str, params: dict) -> tuple:
    out = []
    for key, rule in REGISTRY[bench].params.items():
        v = str(params.get(key, rule.core_default))
        out.append((0, int(v), "") if v.isdigit() else
                   (1, rule.choices.index(v) if v in rule.choices else len(rule.choices), v))
    return tuple(out)


def _variant_text(bench: str, variant: str, siblings: list, drop: tuple = ()) -> str:
    """A variant's parameters for a legend, without the benchmark's name or the keys in `drop`."""
    inner = variant_name(bench, variant, siblings)[len(bench):].strip(" []")
    return ",".join(kv for kv in inner.split(",") if kv and kv.split("=", 1)[0] not in drop)


def _prefix(runs: list, i: int) -> str:
    return f"{runs[i].name} " if len(runs) > 1 else ""


def _capped(fig: Figure, series: list) -> Figure:
    fig.series += series[:MAX_SERIES]
    if len(series) > MAX_SERIES:
        fig.note += f" (first {MAX_SERIES} of {len(series)} curves shown)"
    return fig


# ---- speedup (seed 003 Fig. 12) ---------------------------------------------------------------

SPEEDUP_NOTE = {
    "strong": "speedup: work per second on N ranks over that on 1 rank for the same problem, t(1) / t(N) "
              "(strong scaling); dashed: ideal, speedup = N (seed 003 Fig. 12)",
    "weak": "scaled speedup: work per second on N ranks over that on 1 rank, each rank's share of the problem "
            "fixed (weak scaling, Gustafson 1988: the multiply's side grows as n cbrt(N), the sort's keys as "
            "SIZE x N); dashed: ideal, speedup = N",
}


def speedup(runs: list) -> list[Figure]:
    figs = []
    for bench in measured(runs, in_view("speedup")):
        for scale in ("strong", "weak"):
            fig = _speedup(runs, bench, scale)
            if fig is not None:
                figs.append(fig)
    return figs


def _speedup(runs: list, bench: str, scale: str) -> Figure | None:
    """One curve per run, variant and size (sizes picked evenly when there are
    more than fit), and the ideal line; the curves without a 1-rank point are
    named in the note instead."""
    curves, missing, actives = [], [], set()
    variants = _variants(runs, bench)
    per = max(1, MAX_SERIES // max(1, len(variants) * len(runs)))
    for i, run in enumerate(runs):
        for v in variants:
            mine = [r for r in _rows(run, bench, v) if scale_of(r.point) == scale]
            for size in pick([r.size for r in mine], per):
                line = sorted((r for r in mine if r.size == size), key=lambda r: r.active)
                actives |= {r.active for r in line}
                label = " ".join(x for x in (_prefix(runs, i) + _variant_text(bench, v, variants, ("scale",)),
                                             size_text(bench, size, scale)) if x)
                if all(r.speedup is None for r in line):
                    missing.append(label)
                    continue
                curves.append(Series(label, [r.active for r in line], [r.speedup for r in line],
                                     hollow=[not r.converged for r in line]))
    if not actives:
        return None
    xs = sorted(actives)
    x = _ranks_axis(xs)
    what = "speedup" if scale == "strong" else "scaled speedup"
    fig = Figure(f"speedup-{slug(bench)}-{scale}", f"{bench}: {what} vs ranks ({scale} scaling)", x,
                 Axis(f"{what} (rate on N ranks / rate on 1)", log=x.log), note=SPEEDUP_NOTE[scale])
    _capped(fig, curves)
    fig.series.append(Series("ideal (speedup = N)", xs, [float(a) for a in xs], dashed=True, markers=False,
                             color=IDEAL))
    if missing:
        fig.note += "; no 1-rank point, so no speedup, for " + ", ".join(missing)
    return fig


# ---- the bucket sort's rate (seed 003 Fig. 13) ------------------------------------------------

def _elem_label(bench: str, variant: str, siblings: list, r) -> str:
    rest = _variant_text(bench, variant, siblings, ("elem",))
    return f"E = {r.point.params.get('elem', '?')} B" + (f" {rest}" if rest else "")


def _largest(rs: list) -> list:
    """The rows at the largest size measured on at least two rank counts (else the largest)."""
    sizes = [s for s in {r.size for r in rs} if len({r.active for r in rs if r.size == s}) > 1]
    top = max(sizes or [r.size for r in rs], default=None)
    return [r for r in rs if r.size == top]


def sort_rate(runs: list) -> list[Figure]:
    figs = []
    for bench in measured(runs, in_view("sort-rate")):
        variants = _variants(runs, bench)
        keys = Figure(f"sort-rate-keys-{slug(bench)}", f"{bench}: keys sorted per second vs ranks, per element size",
                      _ranks_axis([]), Axis(app_of(bench).rate.axis), note=STATS_NOTE)
        mbps = Figure(f"sort-rate-bytes-{slug(bench)}", f"{bench}: MB/s sorted vs ranks, per element size",
                      _ranks_axis([]), Axis("sort rate (MB/s, 10^6 bytes of keys and payload/s)"),
                      note=STATS_NOTE)
        ks, bs = [], []
        for i, run in enumerate(runs):
            for v in variants:
                line = _largest(_rows(run, bench, v))
                if not line:
                    continue
                label = f"{_prefix(runs, i)}{_elem_label(bench, v, variants, line[0])}, " \
                        f"{_size_of(line[0])}"
                ks.append(series_of(label, line, "rate", "active", intervals=len(runs) == 1))
                bs.append(series_of(label, line, "bandwidth", "active", intervals=len(runs) == 1))
        actives = [a for s in ks for a in s.x]
        for fig, series in ((keys, ks), (mbps, bs)):
            fig.x = _ranks_axis(actives)
            _capped(fig, series)
            fig.note = ("seed 003 Fig. 13: the rate of a parallel in-core bucket sort vs nodes and element size; "
                        "keys of E bytes, the first 4 or 8 the key, the rest payload; each curve at its largest "
                        "size; " + fig.note)
        figs += [f for f in (keys, mbps) if not f.empty()]
    return figs


# ---- the transpose by mode (seed 000) ----------------------------------------------------------

def _mode_label(bench: str, variant: str, siblings: list, r) -> str:
    mode = r.point.params.get("mode") or r.point.info.get("mode") or "?"
    how = r.point.info.get("deposit")
    rest = _variant_text(bench, variant, siblings, ("mode", "deposit"))
    return mode + (f" ({how})" if mode == "deposit" and how else "") + (f" {rest}" if rest else "")


TRANSPOSE_NOTE = ("seed 000: the distributed transpose, an all-to-all personalized exchange of strided blocks; "
                  "packed: pack each destination's block, MPI_Alltoall, unpack; datatype: derived datatypes, the "
                  "library moves the strided blocks; deposit: one-sided, MPI_Put of vector types (put) or stores "
                  "through a shared-memory window (stores); the array's 8 M^2 bytes per op over its time")


def transpose(runs: list) -> list[Figure]:
    figs = []
    for bench in measured(runs, in_view("transpose")):
        variants = _variants(runs, bench)
        by_size, by_ranks = [], []
        at_n, at_m = set(), set()
        for i, run in enumerate(runs):
            rs = _rows(run, bench)
            top = max(r.active for r in rs) if rs else None
            for v in variants:
                mine = [r for r in rs if r.variant == v]
                if not mine:
                    continue
                label = _prefix(runs, i) + _mode_label(bench, v, variants, mine[0])
                by_size.append(series_of(label, [r for r in mine if r.active == top], "rate", "size",
                                         intervals=len(runs) == 1))
                line = _largest(mine)
                by_ranks.append(series_of(label, line, "rate", "active", intervals=len(runs) == 1))
                at_n.add(top)
                at_m.add(line[0].size)
        n = ", ".join(str(a) for a in sorted(at_n))
        m = ", ".join(fmt_bytes(s) for s in sorted(at_m))
        f1 = _capped(Figure(f"transpose-{slug(bench)}", f"{bench}: array transposed per second vs M, per mode "
                            f"(N = {n})", _size_axis(bench), Axis(app_of(bench).rate.axis), note=TRANSPOSE_NOTE), by_size)
        f2 = _capped(Figure(f"transpose-ranks-{slug(bench)}", f"{bench}: array transposed per second vs ranks "
                            f"(M = {m})", _ranks_axis([a for s in by_ranks for a in s.x]), Axis(app_of(bench).rate.axis),
                            note=TRANSPOSE_NOTE), by_ranks)
        figs += [f for f in (f1, f2) if not f.empty()]
    return figs


# ---- the time split -----------------------------------------------------------------------------

PHASES_NOTE = ("each bar one point: the median time per op of each phase (the mean active rank's) as a share of "
               "the op's median time (the slowest rank's); other: the rest, imbalance among the ranks and work "
               "outside the phases")


def phases(runs: list) -> list[Figure]:
    """A stacked bar per rank count, one figure per run and variant, at the variant's largest size."""
    figs = []
    for bench in measured(runs, in_view("phases")):
        variants = _variants(runs, bench)
        for i, run in enumerate(runs):
            for v in variants:
                line = sorted(_largest(_rows(run, bench, v)), key=lambda r: r.active)
                splits = [{x.name: x.share * 100 for x in phase_split(r.phases_s, r.median_s)} for r in line]
                parts = list(dict.fromkeys(k for s in splits for k in s))
                if not parts:
                    continue
                name = group_name(bench, v)
                fig = Figure(f"phases-{slug(name)}" + (f"-{i}" if len(runs) > 1 else ""),
                             f"{_prefix(runs, i)}{name}: time split at {_size_of(line[0])}",
                             Axis("ranks the problem runs on, N", log=False),
                             Axis("share of the time per op (%)", log=False),
                             bars=[(f"N={r.active}", [s.get(k) for k in parts]) for r, s in zip(line, splits)],
                             parts=parts, note=PHASES_NOTE)
                figs.append(fig)
    return figs


# ---- each app's own figures (figures.BUILDERS) ---------------------------------------------------

def _by_active(runs: list, bench: str, variant: str, metric: str) -> list:
    out = []
    for i, run in enumerate(runs):
        rs = _rows(run, bench, variant)
        for a in sorted({r.active for r in rs}):
            out.append(series_of(f"{_prefix(runs, i)}N = {a}", [r for r in rs if r.active == a], metric, "size",
                                 intervals=len(runs) == 1))
    return out


def _by_size(runs: list, bench: str, variant: str, value) -> list:
    """Curves along the ranks, one per size: `value` a metric's name, or a row -> y function."""
    out = []
    for i, run in enumerate(runs):
        rs = _rows(run, bench, variant)
        for size in sorted({r.size for r in rs}):
            line = sorted((r for r in rs if r.size == size), key=lambda r: r.active)
            label = _prefix(runs, i) + _size_of(line[0])
            out.append(series_of(label, line, value, "active", intervals=len(runs) == 1) if isinstance(value, str)
                       else Series(label, [r.active for r in line], [value(r) for r in line]))
    return out


def _share(phase: str):
    """An app's communication: its `phase` over the op's time, in %."""
    def share(r):
        t = (r.phases_s or {}).get(phase)
        return None if t is None or not r.median_s else t / r.median_s * 100
    return share


def app_figures(runs: list, bench: str) -> list[Figure]:
    """Time per op and work rate vs size, one curve per rank count; an app
    whose facts name its communication phase adds its rate and that phase's
    share vs ranks."""
    figs, app = [], app_of(bench)
    variants = _variants(runs, bench)
    for v in variants:
        name = group_name(bench, v)
        base = slug(name)
        rate = Axis(app.rate.axis)
        figs.append(_capped(Figure(f"{base}-time", f"{name}: time per op vs size", _size_axis(bench),
                                   Axis("time per op (\u00b5s)"), note=STATS_NOTE),
                            _by_active(runs, bench, v, "latency")))
        figs.append(_capped(Figure(f"{base}-rate", f"{name}: {app.rate.label} vs size", _size_axis(bench),
                                   rate, note=STATS_NOTE), _by_active(runs, bench, v, "rate")))
        if app.communication:
            by = _by_size(runs, bench, v, "rate")
            ranks = _ranks_axis([a for s in by for a in s.x])
            figs.append(_capped(Figure(f"{base}-rate-vs-ranks", f"{name}: {app.rate.label} vs ranks", ranks, rate,
                                       note=STATS_NOTE), by))
            figs.append(_capped(Figure(f"{base}-communication", f"{name}: share of time communicating vs ranks",
                                       ranks, Axis(f"{app.communication} phase / time per op (%)", log=False),
                                       note=f"{app.communication_text}, the mean rank's median, over the "
                                            "op's median time (the slowest rank's)"),
                                _by_size(runs, bench, v, _share(app.communication))))
    return [f for f in figs if not f.empty()]


# ---- the HTML report's tables ----------------------------------------------------------------------

def summary_table(run) -> tuple[list, list]:
    """(head, body): each app variant at its largest size, every rank count:
    time per op, work rate, speedup and the time split."""
    body = []
    for bench in (b for b in REGISTRY if app_of(b)):
        variants, rate = _variants([run], bench), app_of(bench).rate
        for v in variants:
            for r in sorted(_largest(_rows(run, bench, v)), key=lambda r: r.active):
                split = " \u00b7 ".join(f"{x.name} {x.share:.0%}" for x in phase_split(r.phases_s, r.median_s))
                body.append([variant_name(bench, v, variants), _size_of(r), r.active, fmt_time(r.median_s),
                             f"{rate.text(r.work_per_s)} {rate.label}",
                             f"{r.speedup:.2f}" if r.speedup is not None else "-", split or "-"])
    return ["benchmark", "problem", "ranks", "time per op", "rate", "speedup", "time split"], body


def exchange_table(run) -> tuple[list, list]:
    """(head, body): the exchange phase measured against the model's
    prediction for the network the run crossed (the document's exchange_model
    block), or no rows where the run has none."""
    body = [[group_name(p["bench"], p.get("variant", "")), size_text(p["bench"], p["size"]), p["active"],
             fmt_time(p["measured_s"]), fmt_time(p["predicted_s"]), f"{p['ratio']:.3f}", p.get("verdict", "-"),
             p.get("bottleneck") or "-", p.get("network") or "-"]
            for p in run.doc.exchange_predictions]
    return ["benchmark", "problem", "ranks", "exchange measured", "predicted", "measured / predicted",
            "verdict (15%)", "bottleneck", "network"], body

