"""Sockets on a network file: what the model says a UDP stream at a set rate
loses, and how TCP streams share the cables they cross (docs/sockets.md,
"On the testbed: loss and shares against the model").

Both are max-min sharing (maxmin.py) with the flows routed as the model
routes them (schedule_time.Network). A TCP stream takes what it is given:
its rate is its max-min share. A UDP stream offers a set rate and takes no
more: it is a flow whose demand is that rate. Where the offer is above the
flow's max-min share, the cable that freezes it (its bottleneck) queues the
excess until its queue is full and then drops it, so in the steady state the
receiver gets the share and loses the rest:

    loss = 1 - share / offered        (0 where share >= offered)

A run of T seconds that starts with the bottleneck's queue (Q bytes) empty
loses less: the excess fills the queue first,

    loss over T = max(0, (offered - share) x T - Q) / (offered x T)

which tends to the steady state's as T grows (`FlowShare.loss_over`).
The cable is named as the model names resources (`link trunk (s0→s1)`).
Everything here is on the wire: a cable carries its gross rate (a network
file's link efficiency left out), and given its datagrams' size `udp_loss`
puts a stream's offer there with its headers and frames (`wire_bytes`).
The loss is of wire bytes: of datagrams where each is one frame, and at
least that where they are fragmented, since one fragment lost loses its
datagram (docs/sockets.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from .maxmin import max_min

UDP_WIRE_HEADER = 8       # bytes (RFC 768)
IPV4_WIRE_HEADER = 20     # bytes, without options, in every fragment (RFC 791)
# Ethernet's bytes a frame beyond its IP packet on a real cable: header 14, FCS 4, and the
# preamble 8 and inter-frame gap 12 that hold the wire as long (IEEE 802.3; the catalog's
# Ethernet overhead_B, model/data/technologies.yaml). Frames padded to 64 bytes are not
# counted: a datagram of udp.stream's smallest size (24 bytes) fills one.
ETHERNET_FRAME = 38
DEFAULT_MTU = 1500        # bytes: Ethernet's


def fragments(datagram: int, mtu: int = DEFAULT_MTU) -> int:
    """IP packets of one UDP datagram of `datagram` payload bytes through `mtu`: one where
    it fits, else every fragment but the last carries a multiple of 8 bytes (RFC 791)."""
    if datagram < 0 or mtu < IPV4_WIRE_HEADER + 8:
        raise UsageError(f"a datagram of {datagram} bytes through an MTU of {mtu} bytes is not one")
    room, carried = mtu - IPV4_WIRE_HEADER, datagram + UDP_WIRE_HEADER
    if carried <= room:
        return 1
    step = room // 8 * 8
    return 1 + -(-(carried - room) // step)


def wire_bytes(datagram: int, mtu: int = DEFAULT_MTU, frame: int = ETHERNET_FRAME) -> int:
    """The bytes a cable carries for one UDP datagram of `datagram` payload bytes: its UDP
    header, and an IPv4 header and a frame's `frame` bytes for each of its `fragments`.
    1,400 bytes on Ethernet: 1,466."""
    return datagram + UDP_WIRE_HEADER + fragments(datagram, mtu) * (IPV4_WIRE_HEADER + frame)


def on_wire(offered_Bps: float, datagram: int | None = None, mtu: int = DEFAULT_MTU,
            frame: int = ETHERNET_FRAME) -> float:
    """An offer of `datagram`-byte datagrams' payload, in bytes/s, as the cables carry it
    (`wire_bytes`); without `datagram`, the offer as it is (already the wire's)."""
    return offered_Bps if datagram is None else offered_Bps * wire_bytes(datagram, mtu, frame) / max(datagram, 1)


@dataclass(frozen=True)
class FlowShare:
    """One flow's max-min share of the network and what limits it."""
    src: str
    dst: str
    offered_Bps: float | None      # a UDP flow's rate on the wire; None for TCP (takes its share)
    share_Bps: float               # the flow's max-min rate on the wire: what arrives
    cable: str                     # the resource that froze it ("" where its own offer did)

    @property
    def loss(self) -> float:
        """The fraction of what it offers that the bottleneck drops in the steady state, its queue
        full (0 for TCP or below the share): of its wire bytes, so of its datagrams where each is
        one frame, and a lower bound of them where they are fragmented."""
        if not self.offered_Bps:
            return 0.0
        return max(0.0, 1.0 - self.share_Bps / self.offered_Bps)

    def loss_over(self, seconds: float, queue_bytes: float) -> float:
        """The fraction lost over `seconds` of sending that start with the bottleneck's queue of
        `queue_bytes` (of wire) empty: the excess (offered - share) x seconds fills the queue
        first, and only what is beyond it is dropped. It tends to `loss` as the run grows."""
        if not self.offered_Bps or seconds <= 0:
            return self.loss
        excess = (self.offered_Bps - self.share_Bps) * seconds - queue_bytes
        return max(0.0, excess) / (self.offered_Bps * seconds)


def _node(net, name: str) -> int:
    names = list(net.topo.node_names)
    if name not in names:
        raise UsageError(f"{name!r} is not a host of {net.topo.name} (its hosts: {', '.join(names[:8])}"
                         f"{' ...' if len(names) > 8 else ''})")
    return names.index(name)


def shares(net, flows: list) -> list[FlowShare]:
    """Max-min shares of `flows`, each (src host, dst host, offered bytes/s or None), on a
    routed network (model/schedule_time.Network of a network file). A flow with an offer is
    capped at it (UDP); one without takes its share (TCP)."""
    if not flows:
        return []
    src = np.array([_node(net, s) for s, _, _ in flows], dtype=np.int64)
    dst = np.array([_node(net, d) for _, d, _ in flows], dtype=np.int64)
    if (src == dst).any():
        raise UsageError("a flow from a host to itself crosses no cable")
    for _, _, o in flows:
        if o is not None and not 0 < o < np.inf:
            raise UsageError(f"an offered rate must be positive and finite, not {o}")
    demand = np.array([np.inf if o is None else o for _, _, o in flows], dtype=float)
    res = max_min(net.topo.paths(src, dst), wire_capacity(net), demand=demand)
    out = []
    for (s, d, o), rate, b in zip(flows, res.rates, res.bottleneck):
        cable = net.labels[int(net.cls[int(b)])] if b >= 0 else ""
        out.append(FlowShare(s, d, o, float(rate), cable))
    return out


def wire_capacity(net) -> np.ndarray:
    """Bytes/s each resource carries on the wire: a link of a network file whose own efficiency
    (efficiency, payload_B and overhead_B) makes its rate a payload rate counts at its gross
    rate here, since the flows bring their own headers and frames."""
    gross = np.array([np.nan if c.own is None else float(c.own.gross) for c in net.topo.classes])
    own = gross[net.cls]
    return np.where(np.isnan(own), net.cap, own)


def udp_loss(net, src: str, dst: str, offered_Bps: float, others: list = (), datagram: int | None = None,
             mtu: int = DEFAULT_MTU, frame: int = ETHERNET_FRAME) -> FlowShare:
    """A UDP stream from `src` to `dst` offering `offered_Bps`, beside `others` (more flows as
    in `shares`, their offers on the wire): its share, its predicted loss (FlowShare.loss) and
    the cable that drops it. With `datagram` (its payload bytes) the offer is of payload and
    goes on the wire as `wire_bytes` says; without, it is already the wire's."""
    return shares(net, [(src, dst, on_wire(offered_Bps, datagram, mtu, frame)), *others])[0]


def network(path: str):
    """The routed network of a network file (UsageError in one line when it cannot be read)."""
    from .netfile import NetworkFile
    from .schedule_time import Network
    try:
        return Network(NetworkFile(path))
    except OSError as e:
        raise UsageError(f"cannot read the network file {path}: {e.strerror}") from None
