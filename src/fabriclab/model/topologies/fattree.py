"""Fat trees as extended generalized fat trees, XGFT(h; m1..mh; w1..wh).

Covers k-ary n-trees (Quadrics QsNET: 4-ary, seed 004 §2.2), single Myrinet
Clos64 boxes, and oversubscribed two- and three-level folded Clos networks.
Routing goes up to the nearest common ancestor and down again, choosing the
up-port either deterministically by destination (D-mod-K: port at level i =
floor(d / W_i) mod w_(i+1), Zahavi 2010) or by splitting evenly (ECMP).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ...errors import UsageError
from .base import NodeModel, Paths, ResourceClass, Topology, check_int, expand

ROUTINGS = ("d-mod-k", "ecmp")


class FatTree(Topology):
    """XGFT(h; m; w): m[i] children per level-(i+1) switch, w[i] parents per level-i element.

    A 4-ary 2-tree (16 nodes, 8 switches; Quadrics QM-S16, seed 004 Fig. 2b)::

            S10   S11   S12   S13         level 2: 4 down ports each
             |  ╲ ╱ |  ╲ ╱ |  ╲ ╱ |       (every level-1 switch has one
             |  ╱ ╲ |  ╱ ╲ |  ╱ ╲ |        up-link to every level-2 switch)
            S00   S01   S02   S03         level 1: 4 down, 4 up
           ││││  ││││  ││││  ││││
           0..3  4..7  8..11 12..15       nodes

    Level-i elements are numbered (t, lane): t = node // (m1·…·mi) names the
    subtree, lane in [0, w1·…·wi) names one of its parallel switches.
    Nodes 0..n-1 are populated; a partly populated tree keeps its full shape.
    """

    family = "fat-tree"

    def __init__(self, m: Sequence[int], w: Sequence[int], n_nodes: Optional[int] = None,
                 routing: str = "d-mod-k", node_model: NodeModel = NodeModel(), name: str = ""):
        m = tuple(check_int("fat-tree arity (children per switch)", x, 1) for x in m)
        w = tuple(check_int("fat-tree parents per element", x, 1) for x in w)
        if not m or len(m) != len(w):
            raise UsageError("a fat tree needs as many child counts as parent counts (m and w)")
        if w[0] != 1:
            raise UsageError("every node has one adapter link: w1 must be 1")
        if routing not in ROUTINGS:
            raise UsageError(f"unknown fat-tree routing {routing!r}: choose d-mod-k or ecmp")
        self.m, self.w, self.h = m, w, len(m)
        self.M = np.cumprod((1,) + m).astype(np.int64)       # M[i] nodes under a level-i element
        self.W = np.cumprod((1,) + w).astype(np.int64)       # W[i] lanes at level i
        cap = int(self.M[-1])
        n = cap if n_nodes is None else check_int("number of nodes", n_nodes, 2, cap)
        if cap > 50_000_000 or int(self.W[-1]) * (cap // int(self.M[-1])) > 50_000_000:
            raise UsageError("fat tree too large (more than 50,000,000 elements)")
        self.capacity, self.n_nodes, self.routing = cap, n, routing
        self.node_model = node_model
        self.name = name
        self.E = [int(self.M[-1] // self.M[i] * self.W[i]) for i in range(self.h + 1)]
        self.classes = []
        for i in range(self.h):
            cnt = self.E[i] * w[i]
            if i == 0:
                up, down = "node to switch (injection)", "switch to node (ejection)"
            else:
                up, down = f"level {i} to level {i + 1} (up)", f"level {i + 1} to level {i} (down)"
            self.classes.append(ResourceClass(f"up.{i}", up, "link", "link", cnt))
            self.classes.append(ResourceClass(f"down.{i}", down, "link", "link", cnt))
        self.classes += node_model.classes(cap)
        self._finish()

    # ---- builders ----------------------------------------------------------
    @classmethod
    def kary_ntree(cls, k: int, n: int, **kw) -> "FatTree":
        """k-ary n-tree: k^n nodes, n·k^(n-1) switches of 2k ports (seed 004 §2.2)."""
        k = check_int("fat-tree arity k", k, 2, 1024)
        n = check_int("fat-tree levels n", n, 1, 64)
        return cls((k,) * n, (1,) + (k,) * (n - 1), **kw)

    @classmethod
    def kary_for(cls, nodes: int, k: int, **kw) -> "FatTree":
        """Smallest k-ary n-tree holding `nodes` nodes, populated with the first `nodes`."""
        k = check_int("fat-tree arity k", k, 2, 1024)
        nodes = check_int("number of nodes", nodes, 2)
        n = 1
        while k ** n < nodes:
            n += 1
        return cls.kary_ntree(k, n, n_nodes=nodes, **kw)

    @classmethod
    def folded_clos(cls, nodes: int, radix: int, levels: Optional[int] = None,
                    oversubscription: float = 1.0, **kw) -> "FatTree":
        """One switch, or a two- or three-level folded Clos of `radix`-port switches.

        Leaf switches have u = floor(radix / (1 + oversubscription)) up-ports and
        d = floor(oversubscription · u) down-ports, so d/u never exceeds the ratio
        asked for (spare ports stay unused);
        upper levels are not oversubscribed. Three levels: pods of radix/2 leaves
        and u middle switches, each middle switch with radix/2 up-links, and
        spines of `radix` ports joining up to `radix` pods."""
        radix = check_int("switch radix", radix, 2)
        nodes = check_int("number of nodes", nodes, 2)
        shapes = cls.folded_shapes(radix, oversubscription)
        if levels is None:
            levels = next((lv for lv in (1, 2, 3) if math.prod(shapes[lv][0]) >= nodes), None)
            if levels is None:
                raise UsageError(f"{nodes} nodes do not fit a three-level folded Clos of {radix}-port "
                                 f"switches (at most {math.prod(shapes[3][0])})")
        if levels not in shapes:
            raise UsageError(f"a folded Clos has 1, 2 or 3 levels, got {levels}")
        m, w = shapes[levels]
        if math.prod(m) < nodes:
            raise UsageError(f"{nodes} nodes do not fit a {levels}-level folded Clos of {radix}-port "
                             f"switches (at most {math.prod(m)})")
        return cls(m, w, n_nodes=nodes, **kw)

    @staticmethod
    def folded_shapes(radix: int, oversubscription: float = 1.0) -> dict:
        """(m, w) of the one-, two- and three-level folded Clos of `radix`-port switches."""
        if not (oversubscription > 0):
            raise UsageError(f"oversubscription must be positive, got {oversubscription}")
        if not math.isfinite(oversubscription):
            raise UsageError(f"oversubscription must be finite, got {oversubscription}")
        # u up-ports and d = oversubscription·u down-ports (never more than the ratio asked for);
        # ports left over stay unused
        u = max(int(math.floor(radix / (1.0 + oversubscription) + 1e-9)), 1)
        d = min(max(int(math.floor(oversubscription * u + 1e-9)), 1), radix - u)
        half = max(radix // 2, 1)
        return {1: ((radix,), (1,)), 2: ((d, radix), (1, u)), 3: ((d, half, radix), (1, u, half))}

    def describe(self) -> str:
        if all(x == self.m[0] for x in self.m) and self.w == (1,) + (self.m[0],) * (self.h - 1):
            shape = f"{self.m[0]}-ary {self.h}-tree"
        else:
            shape = f"XGFT({self.h}; {','.join(map(str, self.m))}; {','.join(map(str, self.w))})"
        pop = "" if self.n_nodes == self.capacity else f" ({self.n_nodes} of {self.capacity} ports used)"
        return f"{self.name or shape}, {self.n_nodes} nodes{pop}, {self.routing} routing"

    def switch_ports(self) -> int:
        """Ports a switch needs: the widest level (down plus up)."""
        return max(self.m[i] + (self.w[i + 1] if i + 1 < self.h else 0) for i in range(self.h))

    def max_switches_on_route(self) -> int:
        n = self.n_nodes - 1
        top = next(L for L in range(self.h + 1) if n // int(self.M[L]) == 0)
        return 2 * top - 1

    # ---- routing -----------------------------------------------------------
    def _nca(self, src, dst):
        L = np.zeros(len(src), np.int64)
        for i in range(1, self.h + 1):
            L += (src // self.M[i - 1]) != (dst // self.M[i - 1])
        return L

    def paths(self, src: np.ndarray, dst: np.ndarray) -> Paths:
        src = np.asarray(src, np.int64)
        dst = np.asarray(dst, np.int64)
        f = len(src)
        flow = np.arange(f, dtype=np.int64)
        cols = self.node_columns(flow, src, dst)
        L = self._nca(src, dst)
        for i in range(self.h):
            sel = flow[L > i]
            if not len(sel):
                continue
            s, d = src[sel], dst[sel]
            wi, Wi, Mi = self.w[i], int(self.W[i]), int(self.M[i])
            if self.routing == "d-mod-k":
                mu = d % int(self.W[i + 1])              # lane at i + port, as one number
                up = self.base(f"up.{i}") + (s // Mi) * Wi * wi + mu
                dn = self.base(f"down.{i}") + (d // Mi) * Wi * wi + mu
                cols += [(sel, up, 1.0), (sel, dn, 1.0)]
            else:
                width = Wi * wi
                owner, mu = expand(np.full(len(sel), width))
                wt = 1.0 / width
                cols += [(sel[owner], self.base(f"up.{i}") + (s[owner] // Mi) * width + mu, wt),
                         (sel[owner], self.base(f"down.{i}") + (d[owner] // Mi) * width + mu, wt)]
        return Paths.from_columns(cols, f)

    def alltoall_class_loads(self) -> dict:
        """Exact loads by aggregation over subtrees, O(N·h).

        Up-link from subtree t at level i, lane+port mu (D-mod-K): the S_t
        sources of t send there every populated destination outside t with
        d mod W_(i+1) = mu. Down-link into t: every destination in t with that
        residue receives from the N - S_t sources outside t. ECMP spreads the
        same totals evenly over the W_(i+1) lanes."""
        n = self.n_nodes
        d = np.arange(n, dtype=np.int64)
        out = {}
        for i in range(self.h):
            Mi, W1 = int(self.M[i]), int(self.W[i + 1])
            blocks = (n + Mi - 1) // Mi
            S = np.bincount(d // Mi, minlength=blocks).astype(float)
            if self.routing == "d-mod-k":
                if blocks * W1 > 50_000_000:
                    raise UsageError("fat tree too large for the aggregated D-mod-K solver")
                Ht = np.bincount((d // Mi) * W1 + d % W1, minlength=blocks * W1).reshape(blocks, W1)
                H = Ht.sum(axis=0)
                up = S[:, None] * (H[None, :] - Ht)
                down = Ht * (n - S)[:, None]
                out[f"up.{i}"], out[f"down.{i}"] = float(up.max()), float(down.max())
            else:
                v = S * (n - S) / W1
                out[f"up.{i}"] = out[f"down.{i}"] = float(v.max())
        out.update(self.node_loads_alltoall(n))
        return out

    def inventory(self) -> dict:
        n = self.n_nodes
        switches, cables = 0, n
        for i in range(1, self.h + 1):
            used = -(-n // int(self.M[i])) * int(self.W[i])
            switches += used
            if i < self.h:
                cables += used * self.w[i]
        return {"adapters": n, "switches": switches, "switch_ports": self.switch_ports(),
                "enclosures": 0, "cables": cables}
