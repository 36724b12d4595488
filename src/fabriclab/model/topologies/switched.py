"""Switched networks of crossbar switches: one switch, a linear array of
switches, a ring of switches with l parallel cables, and Myrinet Clos64 boxes.

Crossbars are non-blocking (seed 001 §2.3), so the resources are the links in
each direction; a switch port is the end of its link. Nodes fill the switches
in order (the last switch may have free ports), as in seed 001 Figure 9.
"""

from __future__ import annotations

import numpy as np

from ...errors import UsageError
from .base import NodeModel, Paths, ResourceClass, Topology, check_int, expand
from .fattree import ROUTINGS

PLACEMENTS = ("fill", "balanced")


def _check_routing(routing: str) -> str:
    if routing not in ROUTINGS:
        raise UsageError(f"unknown routing {routing!r}: choose d-mod-k or ecmp")
    return routing


class _SwitchChain(Topology):
    """Common part of switch arrays and rings: nodes on switches, node links."""

    def _place(self, n: int, caps: list, placement: str = "fill") -> None:
        """Nodes 0..n-1 onto switches: in order, filling each switch ("fill"),
        or spread as evenly as the port counts allow ("balanced")."""
        self.n_nodes = n
        if placement not in PLACEMENTS:
            raise UsageError(f"unknown placement {placement!r}: choose fill or balanced")
        self.placement = placement
        if placement == "fill":
            counts, left = [], n
            for c in caps:
                counts.append(min(c, left))
                left -= counts[-1]
        else:
            counts, left = [0] * len(caps), n
            while left:
                open_ = [i for i in range(len(caps)) if counts[i] < caps[i]]
                if not open_:
                    break
                share = max(1, left // len(open_))
                for i in open_:
                    add = min(share, caps[i] - counts[i], left)
                    counts[i] += add
                    left -= add
                    if not left:
                        break
        if left:
            raise UsageError("internal: switch capacity too small")
        self.per_switch = np.array(counts, np.int64)
        self.first = np.concatenate(([0], np.cumsum(self.per_switch)[:-1])).astype(np.int64)
        self.switch_of = np.repeat(np.arange(len(counts), dtype=np.int64), self.per_switch)

    def _node_classes(self) -> list:
        n = self.n_nodes
        return [ResourceClass("inject", "node to switch (injection)", "link", "link", n),
                ResourceClass("eject", "switch to node (ejection)", "link", "link", n)]

    def _node_link_columns(self, flow, src, dst) -> list:
        cols = self.node_columns(flow, src, dst)
        cols += [(flow, self.base("inject") + src, 1.0), (flow, self.base("eject") + dst, 1.0)]
        return cols

    def _residue_counts(self, q: int) -> np.ndarray:
        """cnt[a, r]: nodes on switch a whose index is r modulo q."""
        S = len(self.per_switch)
        d = np.arange(self.n_nodes, dtype=np.int64)
        return np.bincount(self.switch_of * q + d % q, minlength=S * q).reshape(S, q).astype(float)

    def inventory(self) -> dict:
        return {"adapters": self.n_nodes, "switches": len(self.per_switch), "switch_ports": self.ports,
                "enclosures": 0, "cables": self.n_nodes + self.n_isl_cables}


class Crossbar(_SwitchChain):
    """One crossbar switch with `ports` ports; every node has a dedicated link::

        n0   n1   n2  ...  n(k-1)
          ╲   │   │   ╱
           [ switch ]
    """

    family = "crossbar"

    def __init__(self, n_nodes: int, ports: int, node_model: NodeModel = NodeModel()):
        self.ports = check_int("switch ports", ports, 2)
        n = check_int("number of nodes", n_nodes, 2, self.ports)
        self.node_model = node_model
        self._place(n, [self.ports])
        self.n_isl_cables = 0
        self.classes = self._node_classes() + node_model.classes(n)
        self._finish()

    def describe(self) -> str:
        return f"one {self.ports}-port switch, {self.n_nodes} nodes"

    def max_switches_on_route(self) -> int:
        return 1

    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        return Paths.from_columns(self._node_link_columns(flow, src, dst), len(src))

    def alltoall_class_loads(self) -> dict:
        n = self.n_nodes
        out = {"inject": float(n - 1), "eject": float(n - 1)}
        out.update(self.node_loads_alltoall(n))
        return out


class SwitchArray(_SwitchChain):
    """A linear array of switches, `cables` parallel cables between neighbours
    (the seed's "minimally connected" Myrinet has one)::

        n..n      n..n      n..n
         [S0] ─── [S1] ─── [S2] ─── ... ─── [S(s-1)]

    End switches have ports - cables node ports, the others ports - 2·cables.
    Cable choice: D-mod-K (destination mod cables) or ECMP (even split)."""

    family = "switch-array"

    def __init__(self, n_nodes: int, ports: int, cables: int = 1, routing: str = "d-mod-k",
                 node_model: NodeModel = NodeModel(), placement: str = "fill"):
        self.ports = check_int("switch ports", ports, 2)
        self.cables = check_int("cables between neighbouring switches", cables, 1)
        n = check_int("number of nodes", n_nodes, 2)
        self.routing = _check_routing(routing)
        if self.ports - 2 * self.cables < 1 and n > 2 * (self.ports - self.cables):
            raise UsageError(f"{self.ports}-port switches with {self.cables} cables to each neighbour "
                             f"leave no port for nodes in the middle of an array")
        caps = [self.ports]
        if n > self.ports:
            caps = [self.ports - self.cables] * 2
            while sum(caps) < n:
                caps.insert(1, self.ports - 2 * self.cables)
        self.node_model = node_model
        self._place(n, caps, placement)
        S = len(caps)
        self.n_isl_cables = (S - 1) * self.cables
        self.classes = self._node_classes()
        if S > 1:
            k = (S - 1) * self.cables
            self.classes += [ResourceClass("isl+", "switch to switch, towards higher switches", "link", "link", k),
                             ResourceClass("isl-", "switch to switch, towards lower switches", "link", "link", k)]
        self.classes += node_model.classes(n)
        self._finish()

    def describe(self) -> str:
        return (f"linear array of {len(self.per_switch)} {self.ports}-port switches, "
                f"{self.cables} cable(s) between neighbours, {self.n_nodes} nodes")

    def max_switches_on_route(self) -> int:
        return len(self.per_switch)

    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        cols = self._node_link_columns(flow, src, dst)
        a, b = self.switch_of[src], self.switch_of[dst]
        hops = np.abs(b - a)
        if hops.any():
            l = self.cables
            owner, k = expand(hops)
            up = b[owner] > a[owner]
            seg = np.where(up, a[owner] + k, a[owner] - k - 1)   # cut between seg and seg+1
            base = np.where(up, self.base("isl+"), self.base("isl-"))
            if self.routing == "d-mod-k":
                cols.append((owner, base + seg * l + dst[owner] % l, 1.0))
            else:
                o2, c = expand(np.full(len(owner), l))
                cols.append((owner[o2], base[o2] + seg[o2] * l + c, 1.0 / l))
        return Paths.from_columns(cols, len(src))

    def route_lengths(self, src, dst) -> np.ndarray:
        hops = np.abs(self.switch_of[np.asarray(src)] - self.switch_of[np.asarray(dst)])
        return hops * (self.cables if self.routing == "ecmp" else 1) + 6    # and the node links and buses

    def alltoall_class_loads(self) -> dict:
        """Cut counting: cable c of cut i carries (nodes left) × (nodes right with d mod l = c)."""
        n, l = self.n_nodes, self.cables
        out = {"inject": float(n - 1), "eject": float(n - 1)}
        if len(self.per_switch) > 1:
            cnt = self._residue_counts(l)
            left = np.cumsum(cnt, axis=0)[:-1]            # nodes on switches <= i, per residue
            right = cnt.sum(axis=0)[None, :] - left
            L, R = left.sum(axis=1, keepdims=True), right.sum(axis=1, keepdims=True)
            if self.routing == "d-mod-k":
                out["isl+"], out["isl-"] = float((L * right).max()), float((R * left).max())
            else:
                out["isl+"] = out["isl-"] = float((L * R).max() / l)
        out.update(self.node_loads_alltoall(n))
        return out


class SwitchRing(_SwitchChain):
    """A ring of switches, `cables` parallel cables between neighbours::

              [S0] ═══ [S1]
             ║              ║        each ═══ is `cables` cables;
            [S5]           [S2]      every switch keeps ports - 2·cables
             ║              ║        ports for nodes
              [S4] ═══ [S3]

    Packets take the shorter way round. At an even distance tie the choice is
    D-mod-K over the 2·cables equal next hops (clockwise first) or an even ECMP
    split. One switch is a crossbar; two switches are joined by 2·cables."""

    family = "switch-ring"

    def __init__(self, n_nodes: int, ports: int, cables: int = 2, routing: str = "d-mod-k",
                 node_model: NodeModel = NodeModel(), placement: str = "fill"):
        self.ports = check_int("switch ports", ports, 3)
        self.cables = check_int("cables between neighbouring switches", cables, 1)
        n = check_int("number of nodes", n_nodes, 2)
        self.routing = _check_routing(routing)
        per = self.ports - 2 * self.cables
        if per < 1 and n > self.ports:
            raise UsageError(f"{self.ports}-port switches with {self.cables} cables to each neighbour "
                             f"leave no port for nodes")
        S = 1 if n <= self.ports else max(2, -(-n // per))
        self.node_model = node_model
        self._place(n, [self.ports] if S == 1 else [per] * S, placement)
        self.S = S
        self.n_isl_cables = 0 if S == 1 else (2 * self.cables if S == 2 else S * self.cables)
        self.classes = self._node_classes()
        if S > 1:
            # cw link i -> i+1; for S == 2 the "two neighbours" are the same switch
            k = S * self.cables
            self.classes += [ResourceClass("isl.cw", "switch to switch, clockwise", "link", "link", k),
                             ResourceClass("isl.ccw", "switch to switch, counter-clockwise", "link", "link", k)]
        self.classes += node_model.classes(n)
        self._finish()

    def describe(self) -> str:
        if self.S == 1:
            return f"one {self.ports}-port switch, {self.n_nodes} nodes"
        return (f"ring of {self.S} {self.ports}-port switches, {self.cables} cable(s) between "
                f"neighbours, {self.n_nodes} nodes")

    def max_switches_on_route(self) -> int:
        return self.S // 2 + 1

    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        cols = self._node_link_columns(flow, src, dst)
        S, l = self.S, self.cables
        if S == 1:
            return Paths.from_columns(cols, len(src))
        a, b = self.switch_of[src], self.switch_of[dst]
        cw = (b - a) % S
        tie = (S % 2 == 0) & (cw == S // 2)
        parts = []   # (flow, start switch, hops, direction +1/-1, weight, cable choice or -1 for split)
        if self.routing == "d-mod-k":
            go_cw = (cw <= (S - 1) // 2) | (tie & (dst % (2 * l) < l))
            hops = np.where(go_cw, cw, (S - cw) % S)
            parts.append((flow, a, hops, np.where(go_cw, 1, -1), 1.0, dst % l))
        else:
            strict = ~tie
            hops = np.where(cw <= (S - 1) // 2, cw, (S - cw) % S)
            parts.append((flow[strict], a[strict], hops[strict],
                          np.where(cw <= (S - 1) // 2, 1, -1)[strict], 1.0 / l, None))
            for sgn in (1, -1):
                parts.append((flow[tie], a[tie], np.full(int(tie.sum()), S // 2, np.int64),
                              np.full(int(tie.sum()), sgn), 0.5 / l, None))
        for fl, start, hops, sgn, wt, cable in parts:
            owner, k = expand(hops)
            pos = (start[owner] + sgn[owner] * k) % S
            link = np.where(sgn[owner] > 0, self.base("isl.cw") + pos * l,
                            self.base("isl.ccw") + ((pos - 1) % S) * l)
            if cable is not None:
                cols.append((fl[owner], link + cable[owner], wt))
            else:
                o2, c = expand(np.full(len(owner), l))
                cols.append((fl[owner][o2], link[o2] + c, wt))
        return Paths.from_columns(cols, len(src))

    def route_lengths(self, src, dst) -> np.ndarray:
        cw = (self.switch_of[np.asarray(dst)] - self.switch_of[np.asarray(src)]) % self.S
        hops = np.minimum(cw, self.S - cw)      # an ECMP tie goes both ways, a share of each cable
        return hops * (2 * self.cables if self.routing == "ecmp" else 1) + 6

    def _cw_loads(self, n_src: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Clockwise load of link i -> i+1 for all i, by prefix sums, O(S).

        Sources weigh n_src[a]; strictly-shorter-clockwise destinations weigh
        x[b]; at the even tie (distance S/2) destinations weigh y[b]."""
        S = self.S
        h = (S - 1) // 2
        n3, x3, y3 = np.tile(n_src, 3), np.tile(x, 3), np.tile(y, 3)
        P = np.concatenate(([0.0], np.cumsum(x3)))
        A = np.arange(2 * S)
        G = np.concatenate(([0.0], np.cumsum(n3[A] * P[A + h + 1])))
        Nn = np.concatenate(([0.0], np.cumsum(n3)))
        i = np.arange(S) + S
        lo, hi = i - h + 1, i + 1                       # sources A in [lo, hi)
        load = (G[hi] - G[lo]) - P[i + 1] * (Nn[hi] - Nn[lo])
        if S % 2 == 0:
            t = S // 2
            T = np.concatenate(([0.0], np.cumsum(n3[A] * y3[A + t])))
            lo2 = i - t + 1
            load = load + (T[hi] - T[lo2])
        return load

    def alltoall_class_loads(self) -> dict:
        n, S, l = self.n_nodes, self.S, self.cables
        out = {"inject": float(n - 1), "eject": float(n - 1)}
        if S > 1:
            cnt = self._residue_counts(2 * l)
            tot = cnt.sum(axis=1)
            rev = lambda v: v[::-1].copy()
            best_cw = best_ccw = 0.0
            for c in range(l):
                if self.routing == "d-mod-k":
                    x = cnt[:, c] + cnt[:, c + l]
                    ycw, yccw = cnt[:, c], cnt[:, c + l]
                else:
                    x, ycw = tot / l, tot / (2 * l)
                    yccw = ycw
                best_cw = max(best_cw, float(self._cw_loads(tot, x, ycw).max()))
                best_ccw = max(best_ccw, float(self._cw_loads(rev(tot), rev(x), rev(yccw)).max()))
                if self.routing == "ecmp":
                    break
            out["isl.cw"], out["isl.ccw"] = best_cw, best_ccw
        out.update(self.node_loads_alltoall(n))
        return out


class Clos64(_SwitchChain):
    """Myrinet Clos64 "network in a box" enclosures (seed 001 §4.1): sixteen
    16-port crossbars, 8 leaves (8 node ports, 8 up) and 8 spines (8 down,
    8 external). Two boxes are joined spine to spine by 64 cables, spine j of
    box A to spine m of box B by one cable, giving full bisection for 128::

        box A:  L0..L7 ══ all-to-all ══ P0..P7 ══ 64 cables ══ Q0..Q7 ══ M0..M7  :box B
                 8 nodes each                                          8 nodes each

    D-mod-K: spine j = d mod 8; across boxes the far spine is
    m = (d mod 8 + leaf of d in its box) mod 8."""

    family = "clos64"

    def __init__(self, n_nodes: int, routing: str = "d-mod-k", node_model: NodeModel = NodeModel()):
        n = check_int("number of nodes on Clos64 boxes", n_nodes, 2, 128)
        self.routing = _check_routing(routing)
        self.ports = 16
        self.node_model = node_model
        self.boxes = 1 if n <= 64 else 2
        self._place(n, [8] * (8 * self.boxes))
        self.n_isl_cables = 64 if self.boxes == 2 else 0
        nb = self.boxes
        self.classes = self._node_classes() + [
            ResourceClass("leaf_up", "leaf to spine (inside a box)", "link", "link", nb * 64),
            ResourceClass("spine_down", "spine to leaf (inside a box)", "link", "link", nb * 64)]
        if nb == 2:
            self.classes += [ResourceClass("box", "box to box", "link", "link", 2 * 64)]
        self.classes += node_model.classes(n)
        self._finish()

    def describe(self) -> str:
        return f"{self.boxes} Myrinet Clos64 box(es), {self.n_nodes} nodes"

    def max_switches_on_route(self) -> int:
        return 4 if self.boxes == 2 else 3

    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        cols = self._node_link_columns(flow, src, dst)
        ls, ld = src // 8, dst // 8                        # global leaf ids (8 per box)
        bs, bd = src // 64, dst // 64
        far = ls != ld
        same_box = far & (bs == bd)
        cross = far & (bs != bd)
        if self.routing == "d-mod-k":
            # near spine j = d mod 8; far spine m = (d + leaf of d) mod 8, so
            # that each box cable and each far down-link serves one destination
            choices = [(dst % 8, (dst % 8 + (dst // 8) % 8) % 8, 1.0)]
        else:
            choices = [(np.full(len(dst), j), np.full(len(dst), m), 1.0 / 64) for j in range(8) for m in range(8)]
        for j, m, wt in choices:
            up = self.base("leaf_up") + ls * 8 + j
            cols.append((flow[far], up[far], wt))
            spine_d = np.where(same_box, j, m)
            down = self.base("spine_down") + ld * 8 + spine_d
            cols.append((flow[far], down[far], wt))
            if self.boxes == 2 and cross.any():
                cable = self.base("box") + bs * 64 + j * 8 + m
                cols.append((flow[cross], cable[cross], wt))
        return Paths.from_columns(cols, len(src))

    def inventory(self) -> dict:
        return {"adapters": self.n_nodes, "switches": 16 * self.boxes, "switch_ports": 16,
                "enclosures": self.boxes, "cables": self.n_nodes + self.n_isl_cables}
