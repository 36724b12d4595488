"""Shortest-path routing on an arbitrary graph of nodes and switches.

Used for networks read from a file. For every destination, distances come
from a breadth-first search backwards from it; a packet at vertex u may move
along any channel u -> x with dist(x) = dist(u) - 1. Among those equal-cost
channels (ordered by channel number) it takes index key mod count and
continues with key // count, starting from key = d (deterministic,
destination-based "D-mod-K": on a fat tree this is Zahavi's port
floor(d / W_i) mod w_(i+1) at level i), or splits evenly (ECMP).
Hosts do not forward packets unless the network says so (``transit_nodes``).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import UsageError


class GraphRouter:
    def __init__(self, n_vertices: int, n_nodes: int, ch_from, ch_to, ch_res,
                 routing: str = "d-mod-k", transit_nodes: bool = False):
        if routing not in ("d-mod-k", "ecmp"):
            raise UsageError(f"unknown routing {routing!r}: choose d-mod-k or ecmp")
        self.V, self.N = n_vertices, n_nodes
        self.src = np.asarray(ch_from, np.int64)
        self.dst = np.asarray(ch_to, np.int64)
        self.res = np.asarray(ch_res, np.int64)
        self.routing = routing
        self.transit = np.ones(n_vertices, bool)
        if not transit_nodes:
            self.transit[:n_nodes] = False
        self.into = [[] for _ in range(n_vertices)]
        for c, x in enumerate(self.dst.tolist()):
            self.into[x].append(c)
        self._tables = {}

    def _dist(self, d: int) -> np.ndarray:
        dist = np.full(self.V, -1, np.int64)
        dist[d] = 0
        q = deque([d])
        while q:
            x = q.popleft()
            if x != d and not self.transit[x]:
                continue
            for c in self.into[x]:
                u = int(self.src[c])
                if dist[u] < 0:
                    dist[u] = dist[x] + 1
                    q.append(u)
        return dist

    def table(self, d: int) -> tuple:
        """(dist, next-hop channels of every vertex as CSR) towards destination d."""
        t = self._tables.get(d)
        if t is not None:
            return t
        dist = self._dist(d)
        ok = (dist[self.src] >= 1) & (dist[self.dst] == dist[self.src] - 1) & \
             ((self.dst == d) | self.transit[self.dst])
        # a non-transit node may only be a source: drop channels leaving it unless it starts the path
        ch = np.nonzero(ok)[0]
        order = np.lexsort((ch, self.src[ch]))
        ch = ch[order]
        counts = np.bincount(self.src[ch], minlength=self.V)
        ptr = np.zeros(self.V + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        t = (dist, ch, ptr)
        if len(self._tables) < 4096:
            self._tables[d] = t
        return t

    def choices(self, d: int, v: int) -> list[int]:
        """The equal-cost channels from vertex v towards destination d, in the
        order the D-mod-K rule indexes them."""
        _, ch, ptr = self.table(d)
        return ch[ptr[v]:ptr[v + 1]].tolist()

    def route(self, s: int, d: int) -> list[int]:
        """The channels one packet from s to d takes under D-mod-K (paths()'s
        rule for one flow): what an emulated network installs as routes."""
        dist = self.table(d)[0]
        if dist[s] < 0:
            raise UsageError(f"no route from vertex {s} to vertex {d}")
        out, v, key = [], s, d
        while v != d:
            opts = self.choices(d, v)
            c = opts[key % len(opts)]
            key //= len(opts)
            out.append(c)
            v = int(self.dst[c])
        return out

    def paths(self, src, dst) -> list:
        """Per flow: resource columns (flow ids, resource ids, weights)."""
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        cols = []
        for d in np.unique(dst).tolist():
            fl = np.nonzero(dst == d)[0]
            dist, ch, ptr = self.table(d)
            pos = src[fl]
            bad = dist[pos] < 0
            if bad.any():
                raise UsageError(f"no route from node {int(pos[bad][0])} to node {d}")
            wt = np.ones(len(fl))
            owner = fl.copy()
            key = np.full(len(fl), d, np.int64)
            while len(pos):
                live = pos != d
                owner, pos, wt, key = owner[live], pos[live], wt[live], key[live]
                if not len(pos):
                    break
                cnt = ptr[pos + 1] - ptr[pos]
                if self.routing == "d-mod-k":
                    c = ch[ptr[pos] + key % cnt]
                    key = key // cnt
                else:
                    rep = np.repeat(np.arange(len(pos)), cnt)
                    first = np.repeat(ptr[pos], cnt)
                    k = np.arange(len(rep)) - np.repeat(np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
                    c = ch[first + k]
                    owner, wt = owner[rep], wt[rep] / cnt[rep]
                cols.append((owner, self.res[c], wt))
                pos = self.dst[c]
                if self.routing == "ecmp" and len(pos):
                    # merge split parts that meet again at the same vertex
                    key = owner * self.V + pos
                    uk, inv = np.unique(key, return_inverse=True)
                    wt = np.bincount(inv, weights=wt)
                    owner, pos = uk // self.V, uk % self.V
                    key = np.zeros(len(pos), np.int64)
        return cols
