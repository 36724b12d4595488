"""`fabriclab check`: the thresholds and the run's options parsed into a
check (acceptance/check.py), its verdicts printed, exit 0 when it passes and
1 when it fails."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from .. import outputs
from ..errors import UsageError
from ..measure.session import TIMEOUT_S, Request
from . import storing
from .letters import adder
from .options import add_mpi_options, integer, launch_options, not_stdout, number, site, write_out


def register(sub) -> None:
    from ..acceptance.thresholds import MAX_ATTEMPTS, TESTS
    from ..suite import congestion
    p = sub.add_parser("check", help="A short acceptance suite (cabling, pair matrix, congestion, collectives) "
                                     "judged against the model or a baseline: exit 0 when it passes, 1 with "
                                     "one line per failing cable, host or figure.",
                       description="Compare the fabric's cables with the site's network (with --fabric), run "
                                   "the pair matrix, the congestion impact and the collectives' time on the "
                                   "ranks given (one host, a testbed, the hosts or the Slurm allocation), judge "
                                   "each against the model of the network or a baseline run by the thresholds, "
                                   "pass a test when any of its attempts passes, and write every run, check.json "
                                   "and an HTML report into one folder (docs/acceptance.md).")
    add = adder(p, "check")
    add("--tests", metavar="LIST", help=f"The tests, comma-separated, of {', '.join(TESTS)}. Default: all "
                                        "(cabling only with --fabric).")
    add("--thresholds", metavar="FILE", help="Thresholds (YAML or JSON) over the defaults (docs/acceptance.md). "
                                             "Default: the defaults.")
    add("--attempts", type=integer(1, MAX_ATTEMPTS), metavar="K",
        help=f"Attempts per test, 1..{MAX_ATTEMPTS}; a test passes when any passes. Default: 3 (or the file's).")
    add("--baseline", metavar="RUN.json",
        help="Judge the collectives against this earlier run's instead of the model. Default: the model.")
    p.add_argument("--network", metavar="FILE",
                   help="The network file the hosts are joined by. Default: a testbed's own file with --testbed, "
                        "else none (the pair matrix then against the median pair).")
    add("--fabric", metavar="FILE|-|discover",
        help="The cabling test: the fabric as ibnetdiscover prints it now (a saved output, - for stdin, or "
             "discover to run ibnetdiscover), compared with --network's cables. Default: no cabling test.")
    add("--output", metavar="DIR", type=not_stdout("the check's folder"), help="The folder written. Default: results/check-TIMESTAMP.")
    add("--timeout", type=number(*TIMEOUT_S), default=60.0, metavar="SECONDS",
        help="End a run when a launch prints nothing for this long plus twice its point time. Default: 60.")
    add("--quiet", action="store_true", help="Only the verdicts. Default: off.")
    add("--dry-run", action="store_true",
        help="Check every test's run, print each first attempt's launch commands, and exit. Default: off.")
    storing.add_options(add)
    add_mpi_options(p, "check", None, f"{congestion.MIN_RANKS} when the congestion test runs (two victims, "
                                      "two aggressors), else 2")
    p.set_defaults(func=cmd_check)


def thresholds(args) -> dict:
    """The defaults, the file over them, the flags over both; checked before anything runs."""
    from ..acceptance import thresholds as th
    t = th.load(args.thresholds) if args.thresholds else th.check(th.merged({}))
    over = {}
    if args.tests is not None:
        over["tests"] = [x.strip() for x in args.tests.split(",")]
    if args.attempts is not None:
        over["attempts"] = args.attempts
    t = th.check(th.merged(over, t)) if over else t
    if "cabling" in t["tests"] and not args.fabric:
        if t["tests"] != th.DEFAULTS["tests"]:
            raise UsageError("the cabling test reads the fabric now: give --fabric FILE, - or discover, and the "
                             "reference network with --network")
        t["tests"] = [name for name in t["tests"] if name != "cabling"]    # the defaults' tests, less cabling
    if args.fabric and "cabling" not in t["tests"]:
        raise UsageError("--fabric is read by the cabling test, which the tests leave out")
    if args.fabric and not args.network:
        raise UsageError("--fabric is compared with the site's reference network: give it with --network FILE")
    return t


def cmd_check(args) -> int:
    from ..acceptance.cabling import Cabling
    from ..acceptance.check import FAIL, Check, lines
    from ..report import html
    from ..schema import load
    t = thresholds(args)
    store = None if args.dry_run else storing.opened(args)     # a bad store: one line, nothing made
    if args.ranks is None:                      # the fewest the chosen tests take
        from ..suite.congestion import MIN_RANKS
        args.ranks = MIN_RANKS if "congestion" in t["tests"] else 2
    if args.baseline:
        load(args.baseline)                     # a bad baseline ends here, before anything runs
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = outputs.directory(args.output or Path("results") / f"check-{stamp}", "the check folder")
    base = Request(launch=launch_options(args), site=site(args), network=args.network, timeout=args.timeout,
                   launches=1, argv=tuple(getattr(args, "argv", ())))
    say = (lambda line: None) if args.quiet else (lambda line: print(f"fabriclab: check: {line}", file=sys.stderr))
    cabling = Cabling(args.network, args.fabric, args.timeout) if "cabling" in t["tests"] else None
    check = Check(t, base, out, args.baseline, say, stamped=not args.output, cabling=cabling)
    check.check(dry_run=args.dry_run)           # every test's run and the fabric, before the first is launched
    if args.dry_run:
        print("\n".join(line for name in t["tests"] for line in check.commands(name)))
        return 0
    try:
        outcomes = check.run()
    finally:                                    # what completed is kept, as check.json is
        storing.keep(store, sorted(check.out.glob("*-[0-9]*.json")) + [check.out / "check.json"], args)
    runs = [(o.test, load(o.last.document)) for o in outcomes if o.test != "cabling"]
    out = check.out                             # a stamped folder may have taken another name
    if runs:                                    # the cabling test alone measures nothing to draw
        write_out(html.render(runs), str(out / "report.html"))
    sys.stdout.write("\n".join(lines(outcomes)) + "\n")
    print(f"fabriclab: check: {out}/check.json" + (f", {out}/report.html" if runs else ""), file=sys.stderr)
    return 1 if any(o.verdict == FAIL for o in outcomes) else 0
