"""`fabriclab history list|add|rebuild|compare|trend|report|check|export`: the results store
(docs/history.md). The store is --store, else $FABRICLAB_STORE, else the user's own SQLite file;
reading commands never create one."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

from ..errors import UsageError
from ..report.escape import terminal
from .letters import adder
from .options import checked_output, integer, number, write_out
from .storing import open_url

FACTOR = 1.05      # a step or a verdict counts from 5% (history check's --threshold)
ALPHA = 0.01       # the change-point test's level (docs/history.md: its false-alarm rate measured)


def _store(args, create: bool = False):
    from ..store.url import resolve
    return open_url(resolve(args.store), create=create)


def _store_file(args) -> list:
    """The SQLite store's file, which an -o must not name (a page or an exposition written over it)."""
    from ..store.url import parse, resolve
    u = parse(resolve(args.store))
    return [u.path] if u.kind == "sqlite" else []


def _cluster(store, args) -> str:
    """--cluster (one the store holds), else the store's one cluster; several: one line naming them."""
    if args.cluster:
        return _known(store, args.cluster)
    names = _clusters(store)
    if len(names) > 1:
        raise UsageError(f"the store holds {len(names)} clusters ({_named(names)}): give --cluster NAME")
    return names[0]


def _known(store, cluster):
    """`cluster` when the store holds a run of it (None passes); else one line: a misspelt name in a
    nightly job must fail, not read as a cluster with nothing to report."""
    if not cluster:                    # absent, or given empty: every cluster, as --cluster "" is elsewhere
        return None
    if not store.query("SELECT 1 FROM runs WHERE cluster = ? LIMIT 1", (cluster,)):
        raise UsageError(f"the store holds no run of cluster {cluster!r} (its clusters: {_named(_clusters(store))})")
    return cluster


def _clusters(store) -> list[str]:
    names = [c for (c,) in store.query("SELECT DISTINCT cluster FROM runs ORDER BY cluster")]
    if not names:
        raise UsageError(f"the store {store.url} holds no run yet (`fabriclab history add FILE`)")
    return names


def _named(names: list[str]) -> str:
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _when(t) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))


# ---- list -------------------------------------------------------------------------------------

def cmd_list(args) -> int:
    from ..store import queries
    with _store(args) as store:
        runs = queries.runs(store, cluster=_known(store, args.cluster), bench=args.bench, since=args.since, until=args.until,
                            kind=args.kind)
    if args.format == "json":
        print(json.dumps([r._asdict() for r in runs], indent=1, default=str))
        return 0
    print(f"{'started (UTC)':<17} {'kind':<10} {'cluster':<12} {'status':<11} {'ranks':>5}  {'MPI':<16} uid")
    for r in runs:
        mpi = " ".join(x for x in (r.mpi, r.mpi_version) if x) or "-"
        print(terminal(f"{_when(r.started_s):<17} {r.kind:<10} {str(r.cluster)[:12]:<12} {str(r.status or '-'):<11} "
                       f"{r.nranks or '-':>5}  {mpi[:16]:<16} {r.uid}"))
    print(f"{len(runs)} run{'s' if len(runs) != 1 else ''}", file=sys.stderr)
    return 0


# ---- add and rebuild --------------------------------------------------------------------------

def _documents(paths) -> list[Path]:
    """The files named, and in each folder named every document below it; a stream (.ndjson)
    beside its finished document (.json) is the same run and left out."""
    out = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in (".json", ".ndjson"))
            out += [f for f in found if not (f.suffix == ".ndjson" and f.with_suffix(".json").is_file())]
        elif p.is_file():
            out.append(p)
        else:
            raise UsageError(f"cannot read {given}: no such file or folder")
    return out


def _rows(paths, args) -> list:
    """Every document read and checked before the store is touched: a file named that fails is one
    line and nothing is added; in a folder, a file that is no document is left out and counted."""
    from ..store.ingest import rows
    named = {Path(p) for p in paths if Path(p).is_file()}
    out, skipped = [], []
    for p in _documents(paths):
        try:
            out.append(rows(str(p), cluster=args.cluster, samples=args.samples))
        except UsageError as e:
            if p in named:
                raise
            skipped.append(str(e))
    if skipped:
        print(terminal(f"fabriclab: left out {len(skipped)} file{'s' if len(skipped) > 1 else ''} of the folder "
                       f"that cannot be added (first: {skipped[0]})"),
              file=sys.stderr)
    if not out:
        raise UsageError("no documents found in " + ", ".join(map(str, paths)))
    return out


def _added(store, all_rows, say) -> tuple[int, int]:
    from ..store.add import add
    added = already = 0
    for i, r in enumerate(all_rows, 1):
        result = add(store, r)
        added += result.added
        already += not result.added
        if say and i % 100 == 0:
            say(f"{i}/{len(all_rows)} documents")
    return added, already


def cmd_add(args) -> int:
    all_rows = _rows(args.files, args)
    with _store(args, create=True) as store:
        with store.transaction():           # all or nothing: a document refused adds none of the others
            added, already = _added(store, all_rows, None if args.quiet else
                                    lambda line: print(f"fabriclab: history add: {line}", file=sys.stderr))
        print(f"fabriclab: {added} added, {already} already in the store {store.url}", file=sys.stderr)
    return 0


def cmd_rebuild(args) -> int:
    """The store emptied and filled again from the documents, in one transaction."""
    all_rows = _rows([args.folder], args)
    with _store(args, create=True) as store:
        with store.transaction():
            store.execute("DELETE FROM runs")          # every other table's rows go with their run
            added, already = _added(store, all_rows, None)
        print(f"fabriclab: the store {store.url} rebuilt from {args.folder}: {added} runs"
              + (f" ({already} duplicates left out)" if already else ""), file=sys.stderr)
    return 0


# ---- compare ----------------------------------------------------------------------------------

def cmd_compare(args) -> int:
    from ..analysis.history import ratio_verdict
    from ..store import queries, trend
    with _store(args) as store:
        if args.baseline in ("first", "previous"):
            new, base = _pair(store, args)
        else:
            base = queries.baseline_run(store, args.baseline, cluster=_known(store, args.cluster))
            new = queries.baseline_run(store, args.run, cluster=args.cluster) if args.run else _latest(store, base)
        base_points = {p.series: p for p in queries.points_of(store, base.id)}
        new_points = queries.points_of(store, new.id)
    rows = []
    for p in new_points:
        b = base_points.get(p.series)
        if b is None or (args.bench and p.bench != args.bench):
            continue
        v = ratio_verdict(b.launch_medians or [b.median], p.launch_medians or [p.median], factor=args.threshold)
        rows.append({"series": p.series, "title": trend.title(p.series), "base_median_s": b.median,
                     "new_median_s": p.median, "ratio": v.ratio, "ci_low": v.ci_low, "ci_high": v.ci_high,
                     "base_launches": len(b.launch_medians), "new_launches": len(p.launch_medians),
                     "verdict": v.verdict})
    if args.format == "json":
        print(json.dumps({"base": base.uid, "new": new.uid, "threshold": args.threshold, "points": rows}, indent=1))
        return 0
    from ..units import fmt_time
    print(terminal(f"base {base.uid} ({_when(base.started_s)}) -> new {new.uid} ({_when(new.started_s)}); "
                   f"a verdict needs the ratio's whole 95% interval beyond {args.threshold:g}"))
    print(f"{'base':>10} {'new':>10}  {'new/base [95% CI]':<24} {'verdict':<11} point")
    for r in rows:
        ci = "" if math.isnan(r["ci_low"]) else f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        print(terminal(f"{fmt_time(r['base_median_s']):>10} {fmt_time(r['new_median_s']):>10}  "
                       f"{r['ratio']:.3f}{ci:<18} {r['verdict']:<11} {r['title']}"))
    if not rows:
        print("no point in both runs", file=sys.stderr)
    return 0


def _pair(store, args) -> tuple:
    """(new, base) for --baseline first|previous: RUN (default the cluster's latest run) and the
    cluster's first run, or the run before RUN."""
    from ..store import queries
    cluster = _cluster(store, args)
    runs = queries.runs(store, cluster=cluster)
    new = queries.baseline_run(store, args.run, cluster=cluster) if args.run else runs[-1]
    before = runs[:[r.id for r in runs].index(new.id)]
    if not before:
        raise UsageError(f"run {new.uid} is the first of cluster {cluster}: there is no run before it to compare with")
    return new, before[0] if args.baseline == "first" else before[-1]


def _latest(store, base):
    from ..store import queries
    runs = queries.runs(store, cluster=base.cluster)
    later = [r for r in runs if r.id != base.id]
    if not later:
        raise UsageError(f"the store holds no other run of cluster {base.cluster} to compare with {base.uid}")
    return later[-1]


# ---- trend, check -----------------------------------------------------------------------------

def _steps(store, args, cluster: str):
    from ..store import trend
    return trend.steps(store, cluster, bench=args.bench, factor=args.threshold, alpha=ALPHA,
                       pairs=args.bench in (None, "message.shift"), last=args.last)


def _step_line(s) -> str:
    c = s.change
    cause = f"; {s.cause}" if s.cause else ""
    return (f"{s.title}: {'+' if c.ratio >= 1 else ''}{(c.ratio - 1) * 100:.1f}% "
            f"[{(c.ci_low - 1) * 100:+.1f}%, {(c.ci_high - 1) * 100:+.1f}%] from run {c.index + 1} of {s.runs} "
            f"({s.run_uid}, {_when(s.started_s)}){cause}")


def cmd_trend(args) -> int:
    with _store(args) as store:
        cluster = _cluster(store, args)
        found = _steps(store, args, cluster)
    if args.format == "json":
        print(json.dumps([{"series": s.series, "title": s.title, "index": s.change.index, "ratio": s.change.ratio,
                           "ci_low": s.change.ci_low, "ci_high": s.change.ci_high, "p_value": s.change.p_value,
                           "run": s.run_uid, "started_s": s.started_s, "runs": s.runs, "last": s.last,
                           "cause": s.cause} for s in found], indent=1))
        return 0
    for s in found:
        print(terminal(_step_line(s)))
    print(f"fabriclab: {cluster}: {len(found)} step{'s' if len(found) != 1 else ''} beyond {args.threshold:g} "
          f"(change points at p < {ALPHA:g}, docs/history.md)", file=sys.stderr)
    return 0


def _failing_findings(store, cluster: str) -> list[str]:
    """The items the latest check fails that the check before it did not."""
    from ..store import queries
    checks = queries.runs(store, cluster=cluster, kind="check")[-2:][::-1]     # the latest first
    if not checks:
        return []
    items = [{(t, i, c, h) for t, i, c, h in store.query(
        "SELECT test, item, cable, host FROM findings WHERE run_id = ?", (r.id,))} for r in checks]
    new = items[0] - (items[1] if len(items) > 1 else set())
    return [f"check {checks[0].uid}: {t}: {i}" + (f" (cable {c})" if c and c not in i else "")
            + (f" (host {h})" if h and h not in i else "") for t, i, c, h in sorted(new)]


def cmd_check(args) -> int:
    from ..store import trend
    with _store(args) as store:
        cluster = _cluster(store, args)
        bad = trend.regressions(_steps(store, args, cluster), args.threshold)
        failing = _failing_findings(store, cluster)
    for s in bad:
        print(terminal("REGRESSION " + _step_line(s)))
    for line in failing:
        print(terminal("FAILING " + line))
    if bad or failing:
        print(f"fabriclab: history check failed: {len(bad)} regression{'s' if len(bad) != 1 else ''}"
              + (f", {len(failing)} new failing check item{'s' if len(failing) != 1 else ''}" if failing else ""),
              file=sys.stderr)
        return 1
    print(f"fabriclab: history check passed: no series of {cluster} slower by more than {args.threshold:g} "
          "since a step", file=sys.stderr)
    return 0


# ---- report, export ---------------------------------------------------------------------------

def cmd_report(args) -> int:
    from ..report.history import HistoryFigure, page
    from ..store import queries
    checked_output(args.output, _store_file(args))
    with _store(args) as store:
        cluster = _cluster(store, args)
        steps = _steps(store, args, cluster)
        keys = queries.series_keys(store, bench=args.bench, cluster=cluster)
        if len(keys) > args.max_figures:
            raise UsageError(f"{len(keys):,} series; a page draws at most {args.max_figures:,}: "
                             "choose a benchmark with --bench (or raise --max-figures)")
        by_series: dict = {}
        for s in steps:
            by_series.setdefault(s.series, []).append(s)
        from ..store.trend import title
        figures = []
        for key in keys:
            pts = queries.series(store, key, cluster=cluster, launches=False)     # the page draws medians only
            mine = by_series.get(key, [])
            figures.append(HistoryFigure(title(key), pts, [s.change for s in mine], pts[0].unit if pts else "s",
                                         next((s.cause for s in reversed(mine) if s.cause), None)))
        events = [tuple(e) for e in queries.events(store, cluster)]
    out = args.output or "history.html"
    write_out(page(figures, events, f"fabriclab history: {cluster}" + (f", {args.bench}" if args.bench else ""),
                   time.time()), out)
    print(f"fabriclab: {len(figures)} series, {len(steps)} steps -> {out}", file=sys.stderr)
    return 0


def cmd_export(args) -> int:
    from ..report.openmetrics import CheckResult, Key, Latest, Regression, exposition
    from ..store import queries, trend
    checked_output(args.output, _store_file(args))
    with _store(args) as store:
        cluster = _cluster(store, args)
        latest = []
        for key in queries.series_keys(store, cluster=cluster):
            pts = queries.series(store, key, cluster=cluster, launches=False)
            if pts:
                p = pts[-1]
                latest.append(Latest(_key(key), p.median, p.ci_low, p.ci_high, p.started_s, unit=p.unit))
        verdicts = []
        for run in queries.runs(store, cluster=cluster, kind="check")[-1:]:     # the latest check
            when = run.started_s if run.started_s is not None else run.added_s
            verdicts += [CheckResult(test, verdict == "pass", when) for test, verdict in
                         store.query("SELECT test, verdict FROM checks WHERE run_id = ?", (run.id,))]
        for s in trend.regressions(trend.steps(store, cluster, factor=args.threshold, alpha=ALPHA, last=args.last),
                                   args.threshold):
            verdicts.append(Regression(s.title + (f" ({s.cause})" if s.cause else ""),
                                       _key(s.series) if not s.series.startswith(("pair|", "impact|")) else None,
                                       s.change.ratio, s.change.ci_low, s.change.ci_high, s.run_uid))
    write_out(exposition(latest, verdicts, cluster), args.output)
    return 0


def _key(series: str):
    from ..report.openmetrics import Key
    bench, variant, size, stride, conns, active, params = series.split("|", 6)
    return Key(bench, variant, int(size), int(stride), int(conns), int(active) if active else None, params)


# ---- the parser -------------------------------------------------------------------------------

def register(sub) -> None:
    p = sub.add_parser("history", help="The results store: runs kept, compared, trends and change points, "
                                       "a report, a check, an export.")
    hsub = p.add_subparsers(dest="history_command", metavar="ACTION")

    def action(name: str, helptext: str, func, cluster: bool = True):
        q = hsub.add_parser(name, help=helptext)
        add = adder(q, "history")
        add("--store", metavar="URL", help="A SQLite file or a postgresql:// URL. Default: $FABRICLAB_STORE, else "
                                           "~/.local/share/fabriclab/store.sqlite.")
        if cluster:
            add("--cluster", metavar="NAME", help="The cluster. Default: the store's only one.")
        q.set_defaults(func=func)
        return q, add

    _register_keeping(action)
    _register_reading(action)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _threshold(add, window: bool = True) -> None:
    add("--threshold", type=number(1.0001, 100.0), default=FACTOR, metavar="FACTOR",
        help=f"A change counts from this factor (slower or faster). Default: {FACTOR:g}.")
    if window:
        from ..store.trend import LAST
        add("--last", type=integer(0, 10_000_000), default=LAST, metavar="N",
            help=f"Look for steps among each series' last N runs (0: all of them; each run more costs time). "
                 f"Default: {LAST:,}.")


def _register_keeping(action) -> None:
    """list, add, rebuild."""
    q, add = action("list", "The runs kept, oldest first.", cmd_list)
    add("--bench", metavar="BENCH", help="Only runs with a point of this benchmark.")
    add("--kind", choices=("run", "check", "congestion", "tune", "import"), help="Only runs of this kind.")
    add("--since", metavar="DATE", help="Only runs started on or after DATE (YYYY-MM-DD or ISO-8601).")
    add("--until", metavar="DATE", help="Only runs started on or before DATE.")
    add("--format", choices=("table", "json"), default="table", help="Default: table.")

    for name, helptext, func in (("add", "Add documents (run, check, tune, congestion; OSU or IMB output) to the "
                                         "store; a folder adds every fabriclab document below it (.json, a stream .ndjson without its .json; "
                                         "OSU or IMB output is named file by file).", cmd_add),):
        q, add = action(name, helptext, func, cluster=False)
        q.add_argument("files", nargs="+", metavar="FILE")
        add("--cluster", metavar="NAME", help="The cluster the runs are filed under. Default: the testbed's "
                                              "name, else the first host's.")
        add("--samples", action="store_true", help="Keep every raw sample too. Default: off.")
        add("--quiet", action="store_true", help="No progress. Default: off.")
    q, add = action("rebuild", "Empty the store and add every document below FOLDER again (one transaction).",
                    cmd_rebuild, cluster=False)
    q.add_argument("folder", metavar="FOLDER")
    add("--cluster", metavar="NAME", help="The cluster the runs are filed under. Default: each run's own.")
    add("--samples", action="store_true", help="Keep every raw sample too. Default: off.")


def _register_reading(action) -> None:
    """compare, trend, check, report, export."""
    q, add = action("compare", "Each point of a run against a baseline run: ratio, interval, verdict.", cmd_compare)
    add("--baseline", required=True, metavar="RUN|DATE",
        help="A run's uid, a date (the last run on or before it), previous (the run before RUN) or first.")
    q.add_argument("run", nargs="?", metavar="RUN|DATE", help="Default: the cluster's latest run.")
    add("--bench", metavar="BENCH", help="Only this benchmark's points.")
    add("--format", choices=("table", "json"), default="table", help="Default: table.")
    _threshold(add, window=False)
    q, add = action("trend", "Change points of every series, with the cable or host the pairs name.", cmd_trend)
    add("--bench", metavar="BENCH", help="Only this benchmark's series.")
    add("--format", choices=("table", "json"), default="table", help="Default: table.")
    _threshold(add)
    q, add = action("check", "Exit 1 naming each slower step still in effect, and new failing check items.",
                    cmd_check)
    add("--bench", metavar="BENCH", help="Only this benchmark's series.")
    _threshold(add)
    q, add = action("report", "One HTML page: each series over time, its steps and the events.", cmd_report)
    add("--bench", metavar="BENCH", help="Only this benchmark's series.")
    add("--output", metavar="FILE", help="Default: history.html.")
    add("--max-figures", type=int, default=600, metavar="N", help="The most series one page draws. Default: 600.")
    _threshold(add)
    q, add = action("export", "The latest figures and verdicts for Prometheus (its textfile collector).",
                    cmd_export)
    add("--format", choices=("openmetrics",), default="openmetrics", help="Default: openmetrics.")
    add("--output", metavar="FILE", help="Default: stdout.")
    _threshold(add)
