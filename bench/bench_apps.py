"""fabriclab's applications against direct references.

matmul: app.matmul on one rank at n = 2048 against bench/reference/dgemm_ref.c,
which calls the same cblas_dgemm on the same n x n doubles directly. The
reference is built with the mpicc, C flags and BLAS that fabriclab's core is
built with (fabriclab.measure.build.CFLAGS, libraries.find_blas) and launched
with fabriclab's own launcher command line (rank bound to a core), so the two
differ only in the harness: the core's runner, its one-rank MPI_Allgatherv
and its phase accounting. Target: app.matmul reaches at least 0.9 of the
reference's GFLOP/s (median over rounds of the ratio within each round).

Usage: python bench/bench_apps.py [--rounds N] [--size N]"""

from __future__ import annotations

import argparse
import json
import shlex
import tempfile
from pathlib import Path

import _common as c
from fabriclab.suite import apps
from fabriclab.measure import build as corebuild, libraries

REF_DIR = Path(__file__).resolve().parent / "reference"
MATMUL_N = 2048
MATMUL_TARGET = 0.9
MATMUL_REPS = 5         # the reference's timed multiplies per round, after one warm-up
# fabriclab's sampling for ops of about half a second: a warm-up op, then at
# least five one-op samples, the median kept (as the reference's).
MATMUL_SAMPLING = ["--warmup", "1", "--min-samples", str(MATMUL_REPS), "--max-samples", "20",
                   "--point-time", "15", "-L", "1"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds per contest (default 5)")
    ap.add_argument("--size", type=int, default=MATMUL_N, help=f"app.matmul's matrix side (default {MATMUL_N})")
    opts = ap.parse_args(argv)
    if opts.rounds < 1 or opts.size < 1:
        ap.error("--rounds and --size must be at least 1")
    return opts


# ---- matmul ----

def matmul_args(n: int) -> list[str]:
    return ["app.matmul", "-n", "1", "--active", "1", "-s", str(n), "-p", "local=blas", *MATMUL_SAMPLING]


def build_dgemm_ref(mpicc: str, work: str) -> tuple[str, list[str]]:
    """Compile the reference as the core is compiled: (executable, compiler argv)."""
    blas = libraries.find_blas()
    if not blas.available:
        raise c.BenchError(f"no BLAS: {blas.reason}; {blas.enable}")
    exe = str(Path(tempfile.mkdtemp(prefix="ref-", dir=work)) / "dgemm_ref")
    argv = [mpicc, *corebuild.CFLAGS, *blas.cflags, "-o", exe, str(REF_DIR / "dgemm_ref.c"), *blas.ldflags, "-lm"]
    c.run(argv)
    return exe, argv


def gflops(n: int, seconds: float) -> float:
    return apps.flops(n) / seconds / 1e9


def matmul_fabriclab(n: int, work: str) -> tuple[float, float]:
    """app.matmul's GFLOP/s: 2 n^3 over the point's median op time, and over its fastest."""
    doc, _, _ = c.fabriclab(matmul_args(n), work, timeout=600)
    p = c.point(doc, "app.matmul", n)
    if p["info"].get("local") != "blas":
        raise c.BenchError(f"app.matmul did not multiply by BLAS: {p['info']}")
    return gflops(n, p["summary"]["median"]), gflops(n, min(p["samples"]))


def matmul_reference(n: int, argv: list[str], env: dict) -> tuple[float, float]:
    """The reference's GFLOP/s over its median multiply, and over its fastest."""
    out = c.run(argv, env=env, timeout=600)
    try:
        rec = json.loads(out.strip().splitlines()[-1])
        return gflops(n, rec["median_s"]), gflops(n, min(rec["times_s"]))
    except (ValueError, KeyError, IndexError):
        raise c.BenchError(f"unexpected reference output: {out.strip()[:300]}") from None


def matmul_summary(res: dict) -> float:
    """Prints both contenders' figures and ratios; returns the median of per-round ratios of medians.
    The fastest multiply of each run is shown beside it: on a shared machine it is the one
    least disturbed, so its ratio tells a harness's cost apart from other people's load."""
    med = {k: [x[0] for x in v] for k, v in res.items()}
    best = {k: [x[1] for x in v] for k, v in res.items()}
    ratio, ratios = c.paired_ratio(med["fabriclab"], med["reference"])
    best_ratio, _ = c.paired_ratio(best["fabriclab"], best["reference"])
    print(f"  app.matmul {c.median(med['fabriclab']):.2f} GFLOP/s (rounds {c.spread(med['fabriclab'])}), "
          f"cblas_dgemm {c.median(med['reference']):.2f} GFLOP/s (rounds {c.spread(med['reference'])}); "
          f"ratio {ratio:.3f} (rounds {c.spread(ratios)})")
    print(f"  fastest multiply per run: app.matmul {max(best['fabriclab']):.2f} GFLOP/s, cblas_dgemm "
          f"{max(best['reference']):.2f} GFLOP/s; median of per-round ratios {best_ratio:.3f}")
    return ratio


def matmul(opts, work: str) -> bool:
    """app.matmul on one rank against cblas_dgemm called directly; True when the target is met."""
    n = opts.size
    doc, _, _ = c.fabriclab(matmul_args(n), work, timeout=600)   # builds the core; a first warm run
    prefix, env = c.launch_prefix(doc)
    exe, build_argv = build_dgemm_ref(doc["header"]["mpi"]["mpicc"], work)
    ref_argv = [*prefix, exe, str(n), str(MATMUL_REPS)]
    blas = doc["header"].get("levels", {}).get("blas", {}).get("library", {})
    c.header(f"app.matmul on 1 rank at n = {n} vs cblas_dgemm called directly",
             mpi=[f"{c.mpi_library(doc)} (mpicc {doc['header']['mpi']['mpicc']}; launches both contenders)"],
             commands=[f"build:     {shlex.join(build_argv)}", f"reference: {shlex.join(ref_argv)}",
                       f"fabriclab: fabriclab run {shlex.join(matmul_args(n))} -o RUN.json -q"],
             method=f"{opts.rounds} rounds, contenders alternated (A B, B A, ...); BLAS "
                    f"{blas.get('name', '?')} {blas.get('version', '')} ({blas.get('path', '?')}), one thread; "
                    f"reference = median of {MATMUL_REPS} multiplies after a warm-up, fabriclab = 2 n^3 / the "
                    f"point's median op time; GFLOP/s = 10^9 flops/s; target on the median of per-round ratios")
    res = c.alternate([("fabriclab", lambda: matmul_fabriclab(n, work)),
                       ("reference", lambda: matmul_reference(n, ref_argv, env))],
                      opts.rounds, show=lambda _, x: f"{x[0]:.2f} GFLOP/s (fastest {x[1]:.2f})")
    ratio = matmul_summary(res)
    return c.verdict(ratio >= MATMUL_TARGET, f"app.matmul at n = {n} reaches {MATMUL_TARGET:g} of cblas_dgemm's "
                     "GFLOP/s", f"ratio {ratio:.3f}")


def body() -> None:
    opts = parse_args()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        matmul(opts, work)


if __name__ == "__main__":
    c.main(body)
