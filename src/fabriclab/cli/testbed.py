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


def default_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]", "", Path(path).stem.lower())[:12] or "tb"


def load_plan(path: str, name: str):
    from ..model.topologies.custom import load_network_file
    from ..testbed import plan
    return plan.make(load_network_file(path), name, source=path)


def cmd_up(args) -> int:
    from ..testbed import netns
    netns.require_root()
    name = args.name or default_name(args.file)
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


# The saturation test streams windows of SAT_WINDOW messages of SAT_SIZE: about
# 1 MiB per sample, a few hundredths of a second on a cable of tens of MB/s.
SAT_SIZE, SAT_WINDOW = "64K", 16
FAST = ["--point-time", "1", "-q"]
# The calibrating rate decides every prediction: its points get longer (TCP's share of a
# cable loaded both ways swings by 10-20% over a second here).
CALIBRATE = ["--point-time", "3"]


def _measure(argv: list[str], out: Path) -> dict:
    """One `fabriclab run` across the testbed (a process of its own); its document."""
    from .. import schema
    rc = subprocess.call([sys.executable, "-m", "fabriclab.cli", "run", *FAST, *argv, "-o", str(out)])
    if rc != 0 or not out.exists():
        raise UsageError(f"validate: the run `fabriclab run {' '.join(argv)}` failed (exit {rc}); see {out}")
    return schema.load(out)


def cmd_validate(args) -> int:
    """Bring the testbed up (unless it is), saturate the model's bottleneck
    cable and calibrate, predict and measure all-to-all, print both, write
    one document, bring down what it brought up."""
    from .. import schema
    from ..model.datafile import read_data_file
    from ..model.resources import MB
    from ..model.topologies.custom import CustomNetwork
    from ..report.tables import rows
    from ..testbed import netns, plan as tplan, validate as v
    from ..units import fmt_bytes
    data = read_data_file(args.file, "network file")
    net = CustomNetwork.from_dict(data, where=args.file)
    name = args.name or default_name(args.file)
    real = [h for h in (args.hosts or "").split(",") if h]
    if real and len(real) != net.n_nodes:
        raise UsageError(f"--hosts names {len(real)} hosts for the file's {net.n_nodes} nodes "
                         f"({', '.join(net.node_names)}), in that order")
    if not real:
        netns.require_root()
        p = tplan.make(net, name, source=args.file)
    on = dict(zip(net.node_names, real))

    def where(hosts: list[str]) -> list[str]:
        """Run options that put one rank on each of these file nodes: testbed hosts,
        or the real hosts they stand for (their counters read through the launcher)."""
        if real:
            return ["--hosts", ",".join(on[h] for h in hosts), "--counters"]
        return ["--testbed", name, "--hosts", ",".join(hosts)]
    b = v.bottleneck(net)
    pairs = v.saturation_pairs(net, b.channel)
    out = outputs.document(Path(args.output or f"results/validate-{name}.json"), given=args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    mpi = ["--mpi-home", args.mpi_home] if args.mpi_home else []
    brought = not real and name not in netns.names()
    t0 = time.monotonic()
    if brought:
        netns.up(p)
    try:
        print(f"validate {name}: the model's bottleneck is {b.label} ({b.load} of the all-to-all routes cross its "
              f"busiest cable); saturating it with {len(pairs)} pairs: "
              + ", ".join(f"{s}->{d}" for s, d in pairs), file=sys.stderr)
        senders, receivers = [s for s, _ in pairs], [d for _, d in pairs]
        sat = _measure(["message.saturation", *where(senders + receivers),
                        "-n", str(2 * len(pairs)), "-s", SAT_SIZE, "-p", f"window={SAT_WINDOW}",
                        "--active", f"1:{len(pairs)}", "-L", "2", *CALIBRATE, *mpi],
                       out.with_name(out.stem + "-saturation.json"))
        rate, lo, hi, active = v.plateau_rate(rows(sat))
        cls = v.cable_class(net, b.link)
        nominal, nominal_label = v.predict(data, args.file)
        # Also measured, not used to calibrate: the cable's rate per direction while both
        # directions are saturated (what it loses to the other way's acknowledgements).
        both = v.saturation_pairs(net, b.channel, both=True)
        bi = None
        if both:
            hosts = [s_ for s_, _ in both] + [d for _, d in both]
            bidoc = _measure(["message.bibw", *where(hosts), "-n", str(len(hosts)),
                              "-s", SAT_SIZE, "-p", f"window={SAT_WINDOW}", "-L", "3", *CALIBRATE, *mpi],
                             out.with_name(out.stem + "-bidirectional.json"))
            bi = v.bidirectional_rate(rows(bidoc))
        cal_rate = rate
        predicted, label = v.predict(v.calibrated(data, cls, cal_rate), args.file)
        both_ways = v.predict(v.calibrated(data, cls, bi[0]), args.file)[0] if bi else None
        print(f"validate {name}: saturation one way {rate / MB:.2f} MB/s (95% {lo / MB:.2f}..{hi / MB:.2f}) at "
              f"{active} pairs" + (f", both ways {bi[0] / MB:.2f} MB/s per direction ({len(both)} pairs)" if bi else "")
              + f", against {b.rate_Bps / MB:g} MB/s nominal; calibrated prediction {predicted / MB:.2f} MB/s per "
              f"node ({label}); measuring all-to-all on {net.n_nodes} hosts ...", file=sys.stderr)
        # Every message in flight at once: the traffic the model describes (docs/model.md §1);
        # MPI_Alltoall's own phases load different cables one after another.
        a2a = _measure(["message.alltoall", "-p", "variant=concurrent", *where(list(net.node_names)),
                        "-n", str(net.n_nodes),
                        "-s", args.sizes, "-L", "3", *mpi], out)
        measured = v.per_node(rows(a2a), net.n_nodes)
        sizes = sorted(measured)
        table = [{"size": s, "measured_Bps": measured[s], "predicted_Bps": predicted,
                  "ratio": measured[s] / predicted, "verdict": v.verdict(predicted, measured[s])} for s in sizes]
        top = table[-1]
        doc = dict(a2a)
        doc["validation"] = {
            "network": args.file, "testbed": None if real else name, "hosts": on or None,
            "bottleneck": b.label, "bottleneck_load": b.load,
            "pairs": pairs, "saturation": {"rate_Bps": rate, "ci_Bps": [lo, hi], "active": active,
                                           "run": str(out.with_name(out.stem + "-saturation.json"))},
            "bidirectional": None if not bi else {
                "pairs": both, "rate_Bps": bi[0], "ci_Bps": [bi[1], bi[2]],
                "run": str(out.with_name(out.stem + "-bidirectional.json"))},
            "calibrated_rate_Bps": cal_rate, "predicted_both_ways_Bps": both_ways, "alltoall": "concurrent",
            "calibrated_links": cls, "nominal_Bps": nominal, "nominal_bottleneck": nominal_label,
            "predicted_Bps": predicted, "predicted_bottleneck": label, "per_size": table,
            "tolerance": v.TOLERANCE, "verdict": top["verdict"], "duration_s": round(time.monotonic() - t0, 1)}
        schema.write_document(doc, out)
    finally:
        if brought and not args.keep:
            netns.down(name)
    print(f"{'size':>8}  {'measured MB/s':>14}  {'predicted MB/s':>14}  {'ratio':>6}  verdict")
    for r in table:
        print(f"{fmt_bytes(r['size']):>8}  {r['measured_Bps'] / MB:14.2f}  {r['predicted_Bps'] / MB:14.2f}  "
              f"{r['ratio']:6.3f}  {r['verdict']}")
    what = ("within" if top["verdict"] == "agrees" else "NOT within")
    print(f"{name}: at {fmt_bytes(top['size'])} the measured per-node all-to-all bandwidth is {what} "
          f"{v.TOLERANCE:.0%} of the calibrated prediction (ratio {top['ratio']:.3f}); bottleneck {label}"
          + ("" if top["verdict"] == "agrees" else f": {label} disagrees by {(top['ratio'] - 1):+.1%}")
          + f". {time.monotonic() - t0:.0f} s; document {out}")
    return 0 if top["verdict"] == "agrees" else 1


def register(sub) -> None:
    p = sub.add_parser("testbed", help="An emulated multi-host cluster on this machine (root): up, down, list, "
                                        "show, exec, validate.")
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
    q = tsub.add_parser("exec", help="Run a command on one emulated host: testbed exec NAME HOST -- CMD.")
    q.add_argument("name", metavar="NAME")
    q.add_argument("host", metavar="HOST")
    q.add_argument("command", nargs="...", metavar="-- CMD")
    q.set_defaults(func=cmd_exec)
    q = tsub.add_parser("validate", help="Check the model against measurement on a testbed: saturation of the "
                                          "bottleneck cable, calibration, predicted vs measured all-to-all.")
    q.add_argument("file", metavar="NET.yaml")
    q.add_argument("--name", help="Use this testbed (brought up if it is not). Default: from the file name.")
    q.add_argument("-s", "--sizes", default="16K,64K,256K", metavar="SPEC",
                   help="All-to-all message sizes. Default: 16K,64K,256K.")
    q.add_argument("-o", "--output", metavar="PATH", help="The validation document. Default: "
                   "results/validate-NAME.json.")
    q.add_argument("--keep", action="store_true", help="Leave the testbed up afterwards. Default: off.")
    q.add_argument("--hosts", metavar="H1,H2,...",
                   help="Validate on a real cluster instead: the hosts that the file's nodes stand for, in the "
                        "file's order (no testbed is brought up; counters are read through the launcher). "
                        "Default: the emulated testbed.")
    q.add_argument("--mpi-home", metavar="DIR", help="The MPI to measure with (as `fabriclab run`). "
                   "Default: MPICH from PyPI.")
    q.set_defaults(func=cmd_validate)
