"""`fabriclab congestion`: its options parsed into one run of the victim
benchmarks (suite/congestion.py), the impact factors printed."""

from __future__ import annotations

import sys

from ..errors import UsageError
from ..measure.session import SEED, TIMEOUT_S, Request
from ..schema.fields import MAX_RANKS
from . import storing
from .letters import adder
from .options import add_mpi_options, integer, launch_options, not_stdout, number, site
from .run import add_sampling, sampling, start

DEFAULT_DRAWS = 3
MAX_DRAWS = 100
DEFAULT_LAUNCHES = 3
DEFAULT_SAMPLE_TIME = 0.05     # s: a sample spans many of the aggressors' messages, not their start alone


def register(sub) -> None:
    from ..suite.congestion import AGGRESSORS, MIN_RANKS
    p = sub.add_parser("congestion", help="Measure how much other traffic slows a victim test: GPCNeT's "
                                          "congestion impact factor, with intervals and the model's prediction.",
                       description="Split the ranks into victims (a seeded fifth by default) and aggressors; time "
                                   "each victim test with the aggressors idle and loading the network, alternating "
                                   "over launches and over random rings drawn anew; print congested / isolated "
                                   "time per op for the median and the 99th percentile with 95% intervals, and, "
                                   "on a known network, the model's bandwidth impact and the cables the victims "
                                   "share (docs/acceptance.md).")
    add = adder(p, "congestion")
    add("--victim", default="latency,bandwidth,allreduce", metavar="TESTS",
        help="Victim tests, comma-separated: latency (8 B random ring), bandwidth (128 KiB random ring), "
             "allreduce (8 B), or any registered benchmark by its full name (message.pingpong, "
             "coll.allreduce), which the victims run among themselves with its default parameters at --sizes "
             "(default 8). Default: latency,bandwidth,allreduce.")
    add("--aggressor", default="alltoall", metavar="KINDS",
        help=f"Aggressor traffic, comma-separated: {', '.join(AGGRESSORS)}. Default: alltoall.")
    add("--victims", type=integer(0, MAX_RANKS), default=0, metavar="V",
        help="Victim ranks; 0: a fifth of the ranks, at least 2. Default: 0.")
    add("--draws", type=integer(1, MAX_DRAWS), default=DEFAULT_DRAWS, metavar="D",
        help=f"Random rings drawn (seeds 1..D), each run in every launch. Default: {DEFAULT_DRAWS}.")
    add("--split", type=integer(0, SEED[1]), default=1, metavar="SEED",
        help="The seed of the choice of victims. Default: 1.")
    add("--sizes", metavar="SPEC", help="Victim message sizes. Default: each test's own (8, 128K, 8).")
    add("--param", action="append", default=[], metavar="KEY=VALUE",
        help="Another parameter (aggressor_size=64K, aggressor_window=4, window=4). Default: none.")
    add("--output", metavar="FILE", type=not_stdout("the run's document"),
        help="The run's document. Default: results/fabriclab-TIMESTAMP.json.")
    add("--timeout", type=number(*TIMEOUT_S), default=60.0, metavar="SECONDS",
        help="End a run when a launch prints nothing for this long plus twice --point-time. Default: 60.")
    p.add_argument("--network", metavar="FILE",
                   help="The network file the hosts are joined by, for the model's prediction. Default: a "
                        "testbed's own file with --testbed, else none.")
    add("--validate", action="store_true",
        help="Check every byte the victims receive against its sender's pattern. Default: off.")
    add("--dry-run", action="store_true", help="Print the exact launch commands and exit. Default: off.")
    add("--quiet", action="store_true", help="Only the result. Default: off.")
    storing.add_options(add)
    add_sampling(adder(p.add_argument_group("sampling"), "congestion"), DEFAULT_LAUNCHES, DEFAULT_SAMPLE_TIME)
    add_mpi_options(p, "congestion", MIN_RANKS)
    p.set_defaults(func=cmd_congestion)


def request(args) -> Request:
    """The run: every victim test named, one variant per aggressor and ring draw."""
    from ..suite.congestion import AGGRESSORS, victim_test
    tests = [victim_test(t.strip()) for t in args.victim.split(",")]
    kinds = [a.strip() for a in args.aggressor.split(",")]
    bad = [a for a in kinds if a not in AGGRESSORS]
    if bad:
        raise UsageError(f"unknown aggressor {bad[0]!r}: aggressors are {', '.join(AGGRESSORS)}")
    given = {p.partition("=")[0] for p in args.param}
    if given & {"aggressor", "victims", "seed", "split", "victim"}:
        raise UsageError("give the victim test, aggressor, victims, draws and split by their options, not --param")
    named = [inner for _, inner in tests if inner]
    params = (f"aggressor={','.join(kinds)}", f"victims={args.victims}", f"split={args.split}",
              "seed=" + ",".join(str(k) for k in range(1, args.draws + 1)),
              *((f"victim={','.join(dict.fromkeys(named))}",) if named else ()), *args.param)
    return Request(benches=tuple(dict.fromkeys(b for b, _ in tests)), sizes=args.sizes, params=params,
                   validate=args.validate, sampling=sampling(args), launches=args.launches, seed=args.seed,
                   launch=launch_options(args), site=site(args), output=args.output, timeout=args.timeout,
                   network=args.network, argv=tuple(getattr(args, "argv", ())))


def cmd_congestion(args) -> int:
    from ..verdicts import congestion as judged
    req = request(args)
    store = None if args.dry_run else storing.opened(args)     # a bad store: one line, nothing launched
    result = start(req, args.quiet, args.dry_run)
    if result is None:
        return 0
    doc = result.document
    try:
        found = judged.impacts(doc.points, doc.header.hosts, doc.header.network)
    except UsageError:
        found = judged.impacts(doc.points)
    sys.stdout.write("\n".join(judged.lines(found) or ["no victim test completed both isolated and "
                                                           "congested"]) + "\n")
    print(f"fabriclab: {result.points} points in {result.seconds:.1f} s -> {result.path}", file=sys.stderr)
    if result.error:
        print(f"fabriclab: {'error: ' if result.status == 'failed' else ''}{result.error}", file=sys.stderr)
    storing.keep(store, [result.path], args)
    return result.exit_code
