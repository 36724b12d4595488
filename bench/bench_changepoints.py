"""The change-point method of `fabriclab history` (analysis/changepoints.py) on
synthetic run histories: its false-alarm rate measured on unchanged series
(target: at most 1 series in 20 with any change), and its detection rate and
index error for a step of 10%, 20% and 50% (target: one change within a run
of the step in at least 95% of the series for 20% and 50%).

A series is `--runs` run medians in time order: lognormal noise with the
between-run spread of real runs (`--cv`, sigma of the logs), and each run
with probability `--outlier-rate` made `--outlier` times slower (a run on a
busy machine). Steps multiply every run from `--at` on. Seeds are fixed, so
the figures repeat.

Usage: python bench/bench_changepoints.py [--series N] [--cv S] [--runs N] [--at I]"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import _common as c
from fabriclab.analysis import changepoints

STEPS = (1.10, 1.20, 1.50)
FALSE_ALARMS = 0.05
DETECTION = 0.95


def history(rng: np.random.Generator, runs: int, cv: float, rate: float, outlier: float,
            step: float = 1.0, at: int = 0) -> np.ndarray:
    x = 1e-6 * np.exp(rng.normal(0.0, cv, runs))
    x[at:] *= step
    x[rng.random(runs) < rate] *= outlier
    return x


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", type=int, default=1000, help="series per case (default 1000)")
    ap.add_argument("--runs", type=int, default=60, help="runs per series (default 60)")
    ap.add_argument("--at", type=int, default=40, help="the step's first run (default 40)")
    ap.add_argument("--cv", type=float, default=0.03, help="between-run spread, sigma of the logs (default 0.03)")
    ap.add_argument("--outlier-rate", type=float, default=1 / 30, help="share of outlier runs (default 1/30)")
    ap.add_argument("--outlier", type=float, default=1.2, help="an outlier run's slowdown (default 1.2)")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    d = changepoints.changes.__defaults__  # intervals, launch_medians, factor, alpha, min_segment, seed
    c.header("change points in run histories: false alarms and detection",
             commands=[f"python bench/bench_changepoints.py --series {o.series} --runs {o.runs} --at {o.at} "
                       f"--cv {o.cv} --outlier-rate {o.outlier_rate:.4g} --outlier {o.outlier} --seed {o.seed}"],
             method=f"changes(factor={d[2]}, alpha={d[3]}, min_segment={d[4]}), "
                    f"{changepoints.PERMUTATIONS} permutations, {changepoints.RESAMPLES} bootstrap draws; "
                    f"{o.series} series of {o.runs} runs a case, lognormal sigma {o.cv}, "
                    f"{o.outlier_rate:.3g} of runs {o.outlier}x slower")
    rng = np.random.default_rng(o.seed)
    t0 = time.process_time()
    alarms = [changepoints.changes(history(rng, o.runs, o.cv, o.outlier_rate, o.outlier), seed=i)
              for i in range(o.series)]
    took = (time.process_time() - t0) / o.series
    false = sum(bool(a) for a in alarms) / o.series
    print(f"unchanged: {false:.2%} of series with a change ({sum(map(len, alarms))} changes in all); "
          f"{took * 1e3:.1f} ms CPU a series")
    ok = c.verdict(false <= FALSE_ALARMS, f"false alarms at most {FALSE_ALARMS:.0%} of unchanged series",
                   f"{false:.2%}")
    for step in STEPS:
        t0 = time.process_time()
        found = [changepoints.changes(history(rng, o.runs, o.cv, o.outlier_rate, o.outlier, step, o.at), seed=i)
                 for i in range(o.series)]
        took = (time.process_time() - t0) / o.series
        near = [[ch for ch in f if abs(ch.index - o.at) <= 1] for f in found]
        one = sum(len(f) == 1 and len(n) == 1 for f, n in zip(found, near)) / o.series
        hit = sum(bool(n) for n in near) / o.series
        extra = sum(len(f) - len(n) for f, n in zip(found, near)) / o.series
        errors = [abs(ch.index - o.at) for f in found for ch in f[:1]] if any(found) else []
        exact = sum(e == 0 for e in errors) / o.series
        covered = [n[0].ci_low <= step <= n[0].ci_high for n in near if n]
        print(f"step {step:.2f} at run {o.at}: one change at {o.at}+-1 in {one:.1%}, a change there in {hit:.1%} "
              f"(exactly at {o.at}: {exact:.1%}); other changes {extra:.3f} a series; "
              f"index error of the first change: mean {statistics.fmean(errors) if errors else float('nan'):.2f}, "
              f"max {max(errors, default=0)}; "
              f"95% interval covers the step in {sum(covered) / max(1, len(covered)):.1%}; "
              f"{took * 1e3:.1f} ms CPU a series")
        if step >= 1.2:
            ok &= c.verdict(one >= DETECTION, f"a {step - 1:.0%} step: one change within a run in "
                            f"at least {DETECTION:.0%} of series", f"{one:.1%}")
    print("all targets met" if ok else "a target missed")


if __name__ == "__main__":
    c.main(body)
