"""app.transpose mode=packed: its exchange phase against a bare MPI_Alltoall of the same bytes.

The packed transpose of an M x M array of 8-byte words over N ranks (N
dividing M) packs, calls MPI_Alltoall with blocks of (M/N)^2 words, and
unpacks. Its `exchange` phase (the mean over the ranks of the time inside
MPI_Alltoall, median over samples) is set against message.alltoall at
the same block size (variant collective): the same call on the
same bytes with nothing around it, with warm buffers and with cold ones.
The exchange finds its buffers as the pack and the previous op's unpack
left them, between those two states: where a rank's blocks nearly fit the
last-level cache the warm call keeps part of them there, which the
transpose, packing and unpacking 4 arrays, cannot (at M=2048 on 2 ranks,
8 MiB blocks, a 32 MiB L3: exchange 3.45 ms, bare 3.15 ms warm, 3.45 ms
cold). Target, at every size: no slower than 1.05x the bare call in the
slower of the two states and no faster than 0.95x the faster one (the
exchange adds nothing to the call but the state packing leaves the cache in).

The three alternate over rounds (one launch each, one after the other), and
the target is judged on the median of the per-round ratios. With blocks
well inside the cache, the bare call finds its buffers there on every op
and the exchange does not (at M=512 on 2 ranks, 512 KiB blocks: bare 78 us
warm, 214 us cold, the exchange phase between, about 140 us).

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
    ap.add_argument("--rounds", type=int, default=9)
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
            # against the slower state's time (the smaller ratio) and the faster one's (the larger)
            ok &= verdict(min(ratio, cold) <= 1 + TARGET and max(ratio, cold) >= 1 - TARGET,
                          f"M={m}: exchange within {TARGET:.0%} of MPI_Alltoall's warm-to-cold range",
                          f"{ratio:.3f} of warm, {cold:.3f} of cold")


if __name__ == "__main__":
    main(body)
