"""`fabriclab topology import|show|diff|export`: a site's own network (docs/topology.md).

import reads what a site keeps (ibnetdiscover's output, Slurm's topology) into
a network file, checked by building the model's network from the very text it
writes, so a written file always loads; show sums a network file up; diff
compares two (exit 1 when they differ); export writes one as Slurm's
topology.conf. The readers load only when a file is read."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from ..datafile import shown
from ..errors import UsageError
from ..model.limits import RATE_MBPS
from ..report.escape import terminal
from .letters import adder
from .options import checked_output, integer, number, write_out

FORMATS = ("ibnetdiscover", "slurm")
MAX_TEXT = 64 << 20              # as a network file (docs/model.md, "Limits on network files")
MAX_LINE = 1 << 20               # a Slurm Nodes= list of 100,000 names written out is about 1 MB
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")    # tab, newline and CR pass


def _output(args) -> None:
    """-o checked before any work; an existing file is replaced only with --force."""
    checked_output(args.output, [args.file, *([args.hosts] if getattr(args, "hosts", None) else [])])
    if args.output and args.output != "-" and not args.force and os.path.isfile(args.output):
        raise UsageError(f"cannot write {args.output}: it exists; --force replaces it")


def _plain(text: str, where: str) -> None:
    """Text that both formats could be: no control character, no line past MAX_LINE."""
    bad = _CONTROL.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise UsageError(f"{where}: line {line}: a control character ({shown(bad.group())}): "
                         "not ibnetdiscover output or a Slurm topology")
    for n, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE:
            raise UsageError(f"{where}: line {n} is longer than {MAX_LINE:,} characters ({len(line):,}): "
                             "not ibnetdiscover output or a Slurm topology")


def _detect(text: str, where: str) -> str:
    from ..topology import ibnet, slurm
    if ibnet.detect(text):
        return "ibnetdiscover"
    if slurm.detect(text):
        return "slurm"
    raise UsageError(f"{where}: neither ibnetdiscover output nor a Slurm topology.conf or topology.yaml "
                     "(give --from if it is one of them)")


def _read(args, text: str, fmt: str) -> dict:
    from ..topology import ibnet, slurm
    if fmt == "ibnetdiscover":
        if args.rate or args.cables:
            raise UsageError("--rate and --cables are for a Slurm topology, which keeps no rates or cables; "
                             "ibnetdiscover prints each cable")
        hosts = None
        if args.hosts:
            from ..datafile import read_data_file
            hosts = read_data_file(args.hosts, "hosts map")
        data = ibnet.read(text, args.file, hosts, hosts_where=args.hosts)
        if args.hosts and isinstance(data.get("source"), dict):
            data["source"].setdefault("given", {})["hosts"] = Path(args.hosts).name
        return data
    if args.hosts:
        raise UsageError("--hosts maps InfiniBand GUIDs and descriptions to names; a Slurm topology names its hosts")
    if not args.rate:
        raise UsageError(f"{args.file}: a Slurm topology keeps no rates: give --rate MBPS for the host cables "
                         "(and one per level of switches above, else the last repeats)")
    return slurm.read(text, args.file, rates_MBps=list(args.rate), cables=args.cables or 1)


def network_text(data: dict) -> str:
    """A network file's YAML: the top keys as YAML, each link one line (a JSON object is a
    YAML flow mapping), so a fabric of thousands of cables reads and diffs line by line."""
    import yaml
    top = {k: v for k, v in data.items() if k != "links"}
    head = yaml.safe_dump(top, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100)
    links = "".join(f"  - {json.dumps(ln, ensure_ascii=False)}\n" for ln in data.get("links", []))
    return ("# a fabriclab network file (docs/model.md); its source says what was read\n"
            + head + "links:\n" + links)


def cmd_import(args) -> int:
    from ..datafile import parse
    from ..inputs import read_text
    from ..model.topologies import CustomNetwork
    _output(args)
    text = read_text(args.file, "network description", MAX_TEXT)
    _plain(text, args.file)
    fmt = args.fmt or _detect(text, args.file)
    data = _read(args, text, fmt)
    out = network_text(data)
    where = f"{args.file} (as imported)"
    net = CustomNetwork.from_dict(parse(out, where, "YAML"), where=where)    # the written text loads
    write_out(out, args.output)
    degraded = sum(1 for c in net.cable_facts() if c["degraded"] is not None)
    print(terminal(f"fabriclab: {fmt} {args.file}: {net.n_nodes:,} hosts, {len(net.switch_names):,} switches, "
                   f"{net.cables:,} cables ({degraded:,} degraded) -> {args.output or 'stdout'}"), file=sys.stderr)
    return 0


def _network_file(path: str):
    from ..datafile import read_data_file
    return read_data_file(path, "network file")


def cmd_show(args) -> int:
    from ..topology.show import summary
    for line in summary(_network_file(args.file), args.file):
        print(terminal(line))
    return 0


def cmd_diff(args) -> int:
    from ..topology.diff import changes
    lines = changes(_network_file(args.old), _network_file(args.new), args.old, args.new)
    for line in lines:
        print(terminal(line))
    return 1 if lines else 0


def cmd_export(args) -> int:
    from ..topology import slurm
    _output(args)
    write_out(slurm.export(_network_file(args.file)), args.output)
    return 0


def register(sub) -> None:
    p = sub.add_parser("topology", help="A site's own network: import (ibnetdiscover, Slurm), show, diff, export.")
    tsub = p.add_subparsers(dest="topology_command", metavar="ACTION")
    q = tsub.add_parser("import", help="Read ibnetdiscover's output or Slurm's topology into a network file.")
    q.add_argument("file", metavar="FILE", help="ibnetdiscover's output (plain, -f or -p), or Slurm's topology.conf "
                                                "or topology.yaml.")
    q.add_argument("--from", dest="fmt", choices=FORMATS, metavar="FORMAT",
                   help="ibnetdiscover or slurm. Default: detected from FILE.")
    q.add_argument("--hosts", metavar="MAP", help="ibnetdiscover: a YAML or JSON mapping of node GUID, port GUID "
                                                  "or description to host name. Default: each adapter's host is "
                                                  "the first word of its description.")
    q.add_argument("--rate", type=number(RATE_MBPS.lo, RATE_MBPS.hi), nargs="+", metavar="MBPS",
                   help="slurm: each cable's rate in MB/s, the host cables first, then one per level of switches "
                        "up (the last repeats). Required for slurm: it keeps none.")
    q.add_argument("--cables", type=integer(1, 1000), metavar="N",
                   help="slurm: cables between a switch and each switch below it. Default: 1.")
    _out(q, "import", "The network file to write (YAML). Default: stdout.")
    q.set_defaults(func=cmd_import)
    q = tsub.add_parser("show", help="A network file summed up: hosts, switches, cables by rate, parallel "
                                     "cables, levels, degraded cables, source.")
    q.add_argument("file", metavar="NET.yaml")
    q.set_defaults(func=cmd_show)
    q = tsub.add_parser("diff", help="Cables, hosts and switches added, removed or changed between two network "
                                     "files; exit 1 when any changed.")
    q.add_argument("old", metavar="OLD.yaml")
    q.add_argument("new", metavar="NEW.yaml")
    q.set_defaults(func=cmd_diff)
    q = tsub.add_parser("export", help="A network file as Slurm's topology.conf (topology/tree).")
    q.add_argument("file", metavar="NET.yaml")
    q.add_argument("--to", choices=("slurm",), required=True, metavar="FORMAT", help="slurm (topology.conf).")
    _out(q, "export", "The topology.conf to write. Default: stdout.")
    q.set_defaults(func=cmd_export)


def _out(q, action: str, text: str) -> None:
    adder(q, f"topology {action}")("--output", metavar="PATH", help=text)
    q.add_argument("--force", action="store_true", help="Replace an existing output file. Default: refused.")
