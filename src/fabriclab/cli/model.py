"""`fabriclab model` and `fabriclab reproduce`: their options. Registering them
loads nothing heavy; the handlers (model_cmd.py) load the model library and
matplotlib only when one of these commands runs."""

from __future__ import annotations

from ..model.choices import DEFAULT_OUT, DEFAULT_SYSTEMS, METHODS, PATTERNS


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
    p.add_argument("-s", "--system", metavar="SYSTEM", action="append",
                   help="A named system (see --list) or TECHNOLOGY:TOPOLOGY[:key=value,...]; repeat for several. "
                        f"Default: {' '.join(DEFAULT_SYSTEMS)}.")
    p.add_argument("-n", "--nodes", metavar="SIZES", default="2:128",
                   help="Node counts: N, a list N,M,..., MIN:MAX (every size, or x2 beyond 256 sizes), "
                        "MIN:MAX:xF or MIN:MAX:+S; K means x1024. Default: 2:128.")
    p.add_argument("-T", "--traffic", metavar="PATTERN", default="all-to-all", choices=PATTERNS,
                   help=f"Traffic pattern, one of {', '.join(PATTERNS)}. Default: all-to-all.")
    p.add_argument("--hotspot-target", metavar="NODE", type=int, default=0,
                   help="The node every other node sends to with --traffic hotspot. Default: 0.")
    p.add_argument("--seed", metavar="INT", type=int, default=1,
                   help="Random seed of the permutation and bisection patterns. Default: 1.")
    p.add_argument("-c", "--calibrate", metavar="RES=MBPS", action="append",
                   help="A measured saturation rate replacing a nominal one: RESOURCE=MBps, TECH.RESOURCE=MBps, "
                        "or 'catalog' for the measurements stored in the catalog; repeatable. Default: none.")
    p.add_argument("-C", "--calibration-file", metavar="FILE",
                   help="YAML or JSON file of measured rates (MB/s) by technology and resource. Default: none.")
    p.add_argument("-t", "--topology-file", metavar="FILE",
                   help="A network from a file (YAML or JSON, see docs/model.md), evaluated at its own size beside "
                        "the -s systems, or alone when no -s is given. Default: none.")
    p.add_argument("-P", "--published", action="store_true",
                   help="Also draw the seed's own formulas 'as published' for the systems that have them. "
                        "Default: off (the exact model only).")
    p.add_argument("-M", "--maxmin", action="store_true",
                   help="Also solve the steady-state max-min fair rates of the pattern's flows and show the "
                        "spread of per-node rates. Default: off.")
    p.add_argument("--cost", action="store_true",
                   help="Add total cost and dollars per MB/s to the tables (example prices unless -p). Default: off.")
    p.add_argument("-p", "--prices", metavar="FILE",
                   help="A price list (prices.yaml format) overriding the shipped example prices. Default: none.")
    p.add_argument("--target", metavar="MBPS", type=float,
                   help="Find the cheapest system giving every node at least this many MB/s at each size. "
                        "Default: none.")
    p.add_argument("-m", "--method", metavar="METHOD", default="auto", choices=METHODS,
                   help="Load counting: auto (symmetry or aggregation where available) or enumerate "
                        "(every flow). Default: auto.")
    p.add_argument("--payload", metavar="BYTES", type=float,
                   help="Packet payload for the efficiency payload/(payload+overhead) instead of the catalog's. "
                        "Default: the catalog's.")
    p.add_argument("-f", "--format", metavar="FORMAT", default="table", choices=("table", "json"),
                   help="Output format: table or json. Default: table.")
    p.add_argument("-o", "--output", metavar="DIR", default=DEFAULT_OUT,
                   help=f"Directory for plots. Default: ./{DEFAULT_OUT}.")
    p.add_argument("--plot-format", metavar="FMT", default="png", choices=("png", "svg"),
                   help="Plot file format: png or svg. Default: png.")
    p.add_argument("--no-plot", action="store_true", help="Do not draw the plot. Default: draw it.")
    p.add_argument("-l", "--list", action="store_true",
                   help="List the technologies and named systems with their sources, then exit. Default: off.")
    p.set_defaults(func=_model)


def register_reproduce(subparsers) -> None:
    r = subparsers.add_parser(
        "reproduce", help="Regenerate a seed paper's figures and compare its findings with the model.",
        description="Regenerate the figures of a published study and print each stated finding beside "
                    "what the model computes.")
    r.add_argument("study", metavar="STUDY", choices=("sci-myrinet-2002",),
                   help="The study to reproduce: sci-myrinet-2002 (Millich, George, Oral 2002).")
    r.add_argument("-o", "--output", metavar="DIR",
                   help=f"Directory for the figures. Default: ./{DEFAULT_OUT}/STUDY.")
    r.add_argument("-f", "--format", metavar="FORMAT", default="table", choices=("table", "json"),
                   help="Output format: table or json. Default: table.")
    r.add_argument("--plot-format", metavar="FMT", default="png", choices=("png", "svg"),
                   help="Figure file format: png or svg. Default: png.")
    r.add_argument("-p", "--prices", metavar="FILE",
                   help="A price list overriding the shipped example prices for Figures 14 and 15. Default: none.")
    r.set_defaults(func=_reproduce)
