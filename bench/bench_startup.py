"""Start-up time of the commands that must feel instant: `fabriclab --help`,
`list`, `show` and `compare` (targets: under 0.3 s, median of 10 runs each).

Each command runs as a whole process, the way a person types it; `show` and
`compare` read a small result document written by a fake core first. Also
prints which heavy modules each command imports (numpy, matplotlib, the
model's catalog), since those decide the time.

Usage: python bench/bench_startup.py [--runs N]"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import _common as c

TARGET_S = 0.3
FAKES = c.REPO / "tests" / "fakes"


def heavy_imports(args: list[str]) -> list[str]:
    """Which of numpy, matplotlib and the model catalog a command loads."""
    code = ("import sys; from fabriclab.cli import main; rc = main(sys.argv[1:]); "
            "print('|'.join(m for m in ('numpy', 'matplotlib', 'fabriclab.model.catalog') if m in sys.modules), "
            "file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    return [m for m in p.stderr.strip().splitlines()[-1].split("|") if m] if p.stderr.strip() else []


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs per command (default 10)")
    opts = ap.parse_args()
    exe = c.fabriclab_exe()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        fake = Path(work) / "fakecore"
        fake.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKES / 'fakecore.py'} \"$@\"\n")
        fake.chmod(0o755)
        runs = []
        for name in ("a", "b"):
            out = Path(work) / f"{name}.json"
            c.run([exe, "run", "message.pingpong", "message.stream", "-s", "0:64K:x4", "-q", "-o", str(out),
                   "--core", str(fake), "--mpiexec", str(FAKES / "mpiexec")])
            runs.append(str(out))
        commands = {"--help": ["--help"], "list": ["list"], "show": ["show", runs[0]],
                    "compare": ["compare", runs[0], runs[1]]}
        c.header("fabriclab start-up time (whole process, as typed)",
                 commands=[f"fabriclab {' '.join(a)}" for a in commands.values()],
                 method=f"{opts.runs} runs per command, interleaved; median, min..max")
        times: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(opts.runs):
            for k, args in commands.items():
                times[k].append(c.timed([exe, *args]))
        ok = True
        for k, args in commands.items():
            med = c.median(times[k])
            heavy = heavy_imports(args)
            ok &= c.verdict(med < TARGET_S, f"fabriclab {k} under {TARGET_S} s",
                            f"median {med:.3f} s ({c.spread(times[k])} s); loads "
                            f"{', '.join(heavy) if heavy else 'no numpy, matplotlib or catalog'}")


if __name__ == "__main__":
    c.main(body)
