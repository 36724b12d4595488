"""`fabriclab calibrate RUN.json [-o cal.yaml]`: a run's saturation throughput
(or, with --collectives, its alpha and gamma) as the model's calibration file
(`fabriclab model -C cal.yaml`)."""

from __future__ import annotations

from ..errors import UsageError
from .letters import adder
from .options import checked_output, write_out


def _plain_dumper():
    import yaml

    class Plain(yaml.SafeDumper):
        """Every shared value written out: network and calibration files refuse anchors and aliases
        (fabriclab/datafile.py), and several resources calibrated from one point share its figures."""
        def ignore_aliases(self, data) -> bool:
            return True
    return Plain


def cmd_calibrate(args) -> int:
    import yaml
    from .. import schema
    from ..report.calibration_file import calibration
    checked_output(args.output, [args.file])
    if args.collectives:          # the rate's options mean nothing to alpha and gamma: said, not ignored
        given = [o for o, on in (("--stream", args.stream), ("--bidirectional", args.bidirectional),
                                 ("--technology", args.technology is not None),
                                 ("--resource", args.resource != "link")) if on]
        if given:
            raise UsageError(f"{', '.join(given)} calibrate a rate; --collectives writes alpha and gamma")
    if args.technology is not None:
        from ..model.catalog import technology
        have = technology(args.technology).resources     # an unknown one: a line naming those there are
        for name in (n.strip() for n in args.resource.split(",") if n.strip()):
            if name not in have:
                raise UsageError(f"technology {args.technology} has no resource {name[:60]!r} to calibrate "
                                 f"(it has: {', '.join(sorted(have))})")
    doc = schema.load(args.file)
    if args.collectives:
        from ..report.calibration_file import collective_costs
        cal = collective_costs(doc)
        head = ("measured costs of the collectives' model: alpha_s, seconds to start a message, and "
                "gamma_s_per_byte, seconds to reduce a byte")
    else:
        cal = calibration(doc, args.resource, args.technology, args.stream, args.bidirectional)
        head = "measured saturation throughput in MB/s (10^6 B/s)"
    text = (f"# fabriclab calibration from {args.file}: {head}\n"
            + yaml.dump(cal, Dumper=_plain_dumper(), sort_keys=False, allow_unicode=True))
    write_out(text, args.output)
    return 0


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="Turn a run's saturation points into the model's calibration file.")
    add = adder(p, "calibrate")
    p.add_argument("file", metavar="RUN.json", help="A run with message.saturation points (or --stream).")
    add("--output", metavar="PATH", help="The calibration file ('-' = stdout). Default: stdout.")
    p.add_argument("--resource", default="link", metavar="NAME",
                   help="The model resource the run saturated: link, adapter_bus, host_bus, a network file's "
                        "link name or links[I]; several comma-separated. Default: link.")
    p.add_argument("--technology", metavar="NAME",
                   help="Calibrate only this catalog technology's resource. Default: every selected one.")
    p.add_argument("--stream", action="store_true",
                   help="Without saturation points, use message.stream's peak. Default: off.")
    p.add_argument("--bidirectional", action="store_true",
                   help="Use message.bibw's points: pairs across the resource loading it both ways, as an "
                        "all-to-all exchange does; half their aggregate is the rate. Default: off.")
    p.add_argument("--collectives", action="store_true",
                   help="Write the collectives' alpha (message.pingpong's smallest one-way time) and gamma "
                        "(coll.reduce_local's seconds per byte at its largest size) instead of a rate, for "
                        "`fabriclab model --collective OP -C FILE`. Default: off.")
    p.set_defaults(func=cmd_calibrate)
