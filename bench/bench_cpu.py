"""Does reading each rank's CPU (point `rank_cpu`) move a figure?

The runner reads getrusage(RUSAGE_SELF) twice per round of samples on every
rank (csrc/runner.c, sample; csrc/cpu.c). This bench builds the core twice
from this checkout's csrc/: as it is, and with those two reads taken out
(the round's `fl_cpu_now` and `fl_cpu_add_since` lines), and alternates
`fabriclab run message.pingpong -s 8` with each over rounds, the core as it
is launched twice per round for the A/A floor (how much two launches of one
core differ here). Target: the median over rounds of the per-round ratio of
medians (with / without) within 2%, or within the A/A floor where that is
wider. The venv's MPICH; the cores go to a temporary cache (FABRICLAB_CACHE).

Usage: python bench/bench_cpu.py [--rounds N] [--point-time S]"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

import _common as c

TOLERANCE = 0.02
READS = ("        const fl_cpu_use round_start = fl_cpu_now();\n",
         "        fl_cpu_add_since(&r->cpu, round_start);\n")


def build_cores(workdir: str) -> tuple[str, str]:
    """(the core as it is, the core without the per-round CPU reads), built with the venv's MPICH."""
    os.environ["FABRICLAB_CACHE"] = str(Path(workdir) / "cache")
    from fabriclab.measure import build, mpi
    m = mpi.discover()
    with_reads = build.ensure_core(m).path
    src = Path(workdir) / "csrc"
    shutil.copytree(build.source_dir(), src)
    runner = src / "runner.c"
    text = runner.read_text()
    for line in READS:
        if text.count(line) != 1:
            raise c.BenchError(f"csrc/runner.c no longer has the line {line.strip()!r}: update this bench")
        text = text.replace(line, "")
    runner.write_text(text)
    build.source_dir = lambda: src
    without = build.ensure_core(m).path
    if without == with_reads:
        raise c.BenchError("the two cores share a cache key: the patched sources were not used")
    return with_reads, without


def body() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--point-time", type=float, default=0.5)
    a = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-cpu-")
    with_reads, without = build_cores(workdir)
    args = ["message.pingpong", "-s", "8", "-L", "1", "--point-time", str(a.point_time), "-t", "120"]
    c.header("rank_cpu's getrusage reads: message.pingpong 8 B with and without them",
             commands=[f"fabriclab run {' '.join(args)} --core {with_reads}  (twice: A, A')",
                       f"fabriclab run {' '.join(args)} --core {without}  (B: no CPU reads)"],
             method="alternating rounds; per round: the 8 B median one-way latency of each; "
                    "ratio A/B per round, A'/A for the A/A floor")

    def one(core):
        doc, _, _ = c.fabriclab([*args, "--core", core], workdir)
        return c.point(doc, "message.pingpong", 8)["latency_s"]

    got = c.alternate([("A", lambda: one(with_reads)), ("B", lambda: one(without)),
                       ("A'", lambda: one(with_reads))], a.rounds, show=lambda _, t: c.fmt_time(t))
    ratio, ratios = c.paired_ratio(got["A"], got["B"])
    floor = c.aa_floor([x / y for x, y in zip(got["A'"], got["A"])])
    again = c.median(got["A'"])
    print(f"medians: with reads {c.fmt_time(c.median(got['A']))} (A), {c.fmt_time(again)} (A'), without "
          f"{c.fmt_time(c.median(got['B']))}; per-round A/B {c.spread(ratios)}; A/A floor {floor:.1%}")
    c.floor_verdict(ratio, floor, TOLERANCE, "8 B ping-pong latency with the CPU reads over without")


if __name__ == "__main__":
    c.main(body)
