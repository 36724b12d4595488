"""fabriclab's udp.underload against sockperf's under-load mode, on loopback (127.0.0.1).

Both send UDP messages of SIZE bytes at MPS messages a second, every
REPLY_EVERY-th asking the server for a reply, and report each reply's latency
as half its round trip (sockperf src/client.cpp client_statistics: rtt / 2;
udp_underload.c the same), its percentiles by sockperf's rule (printPercentiles:
the sorted observation at index (int)(0.5 + q n) - 1; fabriclab reads it off
its per-op histogram, analysis/underload.py, within 0.5%) and the message rate
achieved (sockperf: [Valid Duration] SentMessages / RunTime; fabriclab: the
messages sent over the samples' time).

  sockperf:  sockperf server -i 127.0.0.1 -p PORT
             sockperf under-load -i 127.0.0.1 -p PORT -m SIZE --mps MPS --reply-every N -t SECONDS
  fabriclab: fabriclab run udp.underload -s SIZE -p mps=MPS -p reply_every=N --point-time T
             --sample-time 0.2 --per-op SECONDS --bind none

Where they differ: sockperf runs one paced stream for -t seconds (less its
warm-up and cool-down); fabriclab sends in measure calls of whole reply
cycles (--sample-time 0.2: some 0.2 s each), and each call waits for its last
replies (at most 0.1 s) before the next starts, so its stream pauses about
one round trip per call; its replies' percentiles come from --per-op's calls,
its mean from the samples' counters. Both receive the replies in a thread
that sleeps until one arrives, while the main thread paces the sends; sockperf
leaves its threads unbound, so fabriclab runs with --bind none here (its
default binds each rank to one core, where rank 0's receiver thread must
preempt its own spinning sender: 27 us against 19-24 us at p50 on this
machine, loaded).
Each round runs sockperf twice (A and A') and fabriclab once, the order
alternating; the A/A floor is sockperf's second run against its first in the
same rounds (_common.aa_floor). The figures are medians over rounds of the
per-round ratios.

The sockperf binary is `sockperf` on PATH, or the one --sockperf (or the
SOCKPERF environment variable) names.

--tcp runs tcp.underload against sockperf's --tcp (server and client).

Usage: python bench/bench_sockperf.py [--rounds N] [--size B] [--mps M] [--reply-every N] [--seconds S] [--tcp]"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import _common as c
from fabriclab.analysis.underload import of_point
from fabriclab.imports import sockperf as sp_import
from fabriclab.schema import load

QUANTS = ("p50", "p99")
TOLERANCE = 0.05


def udp_bound(port: int) -> bool:
    """Whether a UDP socket is bound on 127.0.0.1:port (from /proc: no probe datagram)."""
    want = f"0100007F:{port:04X}"
    try:
        with open("/proc/net/udp") as f:
            next(f)
            return any(ln.split()[1] == want for ln in f)
    except OSError:
        return False


class SockperfServer:
    """sockperf's server (UDP, or TCP) in its own process group, stopped on leaving the with-block."""

    def __init__(self, exe: str, port: int, tcp: bool = False):
        self.proc = subprocess.Popen([exe, "server", "-i", "127.0.0.1", "-p", str(port), *(["--tcp"] if tcp else [])],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not (c.listening(port) if tcp else udp_bound(port)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise c.BenchError(f"sockperf server did not bind port {port}")
            time.sleep(0.02)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def sockperf_ul(exe: str, o) -> dict:
    """One sockperf under-load run: {rate, mean, p50, p99, n} (seconds, messages a second)."""
    port = c.free_port()
    cmd = [exe, "under-load", "-i", "127.0.0.1", "-p", str(port), "-m", str(o.size), "--mps", str(o.mps),
           "--reply-every", str(o.reply_every), "-t", str(o.seconds), *(["--tcp"] if o.tcp else [])]
    with SockperfServer(exe, port, o.tcp):
        out = c.run(cmd, timeout=o.seconds + 30)
    # the command line names the size and rates, which sockperf's stdout does not print
    parsed = sp_import.parse("$ sockperf " + " ".join(cmd[1:]) + "\n" + out)
    f = parsed.figures[0]
    u = f.info["underload"]
    return {"rate": f.value, "mean": u["mean_s"], "n": u["observations"], "lost": u.get("dropped", 0),
            **{q: u["quantiles_s"][q[1:]] for q in QUANTS}}


def fabriclab_ul(work: str, o) -> dict:
    r = c.fabriclab_run([o.bench, "-s", str(o.size), "-p", f"mps={o.mps}", "-p",
                         f"reply_every={o.reply_every}", "--point-time", str(o.point_time), "--sample-time",
                         str(o.sample_time), "--per-op", str(o.seconds), "-L", "1", "--bind", "none"], work, timeout=120 + 4 * o.seconds)
    if r.error is not None:
        raise c.BenchError(f"fabriclab {o.bench}: {r.error}")
    u = of_point(load(r.path).points[0])
    if not u or not all(q in u.quantiles for q in QUANTS):
        raise c.BenchError(f"fabriclab {o.bench}: no per-op percentiles in its point")
    return {"rate": u.rate, "mean": u.mean_s, "n": u.replies, "lost": u.lost,
            **{q: u.quantiles[q] for q in QUANTS}}


def show(x: dict) -> str:
    return (f"p50 {c.fmt_time(x['p50'])} p99 {c.fmt_time(x['p99'])} mean {c.fmt_time(x['mean'])} "
            f"rate {x['rate']:.0f}/s lost {x['lost']}")


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"rounds (default {c.ROUNDS})")
    ap.add_argument("--size", type=int, default=64, help="message bytes (default 64; fabriclab takes 24 at least)")
    ap.add_argument("--mps", type=int, default=10000, help="messages a second (default 10000, sockperf's)")
    ap.add_argument("--reply-every", type=int, default=100, help="a reply every N messages (default 100)")
    ap.add_argument("--seconds", type=float, default=3, help="sockperf's -t and fabriclab's --per-op (default 3)")
    ap.add_argument("--point-time", type=float, default=2, help="fabriclab's --point-time (default 2)")
    ap.add_argument("--sample-time", type=float, default=0.2,
                    help="fabriclab's --sample-time: each measure call's stream (default 0.2 s)")
    ap.add_argument("--sockperf", default=os.environ.get("SOCKPERF") or shutil.which("sockperf"),
                    help="the sockperf binary (default: $SOCKPERF, else sockperf on PATH)")
    ap.add_argument("--tcp", action="store_true", help="over TCP: tcp.underload against sockperf --tcp")
    o = ap.parse_args()
    o.bench = "tcp.underload" if o.tcp else "udp.underload"
    if not o.sockperf:
        print("ERROR  sockperf not found: install it (sudo apt-get install -y sockperf) or name it with --sockperf")
        sys.exit(1)
    ver = next((ln.strip() for ln in c.run([o.sockperf, "--version"]).splitlines() if "version" in ln), "?")
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        c.fabriclab([o.bench, "-s", str(o.size), "--point-time", "0.05"], work)  # build + warm-up
        tcp = " --tcp" if o.tcp else ""
        c.header(f"fabriclab {o.bench} vs sockperf under-load{tcp}, {o.size} B at {o.mps} msg/s, a reply every "
                 f"{o.reply_every}, loopback",
                 commands=[f"sockperf ({ver}): server -i 127.0.0.1 -p PORT{tcp}; under-load -i 127.0.0.1 -p PORT "
                           f"-m {o.size} --mps {o.mps} --reply-every {o.reply_every} -t {o.seconds:g}{tcp}",
                           f"fabriclab: run {o.bench} -s {o.size} -p mps={o.mps} -p reply_every={o.reply_every} "
                           f"--point-time {o.point_time:g} --sample-time {o.sample_time:g} --per-op {o.seconds:g} -L 1 "
                           f"--bind none"],
                 method=f"{o.rounds} rounds of sockperf (A), fabriclab, sockperf again (A'), the order flipping "
                        f"every round; medians of per-round ratios; A/A floor = sockperf A' against A")
        res = c.alternate([("sockperf", lambda: sockperf_ul(o.sockperf, o)),
                           ("fabriclab", lambda: fabriclab_ul(work, o)),
                           ("sockperf'", lambda: sockperf_ul(o.sockperf, o))], o.rounds, show=lambda _, x: show(x))
    print()
    ok = True
    for fig in ("p50", "p99", "mean", "rate"):
        a, f, a2 = ([r[fig] for r in res[n]] for n in ("sockperf", "fabriclab", "sockperf'"))
        ratio, per_round = c.paired_ratio(f, a)
        floor = c.aa_floor(c.paired_ratio(a2, a)[1])
        print(f"  {fig:5s} median sockperf {c.median(a):.4g}  fabriclab {c.median(f):.4g}  ratio fabriclab/sockperf "
              f"{ratio:.3f} (rounds {c.spread(per_round)}); sockperf A/A floor {floor:.1%}")
        if fig in ("p50", "p99"):
            ok &= c.floor_verdict(ratio, floor, TOLERANCE, f"{o.bench} {fig} within {TOLERANCE:.0%} of sockperf")
    print(f"  load average (1 min) at the end {os.getloadavg()[0]:.2f}: figures are provisional on a shared machine")


if __name__ == "__main__":
    c.main(body)
