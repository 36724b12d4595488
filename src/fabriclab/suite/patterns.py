"""Rank layouts of the traffic patterns: who sends, receives or serves, and to whom.

Python decides the placement and the core only follows it: for every point of
a pattern the core receives one layout, a role and a peer per rank
(docs/core-protocol.md, `--layouts`). Roles: `s` sender, `r` receiver, `t`
target (the hotspot rank every sender addresses), `b` both (sends and
receives at once), `i` idle.

- `pairs` (message.saturation): pair k is (k, k + N/2); the first `active`
  pairs stream from the lower half to the upper half. On several hosts with
  the ranks filled in host order, the senders sit on one side and the
  receivers on the other, so all traffic crosses the link between them
  (seed 001, Fig. 11).
- `bipairs` (message.bibw, deposit.put_bibw): the same pairs, both ways.
- `hotspot` (message.hotspot, deposit.hotspot_*): rank 0 is the target,
  ranks 1..active address it (seed 004, Fig. 8).
- `all` (message.alltoall): every rank exchanges with every other.
- `shift` (message.shift): mpiGraph's step k, the active count: rank r
  streams to r + k and receives from r - k (mod N), every rank at once; k =
  1 .. N-1 together give every ordered pair (analysis/pairs.py).
- `bisection` (message.bisection): a random perfect matching drawn from a
  seed, both ways; the same matching as the model's bisection traffic
  (model/traffic.py) with the same seed and node count.
- `cross` (message.cross_pingpong): HPCC's ping-pong pairs one at a time,
  active k the k-th ordered pair (client 's', server 'r'), clients in rank
  order and each client's servers in rank order, as cross_ping_pong_set.
- `ring` (message.ring): every rank 'b', its peer its right neighbour on
  the natural ring (r + 1 mod N) or on a seeded random one (`ring`, which
  GPCNeT's victims run on too, suite/congestion.py)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class Layout:
    active: int          # participants it stands for: senders, pairs or ranks
    roles: str           # one role letter per rank
    peers: tuple         # one peer per rank, -1 for none

    def core_text(self) -> str:
        """The core's form, e.g. "2:t,s0,s0,i"."""
        return f"{self.active}:" + ",".join(r + (str(p) if p >= 0 else "") for r, p in zip(self.roles, self.peers))


def max_active(pattern: str, nranks: int) -> int:
    """The largest active count: senders for hotspot, pairs for the pair patterns."""
    return {"hotspot": nranks - 1, "pairs": nranks // 2, "bipairs": nranks // 2,
            "all": nranks, "bisection": nranks // 2, "app": nranks, "group": nranks,
            "shift": nranks - 1, "congestion": nranks - 2, "cross": nranks * (nranks - 1),
            "ring": nranks}[pattern]


def default_actives(pattern: str, nranks: int) -> list[int]:
    """Hotspot and saturation sweep every count (the curve is the point); an
    app doubles the count from 1 to every rank (its speedup curve); the
    other patterns run with everyone taking part."""
    top = max_active(pattern, nranks)
    if pattern == "app":
        return sorted({1 << k for k in range(top.bit_length()) if 1 << k <= top} | {top})
    if pattern == "group":   # a collective: 2, 4, 8 .. N ranks (IMB's -npmin 2), or 1 alone
        return sorted({1 << k for k in range(1, top.bit_length()) if 1 << k <= top} | {top})
    return list(range(1, top + 1)) if pattern in ("hotspot", "pairs", "shift", "cross") else [top]


def layout(pattern: str, nranks: int, active: int, seed: int = 1) -> Layout:
    top = max_active(pattern, nranks)
    if not 1 <= active <= top:
        raise UsageError(f"active count {active} is outside 1..{top} for the {pattern} pattern "
                         f"with {nranks} ranks")
    roles, peers = ["i"] * nranks, [-1] * nranks
    half = nranks // 2
    if pattern in ("pairs", "bipairs"):
        for k in range(active):
            roles[k], roles[k + half] = ("b", "b") if pattern == "bipairs" else ("s", "r")
            peers[k], peers[k + half] = k + half, k
    elif pattern == "hotspot":
        roles[0] = "t"
        for k in range(1, active + 1):
            roles[k], peers[k] = "s", 0
    elif pattern == "all":
        roles = ["b"] * nranks
    elif pattern == "shift":
        roles, peers = ["b"] * nranks, [(r + active) % nranks for r in range(nranks)]
    elif pattern in ("app", "group"):
        roles[:active] = ["b"] * active
    elif pattern == "bisection":
        for a, b in matching(nranks, seed):
            roles[a] = roles[b] = "b"
            peers[a], peers[b] = b, a
    elif pattern == "cross":
        client, server = cross_pair(nranks, active)
        roles[client], roles[server] = "s", "r"
        peers[client], peers[server] = server, client
    else:
        raise ValueError(f"unknown pattern {pattern!r}")
    return Layout(active, "".join(roles), tuple(peers))


def cross_pair(nranks: int, k: int) -> tuple[int, int]:
    """The k-th (1-based) ordered pair (client, server) of the cross pattern."""
    client, j = divmod(k - 1, nranks - 1)
    return client, j + (j >= client)


def ring(members: list[int], seed: int) -> dict:
    """{member: its successor} on a seeded random ring through every member."""
    order = list(members)
    random.Random(f"fabriclab:ring:{seed}").shuffle(order)
    return {v: order[(i + 1) % len(order)] for i, v in enumerate(order)}


def ring_layout(nranks: int, order: str, seed: int) -> Layout:
    """The ring pattern's one layout: every rank 'b', its peer its right
    neighbour on the natural ring or the random ring of `seed`."""
    if nranks < 2:
        raise UsageError(f"a ring needs at least 2 ranks; this run has {nranks}")
    succ = ring(list(range(nranks)), seed) if order == "random" else {r: (r + 1) % nranks for r in range(nranks)}
    return Layout(nranks, "b" * nranks, tuple(succ[r] for r in range(nranks)))


def matching(nranks: int, seed: int) -> list[tuple[int, int]]:
    """The model's bisection pairs: a seeded permutation, first half against second."""
    import numpy as np
    perm = np.random.default_rng(seed).permutation(nranks)
    h = nranks // 2
    return [(int(a), int(b)) for a, b in zip(perm[:h], perm[h:2 * h])]


def layouts(pattern: str, nranks: int, actives: list[int] | None, seed: int = 1) -> list[Layout]:
    return [layout(pattern, nranks, a, seed) for a in (actives or default_actives(pattern, nranks))]
