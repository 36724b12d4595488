"""The applications' arithmetic: who owns what, what each rank sends, the problem at N ranks.

The core's app kernels (csrc/families/app*.c) distribute every problem in
balanced blocks, lo(r) = floor(r * n / N) (csrc/families/app.h): rank r owns
items lo(r) .. lo(r+1) - 1, so any n divides over any N <= n and the blocks
differ by at most one item. This module writes the same arithmetic in
Python, for three uses: the memory a point needs (footprint.py), the bytes
each rank sends to others, which the model turns into a predicted exchange
time (verdicts/exchange_prediction.py) and the tests check against what the core
reports, and the refusals of a problem that cannot be split (N larger than
it). Each app's facts are one `App` on its registry entry (benchmarks.py).

Problems (the SIZE axis of each app):
- `app.transpose`: an M x M array of 8-byte words by row blocks. Rank r
  sends rank d the block of its rows and d's columns, rows(r) x rows(d)
  words; the diagonal block stays (a local transpose).
- `app.matmul`: C = A B of n x n doubles by row blocks of A, B and C; every
  rank gathers all of B (MPI_Allgatherv), so it receives the n - rows(r)
  rows it lacks, n words each. Weak scaling keeps each rank's share of the
  2 n^3 flops fixed: n(N) = round(n cbrt(N)).
- `app.sort`: keys of E bytes, SIZE keys in all (strong) or per rank (weak);
  element g's key word is draw(seed, g), whatever N, and its leading 32 bits
  k send it to rank floor(k N / 2^32), so uniform keys send about
  keys(r) (N-1)/N of each rank's bytes to others (sort_counts has the exact
  counts of a small problem)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..schema.records import Point

WORD = 8
ELEMENT_SIZES = (4, 8, 16, 32, 64)
_GOLDEN = 0x9E3779B97F4A7C15
_M64 = (1 << 64) - 1


def lo(n: int, r: int, nranks: int) -> int:
    """The first item of rank r's block of n items over `nranks` (app.h, app_lo)."""
    return n * r // nranks


def count(n: int, r: int, nranks: int) -> int:
    return lo(n, r + 1, nranks) - lo(n, r, nranks)


def blocks(n: int, nranks: int) -> list[int]:
    return [count(n, r, nranks) for r in range(nranks)]


def matmul_side(n: int, nranks: int, scale: str) -> int:
    """The matrix side a point multiplies: n (strong), or round(n cbrt(N)) (weak: flops per rank fixed).

    Rounded in integers, as the core does (app_matmul.c, weak_side): the m
    with (2m-1)^3 <= 8 n^3 N < (2m+1)^3, never a tie (the middle is even,
    the bounds odd), so no floating-point cube root can make the two differ."""
    if scale == "strong":
        return n
    target = 8 * n ** 3 * nranks
    m = max(1, round(n * nranks ** (1 / 3)))
    while (2 * m + 1) ** 3 <= target:
        m += 1
    while m > 1 and (2 * m - 1) ** 3 > target:
        m -= 1
    return m


def sort_keys(size: int, nranks: int, scale: str) -> int:
    """Keys sorted in all: SIZE (strong), or SIZE per rank (weak)."""
    return size if scale == "strong" else size * nranks


def transpose_sent(m: int, nranks: int) -> list[int]:
    """Bytes each rank of a transpose sends to the others per op."""
    rows = blocks(m, nranks)
    return [h * (m - h) * WORD for h in rows]


def matmul_received(n: int, nranks: int) -> list[int]:
    """Bytes each rank receives in the gather of B per op."""
    return [(n - h) * n * WORD if nranks > 1 else 0 for h in blocks(n, nranks)]


def bucket_of(key32: int, nranks: int) -> int:
    """The destination of a key from its leading 32 bits (app_sort.c, bucket_of)."""
    return (key32 * nranks) >> 32


def draw(seed: int, g: int) -> int:
    """The key word of sort element g (app_sort.c, draw): the (g+1)-th output of
    splitmix64 seeded with `seed` (Steele, Lea and Flood, OOPSLA 2014). A 4-byte
    key is its leading 32 bits, which also choose the destination for every E."""
    z = (seed + (g + 1) * _GOLDEN) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def sort_counts(keys: int, nranks: int, seed: int) -> list[list[int]]:
    """Elements rank a sends rank b in one op of app.sort, counts[a][b] (the
    diagonal stays home): exact, element by element, so for small problems."""
    counts = [[0] * nranks for _ in range(nranks)]
    for a in range(nranks):
        row = counts[a]
        for g in range(lo(keys, a, nranks), lo(keys, a + 1, nranks)):
            row[bucket_of(draw(seed, g) >> 32, nranks)] += 1
    return counts


def transpose_pairs(size: int, nranks: int, params: dict) -> dict:
    """Bytes per op from rank a to rank b (a != b) of a transpose's exchange:
    the block of a's rows and b's columns."""
    rows = blocks(size, nranks)
    return {(a, b): rows[a] * rows[b] * WORD for a in range(nranks) for b in range(nranks) if a != b}


def sort_pairs(size: int, nranks: int, params: dict) -> dict:
    """Bytes per op from rank a to rank b of a sort's exchange: the expectation
    for uniform keys, keys(a) E / N per destination."""
    e = int(params.get("elem", 8))
    keys = blocks(sort_keys(size, nranks, params.get("scale", "strong")), nranks)
    return {(a, b): keys[a] * e / nranks for a in range(nranks) for b in range(nranks) if a != b}


def flops(n: int) -> int:
    """Floating-point operations of an n x n multiply: n^3 multiply-adds."""
    return 2 * n ** 3


def scale_of(p: Point) -> str:
    """"strong" (a fixed problem) or "weak" (a fixed problem per rank)."""
    return p.params.get("scale", "strong")


@dataclass(frozen=True)
class Rate:
    """How an app's work rate reads: a label, its unit and the factor to it."""
    label: str
    unit: str
    scale: float

    @property
    def axis(self) -> str:
        return f"{self.label} ({self.unit})"

    def text(self, per_s: Optional[float]) -> str:
        return "-" if per_s is None else f"{per_s * self.scale:.4g}"


@dataclass(frozen=True)
class App:
    """What fabriclab knows of an application kernel (the registry's `app`):
    the problem SIZE stands for, the work of one op and the rate it is read
    in (the unit the seeds used), and the bytes its exchange phase moves
    between ranks, which a network's model predicts (verdicts/exchange_prediction.py)."""

    noun: str                                   # what SIZE is, in a refusal: "array side M"
    item: str                                   # what each rank needs one of at least: "row", "key"
    problem: Callable[[int, int, dict], int]    # (size, ranks, params) -> the items divided among the ranks
    rate: Rate
    work: Callable[[Point], float]              # the work of one op: flops, keys, array bytes
    column: Optional[str]                       # the row's field for its rate; None: its bandwidth
    size_text: str                              # a point's size in words: "n = {}"
    weak_text: Optional[str] = None             # ... when each rank holds SIZE (weak scaling)
    exchange: Optional[Callable[[int, int, dict], dict]] = None   # bytes a -> b per op, or no exchange phase
    blas: bool = False                          # its local work multiplies with a BLAS (measure/libraries.py)
    # The phase in which it communicates, drawn as a share of the op against
    # the ranks (its scaling), with its rate against the ranks; None: not drawn.
    communication: Optional[str] = None
    communication_text: str = ""                # that phase in words, for the figure's axis and note

    @property
    def exchanges(self) -> bool:
        return self.exchange is not None

    def refusal(self, size: int, nranks: int, params: dict) -> str | None:
        """Why a problem cannot be divided over `nranks` active ranks, or None."""
        n = self.problem(size, nranks, params)
        if n < nranks:
            return (f"divides {self.noun} {n} over {nranks} ranks: each rank needs at least one {self.item}; "
                    f"choose sizes of at least {nranks} or fewer ranks")
        return None


# The work of an op: the multiply's 2 n^3 floating-point operations (seed 003
# Fig. 12), the keys sorted (Fig. 13), the transpose's array bytes (seed 000),
# from the point's `info` where the core says it, else from the arithmetic above.
TRANSPOSE = App("array side M", "row", lambda size, n, params: size,
                Rate("array GB/s", "10^9 bytes of the array transposed/s", 1e-9),
                lambda p: float(p.bytes_per_op), None, "M = {}", exchange=transpose_pairs)
MATMUL = App("matrix side n", "row", lambda size, n, params: matmul_side(size, n, params.get("scale", "strong")),
             Rate("GFLOP/s", "10^9 floating-point operations/s", 1e-9),
             lambda p: float(p.info.get("flops") or flops(matmul_side(p.size, p.active or 1, scale_of(p)))),
             "flops_per_s", "n = {}", "n = {} N^(1/3)", blas=True, communication="gather",
             communication_text="the gather of B (MPI_Allgatherv)")
SORT = App("key count", "key", lambda size, n, params: sort_keys(size, n, params.get("scale", "strong")),
           Rate("Mkeys/s", "10^6 keys sorted/s", 1e-6),
           lambda p: float(p.info.get("keys") or sort_keys(p.size, p.active or 1, scale_of(p))),
           "keys_per_s", "{} keys", "{} keys per rank", exchange=sort_pairs)
