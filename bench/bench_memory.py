"""fabriclab's own copy loop (memory.copy) against libc memcpy (memory.memcpy).

Both run as separate fabriclab invocations (one launch each), alternated over
rounds, at the same sizes copied per op (16 KiB to 256 MiB) and the same
buffers: ops rotate through the warm cache state's slots, so the working set
is 2 x size x buffers. Per size the median of the per-round ratios copy /
memcpy of bandwidth is judged against the target, beside the store kind each
copy used: memory.copy's `stores=auto` streams (non-temporal stores) from a
quarter of the last-level cache copied per op up, glibc's memcpy from its own
x86_non_temporal_threshold (both thresholds are in every point's info). One
rank: nothing else of fabriclab's runs beside the copy. The load average and
the CPU time stolen by a hypervisor during the rounds are printed, since both
move these figures. Target: memory.copy >= 95% of memory.memcpy at every size.

Usage: python bench/bench_memory.py [--rounds N] [--point-time S] [--sizes SPEC] [--stores KIND]"""

from __future__ import annotations

import argparse
import os
import tempfile

import _common as c

SIZES = "16K,256K,4M,16M,64M,256M"  # fabriclab size syntax (K, M = 1024^n)
TARGET = 0.95


def cpu_times() -> list[int]:
    """The aggregate cpu line of /proc/stat (user nice system idle iowait irq softirq steal ...)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def steal_share(before: list[int], after: list[int]) -> float:
    """Share of all CPU time between two readings that the hypervisor stole (field 8)."""
    d = [b - a for a, b in zip(before, after)]
    return d[7] / sum(d) if len(d) > 7 and sum(d) > 0 else float("nan")


def memcpy_stores(size: int, threshold) -> str:
    """The stores glibc's memcpy uses for one copy of `size` bytes."""
    return "?" if threshold is None else "nt" if size >= threshold else "normal"


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--point-time", type=float, default=0.5,
                    help="fabriclab --point-time per size, seconds (default 0.5)")
    ap.add_argument("--sizes", default=SIZES, help=f"sizes copied per op (default {SIZES})")
    ap.add_argument("--stores", default="auto", choices=("auto", "nt", "normal"),
                    help="memory.copy's stores param; normal compares like with like where memcpy "
                         "stores normally (default auto)")
    opts = ap.parse_args()
    common = ["-s", opts.sizes, "-n", "1", "-L", "1", "--point-time", f"{opts.point_time:g}"]

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        def measure(bench, *params):
            doc, _, _ = c.fabriclab([bench, *common, *params], work)
            return {p["size"]: p for p in c.points(doc, bench)}

        doc, _, _ = c.fabriclab(["memory.memcpy", "-s", "64K", "-n", "1"], work)  # build + warm-up
        caches = doc["header"]["host"].get("caches") or {}
        args = " ".join(common)
        c.header(f"fabriclab memory.copy (8-byte word loop, stores={opts.stores}) vs memory.memcpy (libc memcpy)",
                 mpi=[f"{c.mpi_library(doc)} (launches the one rank that copies)"],
                 commands=[f"A: fabriclab run memory.memcpy {args} -o RUN.json -q",
                           f"B: fabriclab run memory.copy {args} -p stores={opts.stores} -o RUN.json -q"],
                 method=f"{opts.rounds} rounds, A and B alternated (A B, B A, ...); per size the median "
                        f"over rounds of bandwidth_Bps (bytes copied / median op time), and the median of "
                        f"per-round ratios, on which the target is judged; "
                        f"GB/s = 10^9 bytes/s; caches: "
                        + (", ".join(f"{k} {c.fmt_size(v)}" for k, v in caches.items()) or "unknown"))

        def show(_, pts):
            return " ".join(f"{c.fmt_size(s).replace(' ', '')}:{p['bandwidth_Bps'] / 1e9:.1f}"
                            for s, p in sorted(pts.items()))

        print("per round: size:GB/s")
        stat0 = cpu_times()
        res = c.alternate([("memcpy", lambda: measure("memory.memcpy")),
                           ("copy", lambda: measure("memory.copy", "-p", f"stores={opts.stores}"))],
                          opts.rounds, show=show)
        load = os.getloadavg()[0]
        print(f"\nduring the rounds: {steal_share(stat0, cpu_times()):.1%} of CPU time stolen by the "
              f"hypervisor; load average (1 min) at the end {load:.2f} on {os.cpu_count()} CPUs")

        info = next(iter(res["copy"][0].values())).get("info", {})
        libc = next(iter(res["memcpy"][0].values())).get("info", {})
        for who, i in ((f"memory.copy stores={opts.stores}", info), ("glibc memcpy", libc)):
            t = i.get("nt_threshold")
            forced = f"; stores={opts.stores} overrides it" if i is info and opts.stores != "auto" else ""
            print(f"{who}: non-temporal stores from {c.fmt_size(t) if t else 'never'} copied per op up "
                  f"({t} bytes, from {i.get('nt_threshold_from')}){forced}")
        print(f"\n{'size copied':>12} {'working set':>12} {'stores':>14} {'memcpy GB/s':>12} {'copy GB/s':>10} "
              f"{'ratio of':>9} {'per-round copy/memcpy':>22}")
        print(f"{'':>12} {'':>12} {'memcpy/copy':>14} {'median':>12} {'median':>10} {'medians':>9} "
              f"{'median (min..max)':>22}")
        ratios = {}
        for size in sorted(res["memcpy"][0]):
            mine = "/".join(sorted({r[size].get("info", {}).get("stores", "?") for r in res["copy"]}))
            stores = f"{memcpy_stores(size, libc.get('nt_threshold'))}/{mine}"
            working = 2 * size * int(res["copy"][0][size].get("info", {}).get("buffers", 1))
            m = c.median([r[size]["bandwidth_Bps"] for r in res["memcpy"]])
            k = c.median([r[size]["bandwidth_Bps"] for r in res["copy"]])
            ratios[size], per_round = c.paired_ratio([r[size]["bandwidth_Bps"] for r in res["copy"]],
                                                     [r[size]["bandwidth_Bps"] for r in res["memcpy"]])
            print(f"{c.fmt_size(size):>12} {c.fmt_size(working):>12} {stores:>14} {m / 1e9:12.2f} "
                  f"{k / 1e9:10.2f} {k / m:9.3f} {ratios[size]:7.3f} ({c.spread(per_round)})")

        print()
        for size, ratio in sorted(ratios.items()):
            c.verdict(ratio >= TARGET, f"memory.copy >= {TARGET:.0%} of memcpy at {c.fmt_size(size)} copied",
                      f"{ratio:.2%}")


if __name__ == "__main__":
    c.main(body)
