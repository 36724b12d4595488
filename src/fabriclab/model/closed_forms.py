"""Closed-form loads for regular families under all-to-all traffic.

They are test oracles for the routing-based solver (tests/model compare them
with brute-force counting) and quick answers at any size. Loads are messages
on the most loaded instance when each of the N nodes sends one message to
each of the other N-1.
"""

from __future__ import annotations

from math import comb


def sci_hot_link(n: int, r: int) -> float:
    """Unidirectional ringlets of an r-ary f-cube, N = r^f: N(r-1)/2 (seed 001 Eq. 1, Bugge)."""
    return n * (r - 1) / 2.0


def sci_hot_blink(r: int, f: int) -> float:
    """Adapter (B-Link) load of an r-ary f-cube with dimension-order routing (seed 001 Eq. 2):
    2(N-1) for injection and delivery plus (d-1) dimension changes for each of the
    C(f,d)(r-1)^d destinations that differ in d coordinates."""
    n = r ** f
    return 2.0 * (n - 1) + sum((d - 1) * comb(f, d) * (r - 1) ** d for d in range(2, f + 1))


def bidir_ring_link(n: int, r: int) -> tuple:
    """Bidirectional ringlets with shortest-way routing (ties go +): loads of the
    + and - links, (N/r)·Σ of the distances each direction serves."""
    plus = sum(range(1, r // 2 + 1))
    minus = sum(range(1, (r - 1) // 2 + 1))
    return n / r * plus, n / r * minus


def torus_blink_mixed(dims) -> float:
    """Adapter load of a torus with unequal dimensions: the number of
    destinations that differ in d coordinates is the x^d coefficient of
    prod_i (1 + (r_i - 1) x)."""
    poly = [1]
    for r in dims:
        nxt = [0] * (len(poly) + 1)
        for k, c in enumerate(poly):
            nxt[k] += c
            nxt[k + 1] += c * (r - 1)
        poly = nxt
    n = 1
    for r in dims:
        n *= r
    return 2.0 * (n - 1) + sum((d - 1) * c for d, c in enumerate(poly) if d >= 2)


def kary_ntree_level(k: int, n: int, level: int) -> float:
    """Up- (and down-) link load between level `level` and level+1 of a full
    k-ary n-tree: the k^level nodes below send their N - k^level outside
    messages over k^level links, so N - k^level (level 0: N - 1 on the node link)."""
    return float(k ** n - k ** level)


def crossbar_link(n: int) -> float:
    return float(n - 1)


def switch_array_link(switches: int, per_switch: int, cables: int = 1) -> float:
    """Linear array of S full switches of k nodes: the middle cut carries
    floor(S/2)·ceil(S/2)·k² messages each way, spread over the cables.

    The per-cable value is exact for ECMP (an even split) and for D-mod-K
    only when `cables` divides k: D-mod-K puts destination d on cable
    d mod cables, so with k not a multiple of cables some cables carry the
    destinations of one more residue class than others."""
    s = switches
    return (s // 2) * ((s + 1) // 2) * per_switch ** 2 / cables


def switch_ring_link(switches: int, per_switch: int, cables: int = 1) -> float:
    """Ring of S full switches of k nodes (S odd, so no ties): each clockwise
    link serves distances 1..h, h = (S-1)/2, so k²·h(h+1)/2 over the cables.

    Exact for ECMP, and for D-mod-K only when `cables` divides k (otherwise
    the destination residues d mod cables are not spread evenly)."""
    if switches % 2 == 0:
        raise ValueError("closed form given for an odd number of switches")
    h = (switches - 1) // 2
    return per_switch ** 2 * h * (h + 1) / 2.0 / cables


def dragonfly_global(p: int, a: int, h: int) -> float:
    """Canonical dragonfly, g = a·h + 1 groups, one global link per group pair:
    every global link carries all (a·p)² messages from one group to the other."""
    return float((a * p) ** 2)


def channel_load_bound(n: int, directed_channels: int, mean_hops: float, rate: float) -> float:
    """Per-node all-to-all bandwidth when every channel is equally loaded:
    N(N-1)·H message-hops over L_dir channels give B = L_dir·B / (N·H)
    (Dally & Towles, Principles and Practices of Interconnection Networks,
    ch. 3); an upper bound when the load is uneven."""
    return directed_channels * rate / (n * mean_hops)


def two_level_up(d: int, u: int, n: int) -> float:
    """Two-level folded Clos, full leaves of d nodes and u up-links, ECMP: each
    up-link carries d·(N-d)/u messages; oversubscription d/u shows as this
    exceeding the node link's N-1."""
    return d * (n - d) / u
