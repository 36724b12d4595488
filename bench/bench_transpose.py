"""app.transpose mode=packed: its exchange phase against a bare MPI_Alltoall of the same bytes.

The packed transpose of an M x M array of 8-byte words over N ranks (N
dividing M) packs, calls MPI_Alltoall with blocks of (M/N)^2 words, and
unpacks. Its `exchange` phase (the mean over the ranks of the time inside
MPI_Alltoall, median over samples) is set against message.alltoall at
the same block size (variant collective, warm cache): the same call on the
same bytes with nothing around it (warm cache, as the target reads, and cold
buffers, beside it). Target: within 5% at every size.

The two alternate over rounds (one launch each, one after the other), and
the target is judged on the median of the per-round ratios. The default
sizes give blocks of 8 and 32 MiB, beyond the last-level cache: with blocks
that fit it, the bare call finds its buffers in cache on every op, the
transpose after packing and unpacking 4 arrays does not (at M=512 on 2
ranks, 512 KiB blocks: bare 78 us warm, 214 us cold, the exchange phase
between, about 140 us).

Usage: python bench/bench_transpose.py [--rounds N] [--sizes 512,2048] [--ranks 2]"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from _common import (alternate, fabriclab, fmt_size, fmt_time, header, main, median, paired_ratio, points,
                     spread, verdict)

TARGET = 0.05


def _transpose(m: int, n: int, work: str) -> float:
    doc, _, _ = fabriclab(["app.transpose", "-n", str(n), "-s", str(m), "--active", str(n), "-p", "mode=packed",
                           "--launches", "1", "--point-time", "2"], work)
    p = next(p for p in points(doc, "app.transpose") if p["active"] == n)
    return statistics.median(p["phases"]["exchange"])


def _alltoall(block: int, n: int, work: str, cache: str = "warm") -> float:
    doc, _, _ = fabriclab(["message.alltoall", "-n", str(n), "-s", str(block), "--cache", cache, "--launches", "1",
                           "--point-time", "2"], work)
    return next(p for p in points(doc, "message.alltoall"))["summary"]["median"]


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="2048,4096", help="array sides M, each a multiple of --ranks")
    ap.add_argument("--ranks", type=int, default=2)
    a = ap.parse_args()
    n = a.ranks
    header("app.transpose mode=packed: exchange phase vs a bare MPI_Alltoall of the same bytes",
           method=f"{a.rounds} rounds alternating, one launch each; median of per-round ratios")
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for m in (int(x) for x in a.sizes.split(",")):
            block = (m // n) ** 2 * 8
            print(f"M = {m} words ({fmt_size(m * m * 8)} array), {n} ranks, blocks of {fmt_size(block)}")
            res = alternate([("transpose", lambda: _transpose(m, n, work)),
                             ("alltoall", lambda: _alltoall(block, n, work)),
                             ("alltoall-cold", lambda: _alltoall(block, n, work, "cold"))], a.rounds,
                            show=lambda _, t: fmt_time(t))
            ratio, per = paired_ratio(res["transpose"], res["alltoall"])
            cold, _ = paired_ratio(res["transpose"], res["alltoall-cold"])
            print(f"  exchange phase {fmt_time(median(res['transpose']))}, bare MPI_Alltoall "
                  f"{fmt_time(median(res['alltoall']))} warm, {fmt_time(median(res['alltoall-cold']))} cold; "
                  f"ratio {ratio:.3f} (rounds {spread(per)}), {cold:.3f} against cold buffers")
            ok &= verdict(abs(ratio - 1) <= TARGET, f"M={m}: exchange within {TARGET:.0%} of MPI_Alltoall",
                          f"{ratio:.3f}")


if __name__ == "__main__":
    main(body)
