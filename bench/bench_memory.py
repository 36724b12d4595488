"""fabriclab's own copy loop (memory.copy) against libc memcpy (memory.memcpy).

Both run as separate fabriclab invocations, alternated over rounds, at the
same sizes (16 KiB to 256 MiB, x4 steps) and the same buffers: ops rotate
through the warm cache state's slots, so the working set is 2 x size x
buffers. Per size the ratio of median bandwidths copy / memcpy is reported,
and the median of the per-round ratios, which the target is judged on, with
the stores mode memory.copy's stores=auto chose (non-temporal from glibc's
x86_non_temporal_threshold up, as glibc's memcpy). One rank: nothing else of
fabriclab's runs beside the copy. Target: memory.copy >= 95% of memory.memcpy
at every size.

Usage: python bench/bench_memory.py [--rounds N] [--point-time S]"""

from __future__ import annotations

import argparse
import tempfile

import _common as c

SIZES = "16K:256M:x4"  # fabriclab size syntax (K, M = 1024^n): 16K 64K ... 256M
TARGET = 0.95


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15, help="rounds (default 15)")
    ap.add_argument("--point-time", type=float, default=0.25,
                    help="fabriclab --point-time per size, seconds (default 0.25)")
    opts = ap.parse_args()
    common = ["-s", SIZES, "-n", "1", "--point-time", f"{opts.point_time:g}"]

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        def measure(bench, *params):
            doc, _, _ = c.fabriclab([bench, *common, *params], work)
            return {p["size"]: p for p in c.points(doc, bench)}

        doc, _, _ = c.fabriclab(["memory.memcpy", "-s", "64K", "-n", "1"], work)  # build + warm-up
        caches = doc["header"]["host"].get("caches") or {}
        args = " ".join(common)
        c.header("fabriclab memory.copy (8-byte word loop, stores=auto) vs memory.memcpy (libc memcpy)",
                 mpi=[f"{c.mpi_library(doc)} (launches the one rank that copies)"],
                 commands=[f"A: fabriclab run memory.memcpy {args} -o RUN.json -q",
                           f"B: fabriclab run memory.copy {args} -p stores=auto -o RUN.json -q"],
                 method=f"{opts.rounds} rounds, A and B alternated (A B, B A, ...); per size the median "
                        f"over rounds of bandwidth_Bps (bytes copied / median op time), and the median of "
                        f"per-round ratios, on which the target is judged; "
                        f"GB/s = 10^9 bytes/s; caches: "
                        + (", ".join(f"{k} {c.fmt_size(v)}" for k, v in caches.items()) or "unknown"))

        def show(_, pts):
            return " ".join(f"{c.fmt_size(s).replace(' ', '')}:{p['bandwidth_Bps'] / 1e9:.1f}"
                            for s, p in sorted(pts.items()))

        print("per round: size:GB/s")
        res = c.alternate([("memcpy", lambda: measure("memory.memcpy")),
                           ("copy", lambda: measure("memory.copy", "-p", "stores=auto"))],
                          opts.rounds, show=show)

        first = res["copy"][0]
        threshold = next((p.get("info", {}).get("nt_threshold") for p in first.values()), None)
        source = next((p.get("info", {}).get("nt_threshold_from") for p in first.values()), None)
        print(f"\nstores=auto: non-temporal stores from "
              f"{c.fmt_size(threshold) if threshold else 'unknown'} copied up "
              f"({threshold} bytes, glibc.cpu.x86_non_temporal_threshold, read by {source})")
        print(f"\n{'size copied':>12} {'working set':>12} {'stores':>7} {'memcpy GB/s':>12} {'copy GB/s':>10} "
              f"{'ratio of':>9} {'per-round copy/memcpy':>22}")
        print(f"{'':>12} {'':>12} {'(auto)':>7} {'median':>12} {'median':>10} {'medians':>9} "
              f"{'median (min..max)':>22}")
        ratios = {}
        for size in sorted(res["memcpy"][0]):
            info = first[size].get("info", {})
            stores = "/".join(sorted({r[size].get("info", {}).get("stores", "?") for r in res["copy"]}))
            working = 2 * size * int(info.get("buffers", 1))
            m = c.median([r[size]["bandwidth_Bps"] for r in res["memcpy"]])
            k = c.median([r[size]["bandwidth_Bps"] for r in res["copy"]])
            ratios[size], per_round = c.paired_ratio([r[size]["bandwidth_Bps"] for r in res["copy"]],
                                                     [r[size]["bandwidth_Bps"] for r in res["memcpy"]])
            print(f"{c.fmt_size(size):>12} {c.fmt_size(working):>12} {stores:>7} {m / 1e9:12.2f} "
                  f"{k / 1e9:10.2f} {k / m:9.3f} {ratios[size]:7.3f} ({c.spread(per_round)})")

        print()
        for size, ratio in ratios.items():
            c.verdict(ratio >= TARGET, f"memory.copy >= {TARGET:.0%} of memcpy at {c.fmt_size(size)} copied",
                      f"{ratio:.2%}")


if __name__ == "__main__":
    c.main(body)
