"""What one point of the socket families holds (tcp*.c, udp*.c), on footprint.py's
model: the core's regions, and what the sockets may queue besides."""

from __future__ import annotations

from .footprint import (MAX_BURST_OPS, MIN_OPS_PER_ACK, STREAM_CHUNK, At, Footprint, ceil_div, message, page,
                        payload, scatter_limit, sockets)


# ---- tcp.c: request/response and stream, one connection made once per run;
# the sockets' queues are the kernel's memory, not the core's.
def _rr(at: At) -> int:
    return 2 * page(at.wire * at.buffers)


def _stream(at: At) -> int:
    region = at.wire * at.buffers
    return page(region) + page(max(region, STREAM_CHUNK))


def _stream_sockets(at: At) -> int:
    burst = min(MAX_BURST_OPS, max(1, ceil_div(at.param("burst"), at.wire)))
    both = at.params.get("direction") == "bidir"
    conns = int(at.params.get("streams", 1)) * (2 if both else 1)
    return sockets(at, conns, burst, at.wire) * (2 if both else 1)


def _streams_of(role: str):
    """tcp_streams.c (several streams, or both ways): a rank that sends holds SIZE x
    max(buffers, streams) (a verify message per stream), one that receives a region of
    max(SIZE x buffers, 4 MiB, SIZE x streams); forward rank 0 ("s") sends, reverse
    rank 1, bidir both. One stream each way is tcp.c's (_stream)."""
    def held(at: At) -> int:
        n, direction = int(at.params.get("streams", 1)), at.params.get("direction", "forward")
        if n == 1 and direction != "bidir":
            return _stream(at)
        sends = direction == "bidir" or (role == "s") == (direction == "forward")
        receives = direction == "bidir" or not sends
        return (page(at.wire * max(at.buffers, n)) if sends else 0) + \
            (page(max(at.wire * at.buffers, STREAM_CHUNK, at.wire * n)) if receives else 0)
    return held


TCP_RR = Footprint({"s": _rr, "r": _rr}, {"s": lambda at: sockets(at, 1, 1, at.wire),
                                          "r": lambda at: sockets(at, 1, 1, at.wire)})
TCP_STREAM = Footprint({"s": _streams_of("s"), "r": _streams_of("r")}, {"s": _stream_sockets, "r": _stream_sockets},
                       limit=payload("no payload to stream"))
# tcp_crr.c: as request/response; a connection per op, closed when it ends
TCP_CRR = TCP_RR


# udp_underload.c: send slots, and two messages (one received, rank 0's last reply),
# on ranks 0 and 1; what the sockets may queue besides.
UDP_HEADER = 24              # udp_plumbing.h UDP_HDR


def _underload(at: At) -> int:
    return page(at.size * at.buffers) + page(2 * at.size)


UDP_UNDERLOAD = Footprint({"s": _underload, "r": _underload},
                          {"s": lambda at: sockets(at, 1, 1, at.size), "r": lambda at: sockets(at, 1, 1, at.size)},
                          limit=lambda at: f"a message carries a {UDP_HEADER}-byte header" if at.size < UDP_HEADER
                          else None)
UL_STAGE = 64 << 10          # udp_underload.c: a TCP recv reads up to this after a message's rest


def _tcp_underload(at: At) -> int:
    return _underload(at) + page(at.size + UL_STAGE)


TCP_UNDERLOAD = Footprint({"s": _tcp_underload, "r": _tcp_underload},
                          {"s": lambda at: sockets(at, 1, 1, at.size), "r": lambda at: sockets(at, 1, 1, at.size)},
                          limit=UDP_UNDERLOAD.limit)


# udp.c: a datagram per flow to send and one receive region of 64 KiB, on ranks 0 and 1;
# the sockets queue what their buffers take.
UDP_HDR = 24   # udp_plumbing.h: flow, sequence number, send time


def _udp(at: At) -> int:
    return page(at.size * int(at.params.get("streams", 1))) + page(65536)


def _udp_sockets(at: At) -> int:
    return int(at.params.get("streams", 1)) * (at.sock_send + at.sock_recv)


UDP_STREAM = Footprint({"s": _udp, "r": _udp}, {"s": _udp_sockets, "r": _udp_sockets},
                       limit=lambda at: f"a datagram carries a {UDP_HDR}-byte header" if at.size < UDP_HDR else None)
UDP_RR = UDP_STREAM


# tcp_conns.c, tcp_scatter.c: connections opened per point.
def _tcp_conns_sockets(at: At) -> int:
    per_ack = ceil_div(MIN_OPS_PER_ACK, at.conns) * at.conns
    return sockets(at, at.conns, per_ack, at.size)


def _tcp_scatter(at: At, receiver: bool) -> int:
    msg, slots = message(at, own=1)
    if not receiver:
        return page(msg * slots)
    return page(2 * msg * slots) + (page(msg) if at.params.get("mode") == "copy" else 0)


TCP_CONNS = Footprint({"s": lambda at: at.slots, "r": lambda at: at.slots},
                      {"s": _tcp_conns_sockets, "r": _tcp_conns_sockets}, limit=payload("no payload to send"))
TCP_SCATTER = Footprint({"s": lambda at: _tcp_scatter(at, False), "r": lambda at: _tcp_scatter(at, True)},
                        {"s": lambda at: sockets(at, 1, MIN_OPS_PER_ACK, message(at, 1)[0]),
                         "r": lambda at: sockets(at, 1, MIN_OPS_PER_ACK, message(at, 1)[0])},
                        limit=scatter_limit)
