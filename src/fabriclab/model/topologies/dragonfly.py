"""Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008), as in HPE Slingshot."""

from __future__ import annotations

import numpy as np

from ...errors import UsageError
from .base import NodeModel, Paths, ResourceClass, Topology, check_int, expand
from .fattree import ROUTINGS


class Dragonfly(Topology):
    """g groups of a routers; p nodes per router; every router has h global links.

    Routers of a group are fully connected by local links; every pair of
    groups is joined by m = a·h / (g-1) global links::

        group 0                 group 1                 group 2
        R0 ─ R1                 R0 ─ R1                 R0 ─ R1
        │ ╲╱ │   ── global ──   │ ╲╱ │   ── global ──   │ ╲╱ │
        R2 ─ R3                 R2 ─ R3                 R2 ─ R3
         (p nodes on every router; global links also join group 0 and 2)

    Global port q of a group (router q div h) leads to group (G + 1 + q div m)
    mod g, copy q mod m ("consecutive" arrangement; the wiring is invariant
    under rotation of the groups). Minimal routing: local, global, local;
    the copy is chosen by destination (D-mod-K) or split evenly (ECMP)."""

    family = "dragonfly"

    def __init__(self, p: int, a: int, h: int, g: int, n_nodes=None, routing: str = "d-mod-k",
                 node_model: NodeModel = NodeModel()):
        self.p = check_int("dragonfly nodes per router p", p, 1)
        self.a = check_int("dragonfly routers per group a", a, 1)
        self.h = check_int("dragonfly global links per router h", h, 1)
        self.g = check_int("dragonfly groups g", g, 2, self.a * self.h + 1)
        if (self.a * self.h) % (self.g - 1):
            raise UsageError(f"a dragonfly with a·h = {self.a * self.h} global ports per group needs "
                             f"g - 1 to divide it; g = {self.g} does not")
        if routing not in ROUTINGS:
            raise UsageError(f"unknown dragonfly routing {routing!r}: choose d-mod-k or ecmp")
        self.routing = routing
        self.m = self.a * self.h // (self.g - 1)
        cap = self.p * self.a * self.g
        self.capacity = cap
        self.n_nodes = cap if n_nodes is None else check_int("number of nodes", n_nodes, 2, cap)
        if cap > 20_000_000:
            raise UsageError("dragonfly too large (more than 20,000,000 nodes)")
        self.node_model = node_model
        G, a, ah = self.g, self.a, self.a * self.h
        self.classes = [
            ResourceClass("inject", "node to router (injection)", "link", "link", cap),
            ResourceClass("eject", "router to node (ejection)", "link", "link", cap),
            ResourceClass("local", "local (inside a group)", "link", "link", G * a * a),
            ResourceClass("global", "global (between groups)", "link", "link", G * ah),
        ] + node_model.classes(cap)
        self._finish()

    @classmethod
    def balanced(cls, nodes: int, p: int, **kw) -> "Dragonfly":
        """a = 2p routers per group, h = p global links (Kim et al. §3.1);
        the fewest groups that hold `nodes` and divide the global ports evenly."""
        p = check_int("dragonfly nodes per router p", p, 1)
        a, h = 2 * p, p
        per_group = a * p
        g = max(2, -(-nodes // per_group))
        while g <= a * h + 1 and (a * h) % (g - 1):
            g += 1
        if g > a * h + 1:
            raise UsageError(f"{nodes} nodes exceed the largest balanced dragonfly with p = {p} "
                             f"({(a * h + 1) * per_group} nodes)")
        return cls(p, a, h, g, n_nodes=nodes, **kw)

    def describe(self) -> str:
        return (f"dragonfly: {self.g} groups × {self.a} routers × {self.p} nodes, {self.h} global "
                f"links per router ({self.m} per group pair), {self.n_nodes} nodes, {self.routing}")

    def max_switches_on_route(self) -> int:
        return 4

    def router_ports(self) -> int:
        return self.p + self.a - 1 + self.h

    # ---- routing -----------------------------------------------------------
    def paths(self, src, dst) -> Paths:
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        p, a, h, g, m = self.p, self.a, self.h, self.g, self.m
        cols = self.node_columns(flow, src, dst)
        cols += [(flow, self.base("inject") + src, 1.0), (flow, self.base("eject") + dst, 1.0)]
        Rs, Rd = src // p, dst // p
        Gs, Gd = Rs // a, Rd // a
        rs, rd = Rs % a, Rd % a
        loc = self.base("local")
        same_g = (Gs == Gd) & (Rs != Rd)
        cols.append((flow[same_g], loc + Gs[same_g] * a * a + rs[same_g] * a + rd[same_g], 1.0))
        x = Gs != Gd
        fx, dx = flow[x], dst[x]
        o = (Gd[x] - Gs[x]) % g
        if self.routing == "d-mod-k":
            owner, c, wt = np.arange(len(fx)), dx % m, 1.0
        else:
            owner, c = expand(np.full(len(fx), m))
            wt = 1.0 / m
        fo, G1, G2 = fx[owner], Gs[x][owner], Gd[x][owner]
        r1, r2, oo = rs[x][owner], rd[x][owner], o[owner]
        q = (oo - 1) * m + c
        q2 = (g - oo - 1) * m + c
        u, v = q // h, q2 // h
        hop1 = u != r1
        cols.append((fo[hop1], loc + G1[hop1] * a * a + r1[hop1] * a + u[hop1], wt))
        cols.append((fo, self.base("global") + G1 * a * h + q, wt))
        hop3 = v != r2
        cols.append((fo[hop3], loc + G2[hop3] * a * a + v[hop3] * a + r2[hop3], wt))
        return Paths.from_columns(cols, len(src))

    def alltoall_class_loads(self) -> dict:
        """Exact loads aggregated per router, O(g·a·(a + h·m)).

        Local link u -> v of group G carries: u's nodes to v's nodes; u's nodes
        to groups reached through v's global ports; and traffic that lands on
        u's global ports and is bound for v's nodes."""
        p, a, h, g, m, n = self.p, self.a, self.h, self.g, self.m, self.n_nodes
        d = np.arange(n, dtype=np.int64)
        R = d // p
        nr = np.bincount(R, minlength=g * a).astype(float).reshape(g, a)          # nodes per router
        cop = d % m if self.routing == "d-mod-k" else None
        if cop is not None:
            nrc = np.bincount(R * m + cop, minlength=g * a * m).astype(float).reshape(g, a, m)
        else:
            nrc = np.repeat(nr[:, :, None] / m, m, axis=2)
        popc = nrc.sum(axis=1)                                                     # (g, m)
        pop = nr.sum(axis=1)
        q = np.arange(a * h)
        router, off, copy = q // h, q // m + 1, q % m
        target = (np.arange(g)[:, None] + off[None, :]) % g                        # (g, a·h)
        glob = pop[:, None] * popc[target, copy[None, :]]
        out_v = np.zeros((g, a))
        np.add.at(out_v, (slice(None), router), popc[target, copy[None, :]])
        A = np.zeros((g, a, m))
        for qq in range(a * h):
            A[:, router[qq], copy[qq]] += pop[target[:, qq]]
        local = nr[:, :, None] * nr[:, None, :] + nr[:, :, None] * out_v[:, None, :] \
            + np.einsum("guc,gvc->guv", A, nrc)
        idx = np.arange(a)
        local[:, idx, idx] = 0.0
        out = {"inject": float(n - 1), "eject": float(n - 1),
               "local": float(local.max()) if a > 1 else 0.0, "global": float(glob.max())}
        out.update(self.node_loads_alltoall(n))
        return out

    def inventory(self) -> dict:
        n, per_group = self.n_nodes, self.a * self.p
        groups = -(-n // per_group)
        routers = -(-n // self.p)
        local = groups * self.a * (self.a - 1) // 2
        glob = groups * (groups - 1) // 2 * self.m
        return {"adapters": n, "switches": routers, "switch_ports": self.router_ports(),
                "enclosures": 0, "cables": n + local + glob}
