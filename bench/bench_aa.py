"""A/A test of `fabriclab compare`: two runs of the same configuration must
come out "same" (target: at most 5% of verdicts other than "same").

Each repetition runs the same command twice, back to back, and compares the
second run against the first with fabriclab's default verdict rule (the
two-level interval of the ratio beyond 1 +- 2%). Ping-pong and stream at 12
sizes each, the default launches per run (or --launches). Also prints the
between-launch spread of each run (max/min of a point's launch medians).

Usage: python bench/bench_aa.py [--repeats N] [--launches K]"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile

import _common as c

SIZES = "0,1,4,16,64,256,1K,4K,16K,64K,256K,1M"
TARGET = 0.05


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=4, help="A/A pairs (default 4)")
    ap.add_argument("--launches", type=int, default=None, help="launches per run (default: fabriclab's)")
    opts = ap.parse_args()
    args = ["message.pingpong", "message.stream", "-s", SIZES]
    if opts.launches:
        args += ["--launches", str(opts.launches)]
    exe = c.fabriclab_exe()
    c.header("fabriclab compare, A/A: two runs of one configuration",
             commands=[f"fabriclab run {' '.join(args)}  (twice)", "fabriclab compare A.json B.json -f json"],
             method=f"{opts.repeats} pairs of back-to-back runs; verdicts of every point counted")
    counts: dict[str, int] = {}
    spreads = []
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        for i in range(opts.repeats):
            runs = []
            for _ in range(2):
                r = c.fabriclab_run(args, work, timeout=900)
                if r.error is not None:
                    raise c.BenchError(f"run failed: {r.error}")
                runs.append(r)
            p = subprocess.run([exe, "compare", str(runs[0].path), str(runs[1].path), "-f", "json"],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                raise c.BenchError(f"compare failed: {p.stderr.strip()}")
            verdicts = [row["verdict"] for row in json.loads(p.stdout)]
            for v in verdicts:
                counts[v] = counts.get(v, 0) + 1
            for r in runs:
                spreads += c.launch_spreads(r.doc)
            other = [v for v in verdicts if v != "same"]
            print(f"  pair {i + 1}/{opts.repeats}: {len(verdicts)} points, {len(other)} not 'same' "
                  f"({', '.join(sorted(set(other))) or '-'}); run times {runs[0].wall_s:.0f} s, "
                  f"{runs[1].wall_s:.0f} s", flush=True)
    total = sum(counts.values())
    wrong = total - counts.get("same", 0)
    print(f"\nverdicts: {json.dumps(counts)}")
    if spreads:
        print(f"between-launch spread within a run (max/min of launch medians): median {statistics.median(spreads):.3f}, "
              f"worst {max(spreads):.3f} over {len(spreads)} points")
    c.verdict(wrong <= TARGET * total, f"A/A: at most {TARGET:.0%} of verdicts other than 'same'",
              f"{wrong} of {total} ({wrong / total:.1%})")


if __name__ == "__main__":
    c.main(body)
