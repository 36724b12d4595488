"""Wall-clock time of the whole default suite, `fabriclab run` with no benchmark.

Reports the point count and the time per level and per benchmark, taken from
the launch records' "started" timestamps (a launch lasts until the next one
starts; the last until the run's end). Target: the suite within 180 s.

Usage: python bench/bench_default_run.py [--limit SECONDS]"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import statistics
import tempfile
from pathlib import Path

import _common as c

TARGET_S = 180.0


def unix_time(iso: str | None) -> float | None:
    return datetime.datetime.fromisoformat(iso).timestamp() if iso else None


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=float, default=400,
                    help="stop the suite after this many seconds (default 400)")
    opts = ap.parse_args()

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        print(f"running the default suite: fabriclab run -q -o RUN.json (target {TARGET_S:.0f} s) ...",
              flush=True)
        run = c.fabriclab_run([], work, timeout=opts.limit)
        doc = run.doc
        shown = [Path(run.argv[0]).name, *run.argv[1:]]
        c.header("fabriclab default suite: wall-clock time",
                 mpi=[c.mpi_library(doc) if doc and c.launches(doc) else "unknown (no launch recorded)"],
                 commands=[shlex.join(shown)],
                 method=f"one run, timed from process start to exit (time.monotonic); "
                        f"load average (1 min) before the run {load_before:.2f}")

        print(f"wall clock        {run.wall_s:7.1f} s   (fabriclab exit code {run.returncode}, "
              f"status {run.status})")
        if run.error:
            print(f"fabriclab error   {run.error}")
        if not doc:
            c.verdict(False, f"default suite within {TARGET_S:.0f} s", "no result document was written")
            return

        foot = doc["footer"]
        recs = doc["records"]
        npoints = sum(r["kind"] == "point" for r in recs)
        nskips = sum(r["kind"] == "skip" for r in recs)
        if foot.get("duration_s") is not None:
            print(f"run (footer)      {foot['duration_s']:7.1f} s   "
                  f"(outside it: {run.wall_s - foot['duration_s']:.1f} s of start-up and writing)")
        print(f"points            {npoints:7d}     (+ {nskips} skipped; footer says {foot.get('points', '?')})")

        # Per launch: from its start to the next launch's start (the last: to the run's end).
        launches = c.launches(doc)
        end = unix_time(foot.get("end_time")) or run.ended
        starts = [r["started"] for r in launches] + [end]
        start0 = unix_time(doc["header"].get("start_time")) or run.started
        if launches:
            print(f"before 1st launch {launches[0]['started'] - start0:7.1f} s   (after fabriclab's start_time)")
        per_bench, per_level = [], {}
        for i, rec in enumerate(launches):
            dt = starts[i + 1] - starts[i]
            variant = rec.get("variant", "")
            pts = [p for p in c.points(doc, rec["bench"]) if p.get("variant", "") == variant
                   and p.get("launch", 0) == rec.get("launch", 0)]
            capped = sum(p.get("stop") == "time_cap" for p in pts)
            label = rec["bench"] + (f" [{variant}]" if variant else "") + f" #{rec.get('launch', 0) + 1}"
            per_bench.append((label, dt, len(pts), capped))
            level = rec["bench"].split(".", 1)[0]
            t, n = per_level.get(level, (0.0, 0))
            per_level[level] = (t + dt, n + len(pts))

        print(f"\n{'level':<10} {'time (s)':>9} {'points':>7}")
        for level, (t, n) in per_level.items():
            print(f"{level:<10} {t:9.1f} {n:7d}")
        print(f"\n{'benchmark':<40} {'time (s)':>9} {'points':>7} {'at time cap':>12}")
        for bench, dt, n, capped in per_bench:
            print(f"{bench:<40} {dt:9.1f} {n:7d} {capped:12d}")
        spreads = c.launch_spreads(doc)
        if spreads:
            print(f"\nbetween-launch spread (max/min of a point's launch medians, default binding "
                  f"{doc['header']['launcher'].get('binding', '?')}): median {statistics.median(spreads):.3f}, "
                  f"90th percentile {sorted(spreads)[int(0.9 * len(spreads))]:.3f}, over {len(spreads)} points")
        print()
        ok = run.status == "complete" and run.wall_s <= TARGET_S
        measured = f"{run.wall_s:.1f} s wall clock, {npoints} points"
        if run.status != "complete":
            measured += f"; the run did not complete (status {run.status})"
        c.verdict(ok, f"default suite within {TARGET_S:.0f} s", measured)


if __name__ == "__main__":
    c.main(body)
