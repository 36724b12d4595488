"""tcp.crr (netperf's TCP_CRR) at full speed for a long run on one host, with the
host's TIME_WAIT sockets counted while it runs (docs/sockets.md, "Connection rate").

Runs `fabriclab run tcp.crr -s SIZE -p close=MODE --point-time SECONDS -L 1
--target-ci 1e-12 --sample-time 0.01 --per-op 5` (one point, measured for the
whole --point-time: a target of 1e-12 never converges) and, once a second while it
runs, counts the TIME_WAIT sockets in /proc/net/tcp{,6} (host/sockets.py, what
`ss -tan state time-wait` counts) per local port. Prints the transactions per
second (1 / the median sample's seconds per transaction), the per-transaction
p50/p99 (--per-op), and the most TIME_WAIT sockets seen on the listener's port
and on every other port, beside the host's ephemeral ports: with close=server
the TIME_WAIT sockets sit on the listener's port, and the other ports' count
stays far below the ephemeral range, so no connect runs out of ports (one
that did would end the run with "connect (no ephemeral port free)").

No anchor runs here: netperf is not installed on the project's machines; its
TCP_CRR (`netperf -t TCP_CRR -- -r SIZE,SIZE`) reports transactions per second
on the same footing (1 / the mean transaction) where it is.

Usage: python bench/bench_tcp_crr.py [--seconds 60] [--size 1] [--close server|reset]"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

from fabriclab import schema
from fabriclab.analysis.tails import tails
from fabriclab.host import sockets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--size", default="1")
    ap.add_argument("--close", default="server", choices=("server", "reset"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-crr-")
    out = Path(work) / "crr.json"
    argv = [c.fabriclab_exe(), "run", "tcp.crr", "-s", a.size, "-p", f"close={a.close}", "--point-time",
            str(a.seconds), "-L", "1", "--target-ci", "1e-12", "--sample-time", "0.01", "--max-samples", "1000000",
            "--per-op", "5", "-o", str(out), "-q"]
    print("command:", " ".join(argv))
    print(f"load before: {os.getloadavg()[0]:.1f} (1-minute average) on {os.cpu_count()} CPUs")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    snaps: list = []   # per second: {(local port, remote port): TIME_WAIT sockets}
    t0 = time.monotonic()
    while p.poll() is None and time.monotonic() - t0 < a.seconds + 300:
        snaps.append(+sockets.states())
        time.sleep(1.0)
    text = p.communicate()[0]
    print(f"load after: {os.getloadavg()[0]:.1f}")
    doc = c.load_result(out) if out.exists() or out.with_suffix(".ndjson").exists() else None
    if p.returncode != 0 or doc is None:
        print(f"ERROR  fabriclab exit code {p.returncode}: {c.last_lines(text, 3)}")
        return 1
    pt = c.points(doc, "tcp.crr")[0]
    port = pt["info"]["listen_port"]
    med = sorted(pt["samples"])[len(pt["samples"]) // 2]
    elapsed = pt.get("elapsed_s")
    ops = len(pt["samples"]) * (pt.get("batch") or 1)
    print(f"tcp.crr size {a.size} close={a.close}: {1 / med:,.0f} transactions/s (median of "
          f"{len(pt['samples'])} samples, batch {pt.get('batch')}), {elapsed:.1f} s measured, "
          f"{ops:,} transactions in the samples")
    for t in tails(x for x in schema.load(out).points if x.bench == "tcp.crr"):
        print("  per transaction (--per-op, " + f"{t.ops:,} single transactions): "
              + ", ".join(f"{q} {c.fmt_time(t.estimates[q][0])}" for q in ("p50", "p99", "p99.9")))
    seen = [sockets.time_wait(tw, port) for tw in snaps]
    most = [max((x[i] for x in seen), default=0) for i in range(3)]
    print(f"TIME_WAIT sockets, most seen at once ({len(snaps)} counts, 1 s apart): {most[0]} on the "
          f"listening side (local port {port}), {most[1]} on the connecting side (remote port {port}: "
          f"each holds an ephemeral port), {most[2]} of other processes; ephemeral ports: "
          f"{sockets.ephemeral_ports()}")
    print("no port ran out" if p.returncode == 0 else "the run failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
