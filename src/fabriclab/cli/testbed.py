"""`fabriclab testbed up|down|list|show|exec|validate`: an emulated cluster
on this machine from a model network file (docs/testbed.md)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from .. import outputs
from ..errors import UsageError
from .letters import adder
from .options import not_stdout, testbed_name


def default_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]", "", Path(path).stem.lower())[:12] or "tb"


def load_plan(path: str, name: str):
    from ..model.topologies.custom import load_network_file
    from ..testbed import wiring as plan
    return plan.make(load_network_file(path), name, source=str(Path(path).resolve()))


def cmd_up(args) -> int:
    from ..testbed import netns
    from ..testbed.wiring import check_name
    name = default_name(args.file) if args.name is None else check_name(args.name)   # '' is no name
    netns.require_root()
    p = load_plan(args.file, name)
    t0 = time.monotonic()
    state = netns.up(p, progress=lambda m: print(f"testbed {name}: {m} ...", file=sys.stderr, flush=True))
    print(f"testbed {name} up in {time.monotonic() - t0:.1f} s: {len(state['hosts'])} hosts "
          f"({', '.join(state['hosts'][:8])}{' ...' if len(state['hosts']) > 8 else ''}), "
          f"{len(state['switches'])} switches, {len(state['cables'])} cables. "
          f"Run across it: fabriclab run --testbed {name} -n {min(2, len(state['hosts']))} ...")
    return 0


def cmd_down(args) -> int:
    from ..testbed import netns
    netns.require_root()
    if args.all == bool(args.name):
        raise UsageError("testbed down: name one testbed or give --all")
    t0 = time.monotonic()
    for name in (netns.names() if args.all else [args.name]):
        n = netns.down(name)
        print(f"testbed {name} down ({n} namespaces removed) in {time.monotonic() - t0:.1f} s")
    return 0


def cmd_list(args) -> int:
    from ..testbed import netns
    names = netns.names()
    if not names:
        print("no testbed is up")
    for name in names:
        try:
            st = netns.load(name)
            print(f"{name}  {len(st['hosts'])} hosts, {len(st['switches'])} switches, from {st.get('source')}")
        except UsageError:
            print(f"{name}  half up (no state): `fabriclab testbed down {name}` removes it")
    return 0


def cmd_show(args) -> int:
    from ..testbed import netns
    print(netns.describe(netns.load(args.name)))
    return 0


def cmd_degrade(args) -> int:
    from ..testbed import faults
    c = faults.degrade(args.name, args.cable, args.rate)
    print(f"testbed {args.name}: cable {faults.cable_name(c)} ({c['a']} <-> {c['b']}) shaped at "
          f"{c['shaped_MBps']:g} MB/s each way (its file's rate: {c['rate_MBps']:g} MB/s); "
          f"`fabriclab testbed restore {args.name}` puts it back")
    return 0


def cmd_restore(args) -> int:
    from ..testbed import faults
    done = faults.restore(args.name, args.cable)
    for c in done:
        print(f"testbed {args.name}: cable {faults.cable_name(c)} back at {c['rate_MBps']:g} MB/s each way")
    if not done:
        print(f"testbed {args.name}: no cable is degraded")
    return 0


def cmd_exec(args) -> int:
    from ..testbed import netns
    netns.require_root()
    cmd = list(args.command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("testbed exec: give a command after --")
    argv = netns.exec_argv(netns.load(args.name), args.host, cmd)
    return subprocess.call(argv)


def cmd_validate(args) -> int:
    """The model against measurement on a testbed (testbed/validation.py); a table and a verdict."""
    from ..measure.session import Launch
    from ..testbed.validation import Site, run, validate
    name = default_name(args.file) if args.name is None else args.name
    site = Site.of(args.file, name, [h for h in (args.hosts or "").split(",") if h])
    out = outputs.document(Path(args.output or f"results/validate-{site.name}.json"), given=args.output)
    t0 = time.monotonic()
    say = lambda line: print(f"fabriclab: {line}", file=sys.stderr)  # noqa: E731
    v = validate(site, args.sizes, out, lambda request: run(request, say), Launch(mpi_home=args.mpi_home),
                 args.keep, progress=lambda text: print(text, file=sys.stderr), argv=tuple(args.argv),
                 collectives=not args.no_collectives)
    _print_validation(v, time.monotonic() - t0)
    return 0 if v.agrees else 1


def _print_validation(v, seconds: float) -> None:
    from ..model.resources import MB
    from ..model.validate import TOLERANCE
    from ..units import fmt_bytes
    print(f"{'size':>8}  {'measured MB/s':>14}  {'predicted MB/s':>14}  {'ratio':>6}  verdict")
    for r in v.per_size:
        print(f"{fmt_bytes(r.size):>8}  {r.measured_Bps / MB:14.2f}  {r.predicted_Bps / MB:14.2f}  "
              f"{r.ratio:6.3f}  {r.verdict}")
    top, label = v.top, v.predicted[1]
    print(f"{v.site.name}: at {fmt_bytes(top.size)} the measured per-node all-to-all bandwidth is "
          f"{'within' if v.agrees else 'NOT within'} {TOLERANCE:.0%} of the calibrated prediction "
          f"(ratio {top.ratio:.3f}); bottleneck {label}"
          + ("" if v.agrees else f": {label} disagrees by {(top.ratio - 1):+.1%}")
          + f". {seconds:.0f} s; document {v.document}")
    if v.explanation:
        print(f"cables: {v.explanation}")
    rated = [r for r in v.interfaces if r["ratio"] is not None]
    if rated:
        low = min(rated, key=lambda r: r["ratio"])
        print(f"interfaces: {len(rated)} link directions named by interface carried {min(r['ratio'] for r in rated):.2f}"
              f"..{max(r['ratio'] for r in rated):.2f} of their share of the routed flows (lowest {low['host']} "
              f"{low['iface']} {low['from']}->{low['to']})")
    _print_collectives(v.collectives, v.collective_costs)
    emu = v.emulation
    if emu is not None:
        print("emulation: " + ("faithful (every saturated cable reached its rate when busy; the kernel's packet "
                               f"work waited for a CPU {emu['softirq_wait']:.0%} of the time)" if emu["faithful"]
                               else "NOT faithful, so the gap is not the model's: " + "; ".join(emu["reasons"])))


def _print_collectives(rows: list, costs: dict | None) -> None:
    """Each collective against its calibrated schedule time, and its bottleneck against the busiest cable."""
    from ..report.tables import group_name
    from ..units import fmt_bytes, fmt_time
    if not rows:
        return
    print(f"collectives: alpha {fmt_time(costs['alpha_s'])} a message ({costs['from']['alpha']}), gamma "
          f"{costs['gamma_s_per_byte'] * 1e9:.3g} ns a byte reduced ({costs['from']['gamma']})")
    print(f"{'collective':>52}  {'size':>6}  {'measured':>10}  {'predicted':>10}  {'ratio':>6}  verdict  "
          "bottleneck (model); busiest cable (model, measured)")
    for r in rows:
        busiest = r.get("busiest_cable")
        same = "" if busiest is None else (f"; busiest {r['busiest']}" + (" = measured" if r["busiest_agrees"]
                                                                            else f", measured {busiest}"))
        if busiest is not None and r["verdict"] != "agrees" and r.get("model_busiest_p90") is not None:
            same += f" (its busiest windows at {r['model_busiest_p90']:.2f} of its rate)"
        print(f"{group_name(r['bench'], r['variant']):>52}  {fmt_bytes(r['size']):>6}  {fmt_time(r['measured_s']):>10}"
              f"  {fmt_time(r['predicted_s']):>10}  {r['ratio']:6.3f}  {r['verdict']:7}  {r['bottleneck']}{same}")


def _register_faults(tsub) -> None:
    """degrade and restore."""
    q = tsub.add_parser("degrade", help="Shape one cable of a testbed that is up at a lower rate, both ways "
                                         "(a fault the network file and the model do not know).")
    q.add_argument("name", metavar="NAME")
    q.add_argument("cable", metavar="CABLE", help="The cable's name as `testbed show` prints it (trunk, h0-s0, "
                                                  "s0-s1#1), or its two ends as A-B.")
    q.add_argument("rate", metavar="MBPS", help="The rate to shape it at, in MB/s (10^6 bytes/s).")
    q.set_defaults(func=cmd_degrade)
    q = tsub.add_parser("restore", help="Shape a degraded cable (default: every one) at its file's rate again.")
    q.add_argument("name", metavar="NAME")
    q.add_argument("cable", nargs="?", metavar="CABLE", help="The cable. Default: every degraded cable.")
    q.set_defaults(func=cmd_restore)


def register(sub) -> None:
    p = sub.add_parser("testbed", help="An emulated multi-host cluster on this machine (root): up, down, list, "
                                        "show, degrade, restore, exec, validate.")
    tsub = p.add_subparsers(dest="testbed_command", metavar="ACTION")
    q = tsub.add_parser("up", help="Bring a network file's hosts, switches and cables up as namespaces.")
    q.add_argument("file", metavar="NET.yaml", help="A network file (the model's format: docs/model.md).")
    q.add_argument("--name", help="Testbed name, 1-12 lower-case letters and digits. Default: from the file name.")
    q.set_defaults(func=cmd_up)
    q = tsub.add_parser("down", help="Remove a testbed (idempotent; also after an interrupted up).")
    q.add_argument("name", nargs="?", metavar="NAME")
    q.add_argument("--all", action="store_true", help="Remove every testbed on this machine.")
    q.set_defaults(func=cmd_down)
    q = tsub.add_parser("list", help="The testbeds that are up.")
    q.set_defaults(func=cmd_list)
    q = tsub.add_parser("show", help="A testbed's hosts, addresses and cables.")
    q.add_argument("name", metavar="NAME")
    q.set_defaults(func=cmd_show)
    _register_faults(tsub)
    q = tsub.add_parser("exec", help="Run a command on one emulated host: testbed exec NAME HOST -- CMD.")
    q.add_argument("name", metavar="NAME")
    q.add_argument("host", metavar="HOST")
    q.add_argument("command", nargs="...", metavar="-- CMD")
    q.set_defaults(func=cmd_exec)
    q = tsub.add_parser("validate", help="Check the model against measurement on a testbed: saturation of the "
                                          "bottleneck cable, calibration, predicted vs measured all-to-all.")
    q.add_argument("file", metavar="NET.yaml")
    q.add_argument("--name", type=testbed_name,
                   help="Use this testbed (brought up if it is not). Default: from the file name.")
    add = adder(q, "testbed validate")
    add("--sizes", default="16K,64K,256K", metavar="SPEC", help="All-to-all message sizes. Default: 16K,64K,256K.")
    add("--output", metavar="PATH", type=not_stdout("the validation document"),
        help="The validation document. Default: results/validate-NAME.json.")
    q.add_argument("--keep", action="store_true", help="Leave the testbed up afterwards. Default: off.")
    q.add_argument("--no-collectives", action="store_true",
                   help="Leave out the collectives (ring, recursive doubling and Rabenseifner allreduce, binomial "
                        "bcast, ring allgather at the largest size). Default: measure them.")
    q.add_argument("--hosts", metavar="H1,H2,...",
                   help="Validate on a real cluster instead: the file's nodes, matched by name in any order (where "
                        "none is a node of the file, the hosts its nodes stand for, in the file's order); no "
                        "testbed is brought up, counters are read through the launcher. Default: the emulated testbed.")
    q.add_argument("--mpi-home", metavar="DIR", help="The MPI to measure with (as `fabriclab run`). "
                   "Default: MPICH from PyPI.")
    q.set_defaults(func=cmd_validate)
