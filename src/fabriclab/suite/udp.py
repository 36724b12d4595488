"""The rules of udp.stream and udp.rr (docs/sockets.md, "UDP"), checked before launch.

A datagram carries its flow, sequence number and send time in a 24-byte
header (csrc/families/udp_plumbing.h, UDP_HDR), so SIZE is at least that,
and at most what one UDP datagram over IPv4 carries: 65,535 bytes less the
20-byte IP and 8-byte UDP headers. Each flow is one socket on each of ranks
0 and 1 (both directions of bidir share it), so the streams must fit the
open-file limit the ranks inherit (streams.py's rule and reserve). A rate is
bits per second per flow (iperf3's -b), 1 b/s to 1 Tb/s: the core's param
rule refuses 0 and beyond."""

from __future__ import annotations

from ..errors import UsageError
from . import streams as st

HEADER = 24
MAX_PAYLOAD = 65_507
MAX_RATE = 10**12          # bits/s: 1 Tb/s
DIRECTIONS = st.DIRECTIONS
PACING = ("rate", "unlimited")
# The kinds of the kernels' counters (analysis/counters.py), per flow K as "name.K" for udp.stream.
STREAM_COUNTERS = {"sent": "sum", "received": "sum", "received_bytes": "sum", "lost": "sum", "out_of_order": "sum",
                   "jitter_s": "level"}
RR_COUNTERS = {"sent": "sum", "completed": "sum", "lost": "sum", "late": "sum", "rtt_s": "sum"}


def check(name: str, sizes, params: dict, nranks: int, limit: int | None = None) -> None:
    """UsageError in one line for a stream count the ranks' sockets cannot take (Bench.rules;
    a SIZE over MAX_PAYLOAD is refused by measure/plan.py, one under HEADER skipped: footprint.py)."""
    streams = int(params.get("streams", 1))
    have = st.nofile_limit() if limit is None else limit
    if streams + st.FD_RESERVE > have:
        raise UsageError(f"{name}: streams={streams} needs {streams} sockets per rank and {st.FD_RESERVE} "
                         f"descriptors besides; the open-file limit (RLIMIT_NOFILE of this process, which the "
                         f"ranks inherit) is {have}: raise it (ulimit -n) or ask for fewer streams")


def stream_first_sample(params: dict, size: int):
    """udp.stream paced at RATE: a warm-up's datagram and a sample's, each SIZE x 8 / RATE apart."""
    if params.get("pacing", "rate") == "unlimited" or size < HEADER:     # below the header: skipped, not run
        return None
    rate = int(params["rate"])
    return 2 * size * 8 / rate, f"two datagrams of {size:,} B at rate={rate:,} b/s"


def underload_first_sample(params: dict, size: int):
    """udp.underload and tcp.underload: a sample is whole cycles of REPLY_EVERY messages at MPS a second
    (udp_underload.c), a warm-up's and a sample's at least."""
    mps, every = int(params["mps"]), int(params["reply_every"])
    return 2 * every / mps, f"two cycles of reply_every={every:,} messages at mps={mps:,}"

