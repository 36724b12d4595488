"""Time and size of the report and of one plot, whole processes as typed:
`fabriclab report` of a default run (targets: under 3 s and under 2 MB) and
`fabriclab plot` of one benchmark, SVG and PNG (target: under 1.5 s); and
`fabriclab report` of the largest imports `fabriclab import` takes
(imports.MAX_ROWS rows: one OSU curve, and an OSU variant of its own every
two rows, the costliest shape; target: under 10 s of CPU time).

The run is a real default run (`fabriclab run`, every level, the default
launches), made first unless --run names one; --imports-only skips it.

Usage: python bench/bench_report.py [--run RUN.json] [--runs N] [--imports-only]"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common as c

REPORT_S, REPORT_MB, PLOT_S = 3.0, 2.0, 1.5
IMPORT_REPORT_CPU_S = 10.0


def largest_imports(work: Path) -> dict:
    """OSU outputs of imports.MAX_ROWS rows: one curve of distinct sizes, and a datatype (a variant,
    drawn in figures of its own) every two rows."""
    from fabriclab.imports import MAX_ROWS
    curve, variants = work / "osu-curve.txt", work / "osu-variants.txt"
    with open(curve, "w") as f:
        f.write("# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)  Min Latency(us)  Max Latency(us)"
                "  Iterations\n")
        f.writelines(f"{i:<20d}{1.5 + i % 7 * 0.01:.2f}  1.35  2.10  10000\n" for i in range(1, MAX_ROWS + 1))
    with open(variants, "w") as f:
        for j in range(MAX_ROWS // 2):
            f.write(f"# OSU MPI Latency Test v7.3\n# Datatype: MPI_T{j}.\n# Size       Avg Latency(us)\n"
                    f"1                   1.50\n2                   1.60\n")
    return {"one curve": curve, "a variant every two rows": variants}


def import_reports(exe: str, work: Path, runs: int) -> None:
    """The report of each largest import: CPU time (the figure a loaded machine keeps), wall, size."""
    from fabriclab.imports import MAX_ROWS
    docs = {}
    for shape, txt in largest_imports(work).items():
        docs[shape] = txt.with_suffix(".json")
        c.run([exe, "import", str(txt), "--from", "osu", "-o", str(docs[shape])], timeout=300)
    c.header(f"fabriclab report of the largest imports ({MAX_ROWS:,} rows)",
             commands=[f"{exe} report {d} -o {d.with_suffix('.html')}" for d in docs.values()],
             method=f"{runs} runs per shape, alternating; median (min..max) of CPU (user + sys) and wall time")
    got: dict = {shape: [] for shape in docs}
    for _ in range(runs):
        for shape, doc in docs.items():
            m = c.measured([exe, "report", str(doc), "-o", str(doc.with_suffix(".html"))], timeout=600)
            if m.rc != 0:
                raise c.BenchError(f"exit {m.rc}: {m.err.strip()[-300:]}")
            got[shape].append(m)
    for shape, ms in got.items():
        cpu, wall = [m.cpu_s for m in ms], [m.wall_s for m in ms]
        mb = docs[shape].with_suffix(".html").stat().st_size / 1e6
        c.verdict(c.median(cpu) < IMPORT_REPORT_CPU_S, f"report of {shape} under {IMPORT_REPORT_CPU_S:g} s CPU",
                  f"median {c.median(cpu):.2f} s CPU ({c.spread(cpu)} s), wall {c.median(wall):.2f} s "
                  f"({c.spread(wall)} s), {c.median([m.maxrss_MiB for m in ms]):.0f} MiB, {mb:.1f} MB")


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", help="an existing result document (default: make a default run first)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    ap.add_argument("--imports-only", action="store_true", help="only the reports of the largest imports")
    opts = ap.parse_args()
    exe = c.fabriclab_exe()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        import_reports(exe, Path(work), opts.runs)
        if opts.imports_only:
            return
        run = opts.run
        if not run:
            run = str(Path(work) / "default.json")
            c.run([exe, "run", "-q", "-o", run], timeout=600)
        doc = c.load_result(run)
        merged = len(doc.get("merged") or [])
        records = len(c.points(doc))
        html, svg, png = (str(Path(work) / n) for n in ("r.html", "p.svg", "p.png"))
        commands = {"report": [exe, "report", run, "-o", html],
                    "plot svg": [exe, "plot", run, "message.pingpong", "-o", svg],
                    "plot png": [exe, "plot", run, "message.pingpong", "-o", png]}
        c.header("fabriclab report and plot: time and size", commands=[" ".join(a) for a in commands.values()],
                 method=f"{opts.runs} runs per command, interleaved; median, min..max; the run has {merged} "
                        f"points ({records} point records over its launches)")
        times: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(opts.runs):
            for k, argv in commands.items():
                times[k].append(c.timed(argv))
        size_mb = Path(html).stat().st_size / 1e6
        figures = Path(html).read_text().count("<figure")
        med = {k: c.median(v) for k, v in times.items()}
        c.verdict(med["report"] < REPORT_S, f"report under {REPORT_S:g} s",
                  f"median {med['report']:.3f} s ({c.spread(times['report'])} s), {figures} figures")
        c.verdict(size_mb < REPORT_MB, f"report under {REPORT_MB:g} MB", f"{size_mb:.2f} MB")
        for k in ("plot svg", "plot png"):
            c.verdict(med[k] < PLOT_S, f"{k} under {PLOT_S:g} s", f"median {med[k]:.3f} s ({c.spread(times[k])} s)")


if __name__ == "__main__":
    c.main(body)
