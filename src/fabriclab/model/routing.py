"""Shortest-path routing on an arbitrary graph of nodes and switches.

Used for networks read from a file. For every destination, distances come
from a breadth-first search backwards from it; a packet at vertex u may move
along any channel u -> x with dist(x) = dist(u) - 1. Among those equal-cost
channels (ordered by channel number) it takes index key mod count and
continues with key // count, starting from key = d (deterministic,
destination-based "D-mod-K": on a fat tree this is Zahavi's port
floor(d / W_i) mod w_(i+1) at level i), or splits evenly (ECMP).
Hosts do not forward packets unless the network says so (``transit_nodes``).

This router works per destination vertex on any graph; switchroutes.py gives
the same routes per destination switch when every host hangs off one switch.
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError

TABLE_CACHE_BYTES = 64 << 20     # routing tables kept between calls (one per destination)
# Building a routing table visits every vertex and channel once; one evaluation may build
# tables for at most this many visits in all (about a minute on a 2-core machine).
ROUTE_BUDGET = 300_000_000
# A table's search and its walks pay numpy's per-call cost once per level: on a line or a ring
# of a thousand switches that, not the visits, is the time (a line of 500 switches took 15 s,
# 2,000 more than minutes). A level counts as LEVEL_VISITS visits (some 60 us against 0.2 us).
LEVEL_VISITS = 300


def check_budget(tables: int, size: int, what: str, levels: int = 0) -> None:
    """Refuse work beyond ROUTE_BUDGET in one line, before doing any of it; `levels`: the depth
    of a table's search (routing.depth)."""
    if tables * (size + LEVEL_VISITS * levels) > ROUTE_BUDGET:
        deep = f", {levels:,} hops deep" if LEVEL_VISITS * levels > size else ""
        raise UsageError(f"{tables:,} routing tables of {size:,} vertices and channels{deep} ({what}) exceed the "
                         f"model's budget of {ROUTE_BUDGET:,} visits; use fewer nodes"
                         + ("" if "switch" in what else ", or attach each node to one switch"))


def depth(into_ptr: np.ndarray, into_src: np.ndarray, expand: np.ndarray) -> int:
    """The levels of a search towards vertex 0 (its eccentricity: at least half the diameter,
    what the other tables' searches take about), counted by one search."""
    d = bfs_to(0, into_ptr, into_src, expand) if len(into_ptr) > 1 else np.zeros(0, np.int64)
    return int(d.max()) if len(d) else 0


def csr(keys: np.ndarray, n: int) -> tuple:
    """(ptr, order): the positions of `keys` grouped by key value 0..n-1, stable."""
    order = np.argsort(keys, kind="stable")
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr, order


def gather(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ptr[r]..ptr[r+1]-1 of every row r, concatenated."""
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return np.arange(total, dtype=np.int64) + offs


def bfs_to(target: int, into_ptr: np.ndarray, into_src: np.ndarray, expand: np.ndarray) -> np.ndarray:
    """Hops from every vertex to `target` (-1: unreachable), one frontier at a time;
    only vertices with expand[v] (and the target) pass packets on."""
    dist = np.full(len(into_ptr) - 1, -1, np.int64)
    dist[target] = 0
    frontier, level = np.array([target], np.int64), 0
    while len(frontier):
        if level:
            frontier = frontier[expand[frontier]]
        u = into_src[gather(into_ptr, frontier)]
        u = np.unique(u[dist[u] < 0])
        level += 1
        dist[u] = level
        frontier = u
    return dist


def next_hops(dist: np.ndarray, src: np.ndarray, dst: np.ndarray, usable: np.ndarray) -> tuple:
    """(channels, ptr): per vertex, its channels one hop closer, in channel order (CSR)."""
    ok = (dist[src] >= 1) & (dist[dst] == dist[src] - 1) & usable
    ch = np.nonzero(ok)[0]
    ch = ch[np.argsort(src[ch], kind="stable")]       # channel order within each vertex
    ptr = np.zeros(len(dist) + 1, np.int64)
    np.cumsum(np.bincount(src[ch], minlength=len(dist)), out=ptr[1:])
    return ch, ptr


def walk(cols: list, owner, pos, key, wt, target: int, ch, ptr, to, res, routing: str, V: int) -> tuple:
    """Move flows from `pos` to `target` along next-hop tables (ch, ptr); append the
    (owner, resource, weight) of every hop to `cols`. Returns the flows at the
    target as (owner, key, weight), ECMP parts that meet again merged."""
    done = ([], [], [])
    while len(pos):
        at = pos == target
        if at.any():
            for lst, arr in zip(done, (owner[at], key[at], wt[at])):
                lst.append(arr)
            live = ~at
            owner, pos, key, wt = owner[live], pos[live], key[live], wt[live]
            if not len(pos):
                break
        cnt = ptr[pos + 1] - ptr[pos]
        if routing == "d-mod-k":
            c = ch[ptr[pos] + key % cnt]
            key = key // cnt
        else:
            rep = np.repeat(np.arange(len(pos)), cnt)
            first = np.repeat(ptr[pos], cnt)
            k = np.arange(len(rep)) - np.repeat(np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
            c = ch[first + k]
            owner, wt, key = owner[rep], wt[rep] / cnt[rep], key[rep]
        cols.append((owner, res[c], wt))
        pos = to[c]
        if routing == "ecmp" and len(pos):
            # merge split parts of one flow that meet again at the same vertex
            uk, inv = np.unique(owner * V + pos, return_inverse=True)
            wt = np.bincount(inv, weights=wt)
            owner, pos = uk // V, uk % V
            key = np.zeros(len(pos), np.int64)
    cat = lambda lst: np.concatenate(lst) if lst else np.zeros(0, np.int64)
    return cat(done[0]), cat(done[1]), cat(done[2]).astype(float)


class GraphRouter:
    """Routes on any graph, one table per destination vertex."""

    def __init__(self, n_vertices: int, n_nodes: int, ch_from, ch_to, ch_res,
                 routing: str = "d-mod-k", transit_nodes: bool = False, names=None):
        if routing not in ("d-mod-k", "ecmp"):
            raise UsageError(f"unknown routing {routing!r}: choose d-mod-k or ecmp")
        self.V, self.N = n_vertices, n_nodes
        self.src = np.asarray(ch_from, np.int64)
        self.dst = np.asarray(ch_to, np.int64)
        self.res = np.asarray(ch_res, np.int64)
        self.routing = routing
        self.names = names
        self.transit = np.ones(n_vertices, bool)
        if not transit_nodes:
            self.transit[:n_nodes] = False
        self.into_ptr, order = csr(self.dst, n_vertices)
        self.into_src = self.src[order]
        self._tables = {}
        self._table_bytes = 0
        self._levels = None

    @property
    def levels(self) -> int:
        """A table's search depth (routing.depth), counted once."""
        if self._levels is None:
            self._levels = depth(self.into_ptr, self.into_src, self.transit)
        return self._levels

    def name(self, v: int) -> str:
        return repr(self.names[v]) if self.names is not None else str(v)

    def table(self, d: int) -> tuple:
        """(dist, next-hop channels of every vertex as CSR) towards destination d."""
        t = self._tables.get(d)
        if t is not None:
            return t
        dist = bfs_to(d, self.into_ptr, self.into_src, self.transit)
        # a non-transit node may only be a source: no channel enters it unless it is d
        ch, ptr = next_hops(dist, self.src, self.dst, (self.dst == d) | self.transit[self.dst])
        t = (dist, ch, ptr)
        size = dist.nbytes + ch.nbytes + ptr.nbytes
        if self._table_bytes + size <= TABLE_CACHE_BYTES:
            self._tables[d] = t
            self._table_bytes += size
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
        order = np.argsort(dst, kind="stable")
        uniq, starts = np.unique(dst[order], return_index=True)
        check_budget(len(uniq), self.V + len(self.src), "one per destination node", self.levels)
        bounds = np.append(starts, len(order))
        for i, d in enumerate(uniq.tolist()):
            fl = order[bounds[i]:bounds[i + 1]]
            dist, ch, ptr = self.table(d)
            pos = src[fl]
            bad = dist[pos] < 0
            if bad.any():
                raise UsageError(f"no route from node {self.name(int(pos[bad][0]))} to node {self.name(d)}")
            walk(cols, fl, pos, np.full(len(fl), d, np.int64), np.ones(len(fl)), d, ch, ptr,
                 self.dst, self.res, self.routing, self.V)
        return cols


def alltoall_by_destination(g: GraphRouter, n_resources: int) -> np.ndarray:
    """All-to-all loads on any graph, one routing table per destination d. Sources
    whose channels lead to the same vertices, in the same order, share every hop
    after the first for both routings (the D-mod-K key is d divided by the same
    counts), so each such group is one flow of weight |group| (less d itself)
    beyond its first hop; the first hops are counted per source."""
    N, R = g.N, n_resources
    check_budget(N, g.V + len(g.src), "one per destination node", g.levels)
    loads = np.zeros(R)
    add = lambda r, w: np.add(loads, np.bincount(r, weights=np.broadcast_to(w, r.shape), minlength=R), out=loads)
    hosts_ch = np.nonzero(g.src < N)[0]
    out_ptr, o = csr(g.src[hosts_ch], N)
    out_ch = hosts_ch[o]                                   # each node's channels, in channel order
    rank = np.zeros(len(g.src), np.int64)                  # position of a channel in its node's list
    rank[out_ch] = np.arange(len(out_ch)) - np.repeat(out_ptr[:-1], np.diff(out_ptr))
    sig = {}
    group = np.array([sig.setdefault(tuple(g.dst[out_ch[out_ptr[h]:out_ptr[h + 1]]].tolist()), len(sig))
                      for h in range(N)], np.int64)
    K = len(sig)
    size = np.bincount(group, minlength=K)
    by = np.argsort(group, kind="stable")
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    lead, second = by[start], np.where(size > 1, by[np.minimum(start + 1, N - 1)], -1)
    everyone = np.arange(N, dtype=np.int64)
    for d in range(N):
        dist, ch, ptr = g.table(d)
        gd = group[d]
        ld = lead.copy()
        ld[gd] = second[gd] if lead[gd] == d else lead[gd]    # d sends nothing: another member leads
        live = np.nonzero(size - (np.arange(K) == gd) > 0)[0]
        ld = ld[live]
        if (dist[ld] < 0).any():
            h = int(ld[np.nonzero(dist[ld] < 0)[0][0]])
            raise UsageError(f"no route from node {g.name(h)} to node {g.name(d)}")
        slot = np.full(K, -1, np.int64)
        slot[live] = np.arange(len(live))
        w = (size[live] - (live == gd)).astype(float)
        cnt = ptr[ld + 1] - ptr[ld]
        member = np.delete(everyone, d)
        mg = slot[group[member]]                           # each member's row in `live`
        if g.routing == "d-mod-k":
            first = ch[ptr[ld] + d % cnt]                  # the lead's channel; members take theirs
            add(g.res[out_ch[out_ptr[member] + rank[first][mg]]], 1.0)
            owner, pos, key, wt = np.arange(len(live)), g.dst[first], d // cnt, w
        else:
            rows = np.repeat(np.arange(len(live)), cnt)
            base = np.concatenate(([0], np.cumsum(cnt)[:-1]))
            cand = ch[np.repeat(ptr[ld], cnt) + np.arange(len(rows)) - np.repeat(base, cnt)]
            per = np.repeat(member, cnt[mg])               # every member, once per equal-cost first hop
            pm = np.repeat(mg, cnt[mg])
            j = np.arange(len(per)) - np.repeat(np.concatenate(([0], np.cumsum(cnt[mg])[:-1])), cnt[mg])
            add(g.res[out_ch[out_ptr[per] + rank[cand[base[pm] + j]]]], 1.0 / cnt[pm])
            uk, inv = np.unique(rows * g.V + g.dst[cand], return_inverse=True)
            owner, pos = uk // g.V, uk % g.V               # parts of a group that reach one vertex, merged
            wt = np.bincount(inv, weights=(w / cnt)[rows])
            key = np.zeros(len(pos), np.int64)
        cols = []
        walk(cols, owner, pos, key, wt, d, ch, ptr, g.dst, g.res, g.routing, g.V)
        for _, r, ww in cols:
            add(r, ww)
    return loads


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component label (its smallest vertex) of every vertex of an
    undirected graph with edges a-b: minimum-label hooking and pointer jumping
    (Shiloach & Vishkin 1982), a few numpy passes instead of one per vertex."""
    lab = np.arange(n, dtype=np.int64)
    while True:
        la, lb = lab[a], lab[b]
        m = np.minimum(la, lb)
        before = lab.copy()
        np.minimum.at(lab, la, m)
        np.minimum.at(lab, lb, m)
        while True:
            nxt = lab[lab]
            if np.array_equal(nxt, lab):
                break
            lab = nxt
        if np.array_equal(lab, before):
            return lab


def unreachable_pair(n_vertices: int, n_nodes: int, a, b, transit_nodes: bool):
    """Two nodes that cannot reach each other over links a-b, or None (all pairs checked).

    With forwarding nodes, every node must lie in one component. Without, a
    node reaches another through a switch component both touch, or a direct
    link: nodes are grouped by the set of switch components they touch and
    every pair of disjoint groups must be joined by direct links."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    N = n_nodes
    if transit_nodes:
        lab = components(n_vertices, a, b)[:N]
        bad = np.nonzero(lab != lab[0])[0]
        return None if not len(bad) else (0, int(bad[0]))
    sw = (a >= N) & (b >= N)
    lab = components(n_vertices, a[sw], b[sw])
    # (node, component) for every node-switch link, both orientations
    hs = np.concatenate([np.stack((a, lab[b]), 1)[(a < N) & (b >= N)],
                         np.stack((b, lab[a]), 1)[(b < N) & (a >= N)]])
    hs = np.unique(hs, axis=0) if len(hs) else np.zeros((0, 2), np.int64)
    if len(hs):
        per_label = np.bincount(hs[:, 1], minlength=n_vertices)
        if per_label.max() == N:
            return None                        # one switch component reaches every node
    direct = {(min(x, y), max(x, y)) for x, y in zip(a[(a < N) & (b < N)].tolist(), b[(a < N) & (b < N)].tolist())}
    sets = [[] for _ in range(N)]
    for h, c in hs.tolist():
        sets[h].append(c)
    groups = {}
    for h in range(N):
        groups.setdefault(tuple(sets[h]), []).append(h)
    keys = list(groups)
    for i, gi in enumerate(keys):
        for gj in keys[i:]:
            if set(gi) & set(gj):
                continue
            for x in groups[gi]:
                for y in groups[gj]:
                    if x != y and (min(x, y), max(x, y)) not in direct:
                        return (x, y)
    return None
