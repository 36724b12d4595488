"""The registry's entries of the socket levels: TCP and UDP between ranks
(tcp*.c, udp*.c; docs/sockets.md)."""

from __future__ import annotations

from . import footprint_sockets as fp, streams as st, udp
from .facts import choice, entry as _b, integer
from .param_sets import (CONNS, CONNS_SUITE, LEVEL_STREAM_SUITE, RR_SUITE, SEGMENTS, SEGMENT_SIZES, SOCKET,
                         TCP_UNDERLOAD, UDP_RR, UDP_STREAM, UNDERLOAD)


ENTRIES = [
    # ---- tcp: sockets between ranks 0 and 1
    _b("tcp.rr_poll", "TCP request/response, busy-polling receive", "latency", legs=2, params=SOCKET,
       suite=RR_SUITE, views=("layers", "via-latency"), footprint=fp.TCP_RR),
    _b("tcp.rr_block", "TCP request/response, blocking receive", "latency", legs=2, params=SOCKET,
       suite=RR_SUITE, views=("via-latency",), footprint=fp.TCP_RR),
    _b("tcp.rr_epoll", "TCP request/response, receive after blocking in epoll_wait", "latency", legs=2,
       params=SOCKET, suite=RR_SUITE, views=("via-latency",), footprint=fp.TCP_RR),
    _b("tcp.stream", "TCP streaming, SIZE bytes per send, over STREAMS connections one way or both ways",
       "bandwidth", sizes="1:4M:x2",
       params={**SOCKET, "burst": integer("32M", 1, 1 << 40),
               # iperf3 -P N, -R, --bidir (docs/sockets.md, "Streams and directions")
               "streams": integer(1, 1, 1 << 20), "direction": choice(*st.DIRECTIONS)},
       suite=LEVEL_STREAM_SUITE, views=("layers", "stream-fairness"), footprint=fp.TCP_STREAM,
       rules=st.check_streams, counters={"received_bytes": "sum"}),
    _b("tcp.crr", "TCP connect, request and response of SIZE bytes, close, per op (netperf's TCP_CRR)",
       "latency", sizes="1", params={**SOCKET, "close": choice("server", "reset")}, suite=None,
       footprint=fp.TCP_CRR),
    _b("tcp.conns", "TCP stream round-robin over CONNS connections; completion by epoll or a scan",
       "bandwidth", sizes="4K,64K", axes=("size", "conns"), conns=CONNS,
       params={**SOCKET, "check": choice("epoll", "scan")}, suite={**CONNS_SUITE, "params": {"check": "epoll,scan"}},
       views=("via-conns",), footprint=fp.TCP_CONNS),
    _b("tcp.scatter", "TCP messages of 32 segments of SIZE bytes: readv into place or receive and copy",
       "bandwidth", sizes=SEGMENT_SIZES, params={**SOCKET, "mode": choice("iovec", "copy"), **SEGMENTS},
       suite={"sizes": "8,64,1K", "params": {"mode": "iovec,copy"}},
       views=("via-scatter",), size_label="segment size", footprint=fp.TCP_SCATTER),
    _b("tcp.underload", "TCP messages of SIZE bytes at MPS a second, every REPLY_EVERY-th echoed: its "
       "latency (RTT/2)", "bandwidth", sizes="64,1K,16K", params=TCP_UNDERLOAD, suite=None,
       counters={"sent": "sum", "asked": "sum", "back": "sum", "lost": "sum", "latency_s": "sum"},
       footprint=fp.TCP_UNDERLOAD, first_sample=udp.underload_first_sample),
    # ---- udp: a stream at a set rate or unlimited, and request/response that survives a loss (udp.c,
    # docs/sockets.md "UDP"); their counters' kinds in udp.py
    _b("udp.stream", "UDP datagrams of SIZE bytes at RATE bits/s per flow (or unlimited) over STREAMS flows, "
       "one way or both: loss, jitter, reordering", "bandwidth", sizes="1K,8K", params=UDP_STREAM, suite=None,
       views=("udp-rate", "stream-fairness"),
       footprint=fp.UDP_STREAM, rules=udp.check, counters=udp.STREAM_COUNTERS,
       first_sample=udp.stream_first_sample),
    _b("udp.rr", "UDP request and response of SIZE bytes; a reply not back within TIMEOUT_US is a lost "
       "transaction and the loop goes on", "latency", legs=2, sizes="64,1K", params=UDP_RR, suite=None,
       footprint=fp.UDP_RR, counters=udp.RR_COUNTERS),
    # ---- udp: latency under load, sockperf's under-load mode (udp_underload.c, docs/sockets.md)
    _b("udp.underload", "UDP messages of SIZE bytes at MPS a second, every REPLY_EVERY-th echoed: its "
       "latency (RTT/2)", "bandwidth", sizes="64,1K,16K", params=UNDERLOAD, suite=None,
       counters={"sent": "sum", "asked": "sum", "back": "sum", "lost": "sum", "latency_s": "sum"},
       views=("underload",), footprint=fp.UDP_UNDERLOAD, first_sample=udp.underload_first_sample),
]
