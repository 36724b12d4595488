"""fabriclab's ucx.atomic op=fadd against ucx_perftest's ucp_fadd test.

Both time an 8-byte fetch-and-add on a remote word, one op and then its
completion (ucx_perftest -t ucp_fadd -O 1: at most one outstanding op, its
src/tools/perf/lib/ucp_tests.cc wait_send_window; fabriclab: ucx_atomic.c),
the two processes on one host, each on a CPU of its own as fabriclab's ranks
are by default (--bind core: rank k on core k here; ucx_perftest's own -c
places its client, the origin, on CPU 0 and its server on CPU 1).
ucx_perftest runs as server and client on loopback (the client connects to
127.0.0.1) and prints its mean over -n iterations (the "overall" latency of
its Final line; -n at its default of 1,000,000) and a 50.0%ile; fabriclab
runs one launch of two ranks per round (-L 1) with `-p clock=per-op`,
reading the clock after every op as ucx_perftest's loop does
(ucx_perf_update), and `-p target=perftest`, the target doing what
ucx_perftest's responder does (a progress and a clock read per op, then,
its own loop done first, reading the word until the end: wait_last_iter),
which moves the word's cache line to the target's CPU while the origin's
ops run (ucx_atomic.c). The ratio judged is of the means, ucx_perftest's
statistic: fabriclab's mean over its samples (each a batch's time over its
ops) against the overall mean; fabriclab's median against the 50.0%ile is
printed beside it. Both atomics land on memory UCP allocated (ucp_mem_map
with UCP_MEM_MAP_ALLOCATE: ucx.atomic's default memory=ucx), which a
shared-memory transport maps and updates with the CPU's own atomics.

Like for like, both run the same UCX library files: ucx_perftest runs on the
copy fabriclab's ucx level links (its MPI's, UCX 1.20.1 in the PyPI MPICH
wheel: measure/libraries.py), through LD_LIBRARY_PATH, when it was built
for that version (its `ucx_info -v` says "API headers version"). `make
bench` installs such a ucx_perftest from PyPI (the libucx-cu12 wheel of the
version `--ucx-version` prints, into .bench/ucx). A ucx_perftest built for
another version runs on its own libraries instead (Debian's is built for
UCX 1.13; on 1.20's, libucs warns that its globals changed size, so that
run would not be valid), and the output says the two ran different UCX.

Contenders alternate over rounds (ucx_perftest, fabriclab, ucx_perftest
again; the order flips every round); the ratio printed is the median over
rounds of fabriclab / ucx_perftest within each round, and the A/A floor
(_common.aa_floor) the second ucx_perftest run against the first in the
same rounds: a ratio within that floor is a difference this machine cannot
tell. At least 3 rounds.

The anchor: --ucx-perftest PATH, else $FABRICLAB_UCX_PERFTEST, else
.bench/ucx/libucx/bin/ucx_perftest (make bench), else /usr/bin/ucx_perftest.

Usage: python bench/bench_atomics_below.py [--rounds N] [--iters N] [--point-time S]
                                           [--ucx-perftest PATH]
       python bench/bench_atomics_below.py --ucx-version   # the UCX fabriclab's ucx level runs"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time

import _common as c

# ucx_perftest from PyPI's libucx-cu12 wheel (make bench-ucx: pip --target), and Debian's
PYPI_PERFTEST = c.REPO / ".bench" / "ucx" / "libucx" / "bin" / "ucx_perftest"
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


def default_anchor() -> str:
    """$FABRICLAB_UCX_PERFTEST, else the ucx_perftest `make bench` installed, else Debian's."""
    return os.environ.get("FABRICLAB_UCX_PERFTEST") or (str(PYPI_PERFTEST) if PYPI_PERFTEST.exists()
                                                        else UCX_PERFTEST)


def fabriclab_ucx() -> tuple[str, str]:
    """(library directory, version) of the UCX fabriclab's ucx level links: the copy its MPI
    carries (measure/libraries.py), its version as that library itself reports it."""
    from fabriclab.measure import libraries
    lib = libraries.find("ucx", libraries.default_mpicc())
    if not lib.available:
        raise c.BenchError(f"fabriclab's ucx level cannot be built: {lib.reason} ({lib.enable})")
    ucp = ctypes.CDLL(os.path.join(lib.libdir, "libucp.so.0"))
    ucp.ucp_get_version_string.restype = ctypes.c_char_p
    return lib.libdir, ucp.ucp_get_version_string().decode()


def built_for(info_text: str) -> str | None:
    """The UCX version a tool was built for, from its `ucx_info -v`: "# API headers version:
    1.20.1" (1.20 prints it beside the library's own "# Library version"), or 1.13's "# Version
    1.13.1" (a tool and its libraries built together)."""
    m = re.search(r"API headers version:\s*(\S+)", info_text) or re.search(r"^# Version\s+(\S+)", info_text, re.M)
    return m.group(1) if m else None


def anchor_version(exe: str) -> str | None:
    """The UCX version ucx_perftest `exe` was built for: `ucx_info -v` beside it, on its own libraries."""
    try:
        out = subprocess.run([os.path.join(os.path.dirname(exe), "ucx_info"), "-v"], capture_output=True,
                             text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return built_for(out.stdout + out.stderr)


def anchor_env(exe_version: str | None, libdir: str, version: str) -> dict | None:
    """The environment that runs ucx_perftest on fabriclab's own UCX library files, or None
    (its own libraries) when it was built for another version: a tool built for one UCX
    reads another's globals at the wrong size."""
    if exe_version != version:
        return None
    return {"LD_LIBRARY_PATH": os.pathsep.join(p for p in (libdir, os.environ.get("LD_LIBRARY_PATH")) if p)}


def pinned(cpu: int) -> list[str]:
    """ucx_perftest's own affinity option for one CPU, as fabriclab's --bind core (its default) runs
    rank k on core k of this host: the client (the origin) on 0, the server on 1."""
    return ["-c", str(cpu)] if (os.cpu_count() or 1) > 1 else []


def perftest(exe: str, iters: int, env: dict | None = None):
    """One ucx_perftest ucp_fadd run on loopback: seconds per op, (its overall mean, its 50.0%ile)."""
    port = c.free_port()
    server = subprocess.Popen([exe, *pinned(1), "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL, start_new_session=True, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 10
        while not _listening_any(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise c.BenchError(f"ucx_perftest's server did not listen on port {port}")
            time.sleep(0.02)
        out = c.run([exe, *pinned(0), "127.0.0.1", "-p", str(port), "-t", "ucp_fadd", "-O", "1", "-n", str(iters)],
                    env=env, timeout=120)
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
    """One fabriclab run of ucx.atomic op=fadd: (seconds per op, its mean and its median), the UCX
    its point ran on."""
    doc, _, _ = c.fabriclab(["ucx.atomic", "-p", "op=fadd", "-p", "clock=per-op", "-p", "target=perftest", "-s", "8",
                             "-L", "1", "--point-time", str(point_time), "-n", "2"], workdir)
    p = c.point(doc, "ucx.atomic", 8)
    return (p["summary"]["mean"], p["summary"]["median"]), p["info"].get("library", "?")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"alternating rounds, at least 3 (default {c.ROUNDS})")
    ap.add_argument("--iters", type=int, default=1000000, help="ucx_perftest's -n (default 1000000, its own)")
    ap.add_argument("--point-time", type=float, default=0.2, help="fabriclab's --point-time (default 0.2)")
    ap.add_argument("--ucx-perftest", default=default_anchor(),
                    help=f"the anchor (default $FABRICLAB_UCX_PERFTEST, else {PYPI_PERFTEST.relative_to(c.REPO)} "
                         f"if installed, else {UCX_PERFTEST})")
    ap.add_argument("--ucx-version", action="store_true",
                    help="print the UCX version fabriclab's ucx level runs and exit (make bench installs "
                         "ucx_perftest of that version)")
    a = ap.parse_args()
    try:
        libdir, version = fabriclab_ucx()
    except (c.BenchError, OSError, AttributeError) as e:   # --ucx-version's stdout is make's variable
        print(f"FAIL  fabriclab's ucx level: {e}", file=sys.stderr if a.ucx_version else sys.stdout)
        return 1
    if a.ucx_version:
        print(version)
        return 0
    if a.rounds < 3:
        ap.error("--rounds must be at least 3")
    if not os.access(a.ucx_perftest, os.X_OK):
        print(f"FAIL  anchor: {a.ucx_perftest} is not an executable (--ucx-perftest or $FABRICLAB_UCX_PERFTEST)")
        return 1
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average) on {os.cpu_count()} CPUs")
    built = anchor_version(a.ucx_perftest)
    env = anchor_env(built, libdir, version)
    if env:
        print(f"like for like: ucx_perftest ({a.ucx_perftest}, built for UCX {built}) runs on the UCX "
              f"{version} library files fabriclab's ucx level links, {libdir}")
    else:
        print(f"NOT like for like: ucx_perftest ({a.ucx_perftest}) was built for UCX {built or '(unknown)'} and "
              f"runs on its own libraries; fabriclab's ucx level runs UCX {version} ({libdir}). "
              f"`make bench` installs the matching one: pip install --target .bench/ucx libucx-cu12=={version}")
    libs: set = set()
    with tempfile.TemporaryDirectory(prefix="bench-atomics-") as work:
        def mine():
            t, lib = fabriclab(work, a.point_time)
            libs.add(lib)
            return t
        got = c.alternate([("ucx_perftest", lambda: perftest(a.ucx_perftest, a.iters, env)), ("fabriclab", mine),
                           ("ucx_perftest again", lambda: perftest(a.ucx_perftest, a.iters, env))], a.rounds,
                          show=lambda name, t: c.fmt_time(t[0] if isinstance(t, tuple) else t))
    pct = {k: [t[1] for t in got[k]] for k in got}           # fabriclab's median, ucx_perftest's 50.0%ile
    got.update({k: [t[0] for t in got[k]] for k in pct})      # the means
    print(f"ucx_perftest -t ucp_fadd -O 1 ran UCX {version if env else built or '(unknown)'}; "
          f"fabriclab's ucx.atomic ran {', '.join(sorted(libs))} (its MPI's copy)")
    ratio, ratios = c.paired_ratio(got["fabriclab"], got["ucx_perftest"])
    floor = c.aa_floor(c.paired_ratio(got["ucx_perftest again"], got["ucx_perftest"])[1])
    c.beyond(ratio, floor, 0.05)
    print(f"ucx.atomic op=fadd, means: fabriclab {c.fmt_time(c.median(got['fabriclab']))} "
          f"({c.spread(got['fabriclab'])} s), ucx_perftest {c.fmt_time(c.median(got['ucx_perftest']))} "
          f"({c.spread(got['ucx_perftest'])} s) per op")
    print(f"ratio of the means fabriclab / ucx_perftest {ratio:.3f} (rounds {', '.join(f'{r:.3f}' for r in ratios)}); "
          f"A/A floor {floor:.1%}; {'within' if abs(ratio - 1) <= floor else 'beyond'} the floor")
    r50, r50s = c.paired_ratio(pct["fabriclab"], pct["ucx_perftest"])
    print(f"fabriclab's median ({c.fmt_time(c.median(pct['fabriclab']))}) against ucx_perftest's 50.0%ile "
          f"({c.fmt_time(c.median(pct['ucx_perftest']))}): ratio {r50:.3f} (rounds "
          f"{', '.join(f'{r:.3f}' for r in r50s)}); A/A floor "
          f"{c.aa_floor(c.paired_ratio(pct['ucx_perftest again'], pct['ucx_perftest'])[1]):.1%}")
    c.closing_line()
    print(f"figures are provisional: one host, load {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
