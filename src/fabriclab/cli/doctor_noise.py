"""`fabriclab doctor --machine`'s measured noise: a short run of noise.detour
with a rank bound to each CPU this process may use (RECORD_MS of the
selfish loop each, about two seconds in all with the launch once the core
is built), summed up in one line per core: the CPU share lost to detours,
their rate, mean and longest length, and a period where one is found
(analysis/noise.py, docs/noise.md). What cannot be measured (no MPI, no
core built yet: the check builds none, which takes a minute) is said in one
line; the check goes on."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

RECORD_MS = 1000
# Episodes of at least 10 us for the period: a timer interrupt's few microseconds repeat
# at the tick and would be its period on every core; what delays a collective is longer.
PERIOD_MIN_LEN_NS = 10_000


def _t(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def _line(cpu, d) -> str:
    p = d.period
    periodic = f"; periodic every {_t(p.period_s)} ({_t(p.length_s)} long, in {p.hits} of {p.periods} " \
               "periods)" if p is not None and p.found else "; no period"
    return (f"noise cpu {cpu}: {100 * d.cpu_share:.2f}% of its time lost in {d.rate_per_s:.0f} detours/s "
            f"(mean {_t(d.mean_s)}, longest {_t(d.max_s)}; a detour: above {d.threshold:g} x "
            f"{d.gap_min_s * 1e9:.0f} ns){periodic}")


def measured(args) -> list[str]:
    """One line per core, or one line saying why the noise was not measured."""
    from ..analysis import noise
    from ..errors import FabriclabError
    from ..measure import build, session
    from ..measure.plan import Sampling
    from .options import launch_options, site
    launch = dataclasses.replace(launch_options(args), ranks=len(os.sched_getaffinity(0)))
    try:
        m, _ = session.resolve(launch, site(args))
        if not launch.core and not os.path.exists(build.planned(m).path):
            return ["noise: not measured: no core is built for these sources yet (`fabriclab doctor` builds "
                    "one; then --machine measures the noise per core in about 2 s)"]
    except FabriclabError as e:
        return [f"noise: not measured: {e}"]
    with tempfile.TemporaryDirectory(prefix="fabriclab-noise-") as tmp:
        req = session.Request(benches=("noise.detour",), params=(f"record_ms={RECORD_MS}",), launches=1,
                              sampling=Sampling(warmup=2, min_samples=3, point_time=0.05), launch=launch,
                              site=site(args), output=str(Path(tmp) / "noise.json"), timeout=args.timeout)
        try:
            result = session.run(req)
        except FabriclabError as e:
            return [f"noise: not measured: {e}"]
        if result.status != "complete":
            return [f"noise: not measured: the noise.detour run {result.status}: {result.error or ''}".rstrip(": ")]
        lines = []
        for p in result.document.points:
            if p.noise:
                lines += [_line(d.cpu, d) for d in noise.cores(p.noise, PERIOD_MIN_LEN_NS)]
        return lines or ["noise: not measured: the noise.detour run kept no record"]
