"""`fabriclab run`: build the plan, build the core, launch, stream, summarise."""

from __future__ import annotations

import random
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__, outputs
from ..errors import UsageError
from ..measure.buffers import CACHE_STATES
from ..measure.plan import Sampling
from .letters import adder
from .options import add_mpi_options


# Launches per point: see docs/statistics.md ("How many launches") for why
# five, and what the default suite trims to afford them.
DEFAULT_LAUNCHES = 5


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"expected an integer, not {text!r}") from None


def _positive_int(text: str) -> int:
    n = _int(text)
    if n < 1:
        raise UsageError(f"--launches must be at least 1, not {n}")
    return n


def register(sub) -> None:
    p = sub.add_parser("run", help="Run benchmarks (default: the whole default suite) and write a result file.",
                       description="Run benchmarks. With no BENCH, runs every level's default sweep "
                                   "(at most 3 minutes on a 2-core machine; about 30-50 s on an idle one).")
    add = adder(p, "run")
    p.add_argument("bench", nargs="*", metavar="BENCH",
                   help="Levels (memory, deposit, message, tcp) or benchmarks (message.pingpong). "
                        "Default: all. `fabriclab list` shows them.")
    _add_points(add)
    _add_sampling(adder(p.add_argument_group("sampling"), "run"))
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
    add("--output", metavar="PATH",
        help="Result document path; the stream goes beside it as .ndjson. "
             "Default: results/fabriclab-YYYYmmdd-HHMMSS.json.")
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


def _add_sampling(add) -> None:
    d = Sampling()
    add("--launches", type=_positive_int, default=DEFAULT_LAUNCHES, metavar="K",
        help="Measure every point in K independent launches (fresh processes each), in an order "
             "shuffled per launch; intervals and verdicts then cover launch-to-launch variation "
             f"(docs/statistics.md). Default: {DEFAULT_LAUNCHES}.")
    add("--seed", type=_int, default=None, metavar="INT",
        help="Seed of the per-launch shuffle, recorded in the result. Default: drawn at random.")
    add("--warmup", type=int, default=d.warmup, metavar="N",
        help=f"Warm-up operations per point, run and discarded. Default: {d.warmup}.")
    add("--min-samples", type=int, default=d.min_samples, metavar="N",
        help=f"Fewest samples per point. Default: {d.min_samples}.")
    add("--max-samples", type=int, default=d.max_samples, metavar="N",
        help=f"Most samples per point. Default: {d.max_samples}.")
    add("--target-ci", type=float, default=d.target_ci, metavar="FRACTION",
        help="Sample until the 95%% confidence interval of the median is within this fraction "
             f"of it. Default: {d.target_ci}.")
    add("--point-time", type=float, default=d.point_time, metavar="SECONDS",
        help=f"Time cap per point; a point that hits it gets a warning. Default: {d.point_time}.")
    add("--sample-time", type=float, default=d.sample_time, metavar="SECONDS",
        help="Batch short operations so one sample lasts at least this long (keeps timer "
             f"cost under 1%%). Default: {d.sample_time}.")


def _add_behaviour(add) -> None:
    """Timeout, dry run, quiet, counters, tables."""
    add("--timeout", type=float, default=60.0, metavar="SECONDS",
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


def _output_path(opt: str | None, started: datetime) -> Path:
    if opt:
        path = Path(opt)
        return path if path.suffix == ".json" else path.with_suffix(path.suffix + ".json")
    return Path("results") / f"fabriclab-{started.strftime('%Y%m%d-%H%M%S')}.json"


def cmd_run(args) -> int:
    """Check everything, then build, launch, stream and summarise: each step a function."""
    from ..analysis import merge
    from .options import core_for
    sampling, plan = _plan(args)
    m, spec = _launch_spec(args)
    _check_resources(args, plan, spec)
    exchange = _exchange_model(args, plan)
    if args.dry_run:
        return _dry_run(args, m, spec, plan, sampling)
    out = outputs.document(_output_path(args.output, datetime.now(timezone.utc)), given=args.output)
    core = core_for(args, m)
    plan, levels = _settle_levels(args, plan, core, spec)
    started = datetime.now(timezone.utc)
    writer, host_diags = _open_stream(args, out, started, m, spec, core, plan, levels)
    t0 = time.monotonic()
    outcome = _measure(args, plan, core, spec, writer)
    _enrich(writer, host_diags)
    doc = writer.close({"status": outcome.status, "error": outcome.error,
                        "end_time": datetime.now(timezone.utc).isoformat(),
                        "duration_s": time.monotonic() - t0, "points": outcome.points},
                       derive=lambda d: {**merge.stored(d), **exchange(d)})
    _print_end(args, doc, out)
    print(f"fabriclab: {outcome.points} points in {time.monotonic() - t0:.1f} s -> {out} "
          f"(stream {out.with_suffix('.ndjson')})", file=sys.stderr)
    return _exit_code(outcome)


def _plan(args):
    """(sampling, plan) from the options; the plan's notes on stderr."""
    from ..measure import sysinfo
    from ..measure.plan import build as build_plan
    sampling = Sampling(args.warmup, args.min_samples, args.max_samples, args.target_ci,
                        args.point_time, args.sample_time)
    caches = sysinfo.cache_sizes()
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    plan = build_plan(args.bench, args.sizes, args.strides, args.param, sampling, args.validate, args.ranks,
                      conns=args.conns, active=args.active, cache=args.cache,
                      llc_bytes=max(caches.values()) if caches else None, launches=args.launches, seed=seed)
    for note in plan.notes:
        print(f"fabriclab: {note}", file=sys.stderr)
    return sampling, plan


def _launch_spec(args):
    """(MPI, launch spec) from the options, checked."""
    from .options import resolve_launch
    m, spec = resolve_launch(args)
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    return m, spec


def _check_resources(args, plan, spec) -> None:
    """Memory per host and what the levels can carry, before anything is built (measure/resources.py)."""
    from ..measure import resources
    for note in resources.check(plan, spec, force=args.force or args.dry_run):
        print(f"fabriclab: {note}", file=sys.stderr)


def _one_host(spec) -> bool:
    return spec.launcher == "mpiexec" and not spec.hosts and not spec.hostfile


def _settle_levels(args, plan, core, spec):
    """(plan, header record): the fabric jobs' providers chosen and the ucx jobs'
    transports checked from the core's probes (measure/fabrics.py)."""
    from ..measure import build, fabrics
    plan, record, notes = fabrics.settle(plan, core.path, build.levels(core.path), _one_host(spec),
                                         named=bool(args.bench), testbed=bool(getattr(args, "testbed", None)))
    for note in notes:
        print(f"fabriclab: {note}", file=sys.stderr)
    for level, rec in record.items():
        for job in rec["jobs"]:
            if "provider" in job and not args.quiet:
                print(f"fabriclab: {job['bench']}: provider {job['provider']} ({job['why']})", file=sys.stderr)
    return plan, record


def _exchange_model(args, plan):
    """What the document adds about the apps' exchange phases: their time
    predicted from the network the run crossed (testbed/exchange.py), when a
    network is known and an app exchanges; the files are read here, before
    anything is launched, so a bad one ends the run at once."""
    network = args.network
    if args.calibration and not network and not getattr(args, "testbed", None):
        raise UsageError("--calibration applies to the network of --network or --testbed")
    exchanging = any(j.bench.name in ("app.transpose", "app.sort") for j in plan.jobs)
    if not exchanging or not (network or getattr(args, "testbed", None)):
        return lambda doc: {}
    from ..model.calibrate import load_file
    from ..model.filesystem import FileSystem
    from ..testbed import exchange
    network = network or exchange.testbed_network(args.testbed)
    FileSystem(network)
    if args.calibration:
        load_file(args.calibration)
    return lambda doc: exchange.block(doc, network, args.calibration)


def _dry_run(args, m, spec, plan, sampling) -> int:
    """The exact launch commands of the first launch, nothing run. The levels
    below MPI get their provider and transports from the core's probe when the
    core is built already (the probe launches nothing); otherwise a note says
    they are chosen when the run starts."""
    from ..measure import build, protocol
    from ..measure.benchmarks import LIBRARY_LEVELS
    from ..measure.launch import command
    core_path = args.core or build.planned(m).path
    below = any(j.bench.level in LIBRARY_LEVELS for j in plan.jobs)
    if below and Path(core_path).exists():
        plan, _ = _settle_levels(args, plan, build.Core(core_path, "", "", False), spec)
    elif below:
        print("fabriclab: the core is not built yet: the fabric and ucx levels' providers and transports are "
              "chosen when the run starts", file=sys.stderr)
    for job in plan.order(0):
        argv, env = command(spec, protocol.job_argv(core_path, job, sampling, plan.validate))
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        print((prefix + " " if prefix else "") + shlex.join(argv))
    return 0


def _open_stream(args, out: Path, started: datetime, m, spec, core, plan, levels: dict):
    """(the stream writer with the run's header, the pre-run diagnostics of this host)."""
    from ..analysis import diagnostics
    from ..measure import sysinfo
    from ..measure.launch import binding
    from ..schema import StreamWriter
    from .machine import run_start
    host = sysinfo.host()
    machine = run_start(args.quiet)     # before the header: the check's window sees the machine before the run loads it
    header = {
        "run_id": out.stem, "fabriclab_version": __version__, "argv": ["fabriclab", *args.argv],
        "start_time": started.isoformat(), "host": host, "nranks": args.ranks,
        "mpi": m.to_dict(), "launcher": {**spec.to_dict(), "binding": binding(spec)},
        "core": {"path": core.path, "source_hash": core.source_hash, "cache_key": core.cache_key},
        "plan": plan.to_dict(), "network": _network(args), "machine": machine,
    }
    if levels:
        header["levels"] = levels   # the fabric and ucx levels: library, provider or transports, and why; the BLAS
    writer = StreamWriter(out.with_suffix(".ndjson"), header)
    local = _one_host(spec)
    host_diags = diagnostics.check_host(host["loadavg_1min"] or 0.0, host["cpu_count"] or 1,
                                        args.ranks) if local else []
    for d in host_diags:
        writer.add("diagnostic", d.to_dict())
    return writer, host_diags


def _network(args) -> str | None:
    """The network file the run's hosts are joined by, for readers that set the
    model beside the run (a study's prediction): --network, or the file the
    testbed was made from."""
    if args.network:
        return str(Path(args.network).resolve())
    if not getattr(args, "testbed", None):
        return None
    from ..testbed import netns
    source = netns.load(args.testbed).get("source") or ""
    return str(Path(source).resolve()) if source and Path(source).is_file() else None


def _measure(args, plan, core, spec, writer):
    """Every launch of the plan, streamed; the runner's outcome."""
    from ..measure import runner
    from .progress import Progress
    progress = Progress(plan.npoints, enabled=not args.quiet)
    try:
        return runner.run(plan, core.path, spec, writer, args.timeout, progress, _watch(args, spec))
    finally:
        progress.close()


def _print_end(args, doc: dict, out: Path) -> None:
    """Tables (--tables) and the one-screen summary, or with --quiet the findings and warnings on stderr
    (report/summary.py: all read from the document)."""
    from ..report import summary, tables as report
    if args.tables and not args.quiet:
        sys.stdout.write(report.format_doc(doc, "table") + "\n")
    if not args.quiet:
        sys.stdout.write(summary.summary(doc, {"result": str(out), "stream": str(out.with_suffix(".ndjson"))}))
    else:
        for line in report.skip_lines(doc) + summary.warning_lines(doc):
            print(f"fabriclab: {line}", file=sys.stderr)


def _exit_code(outcome) -> int:
    if outcome.status == "failed":
        print(f"fabriclab: error: {outcome.error}", file=sys.stderr)
        return 1
    if outcome.status == "interrupted":
        print(f"fabriclab: {outcome.error}; the completed points are saved", file=sys.stderr)
        return 128 + (outcome.signal or 2)   # the shell's code for death by that signal: 130, 143
    return 0


def _watch(args, spec):
    """What to watch around launches: a testbed's cables, every host's
    interface counters (--counters), or nothing."""
    if getattr(args, "testbed", None):
        from ..testbed.launch import TestbedWatch
        return TestbedWatch(args.testbed)
    if args.counters:
        from ..measure.counters import CounterWatch
        return CounterWatch(spec)
    return None


def _enrich(writer, early: list) -> list:
    """Copy what the core reported (MPI library string, rank hosts, CPUs) into
    the document header, with the ranks placed on each host. More ranks than
    CPUs on a host is warned about once (unless the pre-run check did)."""
    from ..analysis import diagnostics
    hellos = [r["hello"] for r in writer.records if r["kind"] == "launch" and "hello" in r]
    if not hellos:
        return []
    h = hellos[0]
    writer.header["mpi"] = {**writer.header["mpi"], "library": h.get("mpi_library"),
                            "mpi_version": h.get("mpi_version")}
    writer.header["hosts"] = h.get("hosts")
    writer.header["core"]["version"] = h.get("core_version")
    writer.header["timer"] = h.get("timer")
    placement = {}
    for host, cpus in zip(h.get("hosts") or [], h.get("cpus") or []):
        p = placement.setdefault(host, {"ranks": 0, "cpus": cpus})
        p["ranks"] += 1
    over = {k: v for k, v in placement.items() if v["ranks"] > v["cpus"]}
    stacked = diagnostics.stacked_ranks(h.get("hosts") or [], h.get("affinity") or [])
    writer.header["placement"] = {"hosts": placement, "oversubscribed": bool(over), "stacked": bool(stacked)}
    for d in stacked:
        writer.add("diagnostic", d.to_dict())
    if not over or any(d.code == diagnostics.OVERSUBSCRIBED for d in early):
        return stacked
    host, p = next(iter(over.items()))
    found = diagnostics.check_host(0.0, p["cpus"], p["ranks"])[:1]
    found = [d.__class__(d.code, f"{d.message} on host {host}", d.advice) for d in found]
    for d in found:
        writer.add("diagnostic", d.to_dict())
    return stacked + found
