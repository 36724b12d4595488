"""Routes of hosts that each hang off one switch, decomposed at that switch.

When hosts do not forward and every host's links go to a single switch (its
*attachment*), the route s -> d is: one of s's uplinks, the switch route from
s's switch A to d's switch B, one of B's links down to d. The switch route is
the one GraphRouter (routing.py) takes, so a routing table per destination
*switch* replaces one per destination host, and all-to-all loads follow
without listing N(N-1) flows:

* uplinks and (ECMP) downlinks carry a count known per host in closed form;
* ECMP splits evenly whatever the destination, so the switch part of all
  n_A·n_B flows from A to B is one aggregated flow of weight n_A·n_B;
* D-mod-K keys on the destination index (key = d, divided by the number of
  equal-cost channels at every hop, s's uplinks included), so hosts on A with
  the same number of uplinks take the same switch path to d, but different
  destinations on B may not: flows are aggregated per (source switch, uplink
  count, destination host), which keeps every hop and the downlink exact.
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError
from .choices import MAX_ENUMERATED_FLOWS as MAX_GROUPS
from .routing import TABLE_CACHE_BYTES, bfs_to, check_budget, csr, depth, next_hops, walk

# Each aggregated flow is walked hop by hop: 40 million D-mod-K flows take about 10 s of one core
# (a 35,000-host leaf-spine file, docs/model.md §10), the longest the model lets one file run.
_WHY = "the model's limit on aggregated flows, about 10 s of routing"


class SwitchRouter:
    """The routes of GraphRouter, one table per attachment switch."""

    @classmethod
    def for_graph(cls, g) -> "SwitchRouter | None":
        """The decomposition of GraphRouter g, or None when some host forwards
        or has links to more than one switch (then g routes per host)."""
        N = g.N
        if g.transit[:N].any():
            return None
        out_h = g.src < N
        if (g.dst[out_h] < N).any():
            return None                                  # a host-to-host link
        att = np.full(N, -1, np.int64)
        att[g.src[out_h]] = g.dst[out_h]
        if (att < 0).any() or (att[g.src[out_h]] != g.dst[out_h]).any():
            return None                                  # a host without links, or on two switches
        return cls(g, att)

    def __init__(self, g, att: np.ndarray):
        N = g.N
        self.g, self.N, self.S = g, N, g.V - N
        self.att = att - N                               # switches numbered 0..S-1 from here on
        src, dst = g.src, g.dst
        up = np.nonzero(src < N)[0]                      # channel order = d-mod-k order
        self.up_ptr, o = csr(src[up], N)
        self.up_ch = up[o]
        down = np.nonzero(dst < N)[0]
        self.down_ptr, o = csr(dst[down], N)
        self.down_ch = down[o]
        self.c_up = np.diff(self.up_ptr)
        self.c_down = np.diff(self.down_ptr)
        self.swc = np.nonzero((src >= N) & (dst >= N))[0]     # switch-to-switch channels
        self.to = dst - N                                # where each channel leads (switch channels)
        self.into_ptr, o = csr(dst[self.swc] - N, self.S)
        self.into_src = src[self.swc][o] - N
        self.sw_ends = (src[self.swc] - N, dst[self.swc] - N, np.ones(len(self.swc), bool))
        self.expand = np.ones(self.S, bool)
        self.size = self.S + len(self.swc)               # vertices and channels a table visits
        self._tables, self._bytes = {}, 0
        self.levels = depth(self.into_ptr, self.into_src, self.expand)   # a table's search depth

    def table(self, b: int) -> tuple:
        """(dist, channels, ptr) towards switch b over switch-to-switch channels."""
        t = self._tables.get(b)
        if t is None:
            dist = bfs_to(b, self.into_ptr, self.into_src, self.expand)
            ch, ptr = next_hops(dist, *self.sw_ends)
            t = (dist, self.swc[ch], ptr)                # back to channel numbers, order kept
            size = sum(x.nbytes for x in t)
            if self._bytes + size <= TABLE_CACHE_BYTES:
                self._tables[b] = t
                self._bytes += size
        return t

    def _route(self, cols: list, owner, start, key, wt, b: int) -> tuple:
        dist, ch, ptr = self.table(b)
        bad = dist[start] < 0
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            raise UsageError(f"no route from switch {self.g.name(int(start[i]) + self.N)} to switch "
                             f"{self.g.name(b + self.N)}")
        return walk(cols, owner, start, key, wt, b, ch, ptr, self.to, self.g.res, self.g.routing, self.S)

    def _down(self, cols: list, owner, d, key, wt) -> None:
        c = self.c_down[d]
        if self.g.routing == "d-mod-k":
            cols.append((owner, self.g.res[self.down_ch[self.down_ptr[d] + key % c]], wt))
        else:
            rep, k = _spread(c)
            cols.append((owner[rep], self.g.res[self.down_ch[self.down_ptr[d][rep] + k]], (wt / c)[rep]))

    def paths(self, src, dst) -> list:
        """Per flow: resource columns (flow ids, resource ids, weights), as GraphRouter.paths."""
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        cols = []
        fl = np.nonzero(src != dst)[0]                   # a message to oneself crosses nothing
        s, d = src[fl], dst[fl]
        c = self.c_up[s]
        if self.g.routing == "d-mod-k":
            cols.append((fl, self.g.res[self.up_ch[self.up_ptr[s] + d % c]], 1.0))
            key = d // c
        else:
            rep, k = _spread(c)
            cols.append((fl[rep], self.g.res[self.up_ch[self.up_ptr[s][rep] + k]], (1.0 / c)[rep]))
            key = np.zeros(len(s), np.int64)
        b_of = self.att[d]
        order = np.argsort(b_of, kind="stable")
        uniq, starts = np.unique(b_of[order], return_index=True)
        check_budget(len(uniq), self.size, "one per destination switch", self.levels)
        bounds = np.append(starts, len(order))
        for i, b in enumerate(uniq.tolist()):
            f = order[bounds[i]:bounds[i + 1]]
            owner, k, wt = self._route(cols, fl[f], self.att[s[f]], key[f], np.ones(len(f)), b)
            self._down(cols, owner, dst[owner], k, wt)
        return cols

    def alltoall_loads(self, n_resources: int) -> np.ndarray:
        """Load of every resource instance under all-to-all, flows aggregated (module docstring)."""
        N, g = self.N, self.g
        loads = np.zeros(n_resources)
        add = lambda r, w: np.add(loads, np.bincount(r, weights=np.broadcast_to(w, r.shape),
                                                     minlength=n_resources), out=loads)
        # uplinks: host s sends to the N-1 others; D-mod-K takes uplink d mod c_s, ECMP splits
        s, j = _spread(self.c_up)
        c = self.c_up[s]
        if g.routing == "d-mod-k":
            add(g.res[self.up_ch], (N - j + c - 1) // c - (s % c == j))   # #{d != s : d mod c = j}
        else:
            add(g.res[self.up_ch], (N - 1) / c)
        by_b = np.argsort(self.att, kind="stable")
        b_ids, b_start = np.unique(self.att[by_b], return_index=True)
        check_budget(len(b_ids), self.size, "one per switch with nodes", self.levels)
        b_bounds = np.append(b_start, N)
        if g.routing == "ecmp":
            d, _ = _spread(self.c_down)
            add(g.res[self.down_ch], (N - 1) / self.c_down[d])
            self._ecmp(add, b_ids, np.diff(b_bounds))
        else:
            self._dmodk(add, b_ids, by_b, b_bounds)
        return loads

    def _ecmp(self, add, b_ids, n_on) -> None:
        """Switch part: one flow of weight n_A·n_B from every switch A to every other B."""
        if len(b_ids) ** 2 > MAX_GROUPS:
            raise UsageError(f"{len(b_ids):,} switches with hosts make {len(b_ids) ** 2:,} switch pairs to route, "
                             f"more than {MAX_GROUPS:,} (the model's limit on aggregated flows); "
                             "use fewer switches with hosts")
        for i, b in enumerate(b_ids.tolist()):
            others = np.nonzero(b_ids != b)[0]
            if len(others):
                cols = []
                self._route(cols, others, b_ids[others], np.zeros(len(others), np.int64),
                            (n_on[others] * n_on[i]).astype(float), b)
                for _, r, w in cols:
                    add(r, w)

    def _dmodk(self, add, b_ids, by_b, b_bounds, chunk: int = 1 << 20) -> None:
        """Switch part and downlinks: one flow per (source switch, uplink count, destination)."""
        N = self.N
        width = int(self.c_up.max()) + 1
        ck, inv, size = np.unique(self.att * width + self.c_up, return_inverse=True, return_counts=True)
        k_att, k_c = ck // width, ck % width
        if len(ck) * N > MAX_GROUPS:
            raise UsageError(f"D-mod-K routes each group of hosts (one switch, one uplink count) to every "
                             f"destination apart: {len(ck):,} groups × {N:,} destinations make {len(ck) * N:,} "
                             f"flows, more than {MAX_GROUPS:,} ({_WHY}); use fewer hosts or leaf switches, or the "
                             "built-in folded-clos family")
        for i, b in enumerate(b_ids.tolist()):
            dests = by_b[b_bounds[i]:b_bounds[i + 1]]
            step = max(1, chunk // len(ck))
            for a in range(0, len(dests), step):
                dd = dests[a:a + step]
                kk = np.repeat(np.arange(len(ck)), len(dd))
                d = np.tile(dd, len(ck))
                w = size[kk] - (inv[d] == kk)          # a destination does not send to itself
                keep = w > 0
                kk, d, w = kk[keep], d[keep], w[keep].astype(float)
                cols = []
                owner, key, wt = self._route(cols, np.arange(len(d), dtype=np.int64), k_att[kk],
                                             d // k_c[kk], w, b)
                self._down(cols, owner, d[owner], key, wt)
                for _, r, ww in cols:
                    add(r, ww)


def _spread(counts: np.ndarray) -> tuple:
    """For row i with counts[i] entries: (row of each entry, its index within the row)."""
    rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    return rows, np.arange(len(rows), dtype=np.int64) - np.repeat(firsts, counts)
