"""What `fabriclab model` and `fabriclab reproduce` do: turn the options into
the model's question (model/projection.py) or a study's run, and print the
typed result as tables or JSON (registered by cli/model.py)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

from .. import outputs
from ..errors import UsageError
from ..units import parse_size, parse_sizes
from ..model.calibration import Calibration, load_file, parse_flags
from ..model.catalog import system, system_names, technologies
from ..model.choices import DEFAULT_OUT, MAX_NODES
from ..model.evaluate import Curve
from ..model.projection import SCHEMA, Projection, Question, project
from ..model.resources import MB
from ..model.traffic import Traffic
from ..report.escape import terminal


# ---------------------------------------------------------------- parsing
def parse_nodes(spec: str) -> list:
    """'9', '4,9,16', '2:128' (every size if at most 256 sizes, else x2),
    '2:1024:x2' (geometric), '16:256:+16' (arithmetic); K means x1024.
    The sweep syntax is fabriclab's one (units.parse_sizes); only the default
    step differs: model curves want every size over short ranges."""
    parts = []
    for part in filter(None, (x.strip() for x in str(spec).split(","))):
        bits = part.split(":")
        if len(bits) == 2:
            lo, hi = parse_size(bits[0], "node count"), parse_size(bits[1], "node count")
            part += ":+1" if 0 <= hi - lo <= 255 else ":x2"
        parts.append(part)
    out = set(parse_sizes(",".join(parts), "node count")) if parts else set()
    if not out:
        raise UsageError("no node counts given")
    bad = [n for n in out if not 2 <= n <= MAX_NODES]
    if bad:
        raise UsageError(f"node counts must be between 2 and {MAX_NODES:,}, got {min(bad)}")
    if len(out) > 5000:
        raise UsageError(f"{len(out)} node counts are too many; use a geometric step such as 2:100000:x1.5")
    return sorted(out)


def _positive(option: str, value: Optional[float]) -> None:
    """A rate or size option must be a positive finite number (argparse takes nan, inf and -5)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"{option} must be a positive finite number, got {value:g}")


def _calibration(args) -> Calibration:
    cal = parse_flags(args.calibrate)
    if args.calibration_file:
        cal = cal.merge(load_file(args.calibration_file))
    return cal


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


def _table(rows: list, header: list) -> str:
    """Aligned columns; every cell on one line, control characters made visible (names come from files)."""
    rows = [[terminal(c) for c in r] for r in rows]
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    line = lambda r: "  ".join(str(c).rjust(w) if i < len(r) - 1 or i == 0 else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _curve_table(c: Curve, cost: bool) -> str:
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
    return terminal(head) + "\n" + _table(rows, header)


def model_handler(args) -> int:
    if args.list:
        return _list()
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
    from ..studies.sci_myrinet_2002.published import curve as published_curve
    _positive("--target", args.target)
    _positive("--payload", args.payload)
    return Question(
        systems=tuple(args.system or ()), topology_file=args.topology_file, nodes=tuple(parse_nodes(args.nodes)),
        traffic=Traffic(args.traffic, args.hotspot_target, args.seed), calibration=_calibration(args),
        prices_file=args.prices, method=args.method, payload=args.payload, cost=args.cost,
        target_MBps=args.target, maxmin=args.maxmin, published=published_curve if args.published else None,
        plot=None if args.no_plot else Path(args.output) / f"model.{args.plot_format}")


def _print_curves(p: Projection, cost: bool) -> None:
    print(f"Traffic: {p.traffic}. Bandwidth in MB/s (10^6 bytes/s) per node; "
          f"{'calibrated rates where measured' if p.calibrated else 'nominal rates from the packet formats'}.")
    for c in p.drawn:
        print()
        print(_curve_table(c, cost))
    for c in p.published:
        print()
        print(_curve_table(c, False))
    if p.maxmin:
        print("\nMax-min fair steady state (per-node totals, MB/s):")
        print(_table([[m.label, m.n, _fmt(m.min / MB), _fmt(m.median / MB), _fmt(m.max / MB)] for m in p.maxmin],
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
        print(_table([[t.n, "none" if t.system is None else t.system.label, "-" if t.system is None else _fmt(t.cost, 0),
                       "-" if t.system is None else _fmt(t.per_node / MB)] for t in p.target],
                     ["N", "system", "cost $", "MB/s per node"]))
    if p.plot:
        print(f"\nplot: {terminal(p.plot)}")


def _list() -> int:
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


def reproduce_handler(args) -> int:
    from ..studies.sci_myrinet_2002.reproduce import run
    outdir = outputs.directory(args.output or Path(DEFAULT_OUT) / args.study, "figure directory")
    st, found = run(args.study, str(outdir), args.plot_format, args.prices)
    if args.format == "json":
        json.dump({"schema": SCHEMA, "study": args.study, "figures": st.figures,
                   "findings": [f.to_dict() for f in found]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print(f"Reproduction of seed 001 (Millich, George, Oral 2002). Figures in {outdir}:")
    for k, v in st.figures.items():
        print(f"  Figure {k:>2}: {v}")
    print("\nSolid curves: the exact model; dashed: the seed's formulas as published. Findings:")
    for f in found:
        print(f"\n{f.id} ({f.where}) [{f.verdict}]\n  seed:  {f.seed}\n  model: {f.model}")
        if f.why:
            print(f"  why:   {f.why}")
    return 0
