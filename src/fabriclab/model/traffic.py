"""Traffic patterns: which node sends to which, one equal-size message per flow."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError

from .choices import PATTERNS


@dataclass(frozen=True)
class Traffic:
    """A pattern and its knobs. ``flows(topology)`` returns (src, dst)."""

    kind: str = "all-to-all"
    target: int = 0          # hotspot: the node everybody sends to
    seed: int = 1            # permutation, bisection, random-ring: random generator seed
    # ring: the nodes in ring order, each sending to both neighbours (HPCC's rings); () is the
    # natural ring 0, 1 .. N-1 (a run's random ring is its layout's, analysis/hpcc.py)
    ring: tuple = ()

    def __post_init__(self):
        if self.kind not in PATTERNS:
            raise UsageError(f"unknown traffic pattern {self.kind!r}: choose one of {', '.join(PATTERNS)}")
        if self.target < 0:
            raise UsageError(f"--hotspot-target must be a node number (0 or more), got {self.target}")
        if not 0 <= self.seed < 2 ** 63:
            raise UsageError(f"--seed must be a non-negative integer below 2^63, got {self.seed}")

    def describe(self) -> str:
        return {"all-to-all": "uniform all-to-all (every node sends one message to every other node)",
                "hotspot": f"hotspot (every node sends to node {self.target})",
                "permutation": f"random permutation (seed {self.seed})",
                "bisection": f"random bisection pairs (seed {self.seed})",
                "neighbour": "nearest neighbour",
                "ring": ("ring in the order given" if self.ring else "naturally ordered ring")
                + " (every node to both neighbours)",
                "random-ring": f"randomly ordered ring (seed {self.seed}; every node to both neighbours)"}[self.kind]

    def count(self, n: int) -> int:
        """The flows on n nodes, known before they are built: all-to-all is n (n - 1), the
        others at most n (neighbours at most n x the degree, counted as n: never the largest)."""
        return n * (n - 1) if self.kind == "all-to-all" else n

    def flows(self, topo) -> tuple:
        n = topo.n_nodes
        if self.kind == "all-to-all":
            return all_pairs(n)
        if self.kind == "hotspot":
            if not 0 <= self.target < n:
                raise UsageError(f"hotspot target {self.target} is not a node (0..{n - 1})")
            src = np.array([i for i in range(n) if i != self.target], np.int64)
            return src, np.full(n - 1, self.target, np.int64)
        if self.kind == "ring":
            return ring_flows(self.ring or tuple(range(n)), n)
        rng = np.random.default_rng(self.seed)
        if self.kind == "random-ring":
            return ring_flows(tuple(rng.permutation(n).tolist()), n)
        if self.kind == "permutation":
            return np.arange(n, dtype=np.int64), derangement(n, rng)
        if self.kind == "bisection":
            perm = rng.permutation(n)
            h = n // 2
            a, b = perm[:h], perm[h:2 * h]
            return np.concatenate((a, b)).astype(np.int64), np.concatenate((b, a)).astype(np.int64)
        return neighbours(topo)

    def per_source(self, src: np.ndarray) -> float:
        """Messages each sending node sends (the unit of per-node bandwidth)."""
        return float(np.bincount(src).max()) if len(src) else 0.0


def all_pairs(n: int) -> tuple:
    s = np.repeat(np.arange(n, dtype=np.int64), n - 1)
    k = np.tile(np.arange(n - 1, dtype=np.int64), n)
    d = k + (k >= s)
    return s, d


def ring_flows(order: tuple, n: int) -> tuple:
    """HPCC's ring (bench_lat_bw_1.5.2.c, ring_lat_bw_loop): every node in `order` sends one message
    to its right neighbour and one to its left; on a ring of two both go to the one other node."""
    if n < 2:
        raise UsageError(f"a ring needs at least 2 nodes, not {n}")
    if sorted(order) != list(range(n)):
        raise UsageError(f"a ring's order must list every node 0..{n - 1} once, not {len(order)} entries")
    o = np.asarray(order, np.int64)
    return np.concatenate((o, o)), np.concatenate((np.roll(o, -1), np.roll(o, 1)))


def derangement(n: int, rng) -> np.ndarray:
    """A random permutation without fixed points (nobody sends to itself)."""
    while True:
        p = rng.permutation(n)
        fixed = np.nonzero(p == np.arange(n))[0]
        if len(fixed) == 0:
            return p.astype(np.int64)
        if len(fixed) == 1 and n > 1:
            i = int(fixed[0])
            j = (i + 1) % n
            p[i], p[j] = p[j], p[i]
            if not np.any(p == np.arange(n)):
                return p.astype(np.int64)


def neighbours(topo) -> tuple:
    """Torus: both neighbours in every dimension (only + for unidirectional
    rings); other networks: node i to i-1 and i+1 in node order (a ring of ranks)."""
    n = topo.n_nodes
    ids = np.arange(n, dtype=np.int64)
    dims = getattr(topo, "dims", None)
    if dims is None:
        dims, strides, signs = (n,), (1,), (1, -1)
    else:
        strides = topo.strides
        signs = (1, -1) if topo.bidirectional else (1,)
    src, dst = [], []
    for i, r in enumerate(dims):
        st = int(strides[i])
        c = (ids // st) % r
        for sg in signs:
            if r == 2 and sg == -1:
                continue   # in a ring of 2 both neighbours are the same node
            nb = ids + (((c + sg) % r) - c) * st
            src.append(ids)
            dst.append(nb)
    s, d = np.concatenate(src), np.concatenate(dst)
    keep = s != d
    return s[keep], d[keep]
