"""`fabriclab model` and `fabriclab reproduce`: their options. Registering them
loads nothing heavy; the handlers (model_cmd.py) load the model library and
matplotlib only when one of these commands runs."""

from __future__ import annotations

from ..model.choices import DEFAULT_OUT, DEFAULT_SYSTEMS, METHODS, PATTERNS
from .letters import adder


def _model(args) -> int:
    from .model_cmd import model_handler
    return model_handler(args)


def _reproduce(args) -> int:
    from .model_cmd import reproduce_handler
    return reproduce_handler(args)


def register_model(subparsers) -> None:
    p = subparsers.add_parser(
        "model", help="Model per-node bandwidth, bottleneck and cost of cluster networks.",
        description="Per-node bandwidth of chosen systems (technology on topology) as the number of nodes grows, "
                    "the bottleneck resource at each size, crossovers in words, and costs.")
    add = adder(p, "model")
    _add_systems(add)
    _add_calibration(add)
    _add_cost(add)
    add("--method", metavar="METHOD", default="auto", choices=METHODS,
        help="Load counting: auto (symmetry or aggregation where available) or enumerate "
             "(every flow). Default: auto.")
    add("--payload", metavar="BYTES", type=float,
        help="Packet payload for the efficiency payload/(payload+overhead) instead of the catalog's. "
             "Default: the catalog's.")
    _add_output(add, "plots", DEFAULT_OUT)
    add("--no-plot", action="store_true", help="Do not draw the plot. Default: draw it.")
    add("--list", action="store_true",
        help="List the technologies and named systems with their sources, then exit. Default: off.")
    p.set_defaults(func=_model)


def _add_systems(add) -> None:
    """What is modelled: systems, sizes, a network file, the traffic."""
    add("--system", metavar="SYSTEM", action="append",
        help="A named system (see --list) or TECHNOLOGY:TOPOLOGY[:key=value,...]; repeat for several. "
             f"Default: {' '.join(DEFAULT_SYSTEMS)}.")
    add("--nodes", metavar="SIZES", default="2:128",
        help="Node counts: N, a list N,M,..., MIN:MAX (every size, or x2 beyond 256 sizes), "
             "MIN:MAX:xF or MIN:MAX:+S; K means x1024. Default: 2:128.")
    add("--topology-file", metavar="FILE",
        help="A network from a file (YAML or JSON, see docs/model.md), evaluated at its own size beside "
             "the --system systems, or alone when no --system is given. Default: none.")
    add("--traffic", metavar="PATTERN", default="all-to-all", choices=PATTERNS,
        help=f"Traffic pattern, one of {', '.join(PATTERNS)}. Default: all-to-all.")
    add("--hotspot-target", metavar="NODE", type=int, default=0,
        help="The node every other node sends to with --traffic hotspot. Default: 0.")
    add("--seed", metavar="INT", type=int, default=1,
        help="Random seed of the permutation and bisection patterns. Default: 1.")


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
    add("--target", metavar="MBPS", type=float,
        help="Find the cheapest system giving every node at least this many MB/s at each size. "
             "Default: none.")


def _add_output(add, what: str, directory: str | None) -> None:
    """The output format, the directory of the plots or figures (`what`) and their file format."""
    add("--format", metavar="FORMAT", default="table", choices=("table", "json"),
        help="Output format: table or json. Default: table.")
    add("--output", metavar="DIR", default=directory,
        help=f"Directory for {what}. Default: ./{directory or DEFAULT_OUT + '/STUDY'}.")
    add("--plot-format", metavar="FMT", default="png", choices=("png", "svg"),
        help=f"{'Plot' if what == 'plots' else 'Figure'} file format: png or svg. Default: png.")


def register_reproduce(subparsers) -> None:
    r = subparsers.add_parser(
        "reproduce", help="Regenerate a seed paper's figures and compare its findings with the model.",
        description="Regenerate the figures of a published study and print each stated finding beside "
                    "what the model computes.")
    add = adder(r, "reproduce")
    r.add_argument("study", metavar="STUDY", choices=("sci-myrinet-2002",),
                   help="The study to reproduce: sci-myrinet-2002 (Millich, George, Oral 2002).")
    _add_output(add, "the figures", None)
    add("--prices", metavar="FILE",
        help="A price list overriding the shipped example prices for Figures 14 and 15. Default: none.")
    r.set_defaults(func=_reproduce)
