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
  result back. Partners come in MPICH's order, which decides what crosses a
  hierarchical network: doubling and Rabenseifner's reduce-scatter at
  distance 1 first, reduce_scatter's halving and Rabenseifner's allgather at
  distance p/2 first.
- binomial tree (bcast, reduce, gather, scatter): ceil(log2 N) steps, the
  ranks that have the data doubling each step, the farthest first as MPICH's
  bcast sends (a reduce the other way round); scatter + allgather bcast
  (van de Geijn: a binomial scatter of N blocks, then a ring allgather);
  pipelined chain bcast (segments passed down the chain 0 -> 1 -> ... ).
- Bruck (allgather, alltoall): ceil(log2 N) steps to the rank 2^k away;
  pairwise exchange (alltoall): N-1 steps, rank r to r + s.
- linear (gather, scatter): one step between the root and every rank.

Sizes follow fabriclab's coll level (suite/collectives.py): the vector's
bytes for allreduce, bcast, reduce and reduce_scatter; one rank's block for
allgather, gather and scatter; the block to each destination for alltoall.
Ranks are numbered from the root (rank = (relative + root) mod N).

A ring's and a chain's steps are one pattern with the data moved on one rank
a step, so they are kept as one step repeated (`Step.repeat`): each time,
every flow carries what the flow before it carried (a window sliding along
`Step.tape`). Such a step keeps the pattern's flows that carry nothing at
times (an empty block of a vector smaller than N, a chain's links before the
first segment reaches them: MPICH still sends the empty message), so one
routing and one max-min solution serve every repeat. A 4,096-rank ring is
two steps of 4,096 flows, not 8,190."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import UsageError

# Bytes of a pipelined chain's segment unless one is given (MPICH's default
# MPIR_CVAR_BCAST_... pipelines in segments of this order).
SEGMENT = 64 << 10
MAX_RANKS = 1 << 20
# Flows a schedule may hold (each stored step counts its flows once, however often it
# repeats): 16 M flows are about 400 MB of arrays, and as many rates to solve.
MAX_FLOWS = 16_000_000


class TooLarge(UsageError):
    """A schedule past MAX_FLOWS: that algorithm at that rank count is not computed (collective.py),
    the command ends only where nothing else is."""


@dataclass(frozen=True)
class Step:
    """Flows that start together, taken `repeat` times in a row: the k-th time (from 0),
    flow f carries tape[start + f - k] bytes, what flow f - 1 carried the time before.
    With `reduce`, each destination reduces what it receives."""

    src: np.ndarray          # rank of each flow
    dst: np.ndarray
    tape: np.ndarray         # the bytes the flows' windows slide along
    start: int = 0
    reduce: bool = False
    repeat: int = 1

    @property
    def nbytes(self) -> np.ndarray:
        """Bytes of each flow the first time."""
        return self.tape[self.start:self.start + len(self.src)]

    def windows(self) -> np.ndarray:
        """Bytes of each flow each time: row k is the k-th time (a view, no copy)."""
        view = sliding_window_view(self.tape, len(self.src))
        return view[self.start - self.repeat + 1:self.start + 1][::-1]

    def totals(self) -> np.ndarray:
        """Bytes of each flow over all its repeats."""
        c = np.concatenate(([0], np.cumsum(self.tape)))
        f = np.arange(len(self.src)) + self.start + 1
        return c[f] - c[f - self.repeat]

    def each(self) -> list:
        """The step as `repeat` steps of one time each (what a hand count lists)."""
        return [Step(self.src, self.dst, np.array(w), 0, self.reduce) for w in self.windows()]


@dataclass
class Schedule:
    op: str
    algorithm: str
    ranks: int
    size: int
    steps: list = field(default_factory=list)

    @property
    def n_steps(self) -> int:
        """Steps taken, each repeat counted."""
        return sum(s.repeat for s in self.steps)

    def expanded(self) -> list:
        """Every step taken, in order, one time each."""
        return [one for s in self.steps for one in s.each()]

    def _total(self, ends: str, reducing: bool = False) -> np.ndarray:
        out = np.zeros(self.ranks, np.int64)
        for s in self.steps:
            if s.reduce or not reducing:
                np.add.at(out, getattr(s, ends), s.totals())
        return out

    def sent(self) -> np.ndarray:
        """Bytes each rank sends over the whole schedule."""
        return self._total("src")

    def received(self) -> np.ndarray:
        return self._total("dst")

    def reduced(self) -> np.ndarray:
        """Bytes each rank reduces: what it receives in the steps that reduce."""
        return self._total("dst", reducing=True)


class _Builder:
    """Collects steps; flows are given in ranks relative to the root."""

    def __init__(self, n: int, root: int = 0):
        self.n, self.root, self.steps, self.flows = n, root, [], 0

    def _add(self, step: Step) -> None:
        self.flows += len(step.src)
        if self.flows > MAX_FLOWS:
            raise TooLarge(f"the schedule for {self.n:,} ranks holds more than {MAX_FLOWS:,} flows, too many to "
                           "time; give fewer ranks")
        self.steps.append(step)

    def _ranks(self, rel) -> np.ndarray:
        return (np.asarray(rel, np.int64) + self.root) % self.n

    def step(self, src, dst, nbytes, reduce: bool = False) -> None:
        """One step; flows that carry nothing, or go nowhere, are left out."""
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        nb = np.broadcast_to(np.asarray(nbytes, np.int64), src.shape)
        keep = (nb > 0) & (src != dst)
        if keep.any():
            self._add(Step(self._ranks(src[keep]), self._ranks(dst[keep]), np.array(nb[keep]), 0, reduce))

    def slide(self, src, dst, tape: np.ndarray, start: int, repeat: int, reduce: bool = False) -> None:
        """A step taken `repeat` times, the flows' bytes moving on one flow each time (Step)."""
        if repeat < 1 or len(src) == 0 or not tape.any():
            return
        self._add(Step(self._ranks(src), self._ranks(dst), np.asarray(tape, np.int64), start, reduce, repeat))


def blocks(n: int, parts: int) -> np.ndarray:
    """n bytes in `parts` balanced blocks (they differ by at most a byte)."""
    k = np.arange(parts + 1, dtype=np.int64)
    return np.diff(n * k // parts)


def _fold(n: int) -> tuple[int, int]:
    """(p, rem): the largest power of two p <= n and the ranks over it."""
    p = 1 << (n.bit_length() - 1)
    return p, n - p


def _real(nr, rem: int):
    """The rank that stands for position nr of the power-of-two group."""
    return np.where(nr < rem, 2 * nr + 1, nr + rem)


# ---- ring

def _ring_pass(b: _Builder, sizes: np.ndarray, offset: int, reduce: bool) -> None:
    """N - 1 steps; in step s rank r sends block (r + offset - s) mod N to r + 1."""
    n = b.n
    r = np.arange(n)
    # flow r carries tape[start + r - s] = sizes[(r + offset - s) mod n]: the blocks rolled, twice over
    tape = np.tile(np.roll(sizes, -offset), 2)
    b.slide(r, (r + 1) % n, tape, n, n - 1, reduce)


def allreduce_ring(b: _Builder, size: int) -> None:
    sizes = blocks(size, b.n)
    _ring_pass(b, sizes, 0, True)     # reduce-scatter: rank r ends with block r + 1
    _ring_pass(b, sizes, 1, False)    # allgather of those blocks


def reduce_scatter_ring(b: _Builder, size: int) -> None:
    _ring_pass(b, blocks(size, b.n), -1, True)   # rank r ends with block r


def allgather_ring(b: _Builder, size: int) -> None:
    _ring_pass(b, np.full(b.n, size, np.int64), 0, False)


# ---- recursive doubling and halving, with MPICH's fold of the ranks over a power of two

def _fold_in(b: _Builder, rem: int, nbytes, reduce: bool) -> None:
    """Each of the first 2 rem even ranks hands its `nbytes` (an array by rank, or one figure) up."""
    even = 2 * np.arange(rem)
    b.step(even, even + 1, np.asarray(nbytes)[even] if np.ndim(nbytes) else nbytes, reduce)


def _fold_out(b: _Builder, rem: int, nbytes) -> None:
    even = 2 * np.arange(rem)
    b.step(even + 1, even, np.asarray(nbytes)[even] if np.ndim(nbytes) else nbytes)


def allreduce_recursive_doubling(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    _fold_in(b, rem, size, True)
    nr, mask = np.arange(p), 1
    while mask < p:
        b.step(_real(nr, rem), _real(nr ^ mask, rem), size, reduce=True)
        mask <<= 1
    _fold_out(b, rem, size)


def _range_bytes(weights: np.ndarray):
    """Bytes of the positions [lo, hi) of `weights`, for arrays of lo and hi."""
    c = np.concatenate(([0], np.cumsum(weights)))
    return lambda lo, hi: c[hi] - c[lo]


def _masks(p: int, up: bool) -> list:
    """The partners' distances 1, 2, 4 .. p/2 (up) or p/2 .. 1."""
    out = [1 << k for k in range(p.bit_length() - 1)]
    return out if up else out[::-1]


def _halving(b: _Builder, weights: np.ndarray, rem: int, up: bool = False) -> tuple:
    """Recursive halving over the p positions, each holding `weights[nr]` bytes of the result:
    each step a position sends its partner the half of its range the partner keeps, and the
    partner reduces it; partners at distance p/2 first, or (`up`) 1 first. Returns each
    position's final range (lo, hi)."""
    p = len(weights)
    nr, span = np.arange(p), _range_bytes(weights)
    lo, hi = np.zeros(p, np.int64), np.full(p, p, np.int64)
    for mask in _masks(p, up):
        mid, upper = (lo + hi) // 2, (nr & mask) > 0
        give = np.where(upper, span(lo, mid), span(mid, hi))
        b.step(_real(nr, rem), _real(nr ^ mask, rem), give, reduce=True)
        lo, hi = np.where(upper, mid, lo), np.where(upper, hi, mid)
    return lo, hi


def _doubling_gather(b: _Builder, weights: np.ndarray, rem: int, lo: np.ndarray, hi: np.ndarray,
                     up: bool = True) -> None:
    """The reverse of _halving: each step a position sends its whole range to its partner,
    at distance 1 first (`up`) or p/2 first."""
    nr, span = np.arange(len(weights)), _range_bytes(weights)
    for mask in _masks(len(weights), up):
        b.step(_real(nr, rem), _real(nr ^ mask, rem), span(lo, hi))
        lo, hi = np.minimum(lo, lo[nr ^ mask]), np.maximum(hi, hi[nr ^ mask])


def allreduce_rabenseifner(b: _Builder, size: int) -> None:
    """MPICH's order: the reduce-scatter halves the vector with the nearest partner first
    (distance 1, then 2, ...), the allgather doubles it back with the farthest first; on a
    hierarchical network the largest halves stay close."""
    p, rem = _fold(b.n)
    _fold_in(b, rem, size, True)
    weights = blocks(size, p)
    _doubling_gather(b, weights, rem, *_halving(b, weights, rem, up=True), up=False)
    _fold_out(b, rem, size)


def _group_weights(sizes: np.ndarray, rem: int) -> np.ndarray:
    """Each position's share of a per-rank array: its own rank's, and the folded rank's too."""
    nr = np.arange(len(sizes) - rem)
    return sizes[_real(nr, rem)] + np.where(nr < rem, sizes[np.minimum(2 * nr, len(sizes) - 1)], 0)


def reduce_scatter_recursive_halving(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    sizes = blocks(size, b.n)
    _fold_in(b, rem, size, True)
    _halving(b, _group_weights(sizes, rem), rem)
    _fold_out(b, rem, sizes)


def allgather_recursive_doubling(b: _Builder, size: int) -> None:
    p, rem = _fold(b.n)
    _fold_in(b, rem, size, False)
    nr = np.arange(p)
    _doubling_gather(b, _group_weights(np.full(b.n, size, np.int64), rem), rem, nr, nr + 1)
    _fold_out(b, rem, size * b.n)


# ---- trees, chains, Bruck, pairwise, linear

def _levels(n: int) -> int:
    return (n - 1).bit_length()     # ceil(log2 n)


def bcast_binomial(b: _Builder, size: int) -> None:
    """MPICH's order: the root first sends to the farthest half (relative rank 2^(L-1)), and each
    holder r (a multiple of 2d) then to r + d, d halving."""
    for k in reversed(range(_levels(b.n))):
        r = np.arange(0, b.n - (1 << k), 2 << k)
        b.step(r, r + (1 << k), size)


def reduce_binomial(b: _Builder, size: int) -> None:
    """MPICH's order, the bcast's reversed: first r + 1 to r for even r, then r + 2 to r, ..."""
    for k in range(_levels(b.n)):
        r = np.arange(0, b.n - (1 << k), 2 << k)
        b.step(r + (1 << k), r, size, reduce=True)


def _subtrees(d: int, n: int) -> tuple:
    """The holders r (multiples of 2d with r + d < n) and each one's upper subtree [r + d, min(r + 2d, n))."""
    r = np.arange(0, n - d, 2 * d)
    return r, r + d, np.minimum(r + 2 * d, n)


def _binomial_scatter(b: _Builder, sizes: np.ndarray) -> None:
    """The root's N blocks down a binomial tree: each step a holder sends the upper half of its subtree."""
    span = _range_bytes(sizes)
    for k in reversed(range(_levels(b.n))):
        r, lo, hi = _subtrees(1 << k, b.n)
        b.step(r, lo, span(lo, hi))


def bcast_scatter_allgather(b: _Builder, size: int) -> None:
    sizes = blocks(size, b.n)
    _binomial_scatter(b, sizes)
    _ring_pass(b, sizes, 0, False)


def bcast_pipelined_chain(b: _Builder, size: int, segment: int = SEGMENT) -> None:
    """Segments down the chain 0 -> 1 -> ... : in step t rank i sends segment t - i to i + 1,
    len(segments) + N - 2 steps of the one chain pattern."""
    segs = blocks(size, max(1, -(-size // segment)))
    pad = np.zeros(b.n - 2, np.int64)
    # flow i carries tape[start + i - t] = segs[t - i], and nothing outside the segments
    tape = np.concatenate((pad, segs[::-1], pad))
    i = np.arange(b.n - 1)
    b.slide(i, i + 1, tape, len(segs) + b.n - 3, len(segs) + b.n - 2)


def allgather_bruck(b: _Builder, size: int) -> None:
    r = np.arange(b.n)
    for k in range(_levels(b.n)):
        d = 1 << k
        b.step(r, (r - d) % b.n, size * min(d, b.n - d))


def alltoall_bruck(b: _Builder, size: int) -> None:
    r = np.arange(b.n)
    for k in range(_levels(b.n)):
        d = 1 << k
        b.step(r, (r + d) % b.n, size * int(((r & d) > 0).sum()))


def alltoall_pairwise(b: _Builder, size: int) -> None:
    r = np.arange(b.n)
    for s in range(1, b.n):
        b.step(r, (r + s) % b.n, size)


def gather_linear(b: _Builder, size: int) -> None:
    r = np.arange(1, b.n)
    b.step(r, np.zeros_like(r), size)


def scatter_linear(b: _Builder, size: int) -> None:
    r = np.arange(1, b.n)
    b.step(np.zeros_like(r), r, size)


def gather_binomial(b: _Builder, size: int) -> None:
    for k in range(_levels(b.n)):
        r, lo, hi = _subtrees(1 << k, b.n)
        b.step(lo, r, size * (hi - lo))


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


# The libraries' names of the algorithms the model has, by operation: MPICH's
# MPIR_CVAR_<OP>_INTRA_ALGORITHM values and Open MPI's coll_tuned_<op>_algorithm ones
# (docs/collectives.md, "Algorithms"). A name not here (auto, smp, Open MPI's segmented
# ring, a k-nomial tree) has no schedule of its own.
LIBRARY_NAMES = {
    "allreduce": {"ring": "ring", "recursive_doubling": "recursive_doubling",
                  "reduce_scatter_allgather": "rabenseifner", "rabenseifner": "rabenseifner"},
    "bcast": {"binomial": "binomial", "scatter_ring_allgather": "scatter_allgather",
              "scatter_allgather_ring": "scatter_allgather", "pipeline": "pipelined_chain"},
    "reduce": {"binomial": "binomial"},
    "allgather": {"ring": "ring", "recursive_doubling": "recursive_doubling", "brucks": "bruck", "bruck": "bruck"},
    "reduce_scatter": {"ring": "ring", "recursive_halving": "recursive_halving"},
    "alltoall": {"pairwise": "pairwise", "brucks": "bruck", "modified_bruck": "bruck"},
    "gather": {"binomial": "binomial", "basic_linear": "linear"},
    "scatter": {"binomial": "binomial", "basic_linear": "linear"},
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
