"""`fabriclab model --topology-file FILE --flow SPEC ...`: socket flows on a
network file (model/sockets.py): each TCP stream's max-min share, and each
UDP stream's share of its offer, the loss the cable that freezes it predicts
and that cable's name, as a table or JSON (docs/sockets.md, "On the
testbed: loss and shares against the model")."""

from __future__ import annotations

import json
import sys

from ..errors import UsageError
from ..model.choices import DEFAULT_OUT
from ..report.escape import terminal
from ..suite.udp import HEADER, MAX_PAYLOAD, MAX_RATE
from ..units import parse_size
from .model_common import PATTERN_ONLY, table
from .options import integer

FLOW_FORMS = "udp:SRC:DST:RATE[:DATAGRAM] or tcp:SRC:DST"
# Options of the other models, with the value meaning "not given" (--no-plot: none is drawn anyway).
OTHERS_ONLY = {**PATTERN_ONLY, "system": None, "nodes": None, "seed": 1, "calibrate": None, "calibration_file": None,
               "output": DEFAULT_OUT, "plot_format": "png"}


def add_options(add) -> None:
    add("--flow", metavar="SPEC", action="append",
        help=f"A socket flow on --topology-file: {FLOW_FORMS}. RATE is bits/s per flow with K, M, G, T "
             "(1K = 1024), as udp.stream's -p rate= takes it: of payload with DATAGRAM (the datagrams' "
             "payload bytes, put on the wire with their headers and frames), of the wire without. Hosts are "
             "named as the file names them (a name holding ':' cannot be given). Repeat for several. Prints "
             "each flow's max-min share, a UDP flow's loss and the cable that drops it. Default: none.")
    add("--mtu", metavar="BYTES", type=integer(68, 65535), default=None,
        help="The IP MTU that fragments a flow's datagrams. Default: 1500 (Ethernet).")
    add("--frame", metavar="BYTES", type=integer(0, 4096), default=None,
        help="A frame's bytes beyond its IP packet: 38 on an Ethernet cable (header, FCS, preamble and "
             "gap), 14 on fabriclab's testbed. Default: 38.")


def parse_flow(spec: str) -> tuple:
    """'udp:h0:h4:240M:1400' -> ('udp', 'h0', 'h4', bits/s, datagram bytes or None);
    'tcp:h1:h5' -> ('tcp', 'h1', 'h5', None, None)."""
    bits = str(spec).split(":")
    kind = bits[0].lower()
    if kind == "tcp" and len(bits) == 3 and all(bits[1:]):
        return ("tcp", bits[1], bits[2], None, None)
    if kind == "udp" and len(bits) in (4, 5) and all(bits[1:3]):
        rate = parse_size(bits[3], "flow rate in bits/s")
        if not 1 <= rate <= MAX_RATE:
            raise UsageError(f"a flow's rate must be 1 to {MAX_RATE:,} bits/s, not {bits[3]}")
        datagram = parse_size(bits[4], "datagram bytes") if len(bits) == 5 else None
        if datagram is not None and not HEADER <= datagram <= MAX_PAYLOAD:
            raise UsageError(f"a datagram is {HEADER} to {MAX_PAYLOAD} bytes (udp.stream's sizes), not {bits[4]}")
        return ("udp", bits[1], bits[2], rate, datagram)
    raise UsageError(f"a flow is {FLOW_FORMS}, not {spec!r:.80}")


def flows(args) -> int:
    from ..model import sockets
    given = [k for k, v in OTHERS_ONLY.items() if getattr(args, k, v) != v]
    if given:
        raise UsageError(f"--{given[0].replace('_', '-')} is not used by --flow")
    if not args.topology_file:
        raise UsageError("--flow needs --topology-file: the network its flows cross")
    mtu = sockets.DEFAULT_MTU if args.mtu is None else args.mtu
    frame = sockets.ETHERNET_FRAME if args.frame is None else args.frame
    specs = [parse_flow(s) for s in args.flow]
    net = sockets.network(args.topology_file)
    wire = [None if rate is None else sockets.on_wire(rate / 8, d, mtu, frame) for _, _, _, rate, d in specs]
    shares = sockets.shares(net, [(src, dst, w) for (_, src, dst, _, _), w in zip(specs, wire)])
    out = [{"flow": spec, "kind": k, "src": src, "dst": dst, "rate_bps": rate, "datagram_bytes": d,
            "fragments": sockets.fragments(d, mtu) if d else None, "offered_wire_Bps": w,
            "share_wire_Bps": f.share_Bps, "loss": f.loss if k == "udp" else None, "bottleneck": f.cable or None}
           for spec, (k, src, dst, rate, d), w, f in zip(args.flow, specs, wire, shares)]
    if args.format == "json":
        json.dump({"network": args.topology_file, "mtu": mtu, "frame_bytes": frame, "flows": out}, sys.stdout,
                  indent=1)
        sys.stdout.write("\n")
        return 0
    rows = [[r["flow"], "-" if r["offered_wire_Bps"] is None else f"{r['offered_wire_Bps'] / 1e6:.3f}",
             f"{r['share_wire_Bps'] / 1e6:.3f}", "-" if r["loss"] is None else f"{r['loss']:.2%}",
             r["bottleneck"] or "its own offer"] for r in out]
    print(f"socket flows on {terminal(args.topology_file)} (max-min shares; rates in MB/s on the wire, MTU {mtu}, "
          f"{frame} bytes a frame)")
    print(table(rows, ["flow", "offered", "share", "loss", "limited by"]))
    for r in out:
        if (r["fragments"] or 1) > 1 and r["loss"]:
            print(terminal(f"{r['flow']}: {r['fragments']} fragments a datagram; one lost loses the datagram, so "
                           f"its datagrams' loss is at least {r['loss']:.2%}"))
    return 0
