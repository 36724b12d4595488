"""Time and size of the report and of one plot, whole processes as typed:
`fabriclab report` of a default run (targets: under 3 s and under 2 MB) and
`fabriclab plot` of one benchmark, SVG and PNG (target: under 1.5 s).

The run is a real default run (`fabriclab run`, every level, the default
launches), made first unless --run names one.

Usage: python bench/bench_report.py [--run RUN.json] [--runs N]"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common as c

REPORT_S, REPORT_MB, PLOT_S = 3.0, 2.0, 1.5


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", help="an existing result document (default: make a default run first)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    opts = ap.parse_args()
    exe = c.fabriclab_exe()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
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
