"""fabriclab's TCP level against the standard tools, on loopback (127.0.0.1).

(a) Streaming: iperf3, one stream for 3 s with 1 MiB writes (receiver's
    bits_per_second / 8), against tcp.stream with 1 MiB sends: the same send
    size on both sides, since the send size alone moves loopback bandwidth by
    half (iperf3's default 128 KiB writes are slower). Target: fabriclab >= 95%
    of iperf3.
(b) Busy-poll request/response: sockperf ping-pong, 14-byte messages, TCP,
    non-blocking sockets on both sides (each side spins on recvfrom(), which
    returns EAGAIN until data is there), median latency, against tcp.rr_poll
    at 14 bytes (both ranks spin on recv(MSG_DONTWAIT)). Both report the
    one-way latency, round trip / 2: sockperf's default (no --full-rtt), and
    fabriclab's latency_s = median per op / legs_per_op (2). Target: within 10%.

Usage: python bench/bench_tcp.py [--rounds N]"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile

import _common as c

STREAM_SIZES = "1M"  # fabriclab size syntax (K, M = 1024^n); iperf3 writes the same
IPERF_LEN = "1M"
RR_SIZE = 14
SECONDS = 3
STREAM_TARGET, RR_TOLERANCE = 0.95, 0.10


def need_tools() -> dict:
    found = {t: shutil.which(t) for t in ("iperf3", "sockperf")}
    missing = [t for t, p in found.items() if not p]
    if missing:
        print(f"ERROR  {' and '.join(missing)} not installed. Install with `make bench-debs` "
              f"(`make bench` does it too), or: sudo apt-get install -y {' '.join(missing)}")
        sys.exit(1)
    return found


def iperf3_Bps(exe: str) -> float:
    port = c.free_port()
    with c.Server([exe, "-s", "-1", "-B", "127.0.0.1", "-p", str(port)], port):
        out = c.run([exe, "-c", "127.0.0.1", "-p", str(port), "-t", str(SECONDS), "-l", IPERF_LEN, "-J"],
                    timeout=SECONDS + 30)
    try:
        return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 8
    except (ValueError, KeyError) as e:
        raise c.BenchError(f"unexpected iperf3 output ({e}): {out[:300]}") from None


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sockperf_s(exe: str) -> float:
    """Median one-way latency in seconds (sockperf prints usec)."""
    port = c.free_port()
    with c.Server([exe, "server", "--tcp", "-i", "127.0.0.1", "-p", str(port), "--nonblocked"], port):
        out = c.run([exe, "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(port), "-m", str(RR_SIZE),
                     "-t", str(SECONDS), "--nonblocked"], timeout=SECONDS + 30)
    out = ANSI.sub("", out)
    m = re.search(r"percentile 50\.000 =\s*([0-9.]+)", out)
    if not m:
        raise c.BenchError(f"no 50th percentile in sockperf's output: {out[-400:]}")
    return float(m.group(1)) * 1e-6


def fl_stream(work: str) -> tuple[float, int]:
    """tcp.stream: the best size's median bandwidth (B/s) and that size."""
    doc, _, _ = c.fabriclab(["tcp.stream", "-s", STREAM_SIZES], work)
    best = max(c.points(doc, "tcp.stream"), key=lambda r: r["bandwidth_Bps"] or 0)
    return best["bandwidth_Bps"], best["size"]


def fl_rr(work: str) -> float:
    doc, _, _ = c.fabriclab(["tcp.rr_poll", "-s", str(RR_SIZE)], work)
    p = c.point(doc, "tcp.rr_poll", RR_SIZE)
    if p["legs_per_op"] != 2 or p.get("info", {}).get("recv") not in (None, "poll"):
        raise c.BenchError(f"tcp.rr_poll is not a polled 2-leg round trip: {p.get('info')}")
    return p["latency_s"]


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="rounds per comparison (default 7)")
    opts = ap.parse_args()
    tools = need_tools()
    ver = {t: next((ln.strip() for ln in c.run([p, "--version"]).splitlines() if "version" in ln.lower()
                   or ln.startswith("iperf")), "version unknown") for t, p in tools.items()}

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        doc, _, argv = c.fabriclab(["tcp.rr_poll", "-s", str(RR_SIZE)], work)  # build + warm-up
        c.header(
            "fabriclab TCP level vs iperf3 (streaming) and sockperf (busy-poll ping-pong), loopback",
            mpi=[f"{c.mpi_library(doc)} (launches the two fabriclab ranks; the data goes over TCP)"],
            commands=[
                f"iperf3 server: iperf3 -s -1 -B 127.0.0.1 -p PORT        ({ver['iperf3']})",
                f"iperf3 client: iperf3 -c 127.0.0.1 -p PORT -t {SECONDS} -l {IPERF_LEN} -J   -> end.sum_received.bits_per_second / 8",
                f"fabriclab:     fabriclab run tcp.stream -s {STREAM_SIZES} -o RUN.json -q   -> best size's bandwidth_Bps",
                f"sockperf server: sockperf server --tcp -i 127.0.0.1 -p PORT --nonblocked   ({ver['sockperf']})",
                f"sockperf client: sockperf ping-pong --tcp -i 127.0.0.1 -p PORT -m {RR_SIZE} -t {SECONDS} "
                f"--nonblocked   -> 'percentile 50.000' (usec, RTT/2)",
                f"fabriclab:       fabriclab run tcp.rr_poll -s {RR_SIZE} -o RUN.json -q   -> latency_s (median RTT / 2)",
            ],
            method=f"{opts.rounds} rounds per comparison, tool and fabriclab alternated (A B, B A, ...); "
                   f"medians over rounds; targets on the median of per-round ratios; GB/s = 10^9 bytes/s")

        print("\n(a) TCP streaming bandwidth, one stream")
        res = c.alternate([("iperf3", lambda: iperf3_Bps(tools["iperf3"])),
                           ("fabriclab", lambda: fl_stream(work))], opts.rounds,
                          show=lambda n, x: c.fmt_bw(x) if n == "iperf3" else
                          f"{c.fmt_bw(x[0])} (at {c.fmt_size(x[1])})")
        ip = c.median(res["iperf3"])
        fl_bw = [bw for bw, _ in res["fabriclab"]]
        st = c.median(fl_bw)
        best_sizes = sorted({c.fmt_size(s) for _, s in res["fabriclab"]})
        stream_ratio, per_round = c.paired_ratio(fl_bw, res["iperf3"])
        print(f"  median  iperf3 {c.fmt_bw(ip)}   fabriclab tcp.stream {c.fmt_bw(st)} "
              f"(best size per round: {', '.join(best_sizes)})")
        print(f"  ratio fabriclab / iperf3: median of per-round ratios {stream_ratio:.4f} "
              f"(rounds {c.spread(per_round)}); ratio of medians {st / ip:.4f}")

        print(f"\n(b) TCP busy-poll request/response, {RR_SIZE}-byte messages, one-way latency (RTT/2)")
        res = c.alternate([("sockperf", lambda: sockperf_s(tools["sockperf"])),
                           ("fabriclab", lambda: fl_rr(work))], opts.rounds,
                          show=lambda _, x: c.fmt_time(x))
        sp, rr = c.median(res["sockperf"]), c.median(res["fabriclab"])
        rr_ratio, per_round = c.paired_ratio(res["fabriclab"], res["sockperf"])
        print(f"  median  sockperf {c.fmt_time(sp)}   fabriclab tcp.rr_poll {c.fmt_time(rr)}")
        print(f"  ratio fabriclab / sockperf: median of per-round ratios {rr_ratio:.3f} "
              f"({(rr_ratio - 1) * 100:+.1f}%; rounds {c.spread(per_round)}); ratio of medians {rr / sp:.3f}")

        print()
        c.verdict(stream_ratio >= STREAM_TARGET,
                  f"tcp.stream bandwidth >= {STREAM_TARGET:.0%} of iperf3",
                  f"{stream_ratio:.2%} (medians {c.fmt_bw(st)} vs {c.fmt_bw(ip)})")
        c.verdict(abs(rr_ratio - 1) <= RR_TOLERANCE,
                  f"tcp.rr_poll latency within {RR_TOLERANCE:.0%} of sockperf",
                  f"ratio {rr_ratio:.3f} (medians {c.fmt_time(rr)} vs {c.fmt_time(sp)})")


if __name__ == "__main__":
    c.main(body)
