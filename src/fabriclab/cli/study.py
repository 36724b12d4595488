"""`fabriclab study list|show|run`: the seed studies as runnable recipes.
`run` runs each step as `fabriclab run` with the user's launch options,
keeps every run document, and writes the study's report (studies/page.py);
`model_part` writes a study's report with no step run (the parts judged on
the model alone), for `fabriclab reproduce sci-myrinet-2002`."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import sys
import time
from pathlib import Path

from .. import outputs
from ..errors import FabriclabError, Terminated, UsageError
from ..units import fmt_time
from . import run
from .report import WIRE_RATE, _wire
from .letters import adder
from .options import Parser, not_stdout

# The `fabriclab run` options a study passes through to every step; the rest
# of run's options (benchmarks, sizes, parameters) are the study's own.
HOSTS_OPTIONS = ("--hosts", "--hostfile", "--testbed")


def register(sub) -> None:
    p = sub.add_parser("study", help="Re-run a seed study on your machines, its published results beside yours.")
    ss = p.add_subparsers(dest="study_command", metavar="ACTION")
    ss.add_parser("list", help="The studies, what each needs and how long it takes.").set_defaults(func=cmd_list)
    show = ss.add_parser("show", help="What a study runs, its figures and findings.")
    show.add_argument("name", metavar="NAME")
    show.set_defaults(func=cmd_show)
    r = ss.add_parser("run", help="Run a study's benchmarks and write its report.",
                      description="Options after NAME other than -o, --dry-run, --wire-rate MBPS and "
                                  "--technology NAME (the wire rate of an efficiency figure, as `fabriclab "
                                  "report` takes it) and --prices FILE (a price list for the model's costs, as "
                                  "`fabriclab model` takes it) go to every `fabriclab run` the study makes: ranks, "
                                  "hosts, hostfile, testbed, launcher, MPI, launches, point time "
                                  "(`fabriclab run --help`).")
    r.add_argument("name", metavar="NAME")
    r.add_argument("options", nargs=argparse.REMAINDER, metavar="[-o DIR] [--dry-run] [RUN OPTIONS]")
    r.set_defaults(func=cmd_run)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def cmd_list(args) -> int:
    from ..studies.registry import STUDIES
    print(f"{'study':<22} {'seed':<5} {'default time':>12}  {'ranks':>5} {'hosts':>5}  what")
    for s in STUDIES.values():
        print(f"{s.name:<22} {s.seed:<5} {'~' + fmt_time(s.seconds):>12}  {s.ranks:>5} {s.hosts:>5}  {s.title}")
    return 0


def cmd_show(args) -> int:
    from ..studies.reference import load
    from ..studies.registry import study
    s = study(args.name)
    ref = load(s.name)
    print(f"{s.name} (seed {s.seed}): {ref.title}, {ref.authors}" + (f", {ref.year}" if ref.year else ""))
    print(f"  {s.about}")
    print(f"  about {fmt_time(s.seconds)} at default settings; {s.ranks} ranks; {s.hosts} host(s) at least\n")
    print("steps:")
    for st in s.steps:
        print(f"  {st.name:<20} {st.feeds}\n  {'':<20} fabriclab {shlex.join(_argv(st, []))}")
    from ..studies.recipe import MODEL, Runs
    runs = Runs()                   # one: what a study derives from nothing but its inputs is computed once
    print("\nfindings:")
    for f in s.findings(runs, ref):
        on = "; judged on the model" if f.judged_on == MODEL else ""
        print(f"  {f.id:<7} {f.claim} ({f.where}); published: {f.published}{on}")
    print("\nfigures:")
    for fig in s.figures(runs, ref):
        print(f"  {fig.title}")
    print(f"\npublished values: {len(ref.values)} (fabriclab study run {s.name} draws them beside yours)")
    return 0


def _argv(step, user: list, out: str = "RUN.json") -> list:
    """The `fabriclab run` arguments of a step: the study's, then the user's (later wins), its rank
    count before the user's where the user's -n may change it (Step.scales), after them where not."""
    ranks = ["-n", str(step.ranks)]
    return ["run", *step.args, *(ranks if step.scales else []), *user, *([] if step.scales else ranks),
            "-o", out]


def _own_options(options: list) -> tuple:
    """(-o DIR, --dry-run, the wire rate's (B/s, text), --prices FILE, the rest): the study's own options out
    of run's; the wire rate as `fabriclab report` takes it (--wire-rate MBPS or --technology NAME)."""
    p = Parser(prog="fabriclab study run", add_help=False)
    adder(p, "study")("--output", type=not_stdout("the study's folder"))
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--wire-rate", type=WIRE_RATE)
    p.add_argument("--technology")
    p.add_argument("--prices")
    own, rest = p.parse_known_args(options)
    return own.output, own.dry_run, _wire(own)[:2], own.prices, rest


def _folder(s, out) -> Path:
    """The study's folder: -o DIR, else a new one under results/, checked before any work."""
    return outputs.directory(out or f"results/study-{s.name}-{time.strftime('%Y%m%d-%H%M%S')}", "study folder")


def _prices(s, prices):
    """The price list file for the model's costs, read once to refuse a bad one before anything runs."""
    if prices is None:
        return None
    if not s.prices:
        raise UsageError(f"study {s.name} draws no costs: --prices does not apply")
    from ..model.cost import price_list
    price_list(prices)
    return prices


def _hosts_given(rest: list) -> int:
    """How many hosts the user's launch options name (1: this machine)."""
    p = Parser(prog="fabriclab study run", add_help=False)
    for o in HOSTS_OPTIONS:
        p.add_argument(o)
    a, _ = p.parse_known_args(rest)
    if a.hosts:
        return len({h for h in a.hosts.split(",") if h})
    if a.hostfile:
        from ..measure.launch import hostfile_hosts
        return len(hostfile_hosts(a.hostfile))
    if a.testbed:
        from ..testbed import netns
        return len(netns.load(a.testbed)["hosts"])
    return int(os.environ.get("SLURM_JOB_NUM_NODES", "1") or 1)


def _skip_reason(step, hosts: int) -> str:
    if step.blocked:
        return step.blocked
    if step.hosts > hosts:
        return (f"needs {step.hosts} hosts and the launch names {hosts}: give --hosts, --hostfile or --testbed, "
                "or run inside a Slurm allocation")
    if step.gpu and not shutil.which("nvidia-smi"):
        return "needs device memory, and this machine has no GPU (no nvidia-smi)"
    return ""


def _run_one(argv: list) -> tuple:
    """(exit code, document or None): the step's `fabriclab run` options as a
    run request, run in this process (bad options: exit 2)."""
    try:
        rc, result = run.execute(_check(argv))
        return rc, result.document if result else None
    except FabriclabError as e:
        from ..report.escape import terminal
        print(f"fabriclab: error: {terminal(e)}", file=sys.stderr)
        return e.exit_code, None


def cmd_run(args) -> int:
    from ..studies.recipe import Runs
    from ..studies.reference import load
    from ..studies.registry import study
    s = study(args.name)
    ref = load(s.name)
    out, dry, wire, prices, rest = _own_options(args.options)
    if wire[0] and not s.wire:
        raise UsageError(f"study {s.name} draws no efficiency: --wire-rate and --technology do not apply")
    folder, prices = _folder(s, out), _prices(s, prices)
    hosts = _hosts_given(rest)
    plan = [(st, _skip_reason(st, hosts), _argv(st, rest, str(folder / f"{st.name}.json"))) for st in s.steps]
    for st, why, argv in plan:         # every step's options, files and memory checked before anything launches
        if not why:                    # (a dry run notes what does not fit, as `run --dry-run` does)
            run.check(_check(argv), force=dry)
    if dry:
        for st, why, argv in plan:
            print(f"# {st.name}: {why or st.feeds}")
            if not why and _run_one(argv + ["--dry-run"])[0] != 0:
                return 2
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    return _execute(s, ref, plan, folder, Runs(wire_Bps=wire[0], wire=wire[1], prices=prices))


def model_part(name: str, out, prices, why: str, say: str = "") -> int:
    """The study's report with none of its steps run, each skipped for `why`:
    its figures and findings that rest on the model alone, in its folder (-o DIR).
    `say`: a line for stderr once the options are found good (an alias's deprecation)."""
    from ..studies.reference import load
    from ..studies.recipe import Runs
    from ..studies.registry import study
    s = study(name)
    folder, prices = _folder(s, out), _prices(s, prices)
    if say:
        print(say, file=sys.stderr)
    plan = [(st, why, _argv(st, [], str(folder / f"{st.name}.json"))) for st in s.steps]
    folder.mkdir(parents=True, exist_ok=True)
    return _execute(s, load(s.name), plan, folder, Runs(prices=prices))


def _check(argv: list) -> argparse.Namespace:
    """A step's `fabriclab run` arguments as run's parser reads them (bad options: UsageError)."""
    p = Parser(prog="fabriclab")
    run.register(p.add_subparsers(dest="command"))
    args = p.parse_args(argv)
    args.argv = argv
    return args


def _execute(s, ref, plan: list, folder: Path, runs) -> int:
    """Run the plan's steps into `runs` (recipe.Runs, holding the study's own inputs), then write
    the report and study.json and print each finding's verdict."""
    from ..studies.page import render
    commands, steps, ended = {}, [], None      # ended: (exit code, how) once Ctrl-C or SIGTERM came
    for i, (st, why, argv) in enumerate(plan, 1):
        commands[st.name] = "fabriclab " + shlex.join(argv)
        if ended:
            why = f"not run: the study was {ended[1]} before it"
        if why:
            runs.skipped[st.name] = why
            steps.append({"step": st.name, "skipped": why})
            continue
        try:
            print(f"fabriclab: study {s.name}: step {i}/{len(plan)} {st.name} ({st.feeds})", file=sys.stderr)
            rc, doc = _run_one(argv)
        except KeyboardInterrupt as e:             # outside the run's own handling: before or after it
            rc, doc = (143, None) if isinstance(e, Terminated) else (130, None)
        if rc == 2:
            return rc
        if doc is not None:
            runs.docs[st.name] = doc
        if rc in (130, 143):
            ended = rc, "terminated (SIGTERM)" if rc == 143 else "interrupted"
            signal.signal(signal.SIGTERM, signal.SIG_IGN)     # the report of what completed is written whole
            runs.skipped[st.name] = f"its run was {ended[1]}; the points it completed are used"
        elif rc != 0:
            runs.skipped[st.name] = f"its run failed (exit {rc}); the points it completed are used"
        steps.append({"step": st.name, "argv": argv, "exit": rc})
    found = s.findings(runs, ref)
    page = folder / "report.html"
    outputs.write(page, render(s, runs, ref, commands, found))
    manifest = {"study": s.name, "seed": s.seed, "steps": steps, "findings": [f.to_dict() for f in found]}
    if ended:
        manifest["ended"] = ended[1]
    outputs.write(folder / "study.json", json.dumps(manifest, indent=1) + "\n")
    width = max(len(f.verdict) for f in found)
    for f in found:
        print(f"{f.id:<7} {f.verdict:<{width}} {f.claim}")
    print(f"report: {page}")
    if ended:
        print(f"fabriclab: study {s.name} {ended[1]}: study.json and the report hold the steps it completed "
              f"({folder})", file=sys.stderr)
        return ended[0]
    return 0
