"""fabriclab's own copy loop (memory.copy) against libc memcpy (memory.memcpy).

Both run as separate fabriclab invocations, alternated over rounds, at the
same sizes; per size the ratio of median bandwidths copy / memcpy is reported,
and the median of the per-round ratios, which the target is judged on.
A size is the bytes copied per operation (source + destination = a working set
of twice that). Target: memory.copy >= 95% of memory.memcpy at every size.

Usage: python bench/bench_memory.py [--rounds N]"""

from __future__ import annotations

import argparse
import tempfile

import _common as c

SIZES = "64K,1M,16M,64M"  # fabriclab size syntax (K, M = 1024^n)
TARGET = 0.95


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15, help="rounds (default 15)")
    opts = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        def measure(bench):
            doc, _, _ = c.fabriclab([bench, "-s", SIZES], work)
            return {p["size"]: p["bandwidth_Bps"] for p in c.points(doc, bench)}

        doc, _, _ = c.fabriclab(["memory.memcpy", "-s", "64K"], work)  # build + warm-up
        caches = doc["header"]["host"].get("caches") or {}
        c.header("fabriclab memory.copy (8-byte word loop) vs memory.memcpy (libc memcpy)",
                 mpi=[f"{c.mpi_library(doc)} (launches the ranks; rank 0 copies, the others wait)"],
                 commands=[f"A: fabriclab run memory.memcpy -s {SIZES} -o RUN.json -q",
                           f"B: fabriclab run memory.copy -s {SIZES} -o RUN.json -q"],
                 method=f"{opts.rounds} rounds, A and B alternated (A B, B A, ...); per size the median "
                        f"over rounds of bandwidth_Bps (bytes copied / median op time), and the median of "
                        f"per-round ratios, on which the target is judged; "
                        f"GB/s = 10^9 bytes/s; caches: "
                        + (", ".join(f"{k} {c.fmt_size(v)}" for k, v in caches.items()) or "unknown"))

        def show(_, bws):
            return " ".join(f"{c.fmt_size(s).replace(' ', '')}:{bw / 1e9:.1f}" for s, bw in sorted(bws.items()))

        print("per round: size:GB/s")
        res = c.alternate([("memcpy", lambda: measure("memory.memcpy")),
                           ("copy", lambda: measure("memory.copy"))], opts.rounds, show=show)

        print(f"\n{'size copied':>12} {'working set':>12} {'memcpy GB/s':>12} {'copy GB/s':>10} "
              f"{'ratio of':>9} {'per-round copy/memcpy':>22}")
        print(f"{'':>12} {'':>12} {'median':>12} {'median':>10} {'medians':>9} {'median (min..max)':>22}")
        ratios = {}
        for size in sorted(res["memcpy"][0]):
            m = c.median([r[size] for r in res["memcpy"]])
            k = c.median([r[size] for r in res["copy"]])
            ratios[size], per_round = c.paired_ratio([r[size] for r in res["copy"]],
                                                     [r[size] for r in res["memcpy"]])
            print(f"{c.fmt_size(size):>12} {c.fmt_size(2 * size):>12} {m / 1e9:12.2f} {k / 1e9:10.2f} "
                  f"{k / m:9.3f} {ratios[size]:7.3f} ({c.spread(per_round)})")

        print()
        for size, ratio in ratios.items():
            c.verdict(ratio >= TARGET, f"memory.copy >= {TARGET:.0%} of memcpy at {c.fmt_size(size)} "
                                       f"(working set {c.fmt_size(2 * size)})", f"{ratio:.2%}")


if __name__ == "__main__":
    c.main(body)
