"""Rings and r-ary f-cube tori with SCI-style adapters, dimension-order routing."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ...errors import UsageError
from .base import NodeModel, Paths, ResourceClass, Topology, check_int, expand


class Torus(Topology):
    """An r1 × r2 × ... torus of nodes; every dimension is a ring ("ringlet").

    Two-dimensional example, r = 3, unidirectional SCI ringlets::

        0 ──► 1 ──► 2 ──► (back to 0)        inside every node (SCI adapter):
        │     │     │                         LC-x ═══ B-Link ═══ LC-y
        ▼     ▼     ▼                                    ║
        3 ──► 4 ──► 5 ──► (back to 3)                 PCI bus
        │     │     │
        ▼     ▼     ▼
        6 ──► 7 ──► 8 ──► (back to 6)
        (and each column wraps back to the top row)

    Routing is dimension order: first along dimension 1 (x), then 2 (y), ...
    A packet crosses its source's adapter bus when injected, its destination's
    when delivered, and the adapter bus of every node where it changes ringlet;
    packets that stay on the same ringlet bypass the adapter bus (seed 001
    §3.1, Figure 1). With ``bidirectional`` each ringlet has links in both
    directions (a Cray T3D style torus) and packets take the shorter way,
    the + direction on a tie.
    """

    family = "torus"

    def __init__(self, dims: Sequence[int], bidirectional: bool = False,
                 node_model: NodeModel = NodeModel()):
        dims = tuple(check_int("torus dimension size", r, 2, 1_000_000) for r in dims)
        if not dims:
            raise UsageError("a torus needs at least one dimension")
        n = int(np.prod(dims, dtype=np.int64))
        if n > 10_000_000:
            raise UsageError(f"a torus of {n} nodes is larger than the 10,000,000 supported")
        self.dims = dims
        self.bidirectional = bool(bidirectional)
        self.node_model = node_model
        self.n_nodes = n
        self.strides = np.cumprod((1,) + dims[:-1]).astype(np.int64)
        self.classes = []
        for i, r in enumerate(dims):
            self.classes.append(ResourceClass(f"link.d{i}+", f"dimension {i + 1}, + direction",
                                              "link", "link", n))
            if self.bidirectional:
                self.classes.append(ResourceClass(f"link.d{i}-", f"dimension {i + 1}, - direction",
                                                  "link", "link", n))
        self.classes += node_model.classes(n)
        self._finish()

    @classmethod
    def regular(cls, n: int, f: int, **kw) -> Optional["Torus"]:
        """The r-ary f-cube with r^f == n, or None when n is not an f-th power."""
        f = check_int("torus dimensions", f, 1, 64)
        r = int(round(n ** (1.0 / f)))
        for cand in (r - 1, r, r + 1):
            if cand >= 2 and cand ** f == n:
                return cls((cand,) * f, **kw)
        return None

    def describe(self) -> str:
        shape = "×".join(str(r) for r in self.dims)
        kind = "bidirectional" if self.bidirectional else "unidirectional"
        if len(self.dims) == 1:
            return f"{kind} ring of {self.n_nodes} nodes"
        return f"{shape} torus ({kind} ringlets), {self.n_nodes} nodes"

    def _hops(self, delta: np.ndarray, r: int) -> tuple:
        if not self.bidirectional:
            return delta, np.ones_like(delta)
        plus = delta <= r // 2
        return np.where(plus, delta, r - delta), np.where(plus, 1, -1)

    def paths(self, src: np.ndarray, dst: np.ndarray) -> Paths:
        src = np.asarray(src, np.int64)
        dst = np.asarray(dst, np.int64)
        f = len(src)
        flow = np.arange(f, dtype=np.int64)
        cols = self.node_columns(flow, src, dst)
        pos = src.copy()
        hops_all, turn_pos = [], []
        for i, r in enumerate(self.dims):
            st = int(self.strides[i])
            cs = (src // st) % r
            cd = (dst // st) % r
            hops, sign = self._hops((cd - cs) % r, r)
            owner, k = expand(hops)
            coord = (cs[owner] + sign[owner] * k) % r
            node = pos[owner] + (coord - cs[owner]) * st
            key_plus = f"link.d{i}+"
            res = self.base(key_plus) + node
            if self.bidirectional:
                res = np.where(sign[owner] > 0, res, self.base(f"link.d{i}-") + node)
            cols.append((owner, res, 1.0))
            pos = pos + (cd - cs) * st
            hops_all.append(hops)
            turn_pos.append(pos.copy())
        if self.node_model.adapter_bus and len(self.dims) > 1:
            hops_all = np.array(hops_all)
            later = np.zeros(f, bool)
            b = self.base("adapter_bus")
            for i in range(len(self.dims) - 1, -1, -1):
                turn = (hops_all[i] > 0) & later
                cols.append((flow[turn], b + turn_pos[i][turn], 1.0))
                later |= hops_all[i] > 0
        return Paths.from_columns(cols, f)

    # --- a flow's route along one dimension is an interval of its ringlet: loads by
    # difference arrays and crossings by prefix sums, O(flows + nodes) a dimension, so
    # a 100,000-node ring's long routes are never listed link by link

    def _legs(self, src: np.ndarray, dst: np.ndarray):
        """For each dimension: (its index, ringlet row of each flow's leg, first link's
        coordinate, hops, sign, node where the leg ends)."""
        pos = np.asarray(src, np.int64).copy()
        dst = np.asarray(dst, np.int64)
        for i, r in enumerate(self.dims):
            st = int(self.strides[i])
            cs, cd = (pos // st) % r, (dst // st) % r
            hops, sign = self._hops((cd - cs) % r, r)
            first = np.where(sign > 0, cs, (cs - hops + 1) % r)    # a - leg uses the links cs-h+1 .. cs
            base = pos - cs * st
            row = base % st + base // (st * r) * st
            pos = pos + (cd - cs) * st
            yield i, row, first, hops, sign, pos

    def _ringlets(self, i: int, v: np.ndarray) -> np.ndarray:
        """A per-node array of dimension i's links as (ringlet, coordinate)."""
        r, st = self.dims[i], int(self.strides[i])
        return v.reshape(-1, r, st).transpose(0, 2, 1).reshape(-1, r)

    def _link_key(self, i: int, sign: int) -> str:
        return f"link.d{i}{'+' if sign > 0 else '-'}"

    def route_lengths(self, src, dst) -> np.ndarray:
        n = np.zeros(len(src), np.int64)
        for _, _, _, hops, _, _ in self._legs(src, dst):
            n += hops
        return n + 2 + 4 * len(self.dims)    # node resources and adapter turns, at most

    def loads(self, src, dst, weights=None) -> np.ndarray:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        w = np.ones(len(src)) if weights is None else np.asarray(weights, float)
        out = np.zeros(self.n_resources)
        for i, row, first, hops, sign, _ in self._legs(src, dst):
            r = self.dims[i]
            for sg in ((1, -1) if self.bidirectional else (1,)):
                sel = (sign == sg) & (hops > 0)
                end, ws, at = first[sel] + hops[sel], w[sel], row[sel] * (r + 1)
                wrap = end > r        # past the ringlet's last link: on from coordinate 0
                diff = np.bincount(np.concatenate((at + first[sel], at + np.minimum(end, r), at[wrap],
                                                   at[wrap] + end[wrap] - r)),
                                   np.concatenate((ws, -ws, ws[wrap], -ws[wrap])), self.n_nodes // r * (r + 1))
                b = self.base(self._link_key(i, sg))
                out[b:b + self.n_nodes] = self._nodes(i, np.cumsum(diff.reshape(-1, r + 1), axis=1)[:, :r])
        for flow, res in self._node_crossings(src, dst):
            out += np.bincount(res, w[flow], len(out))
        return out

    def _nodes(self, i: int, a: np.ndarray) -> np.ndarray:
        """The inverse of _ringlets: (ringlet, coordinate) back to node order."""
        r, st = self.dims[i], int(self.strides[i])
        return a.reshape(-1, st, r).transpose(0, 2, 1).reshape(-1)

    def _node_crossings(self, src, dst) -> list:
        """(flows, resource ids) of the node resources on the routes: the buses at both
        ends, and the adapter where a route changes ringlet (as paths() lists them)."""
        cols = [(f, r) for f, r, _ in self.node_columns(np.arange(len(src)), src, dst)]
        if self.node_model.adapter_bus and len(self.dims) > 1:
            cols += [(np.nonzero(t)[0], self.base("adapter_bus") + p[t]) for t, p in self._turns(src, dst)]
        return cols

    def _turns(self, src, dst):
        """(flows turning, their node) after each dimension's leg that a later leg follows."""
        legs = [(hops > 0, pos) for _, _, _, hops, _, pos in self._legs(src, dst)]
        later = np.zeros(len(src), bool)
        for used, pos in reversed(legs):
            yield used & later, pos
            later = later | used

    def top_marked_class(self, src, dst, marked) -> np.ndarray:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        top = np.full(len(src), -1, np.int64)
        for i, row, first, hops, sign, _ in self._legs(src, dst):     # link classes in id order
            r = self.dims[i]
            for sg in ((1, -1) if self.bidirectional else (1,)):
                b = self.base(self._link_key(i, sg))
                m = self._ringlets(i, marked[b:b + self.n_nodes].astype(np.int64))
                pre = np.concatenate((np.zeros((len(m), 1), np.int64), np.cumsum(m, axis=1)), axis=1)
                end = first + hops
                on = pre[row, np.minimum(end, r)] - pre[row, first] + np.where(end > r, pre[row, end % r], 0)
                top[(sign == sg) & (hops > 0) & (on > 0)] = self._class_index[self._link_key(i, sg)]
        for flow, res in self._node_crossings(src, dst):    # node classes come after the links
            hit = marked[res]
            np.maximum.at(top, flow[hit], self.class_of(res[hit]))
        return top

    def alltoall_class_loads(self) -> dict:
        """Exact loads by translation symmetry: routing depends only on d - s,
        so every instance of a class carries the same load, equal to the number
        of times the routes from node 0 to all others use that class. The
        routes are walked as hop counts per dimension, O(N·f), not link by link."""
        n = self.n_nodes
        dst = np.arange(1, n, dtype=np.int64)
        out = {}
        nonzero = np.zeros(n - 1, np.int64)
        for i, r in enumerate(self.dims):
            c = (dst // int(self.strides[i])) % r
            hops, sign = self._hops(c, r)
            out[f"link.d{i}+"] = float(hops[sign > 0].sum())
            if self.bidirectional:
                out[f"link.d{i}-"] = float(hops[sign < 0].sum())
            nonzero += hops > 0
        out.update(self.node_loads_alltoall(n))
        if self.node_model.adapter_bus:
            # one adapter crossing per change of ringlet: (dimensions used - 1)
            out["adapter_bus"] += float(np.maximum(nonzero - 1, 0).sum())
        return out

    def inventory(self) -> dict:
        # one cable per link of a ringlet; a bidirectional cable carries both directions
        return {"adapters": self.n_nodes, "switches": 0, "enclosures": 0,
                "cables": self.n_nodes * len(self.dims), "dims": len(self.dims)}


def ring(n: int, bidirectional: bool = False, node_model: NodeModel = NodeModel()) -> Torus:
    """A ring of n nodes: a one-dimensional torus (seed 001 treats it so, Eq. 1-2 with f = 1)."""
    return Torus((check_int("ring size", n, 2),), bidirectional, node_model)
