"""Cost of the machine check and the A/A self-test: `fabriclab doctor
--machine` as typed (target: under 2 s), the short check at the start of
every run (the probes and their 0.25 s window, in-process; target: well
under 2 s, here under 0.5 s), and `fabriclab doctor --aa` (target: under
60 s with the core already built), with the false-verdict rate it reports.

Usage: python bench/bench_doctor.py [--runs N] [--aa-runs N]"""

from __future__ import annotations

import argparse
import re
import subprocess
import time

import _common as c

MACHINE_TARGET_S = 2.0
RUN_START_TARGET_S = 0.5
AA_TARGET_S = 60.0


def run_start_s() -> float:
    from fabriclab.host.machine import run_start
    t0 = time.perf_counter()
    run_start()
    return time.perf_counter() - t0


def aa(exe: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run([exe, "doctor", "--aa"], capture_output=True, text=True, timeout=600)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise c.BenchError(f"doctor --aa failed: {p.stderr.strip()[-300:]}")
    m = re.search(r"false verdicts: .*", p.stdout)
    return dt, m.group(0) if m else "(no rate printed)"


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs of doctor --machine and of the run-start check (default 10)")
    ap.add_argument("--aa-runs", type=int, default=1, help="runs of doctor --aa (default 1)")
    opts = ap.parse_args()
    exe = c.fabriclab_exe()
    c.header("fabriclab doctor: the machine check and the A/A self-test",
             commands=["fabriclab doctor --machine", "host.machine.run_start (in-process)", "fabriclab doctor --aa"],
             method=f"{opts.runs} runs of the first two (median, min..max), {opts.aa_runs} of --aa")
    c.run([exe, "doctor"], timeout=600)    # the core built and cached, so --aa times measuring alone
    machine = [c.timed([exe, "doctor", "--machine"]) for _ in range(opts.runs)]
    start = [run_start_s() for _ in range(opts.runs)]
    c.verdict(c.median(machine) < MACHINE_TARGET_S, f"doctor --machine under {MACHINE_TARGET_S:g} s",
              f"median {c.median(machine):.2f} s ({c.spread(machine)} s)")
    c.verdict(c.median(start) < RUN_START_TARGET_S, f"run-start check under {RUN_START_TARGET_S:g} s",
              f"median {c.median(start):.3f} s ({c.spread(start)} s)")
    for i in range(opts.aa_runs):
        dt, rate = aa(exe)
        c.verdict(dt < AA_TARGET_S, f"doctor --aa under {AA_TARGET_S:g} s", f"{dt:.1f} s; {rate}")


if __name__ == "__main__":
    c.main(body)
