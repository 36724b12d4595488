"""iperf3's `--json` output (`iperf3 -c HOST -J`, TCP or UDP; -P N, -R, --bidir)
as fabriclab's tcp.stream and udp.stream points (imports/__init__.py builds
the document).

iperf3 writes one JSON object per test (src/iperf_api.c, iperf_json_finish):
`start.test_start` (protocol, num_streams, blksize, reverse, target_bitrate in
bits/s per stream), `intervals` (per -i interval: each stream's figures and
their `sum`, and `sum_bidir_reverse` for --bidir), and `end`: per stream its
sender and receiver totals (TCP) or one `udp` total with the receiver's
jitter_ms, lost_packets, packets and out_of_order; the sums `sum_sent`,
`sum_received` (and `*_bidir_reverse`); `cpu_utilization_percent` (host and
remote, user and system). Its throughput is bytes over each side's own
duration; the receiver's is what arrived, so the point's figure is
`sum_received` (both directions added for --bidir).

The test is one point: fabriclab's op of a stream is one send of SIZE bytes
(iperf3's -l, `blksize`), so the op's time is blksize over the received
bytes/s and the point's bandwidth is iperf3's receiver figure / 8. Its
variant is what fabriclab's run of the same test would name (streams=N,
direction=reverse|bidir, rate=bits/s for UDP, in the registry's canonical
form), so compare pairs them. Everything else iperf3 printed that a report
draws goes into the point's info["socket"] (SOCKET_KEYS): the offered rate,
the streams' receive rates, jitter, loss, reordering, retransmits, the
intervals and each end's CPU use. A test that received nothing is a skip."""

from __future__ import annotations

import json
import math

from ..errors import UsageError
from .printed import Parsed, Printed

MAX_STREAMS = 128            # iperf3's own limit on -P (MAX_STREAMS, iperf.h)
MAX_BITS_PER_S = 1e13        # 10 Tb/s: beyond any link a test can cross
MAX_INTERVALS = 100_000      # a day of -i 1 intervals
MAX_BLOCK = 1 << 30          # iperf3's -l at most 1 GiB (MAX_BLOCKSIZE, iperf.h)
UDP_BLOCK = (16, 65507)      # iperf3's UDP -l: MIN_UDP_BLOCKSIZE (two 32-bit ints and a 64-bit count) .. 65535 - 28
MAX_TARGET = 10**12          # -b bits/s a stream: what udp.stream's rate= takes (suite/udp.py MAX_RATE), 1 Tb/s
AVERAGING = ("iperf3: bytes received over the receiver's duration (end.sum_received), every stream added; "
             "one figure per test")
# What fabriclab's streams take by default (suite/benchmarks.py), for a registry that lacks the parameter.
DEFAULTS = {"streams": "1", "direction": "forward"}
SOCKET_KEYS = ("protocol", "direction", "streams", "offered_bps", "received_Bps", "stream_Bps", "jitter_s",
               "lost", "packets", "loss_fraction", "out_of_order", "retransmits", "intervals_Bps", "cpu_percent")


def _objects(text: str) -> list:
    """The JSON objects of the file: one test, or several written one after the other
    (`iperf3 -J ... >> sweep.json` over a rate sweep)."""
    dec, out, i = json.JSONDecoder(), [], 0
    while (i := _skip_space(text, i)) < len(text):
        try:
            d, i = dec.raw_decode(text, i)
        except RecursionError:
            raise UsageError("not iperf3's --json output: nested too deep") from None
        except ValueError as e:
            raise UsageError(f"not iperf3's --json output: {e}") from None
        out.append(_test(d))
    return out


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _test(d) -> dict:
    if isinstance(d, dict) and "error" in d and "end" not in d:
        raise UsageError(f"iperf3 reported an error, no test: {str(d['error'])[:200]!r}")
    if not isinstance(d, dict) or not isinstance(d.get("start"), dict) or not isinstance(d.get("end"), dict):
        raise UsageError("not iperf3's --json output: no \"start\" and \"end\" objects (iperf3 -c HOST -J writes "
                         "them)")
    return d


def _obj(d: dict, key: str, where: str) -> dict:
    v = d.get(key)
    if not isinstance(v, dict):
        raise UsageError(f"iperf3 output: {where}.{key} is missing or not an object")
    return v


def _num(d: dict, key: str, where: str, hi: float, default=None) -> float:
    """A finite number 0..hi, else UsageError naming the field (a missing one: `default`, if given)."""
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= hi:
        raise UsageError(f"iperf3 output: {where}.{key} = {str(v)[:40]} is not a number in 0..{hi:g}")
    return v


def _rate(d: dict, where: str) -> float:
    """bits_per_second of a sum or stream as bytes/s."""
    return _num(d, "bits_per_second", where, MAX_BITS_PER_S) / 8


def _int(d: dict, key: str, where: str, hi: float, default=None) -> int:
    v = _num(d, key, where, hi, default)
    if v != int(v):
        raise UsageError(f"iperf3 output: {where}.{key} = {v} is not a whole number")
    return int(v)


def _direction(start: dict, end: dict) -> str:
    if "sum_received_bidir_reverse" in end or "sum_bidir_reverse" in end:
        return "bidir"
    return "reverse" if start.get("reverse") else "forward"


def _received(end: dict, udp: bool, bidir: bool) -> float:
    """Received bytes/s in all: sum_received, where iperf3 3.x before 3.7 has only `sum`
    (UDP: the sender's bytes less the receiver's lost packets)."""
    names = [("sum_received", "sum")] + ([("sum_received_bidir_reverse", "sum_bidir_reverse")] if bidir else [])
    total = 0.0
    for received, plain in names:
        s = end.get(received) if isinstance(end.get(received), dict) else end.get(plain)
        if not isinstance(s, dict):
            raise UsageError(f"iperf3 output: end.{received} is missing (the test did not finish)")
        if isinstance(end.get(received), dict):
            total += _rate(s, f"end.{received}")
        else:   # the sender's figure less what the receiver lost
            sent, lost, n = (_rate(s, f"end.{plain}"), _num(s, "lost_packets", "end.sum", 1e15, 0),
                             _num(s, "packets", "end.sum", 1e15, 0))
            total += sent * (1 - min(lost, n) / n) if udp and n else sent
    return total


def _udp_sum(end: dict, bidir: bool) -> dict:
    """Jitter (the mean over directions), lost, packets, out of order of a UDP test, from its sums
    and streams (out_of_order is only per stream in iperf3 3.x). `end.sum`'s packets are those
    sent and its lost the receiver's count, so lost / packets is iperf3's lost_percent."""
    sums = [end.get(k) for k in ("sum", "sum_bidir_reverse")[:2 if bidir else 1]]
    sums = [s for s in sums if isinstance(s, dict)]
    if not sums:
        raise UsageError("iperf3 output: a UDP test without end.sum (the receiver's jitter and loss)")
    lost = sum(_int(s, "lost_packets", "end.sum", 1e15, 0) for s in sums)
    packets = sum(_int(s, "packets", "end.sum", 1e15, 0) for s in sums)
    jitter = sum(_num(s, "jitter_ms", "end.sum", 1e6, 0) for s in sums) / len(sums) * 1e-3
    ooo = sum(_int(st["udp"], "out_of_order", "end.streams.udp", 1e15, 0) for st in end.get("streams") or []
              if isinstance(st, dict) and isinstance(st.get("udp"), dict))
    return {"jitter_s": jitter, "lost": lost, "packets": packets,
            "loss_fraction": lost / packets if packets else None, "out_of_order": ooo}


def _streams(end: dict, udp: bool) -> tuple[list, int | None]:
    """Each stream's received bytes/s (TCP: its receiver total; UDP: its rate less its lost
    share) and the senders' retransmits (TCP), in iperf3's order."""
    out, retrans = [], None
    streams = end.get("streams")
    if not isinstance(streams, list) or len(streams) > 2 * MAX_STREAMS:
        raise UsageError(f"iperf3 output: end.streams is missing or holds more than {2 * MAX_STREAMS} streams")
    for i, st in enumerate(streams):
        where = f"end.streams[{i}]"
        if not isinstance(st, dict):
            raise UsageError(f"iperf3 output: {where} is not an object")
        if udp:
            u = _obj(st, "udp", where)
            n, lost = _num(u, "packets", where, 1e15, 0), _num(u, "lost_packets", where, 1e15, 0)
            out.append(_rate(u, where + ".udp") * (1 - min(lost, n) / n if n else 1.0))
        else:
            out.append(_rate(_obj(st, "receiver", where), where + ".receiver"))
            sender = st.get("sender")
            if isinstance(sender, dict) and "retransmits" in sender:
                retrans = (retrans or 0) + _int(sender, "retransmits", where + ".sender", 1e15)
    return out, retrans


def _intervals(d: dict, bidir: bool) -> list:
    """Each interval's sum in bytes/s as the client measured it: what it sent (forward), what it
    received (-R), both added (--bidir)."""
    ivs = d.get("intervals") or []
    if not isinstance(ivs, list) or len(ivs) > MAX_INTERVALS:
        raise UsageError(f"iperf3 output: intervals is not a list of at most {MAX_INTERVALS:,}")
    out = []
    for i, iv in enumerate(ivs):
        where = f"intervals[{i}]"
        if not isinstance(iv, dict):
            raise UsageError(f"iperf3 output: {where} is not an object")
        x = _rate(_obj(iv, "sum", where), where + ".sum")
        if bidir and isinstance(iv.get("sum_bidir_reverse"), dict):
            x += _rate(iv["sum_bidir_reverse"], where + ".sum_bidir_reverse")
        out.append(x)
    return out


def _cpu(end: dict) -> dict | None:
    c = end.get("cpu_utilization_percent")
    if not isinstance(c, dict):
        return None
    keys = ("host_total", "host_user", "host_system", "remote_total", "remote_user", "remote_system")
    # a process's CPU use over its wall time, all its threads: at most 100 per core (1 << 16 cores)
    return {k: _num(c, k, "end.cpu_utilization_percent", 100.0 * (1 << 16)) for k in keys if k in c}


def _variant(bench: str, params: dict) -> str:
    """The variant fabriclab's own run of `bench` with these parameters records (measure/plan.py:
    canonical values differing from the defaults, sorted), where the registry knows them; a
    parameter it does not know stays as given."""
    from ..suite.benchmarks import REGISTRY
    b = REGISTRY.get(bench)
    out = {}
    for k, v in params.items():
        if b is not None and k in b.params:
            v = b.canonical(k, str(v))
            if b.defaults.get(k) == v:
                continue
        elif DEFAULTS.get(k) == str(v):
            continue
        out[k] = str(v)
    return ",".join(f"{k}={v}" for k, v in sorted(out.items()))


def parse(text: str, source: str = "iperf3.json") -> Parsed:
    """Every test in the file (one --json output, or several concatenated) as a point."""
    tests = _objects(text)
    first = tests[0]["start"]
    version = first.get("version") if isinstance(first.get("version"), str) else None
    return Parsed(version[:60] if version else None, AVERAGING, 2).read_each(tests, _one)


def _one(d: dict, out: Parsed) -> None:
    start, end = d["start"], d["end"]
    ts = _obj(start, "test_start", "start")
    proto = str(ts.get("protocol", "")).upper()
    if proto not in ("TCP", "UDP"):
        raise UsageError(f"iperf3 output: protocol {str(ts.get('protocol'))[:20]!r}: fabriclab imports TCP and UDP "
                         "tests")
    udp = proto == "UDP"
    nstreams = _int(ts, "num_streams", "start.test_start", MAX_STREAMS)
    size = _int(ts, "blksize", "start.test_start", MAX_BLOCK)
    if nstreams < 1 or size < 1:
        raise UsageError("iperf3 output: start.test_start has no streams or an empty block")
    if udp and not UDP_BLOCK[0] <= size <= UDP_BLOCK[1]:
        raise UsageError(f"iperf3 output: start.test_start.blksize = {size} is not a UDP block iperf3 sends "
                         f"({UDP_BLOCK[0]}..{UDP_BLOCK[1]} bytes)")
    # iperf3 keeps a uint64; a UDP target becomes udp.stream's rate=, which takes up to MAX_TARGET
    target = _int(ts, "target_bitrate", "start.test_start", MAX_TARGET if udp else MAX_BITS_PER_S, 0)
    direction = _direction(ts, end)
    bidir = direction == "bidir"
    bench = "udp.stream" if udp else "tcp.stream"
    received = _received(end, udp, bidir)
    stream_Bps, retrans = _streams(end, udp)
    sock = {"protocol": proto.lower(), "direction": direction, "streams": nstreams,
            "offered_bps": target * nstreams * (2 if bidir else 1) if udp and target else None,
            "received_Bps": received, "stream_Bps": stream_Bps, "retransmits": retrans,
            "intervals_Bps": _intervals(d, bidir), "cpu_percent": _cpu(end),
            **(_udp_sum(end, bidir) if udp else {"jitter_s": None, "lost": None, "packets": None,
                                                 "loss_fraction": None, "out_of_order": None})}
    params = {"streams": nstreams, "direction": direction}
    if udp and target:
        params["rate"] = int(target)     # iperf3's -b: bits/s of each stream
    if not out.settings:
        out.settings = {"protocol": proto, "blksize": size, "streams": nstreams, "direction": direction,
                        "target_bitrate": target or None, "duration_s": ts.get("duration")}
    name = "iperf3 " + proto + (f" -P {nstreams}" if nstreams > 1 else "") + (
        " -R" if direction == "reverse" else " --bidir" if bidir else "") + (
        f" -b {target / 1e6:g}M" if udp and target else "")
    if received <= 0:
        out.skips.append((bench, size, f"{name}: nothing received"))
        return
    row = {"blksize": str(size), "bits_per_second": f"{received * 8:.6g}"}
    out.figures.append(Printed(name, bench, _variant(bench, params), size, 2, size / received, size, 1, False,
                               received * 8, "bits/s", "end.sum_received.bits_per_second", None, row,
                               info={"socket": sock}))
