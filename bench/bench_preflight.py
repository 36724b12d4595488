"""What `fabriclab run` checks before it builds or launches anything, and what
that costs: the memory estimate of every point (measure/capacity.py) and
the output path (outputs.py). Target: under 50 ms together for the default
suite and for large traffic-pattern plans.

Each check runs in-process on the plan `run` would build, the way cmd_run
calls it; the figure is the median of N calls.

Usage: python bench/bench_preflight.py [--runs N]"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import _common as c

TARGET_S = 0.05


def _median_time(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def body() -> None:
    from fabriclab import outputs
    from fabriclab.measure import capacity as resources
    from fabriclab.measure.launch import make_spec
    from fabriclab.measure.plan import Sampling, build

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="calls per case (default 20)")
    opts = ap.parse_args()
    # (what, benchmarks, ranks, options of plan.build, launch options)
    cases = [
        ("default suite, 2 ranks, 5 launches", None, 2, {}, {}),
        ("message.hotspot, 64 ranks, every active count, cold cache", ["message.hotspot"], 64,
         {"cache": "cold"}, {}),
        ("message.alltoall, 512 ranks on 16 hosts", ["message.alltoall"], 512, {},
         {"hosts": ",".join(f"h{i}" for i in range(16))}),
        ("every level, 8 ranks, --cache cold", ["memory", "deposit", "message", "tcp"], 8, {"cache": "cold"}, {}),
    ]
    c.header("fabriclab run: the checks before building or launching",
             commands=["resources.check(plan, spec)", "outputs.document(path)"],
             method=f"in-process, {opts.runs} calls per case; median, min..max")
    ok = True
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        out = Path(work) / "results" / "run.json"
        paths = _median_time(lambda: outputs.document(out, str(out)), opts.runs)
        for what, names, n, kw, launch in cases:
            plan = build(names, None, None, None, Sampling(), False, n, llc_bytes=32 << 20, launches=5, **kw)
            spec = make_spec("mpiexec", "mpiexec", "mpich", n, **launch)
            est = resources.estimate(plan, spec)
            times = _median_time(lambda: resources.check(plan, spec, force=True), opts.runs)
            total = c.median(times) + c.median(paths)
            ok &= c.verdict(total < TARGET_S, f"{what}: under {TARGET_S * 1e3:.0f} ms",
                            f"memory estimate {c.median(times) * 1e3:.2f} ms ({c.spread([t * 1e3 for t in times])} "
                            f"ms) over {est.points} points, output path {c.median(paths) * 1e3:.2f} ms; largest "
                            f"point {est.peak.bench} at {est.peak.where}: {resources.amount(est.peak.host_bytes)} "
                            f"on {est.peak.host_ranks} ranks of one host")


if __name__ == "__main__":
    c.main(body)
