"""`fabriclab run`: its options parsed into a run request (measure/session.py), the result printed."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import replace

from ..suite.buffers import CACHE_STATES
from ..measure.pace import FLOOR_S
from ..measure.plan import BUDGET_S, RANGES, Sampling
from ..measure.session import (DEFAULT_BUDGET_PER_POINT_S, DEFAULT_LAUNCHES, DEFAULT_TIMEOUT_S, LAUNCHES, SEED,
                               TIMEOUT_S, Request)
from . import storing
from .letters import adder
from .options import add_mpi_options, integer, launch_options, not_stdout, number, site


def register(sub) -> None:
    p = sub.add_parser("run", help="Run benchmarks (default: the whole default suite) and write a result file.",
                       description="Run benchmarks. With no BENCH, runs every level's default sweep "
                                   "(2-3 minutes on a 2-core machine; its time budget, --budget, holds a slow one to "
                                   "about 154 s of launches).")
    add = adder(p, "run")
    p.add_argument("bench", nargs="*", metavar="BENCH",
                   help="Levels (memory, deposit, message, tcp), benchmarks (message.pingpong) or the named "
                        "set hpcc (HPC Challenge's network figures, docs/hpcc.md). Default: all. "
                        "`fabriclab list` shows them.")
    _add_points(add)
    add_sampling(adder(p.add_argument_group("sampling"), "run"))
    add_mpi_options(p, "run")
    _add_behaviour(add)
    p.set_defaults(func=cmd_run)


def _add_points(add) -> None:
    """Which points: sizes, strides, parameters, connections, active senders, cache state."""
    add("--sizes", metavar="SPEC",
        help="Sizes in bytes: a list and/or sweeps such as 0:4M:x2 or 1K:64K:+1K (K, M, G, T or KiB..TiB = "
             "1024^n; docs/usage.md, Numbers). "
             "Default: each benchmark's own sweep (0:4M:x2 for transfers).")
    add("--strides", metavar="SPEC",
        help="Strides in 8-byte words for strided benchmarks, same syntax. Default: 1:64:x2.")
    add("--param", action="append", default=[], metavar="KEY=VALUE",
        help="A benchmark parameter such as window=64 (or 1K), sync=fence or iface=eth0; checked against the "
             "benchmark's rules before anything is built; repeatable. "
             "Default: each benchmark's defaults, shown by `fabriclab list`.")
    add("--output", metavar="PATH", type=not_stdout("a run's document and its stream"),
        help="Result document path; the stream goes beside it as .ndjson. "
             "Default: results/fabriclab-YYYYmmdd-HHMMSS.json (-2, -3 ... added when another run took it).")
    add("--validate", action="store_true",
        help="Fill send buffers with a pattern and check every received byte. Default: off.")
    add("--conns", metavar="SPEC",
        help="Connection counts for benchmarks with a conns axis (tcp.conns, message.conns), same "
             "syntax as sizes. Default: 1:128:x2.")
    add("--active", metavar="SPEC",
        help="Active senders (hotspot), pairs (saturation) or the ranks an app runs on: a list or MIN:MAX "
             "(every count) or MIN:MAX:xF. "
             "Default: every count from 1 to the most the ranks allow (apps: 1, 2, 4 .. and all ranks).")
    add("--cache", choices=CACHE_STATES, default="warm", metavar="STATE",
        help="warm: buffers reused op after op, cache-resident as far as their size allows (as OSU "
             "and IMB); cold: ops rotate through buffers of more than twice the last-level cache. "
             "Default: warm.")


def add_sampling(add, launches: int = DEFAULT_LAUNCHES, sample_time: float | None = None) -> None:
    """The sampling options, with a command's own defaults of launches and sample time."""
    d = Sampling() if sample_time is None else Sampling(sample_time=sample_time)
    add("--launches", type=integer(*LAUNCHES), default=launches, metavar="K",
        help="Measure every point in K independent launches (fresh processes each), in an order "
             "shuffled per launch; intervals and verdicts then cover launch-to-launch variation "
             f"(docs/statistics.md). Default: {launches}.")
    add("--seed", type=integer(*SEED), default=None, metavar="INT",
        help="Seed of the per-launch shuffle, recorded in the result. Default: drawn at random.")
    add("--warmup", type=integer(*RANGES["warmup"]), default=d.warmup, metavar="N",
        help=f"Warm-up operations per point, run and discarded. Default: {d.warmup}.")
    add("--min-samples", type=integer(*RANGES["min_samples"]), default=d.min_samples, metavar="N",
        help=f"Fewest samples per point. Default: {d.min_samples}.")
    add("--max-samples", type=integer(*RANGES["max_samples"]), default=d.max_samples, metavar="N",
        help=f"Most samples per point. Default: {d.max_samples}.")
    add("--target-ci", type=number(*RANGES["target_ci"]), default=d.target_ci, metavar="FRACTION",
        help="Sample until the 95%% confidence interval of the median is within this fraction "
             f"of it. Default: {d.target_ci}.")
    add("--point-time", type=number(*RANGES["point_time"]), default=d.point_time, metavar="SECONDS",
        help=f"Time cap per point; a point that hits it gets a warning. Default: {d.point_time}.")
    add("--per-op", type=number(*RANGES["per_op"]), default=d.per_op, metavar="SECONDS",
        help="After each point's samples, time single operations one by one for this long and keep a "
             "histogram of them (1%% buckets), so the percentiles are of single ops "
             "(docs/statistics.md, \"Per-operation timing\"). Default: 0, off.")
    add("--sample-time", type=number(*RANGES["sample_time"]), default=d.sample_time, metavar="SECONDS",
        help="Batch short operations so one sample lasts at least this long (keeps timer "
             f"cost under 1%%). Default: {d.sample_time}.")


def _add_behaviour(add) -> None:
    """Timeout, dry run, quiet, counters, tables."""
    add("--budget", type=number(0, BUDGET_S[1]), default=None, metavar="SECONDS",
        help="Time budget for all launches: when they fall behind it, later launches sample the points "
             f"that would run to --point-time for less (not below {FLOOR_S:g} s); no point is left out "
             "(docs/statistics.md, \"Time budget\"). 0: none. "
             f"Default: {DEFAULT_BUDGET_PER_POINT_S:g} s a point for the default suite at the default "
             "--point-time (about 154 s on two ranks at five launches), none for named benchmarks.")
    add("--timeout", type=number(*TIMEOUT_S), default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
        help="End the run when a launch prints nothing for this long plus twice --point-time "
             "(a hung or dead rank). Default: 60.")
    add("--dry-run", action="store_true",
        help="Print the exact launch commands and exit without running. Default: off.")
    add("--quiet", action="store_true",
        help="No progress bar and no summary; warnings go to stderr. Default: off.")
    add("--counters", action="store_true",
        help="Read every host's network interface and InfiniBand port counters before and after each "
             "launch (through the launcher, one task per host) and warn when far fewer bytes left the "
             "hosts than the payload moved. Default: off (always on with --testbed).")
    add("--tables", action="store_true",
        help="Also print every point's table at the end, as `fabriclab show` does. Default: off.")
    add("--network", metavar="FILE",
        help="The network file the hosts are joined by (the model's, docs/model.md): the apps' exchange "
             "phases are predicted from it and stored beside the measured ones. Default: a testbed's own "
             "file with --testbed, else none.")
    add("--calibration", metavar="FILE",
        help="Rates measured by `fabriclab calibrate`, for the exchange prediction of --network. "
             "Default: the file's nominal rates.")
    add("--force", action="store_true",
        help="Run even when a point needs more memory than a host has available (the estimate is "
             "checked before anything is built or launched). Default: off.")
    storing.add_options(add)


def sampling(args) -> Sampling:
    """The sampling options (add_sampling's) as the run entry point takes them."""
    return Sampling(args.warmup, args.min_samples, args.max_samples, args.target_ci, args.point_time,
                    args.sample_time, args.per_op)


def request(args, **over) -> Request:
    """The run request of parsed `fabriclab run` options (over: fields a caller sets itself)."""
    return replace(Request(benches=tuple(args.bench), sizes=args.sizes, strides=args.strides,
                           params=tuple(args.param), conns=args.conns, active=args.active, cache=args.cache,
                           validate=args.validate, sampling=sampling(args), launches=args.launches, seed=args.seed,
                           launch=launch_options(args), site=site(args), output=args.output, timeout=args.timeout,
                           counters=args.counters, network=args.network, calibration=args.calibration,
                           force=args.force, argv=tuple(getattr(args, "argv", ())), **budget(args)), **over)


def budget(args) -> dict:
    """The request's time budget: --budget in seconds (0: none) or, not given, the default
    suite's per point, set for its default cap (named benchmarks, or a --point-time of the
    user's own: none)."""
    if args.budget is None:
        default = not args.bench and args.point_time == Sampling().point_time
        return {"budget_per_point": DEFAULT_BUDGET_PER_POINT_S} if default else {}
    return {"budget": args.budget or None}


def cmd_run(args) -> int:
    return execute(args)[0]


def check(args, force: bool = False) -> None:
    """The run's plan, MPI, launcher, network file and the memory of every point checked,
    nothing built or launched (a study checks all its steps so before the first one runs);
    UsageError if bad. With `force` a plan that does not fit in memory passes (a dry run)."""
    from ..measure.session import Session
    Session(request(args)).check(force=force)


def start(req, quiet: bool, dry_run: bool):
    """A request run in this process (measure/session.py), its warnings on stderr and, unless
    quiet, its progress; with dry_run its launch commands printed instead (None)."""
    from ..measure.session import Session
    from .progress import Progress
    def say(line: str) -> None:
        print(f"fabriclab: {line}", file=sys.stderr)
    session = Session(req, say=say, inform=(lambda line: None) if quiet else say,
                      progress=None if quiet else (lambda total: Progress(total)))
    if dry_run:
        for line in session.commands():
            print(line)
        return None
    return session.run()


def execute(args) -> tuple:
    """(exit code, the run's Result or None for a dry run): the options as a
    request, run in this process, what it gave printed."""
    req = request(args)
    store = None if args.dry_run else storing.opened(args)     # a bad store: one line, nothing launched
    result = start(req, args.quiet, args.dry_run)
    if result is None:
        return 0, None
    if result.refused:     # bad input that only MPI could tell: one line, as any bad input (the document kept)
        print(f"fabriclab: error: {result.error}", file=sys.stderr)
        return result.exit_code, result
    _print_end(args, result)
    end = f"fabriclab: {result.points} points in {result.seconds:.1f} s -> {result.path}"
    stream = f"(stream {result.stream})"      # on a line of its own where both would pass 100 columns
    print(end + (" " + stream if len(end) + len(stream) < 100 else "\n  " + stream), file=sys.stderr)
    from ..report.summary import budget_line
    line = budget_line(result.document.footer.extra.get("budget"))
    if line:
        print(textwrap.fill(f"fabriclab: {line}", 100, subsequent_indent="  "), file=sys.stderr)
    if result.error:
        print(f"fabriclab: {'error: ' if result.status == 'failed' else ''}{result.error}"
              + ("; the completed points are saved" if result.status == "interrupted" else ""), file=sys.stderr)
    storing.keep(store, [result.path], args)
    return result.exit_code, result


def _print_end(args, result) -> None:
    """Tables (--tables) and the one-screen summary, or with --quiet the findings and warnings on stderr
    (report/summary.py: all read from the document)."""
    from ..report import hpcc_view, summary, tables as report
    doc = result.document
    if args.tables and not args.quiet:
        sys.stdout.write(report.format_doc(doc, "table") + "\n")
    if not args.quiet:
        sys.stdout.write(summary.summary(doc, {"result": str(result.path), "stream": str(result.stream)}))
        sys.stdout.write("".join(ln + "\n" for ln in hpcc_view.lines(doc)))   # `fabriclab run hpcc`
    else:
        for line in report.skip_lines(doc) + summary.warning_lines(doc):
            print(f"fabriclab: {line}", file=sys.stderr)
