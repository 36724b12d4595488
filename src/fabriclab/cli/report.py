"""`fabriclab report` (one self-contained HTML file of one or more runs) and
`fabriclab plot` (one figure, SVG or PNG), both drawn by report/figures.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .. import outputs
from ..errors import UsageError
from .letters import adder
from .options import number, write_out

WIRE_RATE = number(1e-6, 1e9)       # MB/s: the network files' range (model/limits.py), 1 B/s to 1 PB/s

METRIC_CHOICES = ("latency", "bandwidth", "aggregate", "per-process", "slowest", "fairness", "message-rate", "rate")
X_CHOICES = ("size", "stride", "active", "conns")
FIGURE_SUFFIXES = (".svg", ".png")
NETWORK_SUFFIXES = (".yaml", ".yml")       # a report's input so named is a network file


def _load_runs(paths: list[str]) -> list[tuple[str, dict]]:
    """(name, document) per file; a file's stem names it unless two share one."""
    from .. import schema
    return _named([(p, schema.load(p)) for p in paths])


def _named(docs: list[tuple[str, object]]) -> list[tuple[str, dict]]:
    stems = [Path(p).stem for p, _ in docs]
    return [(s if stems.count(s) == 1 else p, d) for s, (p, d) in zip(stems, docs)]


def _load_inputs(paths: list[str]) -> tuple[list[tuple[str, dict]], list[dict]]:
    """The runs among the report's inputs, named, and the network files' facts (topology/facts.py):
    a YAML file is a network file; a JSON file a result, else a network file when it holds
    `nodes` and `links` (else the result's own error)."""
    from .. import schema
    from ..topology.facts import facts
    docs, networks = [], []
    for p in paths:
        if Path(p).suffix.lower() in NETWORK_SUFFIXES:
            networks.append(facts(_data(p), p))
            continue
        try:
            docs.append((p, schema.load(p)))
        except UsageError:
            data = _data(p, quiet=True)
            if not (isinstance(data, dict) and "nodes" in data and "links" in data):
                raise
            networks.append(facts(data, p))
    return _named(docs), networks


def _data(path: str, quiet: bool = False):
    """A network file's content, bounded (datafile.py); None where `quiet` and it does not read."""
    from ..datafile import read_data_file
    try:
        return read_data_file(path, "network file")
    except UsageError:
        if quiet:
            return None
        raise


def _wire(args) -> tuple[float | None, str, str]:
    """The wire rate the efficiency figure divides by (bytes/s), how it was
    given, and a short name for the figure's title."""
    if args.wire_rate is not None and args.technology:
        raise UsageError("give --wire-rate or --technology, not both")
    if args.wire_rate is not None:
        return args.wire_rate * 1e6, f"--wire-rate {args.wire_rate:g} MB/s", f"{args.wire_rate:g} MB/s"
    if args.technology:
        from ..model.catalog import technology
        tech = technology(args.technology)
        link = tech.resources.get("link")
        if link is None:
            raise UsageError(f"technology {args.technology!r} has no link rate in the catalog")
        return (float(link.gross), f"{tech.name} link, {float(link.gross) / 1e6:g} MB/s ({link.gross.source})",
                f"{args.technology} ({float(link.gross) / 1e6:g} MB/s)")
    return None, "", ""


def cmd_report(args) -> int:
    from ..report import html
    wire, wire_text, wire_name = _wire(args)
    out = args.output or str(Path(args.files[0]).with_suffix(".html"))
    if out != "-":
        outputs.file(out, stream=True, inputs=args.files)
    runs, networks = _load_inputs(args.files)
    if not runs:
        raise UsageError("report needs a result (RUN.json) beside a network file; "
                         "`fabriclab topology show` sums up a network file alone")
    write_out(html.render(runs, wire, wire_text, wire_name, {"network": networks}), out)
    if out != "-":
        print(f"report: {out}")
    return 0


def register_report(sub) -> None:
    p = sub.add_parser("report", help="One self-contained HTML report of one or more runs (figures inline).")
    p.add_argument("files", nargs="+", metavar="RUN.json",
                   help="Result documents (or NDJSON streams, or imported results); two or more are overlaid, "
                        "and two are compared point by point. A network file among them (YAML, or JSON with "
                        "nodes and links) is drawn in the section 'The network'.")
    adder(p, "report")("--output", metavar="PATH",
                       help="The HTML file ('-' = stdout). Default: the first run's path with .html.")
    p.add_argument("--wire-rate", type=WIRE_RATE, metavar="MBPS",
                   help="The wire rate in MB/s (10^6 B/s) for the efficiency figure. Default: none.")
    p.add_argument("--technology", metavar="NAME",
                   help="Take the wire rate from a catalog technology's link (`fabriclab model --list`). "
                        "Default: none.")
    p.set_defaults(func=cmd_report)


def _split(items: list[str]) -> tuple[list[str], list[str]]:
    """Positional words: result files first, benchmark or level names after."""
    files, names = [], []
    for item in items:
        if not names and (item.endswith((".json", ".ndjson")) or os.path.isfile(item)):
            files.append(item)
        else:
            names.append(item)
    if not files:
        raise UsageError("plot needs a result file (RUN.json) before any benchmark name")
    return files, names


def _benches(names: list[str], measured: list[str]) -> list[str]:
    from ..suite.benchmarks import LEVELS, REGISTRY
    if not names:
        return measured
    out = []
    for n in names:
        if n in LEVELS:
            picked = [b for b in measured if b.split(".", 1)[0] == n]
        elif n in REGISTRY or n in measured:
            picked = [n]
        else:
            raise UsageError(f"unknown benchmark or level {n!r}; `fabriclab list` shows them")
        if not picked or not set(picked) & set(measured):
            raise UsageError(f"{n} was not measured in the given runs (they have: {', '.join(measured)})")
        out += [b for b in picked if b in measured and b not in out]
    return out


def cmd_plot(args) -> int:
    from dataclasses import replace
    from ..suite.benchmarks import REGISTRY
    from ..report import figures
    from ..report.work import app_of
    files, names = _split(args.items)
    out = args.output
    if out and Path(out).suffix.lower() not in FIGURE_SUFFIXES:
        raise UsageError(f"cannot tell the figure format of {out}: name it .svg or .png")
    runs = [figures.RunView.of(n, d) for n, d in _load_runs(files)]
    measured = list(dict.fromkeys(b for r in runs for b in r.benches()))
    if not measured:
        raise UsageError(f"nothing to draw: {', '.join(files)} hold{'s' if len(files) == 1 else ''} no measured point")
    benches = _benches(names, measured)
    metrics = {REGISTRY[b].metric for b in benches if b in REGISTRY}
    metric = args.metric or (metrics.pop() if len(metrics) == 1 else "bandwidth")
    x = args.x
    with_x = [b for b in benches if x in (REGISTRY[b].axes if b in REGISTRY else ("size",))]
    if not with_x:
        raise UsageError(f"{', '.join(benches)} {'has' if len(benches) == 1 else 'have'} no {x} axis")
    benches = with_x
    xlog = None if args.xscale is None else args.xscale == "log"
    fig = figures.sweep(runs, benches, metric, x, xlog=xlog)
    if metric == "rate" and len(benches) == 1 and app_of(benches[0]):     # one app: its own unit
        fig.y = replace(fig.y, label=app_of(benches[0]).rate.axis)
    if args.yscale:
        fig.y = replace(fig.y, log=args.yscale == "log")
    if args.title:
        fig.title = args.title
    if fig.empty():
        has = "has" if len(benches) == 1 else "have"
        if xlog is not False and not figures.sweep(runs, benches, metric, x, xlog=False).empty():
            raise UsageError(f"nothing to draw on a log axis: {', '.join(benches)} {has} {metric} values at {x} 0 "
                             "only; --xscale linear draws them")
        raise UsageError(f"nothing to draw: {', '.join(benches)} {has} no {metric} values along {x}")
    if "curves shown" in fig.note:
        print(f"plot: {fig.note.strip(' ()')}; name fewer benchmarks to see the rest", file=sys.stderr)
    if not out:
        out = str(Path(files[0]).with_name(f"{Path(files[0]).stem}-{fig.id}.svg"))
    outputs.file(out, stream=True, inputs=files)
    if out.lower().endswith(".png"):
        from ..report.raster import render_png
        render_png(fig, out)
    else:
        from ..report import svg
        write_out('<?xml version="1.0" encoding="UTF-8"?>\n' + svg.render(fig) + "\n", out)
    print(f"plot: {out}")
    return 0


def register_plot(sub) -> None:
    p = sub.add_parser("plot", help="One figure of one or more runs, as SVG or PNG.")
    p.add_argument("items", nargs="+", metavar="RUN.json|BENCH",
                   help="Result files, then benchmarks or levels to draw (default: every benchmark measured).")
    adder(p, "plot")("--output", metavar="FIG.svg|FIG.png",
                     help="The figure; its suffix picks the format. Default: RUN-<figure>.svg beside the run.")
    p.add_argument("--metric", choices=METRIC_CHOICES, metavar="METRIC",
                   help=f"The y axis: {', '.join(METRIC_CHOICES)} (rate: an app's work per second). "
                        "Default: the benchmarks' own metric.")
    p.add_argument("--x", choices=X_CHOICES, default="size", metavar="AXIS",
                   help="The x axis: size, stride, active or conns; the other axes that vary make one curve "
                        "each. Default: size.")
    p.add_argument("--xscale", choices=("log", "linear"), help="Default: log for size, stride and conns.")
    p.add_argument("--yscale", choices=("log", "linear"), help="Default: log, linear for fairness.")
    p.add_argument("--title", help="The figure's title. Default: what it shows.")
    p.set_defaults(func=cmd_plot)
