"""fabriclab's own copy (memory.copy) against libc memcpy (memory.memcpy).

Both run at the same sizes copied per op (16 KiB to 256 MiB) and the same
buffers: ops rotate through the warm cache state's slots, so the working set
is 2 x size x buffers. Each round runs one fabriclab launch per benchmark and
size, the two launches of a size side by side and the order reversed every
round, since the load other tenants put on a shared machine changes within
seconds. Per size the median of the per-round ratios copy / memcpy of
bandwidth is judged against the target, beside the stores each copy used: memory.copy's `stores=auto` times its copies (a vector loop, `rep movsb`
where the CPU has ERMS, the streaming loop) on the point's slots at setup and
keeps the fastest, glibc's memcpy streams from its own
x86_non_temporal_threshold (the copy each point ran, the trial's rates and
glibc's threshold are in every point's info). A third contender, memory.copy
with `stores=nt`, is judged against glibc's streaming memcpy at the sizes of
--stream-sizes: where glibc would not stream there, its launch sets
GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold so that it does. One rank:
nothing else of fabriclab's runs beside the copy. The load average and the CPU
time stolen by a hypervisor during the rounds are printed, since both move
these figures. Targets: memory.copy >= 95% of memory.memcpy at every size, the
streaming loop >= 95% of glibc's streaming memcpy.

To see another machine's glibc, run it under
GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=BYTES: every launch
inherits it, and the memcpy points record the threshold they ran with.

Usage: python bench/bench_memory.py [--rounds N] [--point-time S] [--sizes SPEC] [--stores KIND]
                                    [--stream-sizes SPEC]"""

from __future__ import annotations

import argparse
import os
import tempfile

import _common as c
from fabriclab.units import parse_sizes

SIZES = "16K,256K,4M,16M,64M,256M"  # fabriclab size syntax (K, M = 1024^n)
STREAM_SIZES = "256M"
TARGET = 0.95
NT_TUNABLE = "glibc.cpu.x86_non_temporal_threshold"


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


def streaming_tunables(threshold: int, smallest: int) -> str | None:
    """GLIBC_TUNABLES under which glibc's memcpy streams from `smallest` bytes up,
    keeping the caller's other tunables; None where it already does."""
    if threshold <= smallest:
        return None
    kept = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t and not t.startswith(NT_TUNABLE + "=")]
    return ":".join([*kept, f"{NT_TUNABLE}={smallest}"])


def with_env(extra: dict, fn):
    """fn() with `extra` in the environment the launches inherit, restored after."""
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        return fn()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def judge(res: dict, num: str, den: str, rows) -> dict[int, float]:
    """Per size: medians of both, the ratio of medians and the median per-round ratio; printed rows."""
    ratios = {}
    for size in sorted(res[num][0]):
        k = [r[size]["bandwidth_Bps"] for r in res[num]]
        m = [r[size]["bandwidth_Bps"] for r in res[den]]
        ratios[size], per_round = c.paired_ratio(k, m)
        print(f"{c.fmt_size(size):>12} {rows(size):>30} {c.median(m) / 1e9:12.2f} {c.median(k) / 1e9:10.2f} "
              f"{c.median(k) / c.median(m):9.3f} {ratios[size]:7.3f} ({c.spread(per_round)})")
    return ratios


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="rounds (default 7)")
    ap.add_argument("--point-time", type=float, default=0.5,
                    help="fabriclab --point-time per size, seconds (default 0.5)")
    ap.add_argument("--sizes", default=SIZES, help=f"sizes copied per op (default {SIZES})")
    ap.add_argument("--stores", default="auto", choices=("auto", "nt", "normal"),
                    help="memory.copy's stores param; normal compares like with like where memcpy "
                         "stores normally (default auto)")
    ap.add_argument("--stream-sizes", default=STREAM_SIZES,
                    help=f"sizes at which the streaming loop meets glibc's streaming memcpy; '' for none "
                         f"(default {STREAM_SIZES})")
    opts = ap.parse_args()
    common = ["-n", "1", "-L", "1", "--point-time", f"{opts.point_time:g}"]

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        def measure(bench, sizes, *params):
            doc, _, _ = c.fabriclab([bench, "-s", sizes, *common, *params], work)
            return {p["size"]: p for p in c.points(doc, bench)}

        doc, _, _ = c.fabriclab(["memory.memcpy", "-s", "64K", "-n", "1"], work)  # build + warm-up
        caches = doc["header"]["host"].get("caches") or {}
        threshold = c.points(doc, "memory.memcpy")[0].get("info", {}).get("nt_threshold")
        sizes = parse_sizes(opts.sizes)
        # no threshold: no streaming memcpy (not x86-64)
        stream_sizes = parse_sizes(opts.stream_sizes) if threshold and opts.stream_sizes else []
        args = " ".join(common)
        # one launch per contender and size, the two of a size side by side, so that a change of the
        # machine's load between them (other tenants come and go within seconds) is as rare as it can be
        kinds = {"memcpy": lambda size: measure("memory.memcpy", str(size)),
                 "copy": lambda size: measure("memory.copy", str(size), "-p", f"stores={opts.stores}")}
        commands = [f"A: fabriclab run memory.memcpy -s SIZE {args} -o RUN.json -q",
                    f"B: fabriclab run memory.copy -s SIZE {args} -p stores={opts.stores} -o RUN.json -q"]
        tunables = None
        if stream_sizes:  # glibc's streaming memcpy beside the streaming loop
            tunables = streaming_tunables(threshold, min(stream_sizes))
            env = {"GLIBC_TUNABLES": tunables} if tunables else {}
            kinds["stream"] = lambda size: measure("memory.copy", str(size), "-p", "stores=nt")
            kinds["memcpy_nt"] = lambda size: with_env(env, lambda: measure("memory.memcpy", str(size)))
            commands += [f"C: fabriclab run memory.copy -s SIZE {args} -p stores=nt -o RUN.json -q",
                         (f"D: GLIBC_TUNABLES={tunables} " if tunables else "D: ")
                         + f"fabriclab run memory.memcpy -s SIZE {args} -o RUN.json -q"]
        plan = [(kind, size) for size in sizes for kind in ("memcpy", "copy")]
        plan += [(kind, size) for size in stream_sizes for kind in ("stream", "memcpy_nt")]
        contenders = [(f"{kind}@{c.fmt_size(size).replace(' ', '')}", lambda k=kind, s=size: kinds[k](s))
                      for kind, size in plan]
        c.header(f"fabriclab memory.copy (stores={opts.stores}) vs memory.memcpy (libc memcpy)",
                 mpi=[f"{c.mpi_library(doc)} (launches the one rank that copies)"],
                 commands=commands,
                 method=f"{opts.rounds} rounds; in each, A and B at every size of {opts.sizes} and C and D "
                        f"at {opts.stream_sizes or 'none'}, one launch each, the two of a size side by side, "
                        f"the order reversed every round; per size the median over rounds of bandwidth_Bps "
                        f"(bytes copied / median op time), and the median of per-round ratios, on which the "
                        f"targets are judged; GB/s = 10^9 bytes/s; caches: "
                        + (", ".join(f"{k} {c.fmt_size(v)}" for k, v in caches.items()) or "unknown")
                        + f"; GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}")

        def show(_, pts):
            return " ".join(f"{p['bandwidth_Bps'] / 1e9:.1f}" for _, p in sorted(pts.items()))

        print("per round: contender@size GB/s")
        stat0 = cpu_times()
        runs = c.alternate(contenders, opts.rounds, show=show)
        # per contender, one {size: point} per round, all sizes together
        res = {kind: [{size: runs[f"{kind}@{c.fmt_size(size).replace(' ', '')}"][r][size]
                       for k, size in plan if k == kind} for r in range(opts.rounds)]
               for kind in kinds}
        load = os.getloadavg()[0]
        print(f"\nduring the rounds: {steal_share(stat0, cpu_times()):.1%} of CPU time stolen by the "
              f"hypervisor; load average (1 min) at the end {load:.2f} on {os.cpu_count()} CPUs")

        libc = next(iter(res["memcpy"][0].values())).get("info", {})
        t = libc.get("nt_threshold")
        print(f"glibc memcpy: non-temporal stores from {c.fmt_size(t) if t else 'never'} copied per op up "
              f"({t} bytes, from {libc.get('nt_threshold_from')})")
        print(f"memory.copy stores={opts.stores}: per point "
              + ("the fastest of its copies in a trial at setup (trial_Bps in the info)" if opts.stores != "nt"
                 else "the streaming loop"))

        def copies(size):
            infos = [r[size].get("info", {}) for r in res["copy"]]
            picked = "/".join(sorted({i.get("copy", "?") for i in infos}))
            return f"{memcpy_stores(size, t)} | {picked}"

        print(f"\n{'size copied':>12} {'memcpy stores | copy':>30} {'memcpy GB/s':>12} {'copy GB/s':>10} "
              f"{'ratio of':>9} {'per-round copy/memcpy':>22}")
        print(f"{'':>12} {'':>30} {'median':>12} {'median':>10} {'medians':>9} {'median (min..max)':>22}")
        ratios = judge(res, "copy", "memcpy", copies)
        stream = {}
        if stream_sizes:
            print("\nthe streaming loop (C: memory.copy stores=nt) against glibc's streaming memcpy (D"
                  + (f", GLIBC_TUNABLES={tunables})" if tunables else ")"))
            stream = judge(res, "stream", "memcpy_nt", lambda size: "nt | streaming loop")
        print()
        for size, ratio in sorted(ratios.items()):
            c.verdict(ratio >= TARGET, f"memory.copy >= {TARGET:.0%} of memcpy at {c.fmt_size(size)} copied",
                      f"{ratio:.2%}")
        for size, ratio in sorted(stream.items()):
            c.verdict(ratio >= TARGET, f"streaming loop >= {TARGET:.0%} of glibc's streaming memcpy at "
                                       f"{c.fmt_size(size)} copied", f"{ratio:.2%}")


if __name__ == "__main__":
    c.main(body)
