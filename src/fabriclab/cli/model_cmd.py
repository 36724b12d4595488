"""What `fabriclab model` and `fabriclab reproduce` do: call the model library
and print its tables, plots and findings (registered by cli/model.py)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

from .. import outputs
from ..errors import UsageError
from ..units import parse_size, parse_sizes
from ..model import crossover as X
from ..studies.sci_myrinet_2002 import published
from ..model.calibrate import Calibration, load_file, parse_flags
from ..model.catalog import system, system_names, technologies
from ..model.cost import price_list
from ..model.choices import MAX_NODES
from ..model.evaluate import Curve, Point, cheapest, curve, maxmin_rates
from ..model.filesystem import FileSystem
from ..model.loads import METHODS
from ..model.plot import Series, figure
from ..model.resources import MB
from ..model.traffic import Traffic

from ..model.choices import DEFAULT_OUT, DEFAULT_SYSTEMS
SCHEMA = "fabriclab.model/1"


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
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return f"{x:,.{digits}f}"


def _table(rows: list, header: list) -> str:
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
    return head + "\n" + _table(rows, header)


def _published_curve(key: str, ns, cal_tech: dict) -> Optional[Curve]:
    """The seed's own formulas for the systems that have them (published.py), or None."""
    s = system(key)
    f = published.form(s)
    if f is None:
        return None
    res = s.tech.resources
    c = Curve(key + ":published", s.label + " (as published)", bool(cal_tech))
    if f[0] == "sci":
        dims = f[1]
        bl = cal_tech.get("link", res["link"].effective())
        bb = cal_tech.get("adapter_bus", res["adapter_bus"].effective())
        for n in ns:
            r = round(n ** (1.0 / dims))
            if r >= 2 and r ** dims == n:
                v = published.sci_bandwidth(r, dims, bl, bb)
                c.points.append(Point(n, v["overall"], v["overall"], "as published", "", "", "published", ""))
        return c
    _, topo, cables, ports = f
    for n in ns:
        v = published.myrinet(topo, n, res["link"].gross.value, res["link"].payload.value,
                              cal_tech.get("link"), ports=ports, cables=cables)
        c.points.append(Point(n, v.overall, v.overall, "as published", "", "", "published", ""))
    return c


def model_handler(args) -> int:
    if args.list:
        return _list()
    if not args.no_plot:
        outputs.directory(args.output, "plot directory")
    _positive("--target", args.target)
    _positive("--payload", args.payload)
    ns = parse_nodes(args.nodes)
    cal = _calibration(args)
    traffic = Traffic(args.traffic, args.hotspot_target, args.seed)
    prices = price_list(args.prices)
    # a network file is compared with the systems named by -s; alone, it is not set against the defaults
    named = args.system or (() if args.topology_file else DEFAULT_SYSTEMS)
    systems = [system(k) for k in named]
    files = [FileSystem(args.topology_file)] if args.topology_file else []
    cal.check([s.tech for s in systems], technologies(),
              frozenset().union(*(f.resource_names() for f in files)))
    if args.method not in METHODS:
        raise UsageError(f"unknown method {args.method!r}")
    sizes = {s.key: ns for s in systems} | {f.key: [f.n_nodes] for f in files}
    systems = systems + files
    curves = [curve(s, sizes[s.key], cal, traffic, args.method, prices, args.payload, with_cost=True)
              for s in systems]
    extra = [_custom(c) for s, c in zip(systems, curves) if isinstance(s, FileSystem)]
    pubs, no_pub = [], []
    if args.published:
        if traffic.kind != "all-to-all":
            raise UsageError("--published applies to all-to-all traffic only (the seed's formulas)")
        pubs = [None if isinstance(s, FileSystem) else _published_curve(s.key, ns, s.calibrated(cal))
                for s in systems]
        no_pub = [s.label for s, c in zip(systems, pubs) if c is None]
        pubs = [c for c in pubs if c is not None]
    all_curves = [c for c in curves if c.points]
    empty = [c.label for c in curves if not c.points]
    segs = X.segments(all_curves)
    words = X.sentence(segs)
    cost_words = None
    if args.cost:
        costed = [c for c in all_curves if any(p.cost_per_mbps is not None for p in c.points)]
        cost_words = X.sentence(X.segments(costed, attr="cost_per_mbps", lower_better=True)) if costed else None
    target_rows = []
    if args.target is not None:
        for n in sorted({n for s in systems for n in sizes[s.key]}):
            rows = cheapest(systems, n, args.target, cal, prices, traffic, args.method, args.payload, curves)
            target_rows.append((n, rows[0] if rows else None))
    mm = []
    if args.maxmin:
        for s in systems:
            for n in sizes[s.key]:
                r = maxmin_rates(s, n, cal, traffic, args.payload)
                if r is not None:
                    mm.append({"system": s.key, "label": s.label, "n": n, **r})
    out = Path(args.output)
    plot = None
    if not args.no_plot and all_curves:
        series = [Series(c.label + (" (calibrated)" if c.calibrated else ""), [p.n for p in c.points],
                         [p.per_node / MB for p in c.points], group=g) for g, c in enumerate(all_curves)]
        if cal:
            series += [Series(c.label + " (nominal)", [p.n for p in c.points], [p.nominal / MB for p in c.points],
                              dashed=True, group=g) for g, c in enumerate(all_curves) if c.calibrated]
        series += [Series(c.label, [p.n for p in c.points], [p.per_node / MB for p in c.points], dashed=True,
                          group=g) for g, c in enumerate(pubs)]
        ys = [y for sr in series for y in sr.ys if y > 0]
        xs = [x for sr in series for x in sr.xs]
        plot = figure(series, out / f"model.{args.plot_format}", f"Per-node bandwidth, {traffic.describe()}",
                      "Bandwidth per node (MB/s)", logx=max(xs) / min(xs) > 64,
                      logy=bool(ys) and max(ys) / min(ys) > 100,
                      note="dashed: nominal (uncalibrated) or as published" if (cal or pubs) else None)
    if args.format == "json":
        doc = {"schema": SCHEMA, "traffic": traffic.describe(), "calibrated": bool(cal),
               "systems": [c.to_dict() for c in curves], "published": [c.to_dict() for c in pubs],
               "no_published_form": no_pub,
               "custom": extra, "best": words, "segments": [s.__dict__ for s in segs],
               "cost_effectiveness": cost_words, "plot": str(plot) if plot else None,
               "maxmin": [{k: v for k, v in m.items() if k != "label"} for m in mm],
               "target": None if args.target is None else [
                   {"n": n, "target_MBps": args.target,
                    "cheapest": None if r is None else {"system": r[1].key, "cost_usd": r[0],
                                                        "per_node_bytes_per_s": r[2].per_node}}
                   for n, r in target_rows]}
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print(f"Traffic: {traffic.describe()}. Bandwidth in MB/s (10^6 bytes/s) per node; "
          f"{'calibrated rates where measured' if cal else 'nominal rates from the packet formats'}.")
    for c in all_curves:
        print()
        print(_curve_table(c, args.cost))
    for c in pubs:
        print()
        print(_curve_table(c, False))
    if mm:
        print("\nMax-min fair steady state (per-node totals, MB/s):")
        print(_table([[m["label"], m["n"], _fmt(m["min"] / MB), _fmt(m["median"] / MB), _fmt(m["max"] / MB)]
                      for m in mm], ["system", "N", "min", "median", "max"]))
    if empty:
        print("\nno configuration in this size range: " + ", ".join(empty))
    if no_pub:
        print("\nno 'as published' formula (only the seed's SCI and Myrinet systems have one): "
              + ", ".join(no_pub))
    print("\nBest per-node bandwidth: " + words + ".")
    if cost_words:
        print("Best cost effectiveness ($ per MB/s): " + cost_words + ".")
    if target_rows:
        print(f"\nCheapest system giving every node at least {args.target:g} MB/s:")
        print(_table([[n, "none" if r is None else r[1].label, "-" if r is None else _fmt(r[0], 0),
                       "-" if r is None else _fmt(r[2].per_node / MB)] for n, r in target_rows],
                     ["N", "system", "cost $", "MB/s per node"]))
    if plot:
        print(f"\nplot: {plot}")
    return 0


def _custom(c: Curve) -> dict:
    """The load result of a network file's one point (JSON 'custom', kept beside its curve)."""
    p = c.points[0]
    d = p.result.to_dict()
    d["bottleneck"] = p.bottleneck
    return d


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
