"""`fabriclab doctor --aa`: one short configuration run twice and compared,
so a user sees how often `compare` calls a change where there is none on
this machine (analysis/aa.py) before gating CI on it."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from ..errors import RunError
from .options import launch_options, site

BENCHES = ("message.pingpong", "message.stream")
SIZES = "0,64,1K,16K,256K,1M"
POINT_TIME_S = 0.2    # a fifth of a second per point and launch: the pair stays under a minute on a loaded 2-core machine


def aa(args) -> int:
    from ..analysis import aa as reading, compare
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fabriclab-aa-") as work:
        docs = [_run(args, Path(work) / f"{name}.json", i) for i, name in enumerate(("a", "b"))]
    r = reading.read(compare.compare(docs[0], docs[1]), docs)
    launches = docs[0].header.launches
    print(f"A/A: {', '.join(BENCHES)} at {SIZES} bytes, {launches} launches a point, run twice "
          f"and compared in {time.monotonic() - t0:.1f} s")
    counts = ", ".join(f"{n} {v}" for v, n in sorted(r.verdicts.items()))
    print(f"false verdicts: {r.points - r.verdicts.get('same', 0)} of {r.points} points "
          f"({r.false_rate:.0%}; {counts})")
    print(f"between-launch spread (max/min of a point's launch medians): median {r.spread_median:.2f}x, "
          f"90th percentile {r.spread_p90:.2f}x")
    print(f"every verdict would have been 'same' with compare --threshold {r.threshold_all_same:.2f} "
          f"(default 0.02)")
    print(_advice(r))
    return 0


def _advice(r) -> str:
    if r.false_rate == 0:
        return ("compare found no change where there was none: its verdicts can gate CI here "
                "(an A/A pair is a small sample: run it again to be surer)")
    return (f"about {r.false_rate:.0%} of compare's verdicts on this machine are false: gate CI only on changes "
            f"beyond --threshold {r.threshold_all_same:.2f}, or use more --launches")


def _run(args, out: Path, i: int):
    """One run of the A/A configuration into out, with doctor's MPI options
    (measure/session.py, in this process); its notes kept back unless it fails."""
    from ..measure.plan import Sampling
    from ..measure.session import Request, Session
    notes: list = []
    req = Request(benches=BENCHES, sizes=SIZES, sampling=Sampling(point_time=POINT_TIME_S),
                  launch=launch_options(args), site=site(args), output=str(out),
                  argv=("run", *BENCHES, "-s", SIZES, "--point-time", str(POINT_TIME_S), "-q", "-o", str(out)))
    print(f"fabriclab: A/A run {i + 1} of 2 ...", file=sys.stderr, flush=True)
    result = Session(req, say=notes.append).run()
    if result.exit_code != 0:
        tail = " | ".join((notes + [result.error or ""])[-2:])
        raise RunError(f"A/A run {i + 1} failed (exit {result.exit_code}): {tail}")
    return result.document
