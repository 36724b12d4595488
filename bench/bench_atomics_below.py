"""fabriclab's ucx.atomic op=fadd against ucx_perftest's ucp_fadd test.

Both time an 8-byte fetch-and-add on a remote word, one op and then its
completion (ucx_perftest -t ucp_fadd -O 1: at most one outstanding op, its
src/tools/perf/lib/ucp_tests.cc wait_send_window; fabriclab: ucx_atomic.c),
the two processes on one host. ucx_perftest runs as server and client on
loopback (the client connects to 127.0.0.1) and prints its mean over -n
iterations ("overall" latency of its Final line, the ratio's denominator)
and a 50.0%ile (printed as a second ratio); fabriclab runs one launch of two
ranks per round (-L 1) and its figure is the median of its samples. Both
atomics land on memory UCP allocated (ucp_mem_map with
UCP_MEM_MAP_ALLOCATE: ucx.atomic's default memory=ucx), which a
shared-memory transport maps and updates with the CPU's own atomics.

The two run different UCX libraries, and the output says which: Debian's
ucx_perftest links Debian's UCX (1.13 here), fabriclab's ucx level the copy
its MPI carries (UCX 1.20 in the PyPI MPICH wheel, recorded in every point's
info). A ratio away from 1 may be the library's as much as the harness's.

Contenders alternate over rounds (ucx_perftest, fabriclab, ucx_perftest
again; the order flips every round); the ratio printed is the median over
rounds of fabriclab / ucx_perftest within each round, and the A/A floor
(_common.aa_floor) the second ucx_perftest run against the first in the
same rounds: a ratio within that floor is a difference this machine cannot
tell. At least 3 rounds.

The anchor: --ucx-perftest PATH or $FABRICLAB_UCX_PERFTEST (default
/usr/bin/ucx_perftest).

Usage: python bench/bench_atomics_below.py [--rounds N] [--iters N] [--point-time S]
                                           [--ucx-perftest PATH]"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time

import _common as c

UCX_PERFTEST = "/usr/bin/ucx_perftest"
FINAL = re.compile(r"^Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s")


def _listening_any(port: int) -> bool:
    """Whether some socket (IPv4 or IPv6, any address) listens on `port`."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                if any(ln.split()[1].endswith(f":{port:04X}") and ln.split()[3] == "0A" for ln in f):
                    return True
        except OSError:
            pass
    return False


def _ucx_version(exe: str) -> str:
    """The UCX that `exe` links: ucx_info's version line beside it, else the library path."""
    info = os.path.join(os.path.dirname(exe), "ucx_info")
    try:
        out = subprocess.run([info, "-v"], capture_output=True, text=True, timeout=20).stdout
        m = re.search(r"Version\s+(\S+)", out)
        if m:
            return f"UCX {m.group(1)} (Debian's, {info} -v)"
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "UCX (version unknown)"


def perftest(exe: str, iters: int):
    """One ucx_perftest ucp_fadd run on loopback: seconds per op, (its overall mean, its 50.0%ile)."""
    port = c.free_port()
    server = subprocess.Popen([exe, "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not _listening_any(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise c.BenchError(f"ucx_perftest's server did not listen on port {port}")
            time.sleep(0.02)
        out = c.run([exe, "127.0.0.1", "-p", str(port), "-t", "ucp_fadd", "-O", "1", "-n", str(iters)],
                    timeout=120)
    finally:
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
    for ln in out.splitlines():
        m = FINAL.match(ln.strip())
        if m:
            return float(m.group(4)) * 1e-6, float(m.group(2)) * 1e-6
    raise c.BenchError(f"no Final line in ucx_perftest's output:\n{c.last_lines(out, 5)}")


def fabriclab(workdir: str, point_time: float):
    """One fabriclab run of ucx.atomic op=fadd: (seconds per op, the UCX its point ran on)."""
    doc, _, _ = c.fabriclab(["ucx.atomic", "-p", "op=fadd", "-s", "8", "-L", "1", "--point-time", str(point_time),
                             "-n", "2"], workdir)
    p = c.point(doc, "ucx.atomic", 8)
    return p["summary"]["median"], p["info"].get("library", "?")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"alternating rounds, at least 3 (default {c.ROUNDS})")
    ap.add_argument("--iters", type=int, default=100000, help="ucx_perftest's -n (default 100000)")
    ap.add_argument("--point-time", type=float, default=0.2, help="fabriclab's --point-time (default 0.2)")
    ap.add_argument("--ucx-perftest", default=os.environ.get("FABRICLAB_UCX_PERFTEST", UCX_PERFTEST),
                    help="the anchor (default $FABRICLAB_UCX_PERFTEST or /usr/bin/ucx_perftest)")
    a = ap.parse_args()
    if a.rounds < 3:
        ap.error("--rounds must be at least 3")
    if not os.access(a.ucx_perftest, os.X_OK):
        print(f"FAIL  anchor: {a.ucx_perftest} is not an executable (--ucx-perftest or $FABRICLAB_UCX_PERFTEST)")
        return 1
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average) on {os.cpu_count()} CPUs")
    libs: set = set()
    with tempfile.TemporaryDirectory(prefix="bench-atomics-") as work:
        def mine():
            t, lib = fabriclab(work, a.point_time)
            libs.add(lib)
            return t
        got = c.alternate([("ucx_perftest", lambda: perftest(a.ucx_perftest, a.iters)), ("fabriclab", mine),
                           ("ucx_perftest again", lambda: perftest(a.ucx_perftest, a.iters))], a.rounds,
                          show=lambda name, t: c.fmt_time(t[0] if isinstance(t, tuple) else t))
    pct = {k: [t[1] for t in got[k]] for k in ("ucx_perftest", "ucx_perftest again")}
    got.update({k: [t[0] for t in got[k]] for k in pct})
    print(f"ucx_perftest -t ucp_fadd -O 1 runs {_ucx_version(a.ucx_perftest)}; "
          f"fabriclab's ucx.atomic ran {', '.join(sorted(libs))} (its MPI's copy)")
    ratio, ratios = c.paired_ratio(got["fabriclab"], got["ucx_perftest"])
    floor = c.aa_floor(c.paired_ratio(got["ucx_perftest again"], got["ucx_perftest"])[1])
    c.beyond(ratio, floor, 0.05)
    print(f"ucx.atomic op=fadd: fabriclab {c.fmt_time(c.median(got['fabriclab']))} "
          f"({c.spread(got['fabriclab'])} s), ucx_perftest {c.fmt_time(c.median(got['ucx_perftest']))} "
          f"({c.spread(got['ucx_perftest'])} s) per op")
    print(f"ratio fabriclab / ucx_perftest {ratio:.3f} (rounds {', '.join(f'{r:.3f}' for r in ratios)}); "
          f"A/A floor {floor:.1%}; {'within' if abs(ratio - 1) <= floor else 'beyond'} the floor")
    r50, _ = c.paired_ratio(got["fabriclab"], pct["ucx_perftest"])
    print(f"against ucx_perftest's 50.0%ile ({c.fmt_time(c.median(pct['ucx_perftest']))}): ratio {r50:.3f}; "
          f"A/A floor {c.aa_floor(c.paired_ratio(pct['ucx_perftest again'], pct['ucx_perftest'])[1]):.1%}")
    c.closing_line()
    print(f"figures are provisional: one host, load {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
