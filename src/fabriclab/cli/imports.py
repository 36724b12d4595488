"""`fabriclab import FILE --from osu|imb|hpcc|iperf3|sockperf`: another tool's output as a run document.

`show` and `compare` then read it beside fabriclab's own runs. It starts
fast: the parsers load only when a file is read."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import outputs
from ..errors import UsageError
from ..report.escape import terminal
from ..schema.fields import MAX_RANKS
from .letters import adder
from .options import integer

TOOLS = ("osu", "imb", "hpcc", "iperf3", "sockperf")


def default_output(path: str, tool: str) -> Path:
    """results/imported-<tool>-<file stem>.json, beside the runs of `fabriclab run`."""
    return Path("results") / f"imported-{tool}-{Path(path).stem}.json"


def cmd_import(args) -> int:
    from .. import imports
    from ..schema.document import collector_paused
    default = args.output is None
    out = None if args.output == "-" else outputs.file(args.output or default_output(args.file, args.tool),
                                                        inputs=[args.file])
    with collector_paused():   # a point's objects are all kept: collections would find nothing to free
        doc = imports.load(args.file, args.tool, ["fabriclab", *args.argv], args.ranks)
        if default:            # the default name never replaces another import: NAME-2.json, as run does
            out = outputs.unique(out, stream=False)
        try:
            return _write(doc, args, out)
        except BaseException:
            if default and out.exists() and not out.stat().st_size:    # the name's placeholder, never written
                out.unlink()
            raise


def _write(doc, args, out) -> int:
    imp, npts = doc.header.imported, doc.footer.points
    # An imported point merges to itself (analysis/merge.py): readers derive
    # the merged points at no cost, so they are not stored a second time.
    if args.output == "-":
        doc.dump(sys.stdout, derived=False)
        where = "stdout"
    else:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            doc.write(out, derived=False)
        except OSError as e:
            raise UsageError(f"cannot write {out}: {e.strerror}") from None
        where = str(out)
    skipped = len(doc.skips)
    extra = (f"; skipped {skipped} row{'s' if skipped > 1 else ''} without a time" if skipped else "") + (
        f"; not imported: {', '.join(imp['ignored'])}" if imp["ignored"] else "") + "".join(
        f"; {note}" for note in imp.get("notes") or ())
    # the names come from the file: a terminal must not obey what they hold
    print(terminal(f"fabriclab: imported {npts} points of {args.tool.upper()} {', '.join(imp['benchmarks'])} "
                   f"from {args.file} -> {where}{extra}"), file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("import", help="Read OSU, IMB, HPCC, iperf3 or sockperf output into a result document.")
    p.add_argument("file", metavar="FILE", help="The benchmark's text output, as it printed it.")
    p.add_argument("--from", dest="tool", choices=TOOLS, required=True, metavar="TOOL",
                   help="Which tool wrote FILE: osu (OSU Micro-Benchmarks), imb (Intel MPI Benchmarks, "
                        "IMB-MPI1 and IMB-NBC), hpcc (HPC Challenge's hpccoutf.txt: its network figures), "
                        "iperf3 (its --json output, TCP or UDP, -P, -R, --bidir; several concatenated) or sockperf "
                        "(its client's output or --full-log file: ping-pong, under-load, throughput).")
    p.add_argument("--ranks", type=integer(1, MAX_RANKS), metavar="N",
                   help="OSU only: the processes the collective tests ran on, which OSU does not print "
                        "(default 2); IMB prints its own")
    adder(p, "import")("--output", metavar="RUN.json",
                       help="Where to write the document ('-' = stdout). "
                            "Default: results/imported-TOOL-STEM.json (STEM: FILE's name without suffix).")
    p.set_defaults(func=cmd_import)
