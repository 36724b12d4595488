"""What `fabriclab import` costs on the largest file it accepts: an OSU and an
IMB output of imports.MAX_ROWS rows (20,000), each row a point.
Targets: under 5 s and under 300 MB (peak resident memory of the whole
process, as /usr/bin/time reports it), the median over runs; and `show` of
the imported document, for a look.

Usage: python bench/bench_import.py [--runs N]"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common as c
from fabriclab.imports import MAX_ROWS

TARGET_S, TARGET_MIB = 5.0, 300
ROWS = MAX_ROWS


def files(work: Path) -> dict:
    """The two outputs, one row per size, as the tools print them."""
    osu = work / "osu.txt"
    with open(osu, "w") as f:
        f.write("# OSU MPI Latency Test v5.6.3\n# Size          Latency (us)\n")
        f.writelines(f"{i:<20d}{1.5 + i % 7 * 0.01:.2f}\n" for i in range(ROWS))
    imb = work / "imb.txt"
    with open(imb, "w") as f:
        f.write("# Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n# Benchmarking PingPong\n# #processes = 2\n"
                "       #bytes #repetitions      t[usec]   Mbytes/sec\n")
        f.writelines(f"{i:13d}{1000:13d}{1.5:13.2f}{10.0:13.2f}\n" for i in range(ROWS))
    return {"osu": osu, "imb": imb}


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()
    exe = c.fabriclab_exe()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as tmp:
        work = Path(tmp)
        inputs = files(work)
        cmds = {tool: [exe, "import", "--from", tool, str(path), "-o", str(work / f"{tool}.json")]
                for tool, path in inputs.items()}
        c.header(f"fabriclab import of {ROWS:,}-row files (whole process, as typed)",
                 commands=[" ".join(a) for a in cmds.values()],
                 method=f"{opts.runs} runs per tool, alternating; median (min..max) of wall time and peak RSS")
        got = {tool: [] for tool in cmds}
        for _ in range(opts.runs):
            for tool, argv in cmds.items():
                m = c.measured(argv)
                if m.rc != 0:
                    raise c.BenchError(f"exit {m.rc}: {m.err.strip()[-300:]}")
                got[tool].append(m)
        for tool, ms in got.items():
            wall, rss = [m.wall_s for m in ms], [m.maxrss_MiB for m in ms]
            c.verdict(c.median(wall) < TARGET_S, f"import --from {tool} under {TARGET_S:g} s",
                      f"median {c.median(wall):.2f} s ({c.spread(wall)} s)")
            c.verdict(c.median(rss) < TARGET_MIB, f"import --from {tool} under {TARGET_MIB} MB",
                      f"median {c.median(rss):.0f} MiB ({c.spread(rss)} MiB)")
        show = c.measured([exe, "show", str(work / "osu.json")], timeout=300)
        print(f"info  show of the OSU document: {show.wall_s:.1f} s, {show.maxrss_MiB:.0f} MiB, exit {show.rc}")


if __name__ == "__main__":
    c.main(body)
