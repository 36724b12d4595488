"""`fabriclab model --collective OP`: the options turned into the model's
question (model/collective.py), the answer printed as tables, JSON and a
plot, with each point's algorithm and bus bandwidth (suite/collectives.py:
the bytes an operation is about and its bus factor, one source for both)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from .. import outputs
from ..errors import UsageError
from ..suite.collectives import COLLECTIVES
from ..report.escape import terminal
from ..units import fmt_bytes, parse_sizes
from .model_common import COLLECTIVE_NODES, COLLECTIVE_SIZES, PATTERN_ONLY, calibration, parse_nodes, table

DEFAULT_SYSTEM = "ib-ndr-fattree"


def collective(args) -> int:
    from ..model.collective import ALPHA, GAMMA, CollectiveQuestion, predict
    given = [k for k, v in PATTERN_ONLY.items() if getattr(args, k) != v]
    if given:
        raise UsageError(f"--{given[0].replace('_', '-')} belongs to the traffic-pattern model, not --collective")
    if args.per_node < 1:
        raise UsageError(f"--per-node must be at least 1, not {args.per_node}")
    algorithms = tuple(a.strip() for a in (args.algorithm or "").split(",") if a.strip())
    draw = not args.no_plot and args.format != "json"
    if draw:        # before any work or output, as `model` checks its plot's folder
        outputs.files(outputs.directory(args.output, "plot directory"), [_plot_name(args)])
    cal = calibration(args)
    (alpha, a_from), (gamma, g_from) = (_cost(o, v, c, d) for o, v, c, d in (
        ("--alpha", args.alpha, cal.alpha_s, ALPHA), ("--gamma", args.gamma, cal.gamma_s_per_byte, GAMMA)))
    costs = {"alpha": a_from, "gamma": g_from}
    out = []
    for system, nodes in _systems(args):
        q = CollectiveQuestion(args.collective, tuple(parse_sizes(args.sizes or COLLECTIVE_SIZES)), nodes,
                               algorithms, args.per_node, args.placement, alpha, gamma)
        out.append(predict(system, q, cal, _progress()))
    if args.format == "json":
        json.dump({"predictions": [_with_bandwidth(p.to_dict()) for p in out], "costs_from": costs}, sys.stdout,
                  indent=1)
        sys.stdout.write("\n")
        return 0
    for p in out:
        _print(p, costs)
    if draw:
        print(f"\nplot: {terminal(_draw(out, Path(args.output) / _plot_name(args)))}")
    return 0


def _plot_name(args) -> str:
    return f"model-{args.collective}.{args.plot_format}"


def _cost(option: str, value, calibrated, default: float) -> tuple:
    """(seconds, where from: "given", "calibrated" or "assumed") of alpha or gamma."""
    if value is not None:
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise UsageError(f"{option} must be seconds from 0 to 1, got {value:g}")
        return value, "given"
    return (calibrated, "calibrated") if calibrated is not None else (default, "assumed")


def _systems(args) -> list:
    """(system, node counts) for each system asked about: the catalog's at --nodes, a
    network file at its own size."""
    from ..model.catalog import system
    from ..model.netfile import NetworkFile
    out = [(system(s), tuple(parse_nodes(args.nodes or COLLECTIVE_NODES))) for s in args.system or ()]
    if args.topology_file:
        net = NetworkFile(args.topology_file)
        if args.nodes and parse_nodes(args.nodes) != [net.n_nodes]:
            raise UsageError(f"{args.topology_file} has {net.n_nodes} nodes; --nodes cannot change a network "
                             "file's size (leave it out)")
        out.append((net, (net.n_nodes,)))
    return out or [(system(DEFAULT_SYSTEM), tuple(parse_nodes(args.nodes or COLLECTIVE_NODES)))]


def _progress():
    """A line on stderr that counts predictions, where stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    return lambda done, total: print(f"\r{done}/{total} predictions", end="\n" if done == total else "",
                                     file=sys.stderr, flush=True)


def _rates(op: str, ranks: int, size: int, seconds: float) -> tuple:
    """(algorithm bandwidth, bus bandwidth) in bytes/s, as the coll level reports them."""
    c = COLLECTIVES[op]
    alg = c.bytes_per_op(size, ranks) / seconds if seconds > 0 else math.nan
    factor = c.bus_factor(ranks)
    return alg, alg * factor if factor is not None else math.nan


def _with_bandwidth(d: dict) -> dict:
    op = d["question"]["op"]
    for pt in d["points"]:
        pt["algbw_Bps"], pt["busbw_Bps"] = _rates(op, pt["ranks"], pt["size"], pt["seconds"])
    return d


def _print(p, costs: dict) -> None:
    q = p.question
    assumed = [k for k, v in costs.items() if v == "assumed"]
    note = f" ({' and '.join(assumed)} assumed: calibrate them, `fabriclab calibrate RUN.json --collectives`)" \
        if assumed else ""
    calibrated = [k for k, v in costs.items() if v == "calibrated"]
    note += f" ({' and '.join(calibrated)} from the calibration file)" if calibrated else ""
    for n in dict.fromkeys(pt.nodes for pt in p.points):
        pts = [pt for pt in p.points if pt.nodes == n]
        ranks, algs = pts[0].ranks, list(dict.fromkeys(pt.algorithm for pt in pts))
        print(f"\n{q.op} on {terminal(p.system)}: {n} nodes, {ranks} ranks ({q.per_node} a node, {q.placement}); "
              f"alpha {q.alpha * 1e6:g} us a message, gamma {q.gamma * 1e9:g} ns a byte{note}")
        by = {(pt.algorithm, pt.size): pt for pt in pts}
        rows = []
        for size in q.sizes:
            best = p.best(n, size)
            alg_bw, bus_bw = _rates(q.op, ranks, size, best.seconds)
            rows.append([fmt_bytes(size)] + [f"{by[a, size].seconds * 1e6:,.2f}" for a in algs]
                        + [best.algorithm, _mb(alg_bw), _mb(bus_bw), best.bottleneck or "-"])
        print(table(rows, ["size"] + [f"{a} us" for a in algs]
                     + ["fastest", "algbw MB/s", "busbw MB/s", "bottleneck (fastest)"]))
        leads = [x for x in p.leads if x.nodes == n]
        print("Fastest (sizes in bytes): " + "; ".join(
            f"{x.algorithm} " + (f"at {fmt_bytes(x.first)}" if x.first == x.last else
                                 f"from {fmt_bytes(x.first)} to {fmt_bytes(x.last)}") for x in leads) + ".")
    for x in p.skipped:
        print(f"\n{x.algorithm} on {x.nodes:,} nodes is not computed: {terminal(x.why)}.")
    if p.missing:
        print(f"\n{terminal(p.system)} has no configuration of " + ", ".join(map(str, p.missing)) + " nodes.")


def _mb(bps: float) -> str:
    return "-" if not math.isfinite(bps) else f"{bps / 1e6:,.1f}"


def _draw(predictions: list, path: Path) -> Path:
    """Each algorithm's predicted time against size, one curve per system and node count."""
    from ..model.plot import Series, figure
    series = []
    for p in predictions:
        for n in dict.fromkeys(pt.nodes for pt in p.points):
            for g, a in enumerate(p.question.algorithms):
                pts = [pt for pt in p.points if pt.nodes == n and pt.algorithm == a and pt.size > 0]
                if pts:
                    series.append(Series(f"{a}, {p.system}, {n} nodes", [pt.size for pt in pts],
                                         [pt.seconds * 1e6 for pt in pts], group=g))
    return figure(series, path, f"{predictions[0].question.op}: predicted time of each algorithm",
                  "time (us)", "size (bytes)", logx=True, logy=True)
