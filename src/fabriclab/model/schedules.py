"""Collective algorithms as schedules: the steps of each, the flows of each step.

A schedule is what the model times on a network (schedule_time.py): a list
of steps, each a set of flows (source rank, destination rank, bytes) that
start together, and the bytes each rank reduces locally in that step. The
algorithms are the ones MPI libraries choose among (Thakur, Rabenseifner and
Gropp 2005, "Optimization of collective communication operations in MPICH";
Chan et al. 2007; Bruck et al. 1997); each works for any rank count:

- ring (allreduce, allgather, reduce_scatter): N-1 steps to the next rank;
  the vector in N balanced blocks (block k holds bytes n(k+1)/N - nk/N).
- recursive doubling (allreduce, allgather) and recursive halving
  (reduce_scatter, and Rabenseifner's allreduce = halving + doubling):
  between partners r XOR 2^k of the largest power of two p <= N. The
  N - p ranks over it are folded as MPICH folds them: before, each of the
  first 2(N - p) even ranks sends its data to the odd rank above it, which
  reduces (or keeps) it and stands for both; after, the odd rank sends the
  result back.
- binomial tree (bcast, reduce, gather, scatter): ceil(log2 N) steps, the
  ranks that have the data doubling each step; scatter + allgather bcast
  (van de Geijn: a binomial scatter of N blocks, then a ring allgather);
  pipelined chain bcast (segments passed down the chain 0 -> 1 -> ... ).
- Bruck (allgather, alltoall): ceil(log2 N) steps to the rank 2^k away;
  pairwise exchange (alltoall): N-1 steps, rank r to r + s.
- linear (gather, scatter): one step between the root and every rank.

Sizes follow fabriclab's coll level (measure/collectives.py): the vector's
bytes for allreduce, bcast, reduce and reduce_scatter; one rank's block for
allgather, gather and scatter; the block to each destination for alltoall.
Ranks are numbered from the root (rank = (relative + root) mod N)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import UsageError

# Bytes of a pipelined chain's segment unless one is given (MPICH's default
# MPIR_CVAR_BCAST_... pipelines in segments of this order).
SEGMENT = 64 << 10
MAX_RANKS = 1 << 20


@dataclass(frozen=True)
class Step:
    """Flows that start together, and the bytes each rank reduces in the step."""

    src: np.ndarray          # rank of each flow
    dst: np.ndarray
    nbytes: np.ndarray       # bytes of each flow
    reduced: np.ndarray      # bytes reduced by each rank (length N)


@dataclass
class Schedule:
    op: str
    algorithm: str
    ranks: int
    size: int
    steps: list = field(default_factory=list)

    def sent(self) -> np.ndarray:
        """Bytes each rank sends over the whole schedule."""
        out = np.zeros(self.ranks, np.int64)
        for s in self.steps:
            np.add.at(out, s.src, s.nbytes)
        return out

    def received(self) -> np.ndarray:
        out = np.zeros(self.ranks, np.int64)
        for s in self.steps:
            np.add.at(out, s.dst, s.nbytes)
        return out

    def reduced(self) -> np.ndarray:
        return sum((s.reduced for s in self.steps), np.zeros(self.ranks, np.int64))


class _Builder:
    """Collects steps; flows are (source, destination, bytes) in ranks relative to the root."""

    def __init__(self, n: int, root: int = 0):
        self.n, self.root, self.steps = n, root, []

    def step(self, flows, reduce: bool = False) -> None:
        """One step of `flows`; with `reduce`, each destination reduces what it receives."""
        flows = [(s, d, b) for s, d, b in flows if b > 0 and s != d]
        if not flows:
            return
        src, dst, nb = (np.array(x, np.int64) for x in zip(*flows))
        src, dst = (src + self.root) % self.n, (dst + self.root) % self.n
        red = np.bincount(dst, weights=nb, minlength=self.n).astype(np.int64) if reduce else \
            np.zeros(self.n, np.int64)
        self.steps.append(Step(src, dst, nb, red))


def blocks(n: int, parts: int) -> np.ndarray:
    """n bytes in `parts` balanced blocks (they differ by at most a byte)."""
    k = np.arange(parts + 1, dtype=np.int64)
    return np.diff(n * k // parts)


def _fold(n: int) -> tuple[int, int]:
    """(p, rem): the largest power of two p <= n and the ranks over it."""
    p = 1 << (n.bit_length() - 1)
    return p, n - p


def _real(nr: int, rem: int) -> int:
    """The rank that stands for position nr of the power-of-two group."""
    return 2 * nr + 1 if nr < rem else nr + rem


# ---- ring

def _ring_pass(b: _Builder, sizes: np.ndarray, offset: int, reduce: bool) -> None:
    """N - 1 steps; in step s rank r sends block (r + offset - s) mod N to r + 1."""
    n = b.n
    for s in range(n - 1):
        flows = [(r, (r + 1) % n, int(sizes[(r + offset - s) % n])) for r in range(n)]
        b.step(flows, reduce)


def allreduce_ring(b: _Builder, size: int) -> None:
    sizes = blocks(size, b.n)
    _ring_pass(b, sizes, 0, True)     # reduce-scatter: rank r ends with block r + 1
    _ring_pass(b, sizes, 1, False)    # allgather of those blocks


def reduce_scatter_ring(b: _Builder, size: int) -> None:
    _ring_pass(b, blocks(size, b.n), -1, True)   # rank r ends with block r


def allgather_ring(b: _Builder, size: int) -> None:
    _ring_pass(b, np.full(b.n, size, np.int64), 0, False)


# ---- recursive doubling and halving, with MPICH's fold of the ranks over a power of two

def _fold_in(b: _Builder, rem: int, nbytes: Callable[[int], int], reduce: bool) -> None:
    flows = [(2 * i, 2 * i + 1, nbytes(2 * i)) for i in range(rem)]
    b.step(flows, reduce)


def _fold_out(b: _Builder, rem: int, nbytes: Callable[[int], int]) -> None:
    b.step([(2 * i + 1, 2 * i, nbytes(2 * i)) for i in range(rem)])


def allreduce_recursive_doubling(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    _fold_in(b, rem, lambda r: size, True)
    mask = 1
    while mask < p:
        flows = [(_real(nr, rem), _real(nr ^ mask, rem), size) for nr in range(p)]
        b.step(flows, reduce=True)
        mask <<= 1
    _fold_out(b, rem, lambda r: size)


def _halving(b: _Builder, weights: np.ndarray, rem: int) -> list:
    """Recursive halving over the p positions, each holding `weights[nr]` bytes of the result:
    each step a position sends its partner the half of its range the partner keeps, and the
    partner reduces it. Returns each position's final range [lo, hi)."""
    p = len(weights)
    rng = [(0, p)] * p
    mask = p >> 1
    while mask:
        flows, nxt = [], []
        for nr in range(p):
            lo, hi = rng[nr]
            mid = (lo + hi) // 2
            keep, give = ((mid, hi), (lo, mid)) if nr & mask else ((lo, mid), (mid, hi))
            flows.append((_real(nr, rem), _real(nr ^ mask, rem), int(weights[give[0]:give[1]].sum())))
            nxt.append(keep)
        b.step(flows, reduce=True)
        rng, mask = nxt, mask >> 1
    return rng


def _doubling_gather(b: _Builder, weights: np.ndarray, rem: int, rng: list) -> None:
    """The reverse of _halving: each step a position sends its whole range to its partner."""
    p, mask = len(weights), 1
    while mask < p:
        b.step([(_real(nr, rem), _real(nr ^ mask, rem), int(weights[rng[nr][0]:rng[nr][1]].sum()))
                for nr in range(p)])
        rng = [(min(rng[nr][0], rng[nr ^ mask][0]), max(rng[nr][1], rng[nr ^ mask][1])) for nr in range(p)]
        mask <<= 1


def allreduce_rabenseifner(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    _fold_in(b, rem, lambda r: size, True)
    weights = blocks(size, p)
    _doubling_gather(b, weights, rem, _halving(b, weights, rem))
    _fold_out(b, rem, lambda r: size)


def _group_weights(sizes: np.ndarray, rem: int) -> np.ndarray:
    """Each position's share of a per-rank array: its own rank's, and the folded rank's too."""
    p = len(sizes) - rem
    return np.array([sizes[_real(nr, rem)] + (sizes[2 * nr] if nr < rem else 0) for nr in range(p)], np.int64)


def reduce_scatter_recursive_halving(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    sizes = blocks(size, b.n)
    _fold_in(b, rem, lambda r: size, True)
    _halving(b, _group_weights(sizes, rem), rem)
    _fold_out(b, rem, lambda r: int(sizes[r]))


def allgather_recursive_doubling(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    _fold_in(b, rem, lambda r: size, False)
    _doubling_gather(b, _group_weights(np.full(b.n, size, np.int64), rem), rem, [(nr, nr + 1) for nr in range(p)])
    _fold_out(b, rem, lambda r: size * b.n)


# ---- trees, chains, Bruck, pairwise, linear

def _levels(n: int) -> int:
    return (n - 1).bit_length()     # ceil(log2 n)


def bcast_binomial(b: _Builder, size: int) -> None:
    for k in range(_levels(b.n)):
        d = 1 << k
        b.step([(r, r + d, size) for r in range(d) if r + d < b.n])


def reduce_binomial(b: _Builder, size: int) -> None:
    for k in reversed(range(_levels(b.n))):
        d = 1 << k
        flows = [(r + d, r, size) for r in range(d) if r + d < b.n]
        b.step(flows, reduce=True)


def _subtree(r: int, d: int, n: int) -> range:
    return range(r + d, min(r + 2 * d, n))


def _binomial_scatter(b: _Builder, sizes: np.ndarray) -> None:
    """The root's N blocks down a binomial tree: each step a holder sends the upper half of its subtree."""
    for k in reversed(range(_levels(b.n))):
        d = 1 << k
        b.step([(r, r + d, int(sizes[list(_subtree(r, d, b.n))].sum())) for r in range(0, b.n, 2 * d)
                if r + d < b.n])


def bcast_scatter_allgather(b: _Builder, size: int) -> None:
    sizes = blocks(size, b.n)
    _binomial_scatter(b, sizes)
    _ring_pass(b, sizes, 0, False)


def bcast_pipelined_chain(b: _Builder, size: int, segment: int = SEGMENT) -> None:
    segs = blocks(size, max(1, -(-size // segment)))
    for t in range(len(segs) + b.n - 2):
        b.step([(i, i + 1, int(segs[t - i])) for i in range(b.n - 1) if 0 <= t - i < len(segs)])


def allgather_bruck(b: _Builder, size: int) -> None:
    for k in range(_levels(b.n)):
        d = 1 << k
        b.step([(r, (r - d) % b.n, size * min(d, b.n - d)) for r in range(b.n)])


def alltoall_bruck(b: _Builder, size: int) -> None:
    for k in range(_levels(b.n)):
        d = 1 << k
        count = sum(1 for j in range(b.n) if j & d)
        b.step([(r, (r + d) % b.n, size * count) for r in range(b.n)])


def alltoall_pairwise(b: _Builder, size: int) -> None:
    for s in range(1, b.n):
        b.step([(r, (r + s) % b.n, size) for r in range(b.n)])


def gather_linear(b: _Builder, size: int) -> None:
    b.step([(r, 0, size) for r in range(1, b.n)])


def scatter_linear(b: _Builder, size: int) -> None:
    b.step([(0, r, size) for r in range(1, b.n)])


def gather_binomial(b: _Builder, size: int) -> None:
    for k in range(_levels(b.n)):
        d = 1 << k
        b.step([(r + d, r, size * len(_subtree(r, d, b.n))) for r in range(0, b.n, 2 * d) if r + d < b.n])


def scatter_binomial(b: _Builder, size: int) -> None:
    _binomial_scatter(b, np.full(b.n, size, np.int64))


ALGORITHMS: dict[str, dict[str, Callable]] = {
    "allreduce": {"ring": allreduce_ring, "recursive_doubling": allreduce_recursive_doubling,
                  "rabenseifner": allreduce_rabenseifner},
    "bcast": {"binomial": bcast_binomial, "scatter_allgather": bcast_scatter_allgather,
              "pipelined_chain": bcast_pipelined_chain},
    "reduce": {"binomial": reduce_binomial},
    "allgather": {"ring": allgather_ring, "recursive_doubling": allgather_recursive_doubling,
                  "bruck": allgather_bruck},
    "reduce_scatter": {"ring": reduce_scatter_ring, "recursive_halving": reduce_scatter_recursive_halving},
    "alltoall": {"pairwise": alltoall_pairwise, "bruck": alltoall_bruck},
    "gather": {"linear": gather_linear, "binomial": gather_binomial},
    "scatter": {"linear": scatter_linear, "binomial": scatter_binomial},
}


def schedule(op: str, algorithm: str, ranks: int, size: int, root: int = 0) -> Schedule:
    """The steps of `algorithm` for `op` on `ranks` ranks at `size` bytes; UsageError in one
    line for an unknown operation or algorithm, or a count out of bounds."""
    if op not in ALGORITHMS:
        raise UsageError(f"no schedules for {op!r}: the model has {', '.join(ALGORITHMS)}")
    if algorithm not in ALGORITHMS[op]:
        raise UsageError(f"{op} has no algorithm {algorithm!r}: {', '.join(ALGORITHMS[op])}")
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 1 <= ranks <= MAX_RANKS:
        raise UsageError(f"ranks must be an integer from 1 to {MAX_RANKS}, not {ranks!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise UsageError(f"size must be a whole number of bytes, not {size!r}")
    if not 0 <= root < ranks:
        raise UsageError(f"root {root} is not one of the {ranks} ranks")
    b = _Builder(ranks, root)
    ALGORITHMS[op][algorithm](b, size)
    return Schedule(op, algorithm, ranks, size, b.steps)
