"""`fabriclab model`, and `fabriclab reproduce sci-myrinet-2002`, the old
spelling of seed 001's study (`fabriclab study run millich-george-oral`):
their options, and what they do: turn the options into the model's question
(model/projection.py) and print the typed result as tables or JSON.

Registering the commands loads nothing heavy (`fabriclab --help` and `model
--help` start fast): the model library, numpy, matplotlib and the catalog are
imported inside the handlers, when one of these commands runs."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import outputs
from ..errors import UsageError
from ..model.choices import DEFAULT_OUT, DEFAULT_SYSTEMS, METHODS, PATTERNS
from ..model.limits import PACKET_BYTES, RATE_MBPS
from ..model.resources import MB
from ..schema.fields import MAX_RANKS
from ..report.escape import terminal
from . import model_flows
from .letters import adder
from .options import integer, not_stdout, number
from .model_common import COLLECTIVE_NODES, COLLECTIVE_SIZES, NODES, calibration, parse_nodes, table

if TYPE_CHECKING:
    from ..model.evaluate import Curve
    from ..model.projection import Projection, Question

# The alias: the study that is seed 001's one home, and what its old name still does.
STUDY = "millich-george-oral"
# Options of `model --collective`, with the value meaning "not given".
COLLECTIVE_ONLY = {"algorithm": None, "sizes": None, "alpha": None, "gamma": None, "placement": "block",
                   "per_node": 1}
DEPRECATED = f"fabriclab: reproduce sci-myrinet-2002 is deprecated; use fabriclab study run {STUDY}"


def register_model(subparsers) -> None:
    p = subparsers.add_parser(
        "model", help="Model per-node bandwidth, bottleneck and cost of cluster networks.",
        description="Per-node bandwidth of chosen systems (technology on topology) as the number of nodes grows, "
                    "the bottleneck resource at each size, crossovers in words, and costs; with --collective, "
                    "each algorithm's time of a collective operation against size, the fastest, and its bottleneck; "
                    "with --flow, socket flows' max-min shares and a UDP flow's loss on a network file.")
    add = adder(p, "model")
    _add_systems(add)
    _add_collective(adder(p.add_argument_group("collectives (--collective)"), "model"))
    model_flows.add_options(adder(p.add_argument_group("socket flows (--flow, with --topology-file)"), "model"))
    _add_calibration(add)
    _add_cost(add)
    add("--method", metavar="METHOD", default="auto", choices=METHODS,
        help="Load counting: auto (symmetry or aggregation where available) or enumerate "
             "(every flow). Default: auto.")
    add("--payload", metavar="BYTES", type=number(PACKET_BYTES.lo, PACKET_BYTES.hi),
        help="Packet payload for the efficiency payload/(payload+overhead) instead of the catalog's. "
             "Default: the catalog's.")
    add("--format", metavar="FORMAT", default="table", choices=("table", "json"),
        help="Output format: table or json. Default: table.")
    add("--output", metavar="DIR", default=DEFAULT_OUT, type=not_stdout("the plots' folder"),
        help=f"Directory for plots. Default: ./{DEFAULT_OUT}.")
    add("--plot-format", metavar="FMT", default="png", choices=("png", "svg"),
        help="Plot file format: png or svg. Default: png.")
    add("--no-plot", action="store_true", help="Do not draw the plot. Default: draw it.")
    add("--list", action="store_true",
        help="List the technologies and named systems with their sources, then exit. Default: off.")
    p.set_defaults(func=_model)


def _add_systems(add) -> None:
    """What is modelled: systems, sizes, a network file, the traffic."""
    add("--system", metavar="SYSTEM", action="append",
        help="A named system (see --list) or TECHNOLOGY:TOPOLOGY[:key=value,...]; repeat for several. "
             f"Default: {' '.join(DEFAULT_SYSTEMS)}.")
    add("--nodes", metavar="SIZES",
        help="Node counts: N, a list N,M,..., MIN:MAX (every size, or x2 beyond 256 sizes), "
             f"MIN:MAX:xF or MIN:MAX:+S; K means x1024. Default: {NODES} ({COLLECTIVE_NODES} with --collective).")
    add("--topology-file", metavar="FILE",
        help="A network from a file (YAML or JSON, see docs/model.md), evaluated at its own size beside "
             "the --system systems, or alone when no --system is given; the network --flow's flows "
             "cross. Default: none.")
    add("--traffic", metavar="PATTERN", default="all-to-all", choices=PATTERNS,
        help=f"Traffic pattern, one of {', '.join(PATTERNS)}. Default: all-to-all.")
    add("--hotspot-target", metavar="NODE", type=integer(0, MAX_RANKS), default=0,
        help="The node every other node sends to with --traffic hotspot. Default: 0.")
    add("--seed", metavar="INT", type=integer(0, (1 << 63) - 1), default=1,
        help="Random seed of the permutation, bisection and random-ring patterns. Default: 1.")


def _add_collective(add) -> None:
    """A collective's algorithms timed on the network (model/collective.py)."""
    add("--collective", metavar="OP",
        help="Time this collective's algorithms instead of a traffic pattern: allreduce, bcast, reduce, allgather, "
             "reduce_scatter, alltoall, gather or scatter. Default: none.")
    add("--algorithm", metavar="NAMES",
        help="The algorithms to time, comma-separated (an unknown name is refused with the list). "
             "Default: every one the model has for the operation.")
    add("--sizes", metavar="SIZES",
        help="Sizes in bytes, as run takes them (a block for allgather, gather, scatter and alltoall, the "
             f"vector for the others). Default: {COLLECTIVE_SIZES}.")
    add("--alpha", metavar="SECONDS", type=number(0, 1),
        help="Seconds to start one message (measured: half a small ping-pong's round trip). Default: 2e-6.")
    add("--gamma", metavar="SECONDS", type=number(0, 1),
        help="Seconds to reduce one byte locally. Default: 2.5e-10 (4 GB/s).")
    add("--placement", metavar="HOW", default="block", choices=("block", "cyclic"),
        help="How ranks go on nodes: block (fill a node) or cyclic (one a node in turn). Default: block.")
    add("--per-node", metavar="K", type=integer(1, MAX_RANKS), default=1, help="Ranks on each node. Default: 1.")


def _add_calibration(add) -> None:
    """Measured rates, the seed's own formulas, max-min rates."""
    add("--calibrate", metavar="RES=MBPS", action="append",
        help="A measured saturation rate replacing a nominal one: RESOURCE=MBps, TECH.RESOURCE=MBps, "
             "or 'catalog' for the measurements stored in the catalog; repeatable. Default: none.")
    add("--calibration-file", metavar="FILE",
        help="YAML or JSON file of measured rates (MB/s) by technology and resource. Default: none.")
    add("--published", action="store_true",
        help="Also draw the seed's own formulas 'as published' for the systems that have them. "
             "Default: off (the exact model only).")
    add("--maxmin", action="store_true",
        help="Also solve the steady-state max-min fair rates of the pattern's flows and show the "
             "spread of per-node rates. Default: off.")


def _add_cost(add) -> None:
    add("--cost", action="store_true",
        help="Add total cost and dollars per MB/s to the tables (example prices unless --prices). Default: off.")
    add("--prices", metavar="FILE",
        help="A price list (prices.yaml format) overriding the shipped example prices. Default: none.")
    add("--target", metavar="MBPS", type=number(RATE_MBPS.lo, RATE_MBPS.hi),
        help="Find the cheapest system giving every node at least this many MB/s at each size. "
             "Default: none.")


def register_reproduce(subparsers) -> None:
    r = subparsers.add_parser(
        "reproduce", help=f"Deprecated: seed 001's projections and findings; use `fabriclab study run {STUDY}`.",
        description=f"The old spelling of `fabriclab study run {STUDY}` without its measured steps: it writes "
                    "that study's report (report.html, study.json) with the seed's projections drawn and its "
                    "findings judged on the model, and says once on stderr that it is deprecated.")
    add = adder(r, "reproduce")
    r.add_argument("study", metavar="STUDY", choices=("sci-myrinet-2002",),
                   help="sci-myrinet-2002 (Millich, George, Oral 2002), the study now called "
                        f"{STUDY}.")
    add("--format", metavar="FORMAT", default="table", choices=("table", "json"),
        help="table: each finding's verdict and where the report is. json is refused: the findings as "
             "data are in DIR/study.json. Default: table.")
    add("--output", metavar="DIR", type=not_stdout("the study's folder"),
        help=f"The study's folder (report.html, study.json), as `study run {STUDY} -o DIR`. "
             f"Default: ./results/study-{STUDY}-TIME.")
    r.add_argument("--plot-format", metavar="FMT", help=argparse.SUPPRESS)    # refused: see _reproduce
    add("--prices", metavar="FILE",
        help="A price list overriding the shipped example prices for Fig. 14-15 and the findings on cost, as "
             f"`study run {STUDY} --prices FILE`. Default: none.")
    r.set_defaults(func=_reproduce)


def _reproduce(args) -> int:
    """The study's model part in its folder, after one deprecation line; what no longer means
    anything, and any other bad input, is refused in one line before it."""
    if args.format == "json":
        raise UsageError(f"reproduce -f json is gone: `fabriclab study run {STUDY}` writes the findings as "
                         "data to DIR/study.json")
    if args.plot_format is not None:
        raise UsageError(f"reproduce --plot-format is gone: `fabriclab study run {STUDY}` draws every figure "
                         "inline (SVG) in DIR/report.html")
    from .study import model_part
    return model_part(STUDY, args.output, args.prices,
                      f"not run by `fabriclab reproduce`, which draws the model's part only; `fabriclab study run "
                      f"{STUDY}` measures it", say=DEPRECATED)


# ---------------------------------------------------------------- parsing
# ---------------------------------------------------------------- output
def _fmt(x, digits=1) -> str:
    """A figure with `digits` decimals; with three significant digits where those
    would print it as 0 or it runs past 10^15 (inputs are bounded, docs/model.md)."""
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "inf" if x > 0 else "-"
    if x != 0 and (abs(x) < 0.5 * 10 ** -digits or abs(x) >= 1e15):
        return f"{x:.3g}"
    return f"{x:,.{digits}f}"


def _curvetable(c: Curve, cost: bool) -> str:
    header = ["N", "MB/s per node"] + (["nominal MB/s"] if c.calibrated else []) + ["bottleneck"]
    if cost:
        header += ["cost $", "$ per MB/s"]
    rows = []
    for p in c.points:
        r = [p.n, _fmt(p.per_node / MB)] + ([_fmt(p.nominal / MB)] if c.calibrated else []) + [p.bottleneck]
        if cost:
            r += [_fmt(p.cost, 0), _fmt(p.cost_per_mbps, 2)]
        rows.append(r)
    head = f"{c.label} [{c.key}]" + (" — calibrated" if c.calibrated else "")
    return terminal(head) + "\n" + table(rows, header)


def _model(args) -> int:
    from ..model.projection import project
    if args.list:
        return _list()
    if args.flow:
        if args.collective is not None:
            raise UsageError("--flow and --collective ask two models: give one")
        given = [k for k, v in COLLECTIVE_ONLY.items() if getattr(args, k) != v]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} belongs to --collective OP")
        return model_flows.flows(args)
    for option in ("mtu", "frame"):
        if getattr(args, option) is not None:
            raise UsageError(f"--{option} belongs to --flow")
    if args.collective is not None:
        from .model_collective import collective
        return collective(args)
    given = [k for k, v in COLLECTIVE_ONLY.items() if getattr(args, k) != v]
    if given:
        raise UsageError(f"--{given[0].replace('_', '-')} belongs to --collective OP")
    if not args.no_plot:
        outputs.directory(args.output, "plot directory")
    p = project(_question(args))
    if args.format == "json":
        json.dump(p.to_dict(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    _print_curves(p, args.cost)
    _print_summary(p)
    return 0


def _question(args) -> Question:
    """The model's question from the options, each checked."""
    from ..model.projection import Question
    from ..model.traffic import Traffic
    from ..studies.millich_george_oral.as_published import curve as published_curve
    return Question(
        systems=tuple(args.system or ()), topology_file=args.topology_file, nodes=tuple(parse_nodes(args.nodes or NODES)),
        traffic=Traffic(args.traffic, args.hotspot_target, args.seed), calibration=calibration(args),
        prices_file=args.prices, method=args.method, payload=args.payload, cost=args.cost,
        target_MBps=args.target, maxmin=args.maxmin, published=published_curve if args.published else None,
        plot=None if args.no_plot else Path(args.output) / f"model.{args.plot_format}")


def _print_curves(p: Projection, cost: bool) -> None:
    print(f"Traffic: {p.traffic}. Bandwidth in MB/s (10^6 bytes/s) per node; "
          f"{'calibrated rates where measured' if p.calibrated else 'nominal rates from the packet formats'}.")
    for c in p.drawn:
        print()
        print(_curvetable(c, cost))
    for c in p.published:
        print()
        print(_curvetable(c, False))
    if p.maxmin:
        print("\nMax-min fair steady state (per-node totals, MB/s):")
        print(table([[m.label, m.n, _fmt(m.min / MB), _fmt(m.median / MB), _fmt(m.max / MB)] for m in p.maxmin],
                     ["system", "N", "min", "median", "max"]))


def _print_summary(p: Projection) -> None:
    if p.empty:
        print("\nno configuration in this size range: " + terminal(", ".join(p.empty)))
    if p.no_published_form:
        print("\nno 'as published' formula (only the seed's SCI and Myrinet systems have one): "
              + terminal(", ".join(p.no_published_form)))
    print("\nBest per-node bandwidth: " + terminal(p.best) + ".")
    if p.cost_effectiveness:
        print("Best cost effectiveness ($ per MB/s): " + terminal(p.cost_effectiveness) + ".")
    if p.target:
        print(f"\nCheapest system giving every node at least {p.target[0].target_MBps:g} MB/s:")
        print(table([[t.n, "none" if t.system is None else t.system.label, "-" if t.system is None else _fmt(t.cost, 0),
                       "-" if t.system is None else _fmt(t.per_node / MB)] for t in p.target],
                     ["N", "system", "cost $", "MB/s per node"]))
    if p.plot:
        print(f"\nplot: {terminal(p.plot)}")


def _list() -> int:
    from ..model.catalog import system, system_names, technologies
    print("Technologies (data/technologies.yaml):")
    for k, t in technologies().items():
        link = t.resources["link"]
        print(f"  {k:20s} {t.name} — link {link.gross.value / MB:,.0f} MB/s gross, "
              f"{link.effective() / MB:,.1f} effective [{link.gross.source}, {link.gross.date}]")
    print("\nSystems (data/systems.yaml), or TECHNOLOGY:TOPOLOGY[:key=value,...]:")
    for k in system_names():
        s = system(k)
        print(f"  {k:20s} {s.label} ({s.tech.key} on {s.family})")
    return 0
