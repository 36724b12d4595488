"""`fabriclab list`, `show` and `compare`: the commands that read the registry
or result files. They start fast: numpy loads only once a file is read."""

from __future__ import annotations

import sys
from pathlib import Path

from ..report import FORMATS
from .letters import adder
from .options import checked_output, number, write_out


def cmd_list(args) -> int:
    from ..measure import libraries
    from ..suite.benchmarks import LEVELS, LIBRARY_LEVELS, REGISTRY
    width = max(len(n) for n in REGISTRY)
    libs = libraries.find_all(libraries.default_mpicc())
    missing = {lv: f" [unavailable: {libs[lv].reason}; `{libs[lv].enable}` enables it]"
               for lv in LIBRARY_LEVELS if not libs[lv].available}
    for level, text in LEVELS.items():
        print(f"{level:<{width}}  level      {text}{missing.get(level, '')}")
    for b in REGISTRY.values():
        extra = " ".join(f"{k}={v}" for k, v in b.params.items())  # a|b: choices, default first
        need = b.min_ranks > 2 or b.even_ranks
        ranks = f" [ranks >= {b.min_ranks}{', even' if b.even_ranks else ''}]" if need else ""
        named = " [run when named]" if b.suite is None else ""
        print(f"{b.name:<{width}}  {b.metric:<9}  {b.summary} [axes {','.join(b.axes)}]{ranks}"
              + (f" [params {extra}]" if extra else "") + named + (" [unavailable]" if b.level in missing else ""))
    from ..errors import UsageError
    try:
        _algorithms(args.mpi_home, build_core=False)
    except UsageError as e:
        print(f"\ncoll algorithms: no MPI to ask ({e})")
    return 0


def _algorithms(mpi_home, build_core: bool) -> None:
    """The collectives' algorithm names of the MPI in use, from its core's probe
    (measure/coll_algorithms.py); the core is built first only when asked."""
    from ..errors import RunError
    from ..measure import build, coll_algorithms, mpi
    from ..suite.benchmarks import REGISTRY
    m = mpi.discover(home=mpi_home)
    core = build.ensure_core(m) if build_core else build.planned(m)
    if not build_core and not Path(core.path).exists():
        print(f"\ncoll algorithms: the core for {m.mpicc} is not built yet; `fabriclab list --algorithms` "
              "builds it and lists the names each operation accepts")
        return
    try:
        controls = coll_algorithms.probe(core.path)
    except RunError as e:
        print(f"\ncoll algorithms: {e}")
        return
    print(f"\ncoll algorithms of {m.flavour} ({m.mpicc}); -p algorithm=NAME, auto (the default) leaves the "
          "choice to the library:")
    calls = {b.coll.call: name for name, b in REGISTRY.items() if b.coll}
    for (call, form), c in controls.items():
        print(f"{calls.get(call, call)} {form} ({c.name}): {' '.join(c.names)}")


def cmd_algorithms(args) -> int:
    _algorithms(args.mpi_home, build_core=True)
    return 0


def register_list(sub) -> None:
    p = sub.add_parser("list", help="List levels and benchmarks, one line each, and the collectives' "
                                    "algorithms of the MPI in use.")
    p.add_argument("--algorithms", action="store_const", const=cmd_algorithms, dest="func",
                   help="only the collectives' algorithm names, building the core for the MPI first if needed")
    p.add_argument("--mpi-home", metavar="DIR", help="the MPI whose algorithms to list (as run's --mpi-home)")
    p.set_defaults(func=cmd_list)


def cmd_show(args) -> int:
    from .. import schema
    from ..report import tables
    checked_output(args.output, [args.file])
    doc = schema.load(args.file)
    write_out(tables.format_doc(doc, args.format), args.output)
    return 0


def register_show(sub) -> None:
    p = sub.add_parser("show", help="Show a result file (RUN.json or RUN.ndjson) as tables.")
    add = adder(p, "show")
    p.add_argument("file", metavar="RUN.json", help="A result document or its NDJSON stream.")
    add("--format", choices=FORMATS, default="table", metavar="FORMAT",
        help="Output format: table, json, csv or md. Default: table.")
    add("--output", metavar="PATH", help="Write to PATH instead of stdout ('-' = stdout). Default: stdout.")
    p.set_defaults(func=cmd_show)


def cmd_compare(args) -> int:
    from .. import schema
    from ..analysis import merge
    from ..analysis.compare import compare
    from ..report.changes import format_changes
    checked_output(args.output, [args.base, args.new])
    base, new = schema.load(args.base), schema.load(args.new)
    for name, doc in ((args.base, base), (args.new, new)):   # a side that did not finish lacks points, not only time
        if doc.footer.status != "complete":
            from ..report.escape import terminal
            why = f" ({terminal(doc.footer.error)[:120]})" if doc.footer.error else ""
            print(f"fabriclab: note: {terminal(name)} is {doc.footer.status}{why}: compared on the "
                  f"{len(merge.merged(doc))} points it completed", file=sys.stderr)
    _layouts(base, new)
    changes = compare(base, new, args.alpha, args.threshold)
    text = format_changes(changes, args.format, args.base, args.new)
    if args.format in ("table", "md"):
        from ..analysis.tails import compare as compare_tails
        from ..report.changes import tail_lines
        md = args.format == "md"
        lines = tail_lines(compare_tails(base.points, new.points, args.alpha, args.threshold), md)
        text += "".join(f"{'- ' if md else ''}{ln}\n" for ln in lines)
    write_out(text, args.output)
    return 1 if args.fail_on_slower and any(c.verdict == "slower" for c in changes) else 0


def _layouts(base, new) -> None:
    """A note on stderr where the two runs moved a point's bytes through other buffer layouts."""
    from ..analysis.compare import layout_differences
    diff = layout_differences(base, new)
    if diff:
        (bench, variant, size, *_), x, y = diff[0]
        print(f"fabriclab: note: {len(diff)} point(s) were measured with other buffers a side (first: {bench}"
              f"{f' [{variant}]' if variant else ''} at {size} B, {x} against {y}): their ratios compare buffer "
              f"layouts too (-p window_buffers=shared|per-op chooses, docs/usage.md)", file=sys.stderr)


def register_compare(sub) -> None:
    p = sub.add_parser("compare", help="Compare two runs point by point, with significance.")
    add = adder(p, "compare")
    p.add_argument("base", metavar="BASE.json", help="The reference run (RUN.json or RUN.ndjson).")
    p.add_argument("new", metavar="NEW.json", help="The run to judge against it.")
    add("--alpha", type=number(1e-6, 0.999), default=0.05, metavar="P",
        help="One minus the confidence of the ratio's interval. Default: 0.05 (95%% intervals).")
    p.add_argument("--threshold", type=number(0, 0.99), default=0.02, metavar="FRACTION",
                   help="Smallest change worth a verdict: the interval must lie beyond 1 +- it. "
                        "Default: 0.02 (2%%).")
    add("--format", choices=FORMATS, default="table", metavar="FORMAT",
        help="Output format: table, json, csv or md. Default: table.")
    add("--output", metavar="PATH", help="Write to PATH instead of stdout. Default: stdout.")
    p.add_argument("--fail-on-slower", action="store_true",
                   help="Exit with code 1 when any point got significantly slower (for CI). Default: off.")
    p.set_defaults(func=cmd_compare)
