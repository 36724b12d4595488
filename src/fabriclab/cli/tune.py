"""`fabriclab tune OP`: its options parsed into a tuning (tuning/tuner.py), what it found printed."""

from __future__ import annotations

import math
import sys
from datetime import datetime, timezone
from pathlib import Path

from .. import outputs
from ..measure.session import TIMEOUT_S, Request
from ..units import fmt_time
from . import storing
from .letters import adder
from .options import add_mpi_options, integer, launch_options, not_stdout, number, site
from .run import add_sampling, sampling

DEFAULT_SIZES = "8:2M:x4"
DEFAULT_LAUNCHES = 5


def register(sub) -> None:
    from ..tuning import DEFAULT_ROUNDS, FACTOR, OPS
    p = sub.add_parser("tune", help="Measure a collective's algorithms, write the MPI library's selection file "
                                    "for the fastest at each size, and check it against the default.",
                       description="Tune a collective: measure every algorithm of the library's that its "
                                   "selection file can name beside the library's own choice, keep the fastest "
                                   "at each size only where compare's interval says it is faster, write MPICH's "
                                   "JSON selection file or Open MPI's coll_tuned rules file, print the "
                                   "environment that uses it, then run the default and the tuned library "
                                   "against each other (docs/tuning.md).")
    add = adder(p, "tune")
    p.add_argument("op", choices=OPS, metavar="OP", help=f"The collective: {', '.join(OPS)}.")
    add("--sizes", default=DEFAULT_SIZES, metavar="SPEC",
        help=f"Sizes in bytes, as run takes them (coll's SIZE, docs/collectives.md). Default: {DEFAULT_SIZES}.")
    add("--param", action="append", default=[], metavar="KEY=VALUE",
        help="Another parameter of the operation (dtype=double, reduce=max ...); not algorithm or form. "
             "Default: the operation's defaults.")
    add("--output", metavar="DIR", type=not_stdout("the tuning's folder"),
        help="The folder the runs, the selection file and tune.json go to, made once the inputs are "
             "accepted. Default: results/tune-OP-TIMESTAMP.")
    add("--force", action="store_true",
        help="Replace the tuning that the --output folder already holds. Default: off (refused).")
    p.add_argument("--rounds", type=integer(0, 100), default=DEFAULT_ROUNDS, metavar="R",
                   help="Rounds of the check, each one launch of the default and one of the tuned library, their "
                        f"order swapped every round; 0: no check. Default: {DEFAULT_ROUNDS}.")
    p.add_argument("--threshold", type=number(0, 0.99), default=0.02, metavar="FRACTION",
                   help="The smallest change that earns a verdict, as compare's. Default: 0.02.")
    p.add_argument("--prune-factor", type=number(1.01, 1000), default=FACTOR, metavar="X",
                   help="On a known network, leave out the algorithms the model predicts more than X times "
                        f"slower than the best at every size. Default: {FACTOR:g}.")
    add("--timeout", type=number(*TIMEOUT_S), default=60.0, metavar="SECONDS",
        help="End a run when a launch prints nothing for this long plus twice --point-time. Default: 60.")
    p.add_argument("--network", metavar="FILE",
                   help="The network file the hosts are joined by, for the model's pruning. Default: a testbed's "
                        "own file with --testbed, else none.")
    p.add_argument("--calibration", metavar="FILE",
                   help="Rates, alpha and gamma from `fabriclab calibrate`, for the pruning. Default: none.")
    add("--quiet", action="store_true", help="Only the result. Default: off.")
    storing.add_options(add)
    add("--dry-run", action="store_true",
        help="Print the measuring run's launch commands, its candidates chosen, and exit. Default: off.")
    add_sampling(adder(p.add_argument_group("sampling"), "tune"), DEFAULT_LAUNCHES)
    add_mpi_options(p, "tune")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args) -> int:
    from ..tuning.tuner import Tuner, Tuning
    store = None if args.dry_run else storing.opened(args)     # a bad store: one line, nothing made
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = outputs.directory(args.output or Path("results") / f"tune-{args.op}-{stamp}", "the tuning folder")
    run = Request(sizes=args.sizes, params=tuple(args.param), sampling=sampling(args), launches=args.launches,
                  seed=args.seed, launch=launch_options(args), site=site(args), timeout=args.timeout,
                  network=args.network, calibration=args.calibration, argv=tuple(getattr(args, "argv", ())))
    tuning = Tuning(args.op, run, out, args.rounds, args.threshold, args.prune_factor, force=args.force,
                    stamped=not args.output)
    say = (lambda line: None) if args.quiet else (lambda line: print(f"fabriclab: {line}", file=sys.stderr))
    from .progress import Progress
    tuner = Tuner(tuning, say, None if args.quiet else (lambda total: Progress(total)))
    if args.dry_run:
        print("\n".join(tuner.commands()))
        return 0
    try:
        tuned = tuner.run()
    finally:                        # the runs that completed are kept, as their documents are
        folder = tuner.t.out if hasattr(tuner, "t") else out
        storing.keep(store, [folder / "measure.json", *sorted(folder.glob("check-*.json")), folder / "tune.json"],
                     args)
    sys.stdout.write("\n".join(lines(tuned)) + "\n")
    return 0


def _interval(ratio: float, lo: float, hi: float) -> str:
    if not all(map(math.isfinite, (ratio, lo, hi))) or min(ratio, lo, hi) <= 0:
        return "-"
    return f"{1 / ratio:.3f}x [{1 / hi:.3f}, {1 / lo:.3f}]"


def lines(tuned) -> list[str]:
    """The choices, the file and its environment, and the check, as printed."""
    out = [f"{tuned.op} on {tuned.ranks} ranks ({tuned.library}): measured the library's choice and "
           f"{', '.join(tuned.measured)}",
           f"{'size':>8}  {'fastest':<26} {'speed-up over the library (95% CI)':<36} {'verdict':<8} file selects"]
    for c in tuned.choices:
        out.append(f"{c.size:>8}  {c.fastest:<26} {_interval(c.ratio, c.ratio_ci_low, c.ratio_ci_high):<36} "
                   f"{c.verdict:<8} {c.algorithm or 'the library choice'}")
    out += ["", f"selection file: {tuned.file}",
            "use it: " + " ".join(f"{k}={v}" for k, v in tuned.environment.items())]
    if tuned.check:
        out += ["", f"check, tuned against default, {len(tuned.check_runs) // 2} rounds alternating:",
                f"{'size':>8}  {'default':>10} {'tuned':>10}  {'speed-up (95% CI)':<28} verdict"]
        for ch in tuned.check:
            verdict = {"faster": "tuned faster", "slower": "TUNED SLOWER"}.get(ch.verdict, ch.verdict)
            out.append(f"{ch.size:>8}  {fmt_time(ch.base_median_s):>10} {fmt_time(ch.new_median_s):>10}  "
                       f"{_interval(ch.ratio, ch.ratio_ci_low, ch.ratio_ci_high):<28} {verdict}")
        out.append("the library read the file: " + ("yes, at every tuned point" if tuned.read else
                                                     "not shown (docs/tuning.md, \"Evidence\")"))
    return out
