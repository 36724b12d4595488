"""Helpers shared by the bench/ scripts: finding the tools, running fabriclab
and other programs, reading result documents, alternating contenders over
rounds, and printing the report header and verdicts.

Figures are compared only when measured side by side in one run: contenders
alternate over rounds (A B, B A, A B, ...), each is summarised by its median
over the rounds, and targets are judged on the median of the per-round ratios."""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class BenchError(RuntimeError):
    """A measurement could not be taken (as opposed to a missed target)."""


# ---- tools ----

def venv_bin() -> Path:
    """bin/ of the environment running this script, else the repository's .venv."""
    here = Path(sys.executable).parent
    return here if (here / "fabriclab").exists() else REPO / ".venv" / "bin"


def fabriclab_exe() -> str:
    exe = venv_bin() / "fabriclab"
    if not exe.exists():
        raise BenchError(f"fabriclab not found at {exe}; run `make venv` first")
    return str(exe)


def openmpi_home() -> str | None:
    """A second MPI for the Open MPI variants: $FABRICLAB_OPENMPI_HOME or .mpi/openmpi."""
    for cand in (os.environ.get("FABRICLAB_OPENMPI_HOME"), str(REPO / ".mpi" / "openmpi")):
        if cand and (Path(cand) / "bin" / "mpicc").exists():
            return cand
    return None


# ---- processes ----

def run(argv: list[str], env: dict | None = None, timeout: float = 120) -> str:
    """Run a command to completion; its stdout, or BenchError with the stderr
    tail. Past the timeout its whole process group (an MPI job too) is killed."""
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, **(env or {})}, start_new_session=True)
    except OSError as e:
        raise BenchError(f"cannot run {argv[0]}: {e}") from None
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise BenchError(f"timed out after {timeout:g} s: {shlex.join(argv)}") from None
    if p.returncode != 0:
        tail = "\n".join((err or out).strip().splitlines()[-5:])
        raise BenchError(f"exit code {p.returncode}: {shlex.join(argv)}\n{tail}")
    return out


class Server:
    """A background server in its own process group, stopped on exit of the with-block."""

    def __init__(self, argv: list[str], port: int, ready_timeout: float = 10):
        self.argv = argv
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + ready_timeout
        while not listening(port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise BenchError(f"server did not start listening on port {port}: "
                                 f"{shlex.join(argv)}\n{self.output()[-500:]}")
            time.sleep(0.02)

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        self.log.close()


def timed(argv: list[str]) -> float:
    """Wall time of one whole command, as a person types it; BenchError if it fails."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise BenchError(f"exit {p.returncode}: {' '.join(argv)}: {p.stderr.strip()[-300:]}")
    return dt


# A small launcher that runs its arguments and reports that child's resources: Linux
# counts a forking parent's resident pages in the forked child's ru_maxrss, so a large
# parent (a bench script with numpy loaded) must not start the measured command itself.
_LAUNCHER = """import json, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(sys.argv[2:], capture_output=True, text=True, errors="replace")
wall = time.perf_counter() - t0
u = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({"rc": p.returncode, "out": p.stdout, "err": p.stderr, "wall_s": wall,
           "cpu_s": u.ru_utime + u.ru_stime, "maxrss_MiB": u.ru_maxrss / 1024}, open(sys.argv[1], "w"))
"""


@dataclass
class Measured:
    """One command's exit code, output, wall and CPU seconds and peak resident memory (MiB)."""

    rc: int
    out: str
    err: str
    wall_s: float
    cpu_s: float
    maxrss_MiB: float


def measured(argv: list[str], timeout: float = 120) -> Measured:
    """Run argv in a fresh process, as a person types it, and measure that process alone
    (max RSS of the whole process, as /usr/bin/time -v reports it)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage.json"
        p = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(report), *argv], start_new_session=True)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise BenchError(f"timed out after {timeout:g} s: {shlex.join(argv)}") from None
        if not report.exists():
            raise BenchError(f"the launcher failed (exit {p.returncode}): {shlex.join(argv)}")
        return Measured(**json.loads(report.read_text()))


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Whether some socket listens on 127.0.0.1:port (read from /proc, so no
    probe connection disturbs a one-shot server)."""
    want = f"0100007F:{port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            return any(ln.split()[1] == want and ln.split()[3] == "0A" for ln in f)
    except OSError:
        return False


# ---- fabriclab runs and their result documents ----

@dataclass
class FabriclabRun:
    doc: dict | None      # the result document (from the stream when the run never finished)
    wall_s: float
    argv: list[str]
    returncode: int
    stderr: str
    started: float        # Unix time the command was started
    ended: float

    @property
    def status(self) -> str:
        return self.doc["footer"].get("status", "?") if self.doc else "no result"

    @property
    def path(self) -> str:
        """The result document's path (the run's -o)."""
        return self.argv[self.argv.index("-o") + 1]

    @property
    def error(self) -> str | None:
        if self.returncode == 0 and self.status == "complete":
            return None
        return (self.doc or {}).get("footer", {}).get("error") or last_lines(self.stderr, 2)


def fabriclab_run(args: list[str], workdir: str, timeout: float = 300) -> FabriclabRun:
    """`fabriclab run ARGS -o WORKDIR/runXXX/run.json -q`, whatever its outcome.

    Past the timeout fabriclab gets SIGINT (it stops its MPI job and closes the
    result as interrupted), then SIGKILL."""
    out = Path(tempfile.mkdtemp(prefix="run", dir=workdir)) / "run.json"
    argv = [fabriclab_exe(), "run", *args, "-o", str(out), "-q"]
    started, t0 = time.time(), time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGINT)
        try:
            _, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
        err += f"\n(stopped after the {timeout:g} s time limit)"
    wall = time.monotonic() - t0
    doc = load_result(out) if out.exists() or out.with_suffix(".ndjson").exists() else None
    return FabriclabRun(doc, wall, argv, p.returncode, err, started, time.time())


def fabriclab(args: list[str], workdir: str, timeout: float = 300) -> tuple[dict, float, list[str]]:
    """fabriclab_run for a run that must succeed: (document, wall seconds, argv)."""
    r = fabriclab_run(args, workdir, timeout)
    if r.error is not None:
        raise BenchError(f"fabriclab exit code {r.returncode}, status {r.status}: {r.error}\n"
                         f"  command: {shlex.join(r.argv)}")
    return r.doc, r.wall_s, r.argv


def launch_spreads(doc: dict) -> list[float]:
    """Per point measured in several launches: max/min of its launch medians."""
    by: dict = {}
    for p in points(doc):
        key = (p["bench"], p.get("variant", ""), p["size"], p["stride"], p.get("conns", 1), p.get("active"))
        by.setdefault(key, []).append(p["summary"]["median"])
    return [max(m) / min(m) for m in by.values() if len(m) > 1 and min(m) > 0]


def last_lines(text: str, n: int) -> str:
    return " | ".join(text.strip().splitlines()[-n:]) or "(no output)"


def load_result(path: str | Path) -> dict | None:
    """RUN.json, or its RUN.ndjson stream when the run never finished (status
    incomplete); None when neither holds a header."""
    path = Path(path)
    if path.exists():
        with open(path) as f:
            return json.load(f)
    lines = []
    with open(path.with_suffix(".ndjson")) as f:
        for ln in f:
            try:
                lines.append(json.loads(ln))
            except json.JSONDecodeError:
                break  # a torn last line
    if not lines or lines[0].get("kind") != "header":
        return None
    header = {k: v for k, v in lines[0].items() if k != "kind"}
    footer = {"status": "incomplete"}
    if lines[-1].get("kind") == "footer":
        footer = {k: v for k, v in lines.pop().items() if k != "kind"}
    return {"header": header, "records": lines[1:], "footer": footer}


def points(doc: dict, bench: str | None = None) -> list[dict]:
    return [r for r in doc["records"] if r["kind"] == "point" and bench in (None, r["bench"])]


def point(doc: dict, bench: str, size: int) -> dict:
    for r in points(doc, bench):
        if r["size"] == size:
            return r
    raise BenchError(f"no point for {bench} at size {size} in the result")


def launches(doc: dict) -> list[dict]:
    return [r for r in doc["records"] if r["kind"] == "launch"]


def mpi_library(doc: dict) -> str:
    """First line of MPI_Get_library_version as the core reported it."""
    lib = doc["header"].get("mpi", {}).get("library")
    if not lib:
        hello = next((r.get("hello") for r in launches(doc) if r.get("hello")), {})
        lib = hello.get("mpi_library") or doc["header"].get("mpi", {}).get("header_version", "?")
    return " ".join(lib.splitlines()[0].split())


def launch_prefix(doc: dict) -> tuple[list[str], dict]:
    """The launcher part of fabriclab's first launch (argv before the core) and its
    environment additions: running another program with them gives it the same
    MPI, launcher options and placement."""
    rec = launches(doc)[0]
    argv, core = rec["command"], doc["header"]["core"]["path"]
    env = dict(rec.get("env") or {})
    if doc["header"]["mpi"]["flavour"] == "openmpi":  # running as root, and no UCX one-sided on one host
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_osc": "^ucx", **env}
    return argv[:argv.index(core)], env


# ---- rounds and statistics ----

def alternate(contenders: list[tuple[str, callable]], rounds: int, show=None) -> dict[str, list]:
    """Run each contender once per round, the order flipping every round
    (A B, B A, ...); returns the results by name. `show(name, result)` gives the
    text printed per run."""
    results: dict[str, list] = {name: [] for name, _ in contenders}
    _judged["rounds"] = min(rounds, _judged["rounds"] or rounds)
    for i in range(rounds):
        order = contenders if i % 2 == 0 else contenders[::-1]
        cells = []
        for name, fn in order:
            res = _once_more(name, fn)
            results[name].append(res)
            cells.append(f"{name} {show(name, res) if show else res}")
        print(f"  round {i + 1}/{rounds}: " + "; ".join(cells), flush=True)
    return results


def _once_more(name: str, fn):
    """fn(), and once more if it fails (BenchError), said on its own line: one launch of
    an anchor or of fabriclab that dies (osu_latency_mt under MPICH was once killed 20 s
    into a round) costs its round, not the whole bench. A second failure ends the bench."""
    try:
        return fn()
    except BenchError as e:
        first = str(e).splitlines()[0][:200]
        print(f"  RETRY {name}: its launch failed ({first}); run again once", flush=True)
        _judged["retried"] += 1
        return fn()


def median(xs) -> float:
    return statistics.median(xs)


def paired_ratio(num: list[float], den: list[float]) -> tuple[float, list[float]]:
    """Median over rounds of num/den taken within each round, and the per-round
    ratios. The two runs of a round are adjacent in time, so a disturbance that
    lasts several rounds cancels out, where a ratio of two medians may pick a
    quiet round for one contender and a disturbed one for the other."""
    ratios = [a / b for a, b in zip(num, den)]
    return statistics.median(ratios), ratios


def aa_floor(ratios: list[float]) -> float:
    """The difference a comparison cannot tell on this machine at one point, from the
    per-round ratios of the reference's second launch to its first in the same rounds
    (an A/A test): the largest of |median ratio - 1| and the half-width of their range.
    Two runs of the same program differ by this much for reasons the harness has no
    part in (launch-to-launch placement, the hypervisor), so a contender's ratio
    within it says the harness adds nothing measurable here."""
    return max(abs(statistics.median(ratios) - 1), (max(ratios) - min(ratios)) / 2)


def floor_verdict(ratio: float, floor: float, tolerance: float, target: str) -> bool:
    """PASS within the tolerance; otherwise FAIL, and where the reference against itself
    (aa_floor) differs by more than the tolerance, say that this machine cannot resolve
    the target at this point and whether the ratio stands within that floor."""
    beyond(ratio, floor, tolerance)
    ok = abs(ratio - 1) <= tolerance
    shown = f"ratio {ratio:.3f} ({(ratio - 1) * 100:+.1f}%)"
    if not ok and floor > tolerance:
        inside = "within" if abs(ratio - 1) <= floor else "beyond"
        shown += f"; A/A floor {floor:.1%}: {tolerance:.0%} not resolvable here, ratio {inside} the floor"
    return verdict(ok, target, shown)


def preload_lib(source: str, workdir: str) -> str:
    """A C file of bench/ (an anchor's shim: hpcc_written.c, imb_aligned.c) built into a
    library for LD_PRELOAD in workdir; its path."""
    out = str(Path(workdir) / (Path(source).stem + ".so"))
    run(["cc", "-O2", "-shared", "-fPIC", "-o", out, str(Path(__file__).with_name(source)), "-ldl"], timeout=120)
    return out


# The cells judged by the rule in this run, for main's closing line (chance_line).
_judged = {"rounds": 0, "cells": 0, "missed": 0, "tolerance": 0.05, "retried": 0}


def beyond(ratio: float, floor: float, tolerance: float) -> bool:
    """A ratio that misses the target: off by more than the tolerance and by more
    than the anchor's A/A floor (the targets' rule: within 5%, or the floor where wider).
    Each call is one cell judged (call it once a cell)."""
    miss = abs(ratio - 1) > max(tolerance, floor)
    _judged["cells"] += 1
    _judged["missed"] += miss
    _judged["tolerance"] = tolerance
    return miss


def rule_misses(contender, anchor, anchor_again, tolerance: float):
    """Row by row (a row a cell, a column a round), whether the cell misses by the
    rule above: the median of contender / anchor beyond both the tolerance and the
    aa_floor of anchor_again / anchor. Numpy arrays in, a boolean array out."""
    import numpy as np
    r = np.median(contender / anchor, axis=1)
    a = anchor_again / anchor
    floor = np.maximum(np.abs(np.median(a, axis=1) - 1), (a.max(axis=1) - a.min(axis=1)) / 2)
    return np.abs(r - 1) > np.maximum(tolerance, floor)


# Rounds a bench that judges cells by the rule runs by default: with 3 a contender
# identical to its anchor misses about a fifth of the cells by chance, with 7 a few
# percent (chance_miss); "at least 3" stays the floor a user may ask for.
ROUNDS = 7

# Run-to-run noise the chance of a miss is taken over: lognormal at these sigmas, and
# bimodal (a launch lands in a slow mode 3 sigma above the fast one a third of the
# time, 2% noise within a mode), as launches of MPI programs switch between modes here.
NOISE_SIGMAS = (0.02, 0.05, 0.1, 0.2, 0.4)


def chance_miss(rounds: int, tolerance: float = 0.05, draws: int = 10000, seed: int = 0) -> float:
    """The share of cells that a contender identical to its anchor misses by the rule
    (rule_misses): simulated, the worst over NOISE_SIGMAS of both kinds of noise. With 3
    rounds it is about a fifth of the cells, so a bench of 12 cells misses two or three
    of them when there is nothing to find; 7 rounds bring it to a few percent."""
    import numpy as np
    rng = np.random.default_rng(seed)
    worst = 0.0
    for sigma in NOISE_SIGMAS:
        def runs():
            return np.exp(rng.normal(0, sigma, (draws, rounds)))

        def moded():
            slow = np.where(rng.random((draws, rounds)) < 1 / 3, 1 + 3 * sigma, 1.0)
            return slow * np.exp(rng.normal(0, 0.02, (draws, rounds)))
        for draw in (runs, moded):
            worst = max(worst, float(np.mean(rule_misses(draw(), draw(), draw(), tolerance))))
    return worst


def chance_line(rounds: int, cells: int, missed: int, tolerance: float = 0.05) -> str:
    """A bench's closing line: its cells missed by the rule, and how many of them a
    contender identical to its anchor would miss by chance at these rounds."""
    p = chance_miss(rounds, tolerance)
    return (f"{missed} of {cells} cells beyond {tolerance:.0%} and the A/A floor; by chance alone, with "
            f"{rounds} rounds, a contender identical to its anchor misses up to {p:.1%} of cells by this rule, "
            f"{p * cells:.1f} of these {cells} (_common.chance_miss)")


def spread(xs) -> str:
    """min..max of a list, for showing how much rounds varied."""
    return f"{min(xs):.4g}..{max(xs):.4g}"


# ---- report ----

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def header(title: str, mpi: list[str] | None = None, commands: list[str] | None = None,
           method: str | None = None) -> None:
    now = datetime.datetime.now(datetime.timezone.utc)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    bar = "=" * 78
    print(bar)
    print(title)
    print(bar)
    print(f"date      {now:%Y-%m-%d %H:%M:%S} UTC")
    print(f"host      {platform.node()}: {cpu_model()}, {os.cpu_count()} CPUs, "
          f"{platform.system()} {platform.release()}, load average (1 min) {load:.2f}")
    print(f"python    {platform.python_version()} ({sys.executable}); fabriclab {fabriclab_exe()}")
    for line in mpi or []:
        print(f"MPI       {line}")
    if method:
        print(f"method    {method}")
    if commands:
        print("commands")
        for c in commands:
            print(f"  {c}")
    print("-" * 78, flush=True)


def verdict(ok: bool, target: str, measured: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'}  {target}: {measured}", flush=True)
    return ok


def fmt_time(s: float) -> str:
    """Seconds as ns/us/ms with the unit."""
    for div, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(s) >= div:
            return f"{s / div:.3f} {unit}"
    return f"{s / 1e-9:.1f} ns"


def fmt_bw(bps: float) -> str:
    """Bytes per second in GB/s (10^9 B/s)."""
    return f"{bps / 1e9:.3f} GB/s"


def fmt_size(n: int) -> str:
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def closing_line() -> None:
    """chance_line for the cells this run judged, if it judged any."""
    if _judged["cells"] and _judged["rounds"]:
        print(chance_line(_judged["rounds"], _judged["cells"], _judged["missed"], _judged["tolerance"]), flush=True)
    if _judged["retried"]:
        print(f"{_judged['retried']} launch(es) failed once and ran again (RETRY lines above)", flush=True)


def main(body) -> None:
    """Run a script body: exit 0 when it ran (targets met or not), 1 when a
    measurement could not be taken."""
    try:
        body()
        closing_line()
    except BenchError as e:
        print(f"ERROR  {e}", flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    sys.exit(0)
