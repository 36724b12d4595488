"""fabriclab's UDP stream and TCP streams against iperf3, side by side on loopback (127.0.0.1).

(a) UDP at three offered rates: `iperf3 -u -b R -l SIZE` against `fabriclab run
    udp.stream -s SIZE -p rate=R` (the same datagram payload, the same rate in
    bits/s, one stream; `--pacing-timer` as iperf3's, default its 1000 us, so
    each timer tick's datagrams go back to back in both): the received rate (iperf3's end.sum_received, its
    bytes over the receiver's time) and the jitter (RFC 3550 at the receiver,
    iperf3's rule, both), the loss shown beside them. The jitter is compared
    twice: with iperf3's end figure, the running estimate where the test
    happens to end (it smooths the last 16 or so datagrams, so one run's
    figure moves by tens of percent), and like for like, with the median of
    the estimates iperf3's server reports every 0.1 s (`-s -J -i 0.1`, the
    client's `--get-server-output`; reporting does not touch the estimate),
    as fabriclab's figure is the median of its estimate after each 50 ms
    sample (analysis/udp.py).
(b) TCP with 4 parallel streams: `iperf3 -P 4 -l 128K` against `tcp.stream -s
    128K -p streams=4`, the streams' sum.
(c) Reverse: `iperf3 -R` against `tcp.stream -p direction=reverse`.
(d) Bidirectional: `iperf3 --bidir` against `tcp.stream -p direction=bidir`,
    both directions added.

Both sides' figures are read by one function: iperf3's JSON goes through
`fabriclab import --from iperf3` (imports/iperf3.py) and fabriclab's run
through the same accessor (report/socket_views.py socket_figures), so the
bench also checks that the two land on the same footing. iperf3 runs twice
in each round (its A/A floor: the ratio of its second run to its first);
contenders alternate (A B A', A' B A, ...), figures are medians over the
rounds, targets the median of per-round ratios: within 5%, or the A/A floor
where that is wider.

iperf3 is taken from PATH, or from $IPERF3 (`make bench-debs` installs Debian's).

Usage: python bench/bench_sockets.py [--rounds N] [--seconds S] [--parts abcd]"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import json
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

import _common as c

UDP_SIZE = 1400                     # bytes of payload per datagram: an Ethernet frame's worth
UDP_RATES = (100_000_000, 400_000_000, 1_000_000_000)   # bits/s, iperf3's -b
TCP_SIZE = "128K"                   # iperf3's default -l for TCP; fabriclab's size syntax (1024^n)
TOLERANCE = 0.05
INTERVAL_S = 0.1                    # iperf3's server reports its jitter estimate this often (UDP)


@dataclass(frozen=True)
class Ran:
    """A run's socket figures (report/socket_views.py Socket) and its jitter as the
    median of the receiver's running estimates (None for TCP)."""
    socket: object
    jitter_median_s: float | None = None


def iperf3_exe() -> str:
    exe = os.environ.get("IPERF3") or shutil.which("iperf3")
    if not exe:
        print("ERROR  iperf3 not installed. Install with `make bench-debs`, or: sudo apt-get install -y iperf3")
        sys.exit(1)
    return exe


def socket_of(path: str, imported: bool):
    """The one point's socket figures (report/socket_views.py Socket) of a document or iperf3 output."""
    from fabriclab import imports, schema
    from fabriclab.report.curves import RunView
    from fabriclab.report.socket_views import socket_figures
    doc = imports.load(path, "iperf3") if imported else schema.load(path)
    figs = socket_figures(RunView.of("x", doc))
    if len(figs) != 1:
        raise c.BenchError(f"{path}: expected one socket point, found {len(figs)}")
    return next(iter(figs.values()))


def iperf3(exe: str, args: list[str], seconds: float, work: str) -> Ran:
    port = c.free_port()
    out = Path(tempfile.mkstemp(suffix=".json", dir=work)[1])
    udp = "-u" in args
    server = ["-J", "-i", f"{INTERVAL_S:g}"] if udp else []
    client = ["--get-server-output"] if udp else []
    with c.Server([exe, "-s", "-1", *server, "-B", "127.0.0.1", "-p", str(port)], port):
        out.write_text(c.run([exe, "-c", "127.0.0.1", "-p", str(port), "-t", f"{seconds:g}", "-J", *client, *args],
                             timeout=seconds + 30))
    return Ran(socket_of(str(out), True), server_jitter_median(out) if udp else None)


def server_jitter_median(path: Path) -> float:
    """The median of the jitter estimates in iperf3's server intervals (seconds)."""
    try:
        intervals = json.loads(path.read_text())["server_output_json"]["intervals"]
        return statistics.median(i["sum"]["jitter_ms"] * 1e-3 for i in intervals)
    except (KeyError, TypeError, ValueError, statistics.StatisticsError) as e:
        raise c.BenchError(f"{path}: no server intervals with jitter ({type(e).__name__}: {e})")


def fabriclab(args: list[str], seconds: float, work: str):
    # samples of 50 ms: udp.stream paces within a measure call (udp.c), so a sample of a few
    # datagrams would time their sends and not the rate
    r = c.fabriclab_run([*args, "-L", "1", "--point-time", f"{seconds:g}", "--sample-time", "0.05"], work,
                        timeout=seconds * 10 + 60)
    if r.error is not None:
        raise c.BenchError(f"fabriclab: {r.error}\n  command: {' '.join(r.argv)}")
    s = socket_of(r.path, False)
    return Ran(s, s.jitter_s)       # fabriclab's jitter is already the median over its samples


def mbit(bps: float) -> str:
    """Bytes/s as iperf3 prints them: Mbit/s (10^6 bits/s)."""
    return f"{bps * 8 / 1e6:.1f} Mbit/s"


def show(ran: Ran) -> str:
    s = ran.socket
    text = mbit(s.received_Bps)
    if s.jitter_s is not None:
        text += f", jitter {c.fmt_time(s.jitter_s)}"
    if s.loss_fraction is not None:
        text += f", lost {s.loss_fraction:.2%}"
    if ran.jitter_median_s is not None and ran.jitter_median_s != s.jitter_s:
        text += f", median jitter {c.fmt_time(ran.jitter_median_s)}"
    return text


def contest(title: str, tool, ours, rounds: int, jitter: bool) -> list[tuple[str, float, float]]:
    """Rounds of iperf3, fabriclab and iperf3 again; (what, ratio, A/A floor) per figure compared."""
    print(f"\n{title}")
    res = c.alternate([("iperf3", tool), ("fabriclab", ours), ("iperf3 again", tool)], rounds,
                      show=lambda _, s: show(s))
    out = []
    figures = [("received rate", lambda r: r.socket.received_Bps)] + (
        [("jitter (iperf3's end figure)", lambda r: r.socket.jitter_s),
         ("jitter (median of estimates)", lambda r: r.jitter_median_s)] if jitter else [])
    for what, get in figures:
        ip, fl, again = ([get(s) for s in res[k]] for k in ("iperf3", "fabriclab", "iperf3 again"))
        if None in fl or None in ip or 0 in ip:
            print(f"  {what}: not reported by every run ({fl} vs {ip})")
            continue
        ratio, per = c.paired_ratio(fl, ip)
        floor = c.aa_floor(c.paired_ratio(again, ip)[1])
        unit = mbit if what == "received rate" else c.fmt_time
        print(f"  {what}: median iperf3 {unit(c.median(ip))}, fabriclab {unit(c.median(fl))}; ratio "
              f"{ratio:.3f} (rounds {c.spread(per)}); iperf3 A/A floor {floor:.1%}")
        out.append((f"{title.split(':')[0]} {what}", ratio, floor))
    return out


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"rounds per comparison (default {c.ROUNDS})")
    ap.add_argument("--pacing-timer", type=int, default=1000,
                    help="fabriclab's pacing_timer in us for (a): 1000 is iperf3's default --pacing-timer, 0 "
                         "spaces datagrams evenly (fabriclab's default)")
    ap.add_argument("--seconds", type=float, default=2.0, help="iperf3's -t and fabriclab's --point-time (default 2)")
    ap.add_argument("--parts", default="abcd", help="which contests to run, of a (UDP), b (-P 4), c (-R), "
                                                     "d (--bidir); default abcd")
    opts = ap.parse_args()
    exe = iperf3_exe()
    ver = c.run([exe, "--version"]).splitlines()[0]
    t = opts.seconds
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        doc, _, _ = c.fabriclab(["tcp.stream", "-s", TCP_SIZE, "-L", "1"], work)     # build + warm-up
        c.header(
            "fabriclab UDP and TCP streams vs iperf3, loopback",
            mpi=[f"{c.mpi_library(doc)} (launches the two fabriclab ranks; the data goes over sockets)"],
            commands=[
                f"iperf3 server: iperf3 -s -1 [-J -i {INTERVAL_S:g} for UDP] -B 127.0.0.1 -p PORT   ({ver})",
                f"iperf3 client: iperf3 -c 127.0.0.1 -p PORT -t {t:g} -J [--get-server-output -u -b R -l {UDP_SIZE} | "
                f"-l {TCP_SIZE} -P 4 | -R | --bidir]   -> fabriclab import --from iperf3",
                f"fabriclab:     fabriclab run udp.stream -s {UDP_SIZE} -p rate=R -p pacing_timer={opts.pacing_timer} | tcp.stream -s {TCP_SIZE} -p "
                f"streams=4 | direction=reverse | direction=bidir   -L 1 --point-time {t:g} --sample-time 0.05",
            ],
            method=f"{opts.rounds} rounds, iperf3, fabriclab and iperf3 again alternated; medians over rounds; "
                   "targets on the median of per-round ratios; A/A floor from iperf3's second run over its first")
        found = []
        for rate in UDP_RATES if "a" in opts.parts else ():
            found += contest(f"(a) UDP at {rate / 1e6:g} Mbit/s, {UDP_SIZE}-byte datagrams: received rate and jitter",
                             lambda r=rate: iperf3(exe, ["-u", "-b", str(r), "-l", str(UDP_SIZE)], t, work),
                             lambda r=rate: fabriclab(["udp.stream", "-s", str(UDP_SIZE), "-p", f"rate={r}",
                                                       "-p", f"pacing_timer={opts.pacing_timer}"], t, work),
                             opts.rounds, jitter=True)
        for label, ip_args, fl_param in (("(b) TCP, 4 parallel streams", ["-P", "4"], "streams=4"),
                                         ("(c) TCP reverse", ["-R"], "direction=reverse"),
                                         ("(d) TCP bidirectional", ["--bidir"], "direction=bidir")):
            if label[1] not in opts.parts:
                continue
            found += contest(f"{label}: the streams' sum",
                             lambda a=ip_args: iperf3(exe, ["-l", TCP_SIZE, *a], t, work),
                             lambda p=fl_param: fabriclab(["tcp.stream", "-s", TCP_SIZE, "-p", p], t, work),
                             opts.rounds, jitter=False)
        print()
        for what, ratio, floor in found:
            c.floor_verdict(ratio, floor, TOLERANCE, f"{what} within {TOLERANCE:.0%} of iperf3")


if __name__ == "__main__":
    c.main(body)
