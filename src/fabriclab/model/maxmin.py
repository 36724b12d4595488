"""Steady-state max-min fair rates of an arbitrary set of flows (progressive filling).

All unfrozen flows grow at the same rate; when a resource fills up, every flow
crossing it is frozen at the current level (Bertsekas & Gallager, Data
Networks, §6.5.2). Flows may use a resource with a weight (an ECMP flow that
puts half its bytes on each of two links has weight 0.5 on each).

Each flow and each resource is frozen once, by gathering CSR ranges, so the
work is about O(nnz log nnz) for nnz path entries; the next fill level is
searched among a small candidate set of resources (saturation levels only
rise as flows freeze, so the set stays valid until it is used up).

For an all-to-all of equal messages that all start together, the completion
time under max-min sharing equals the busiest resource's work, max over ℓ of
load_ℓ × size / rate_ℓ: the flows of that resource get its fair share, the
lowest of all, for the whole time (see docs/model.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import UsageError
from .topologies.base import Paths, stable_order


@dataclass
class MaxMinResult:
    rates: np.ndarray         # bytes/s per flow
    bottleneck: np.ndarray    # resource id that froze each flow (-1: its demand cap)
    levels: int               # number of fill levels

    def per_source(self, src: np.ndarray) -> np.ndarray:
        return np.bincount(src, weights=self.rates)


def _gather(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions indptr[r]..indptr[r+1]-1 of every row r, concatenated."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lens = ends - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return np.arange(total, dtype=np.int64) + offs


def _distinct(a: np.ndarray, stamp: np.ndarray) -> np.ndarray:
    """The distinct values of `a` without sorting (stamp: scratch, len > max(a))."""
    idx = np.arange(len(a), dtype=np.int64)
    stamp[a] = idx
    return a[stamp[a] == idx]


class _Filling:
    """Progressive filling's state: the resource -> flow index, the live weight
    (W) and the capacity frozen flows took (U) per resource, and the fill level
    at which each resource saturates (key), which only rises as flows freeze."""

    def __init__(self, paths: Paths, cap: np.ndarray, demand: Optional[np.ndarray], rel_tol: float):
        F, R = paths.n_flows, len(cap)
        self.cap, self.rel_tol = cap, rel_tol
        self.res, self.wt, self.fptr = paths.res, paths.weight, paths.indptr
        if len(self.res) and (self.res.min() < 0 or self.res.max() >= R):
            raise UsageError("a path uses a resource that has no capacity")
        if np.any(np.diff(self.fptr) == 0):
            raise UsageError("a flow crosses no resource, so its max-min rate is unbounded")
        flow_of = np.repeat(np.arange(F, dtype=np.int64), np.diff(self.fptr))
        self.r_flow = flow_of[stable_order(self.res)]           # resource -> (flow) CSR
        self.rptr = np.zeros(R + 1, np.int64)
        np.cumsum(np.bincount(self.res, minlength=R), out=self.rptr[1:])
        self.W = np.bincount(self.res, weights=self.wt, minlength=R)
        self.U = np.zeros(R)
        self.key = np.full(R, np.inf)
        pos_w = self.W > 0
        self.key[pos_w] = cap[pos_w] / self.W[pos_w]
        self.rate, self.bott = np.full(F, np.nan), np.full(F, -1, np.int64)
        self.live = np.ones(F, bool)
        self.stamp, self.rstamp = np.full(F, -1, np.int64), np.full(R, -1, np.int64)
        self.dem = None if demand is None else np.asarray(demand, float)
        self.dorder = np.zeros(0, np.int64) if demand is None else np.argsort(self.dem, kind="stable")
        self.dptr = 0

    def candidates(self, cand: np.ndarray, T: float):
        """(cand, their keys, T), or None when nothing bounds the live flows. The
        candidates are live resources whose key was below a threshold T when
        chosen; keys only rise, so the minimum is among them until they run out."""
        key = self.key
        if len(cand):
            ck = key[cand]
            keep = ck <= T
            cand, ck = cand[keep], ck[keep]
            if len(cand):
                return cand, ck, T
        act = np.nonzero(np.isfinite(key))[0]
        if not len(act):
            return None if self.dem is None else (act, key[act], np.inf)
        m = max(256, len(act) // 64)
        T = float(np.partition(key[act], m - 1)[m - 1]) if len(act) > m else np.inf
        cand = act[key[act] <= T]
        return cand, key[cand], T

    def demand_hit(self, nxt: float):
        """(the next level, the live flows whose demand caps them there, or None)."""
        dem, dorder, live, F = self.dem, self.dorder, self.live, len(self.live)
        if dem is None:
            return nxt, None
        while self.dptr < F and not live[dorder[self.dptr]]:
            self.dptr += 1
        if self.dptr >= F or dem[dorder[self.dptr]] > nxt:
            return nxt, None
        nxt, e = float(dem[dorder[self.dptr]]), self.dptr
        while e < F and dem[dorder[e]] <= nxt * (1 + self.rel_tol):
            e += 1
        hit = dorder[self.dptr:e]
        return nxt, hit[live[hit]]

    def saturated_flows(self, sat: np.ndarray) -> np.ndarray:
        """The live flows crossing the saturated resources, each with its bottleneck recorded."""
        pos = _gather(self.rptr, sat)
        fl, owner = self.r_flow[pos], np.repeat(sat, self.rptr[sat + 1] - self.rptr[sat])
        alive = self.live[fl]
        fl, owner = fl[alive], owner[alive]
        self.bott[fl] = owner
        return fl

    def freeze(self, flows: np.ndarray, level: float, sat: np.ndarray) -> int:
        """Freeze the flows at `level`, update the resources they cross; how many froze."""
        fz = _distinct(flows, self.stamp)
        fz = fz[self.live[fz]]
        self.rate[fz] = level
        self.live[fz] = False
        pos = _gather(self.fptr, fz)
        rr, ww = self.res[pos], self.wt[pos]
        np.subtract.at(self.W, rr, ww)
        np.add.at(self.U, rr, ww * level)
        aff = _distinct(rr, self.rstamp)
        cap, W, key = self.cap, self.W, self.key
        ok = W[aff] > 1e-9 * cap[aff] / np.maximum(key[aff], 1e-300)
        key[aff] = np.where(ok, (cap[aff] - self.U[aff]) / np.where(ok, W[aff], 1.0), np.inf)
        key[sat] = np.inf
        return len(fz)


def max_min(paths: Paths, capacity: np.ndarray, demand: Optional[np.ndarray] = None,
            rel_tol: float = 1e-9) -> MaxMinResult:
    """Max-min fair rates for the flows in `paths` over resources of `capacity` (bytes/s)."""
    cap = np.asarray(capacity, float)
    if paths.n_flows == 0:
        return MaxMinResult(np.zeros(0), np.zeros(0, np.int64), 0)
    if np.any(cap <= 0):
        raise UsageError("every resource needs a positive capacity for max-min sharing")
    used, paths = _crossed(paths, len(cap))
    s = _Filling(paths, cap[used], demand, rel_tol)
    level, levels, n_live = 0.0, 0, paths.n_flows
    cand, T = np.zeros(0, np.int64), -np.inf
    while n_live:
        got = s.candidates(cand, T)
        if got is None:
            break
        cand, ck, T = got
        levels += 1
        nxt, hit = s.demand_hit(float(ck.min()) if len(ck) else np.inf)
        if not np.isfinite(nxt):
            raise UsageError("max-min filling made no progress (a flow has no finite bound)")
        level = max(level, nxt)
        sat = np.zeros(0, np.int64) if hit is not None else cand[ck <= level * (1 + rel_tol)]
        n_live -= s.freeze(hit if hit is not None else s.saturated_flows(sat), level, sat)
    return MaxMinResult(s.rate, np.where(s.bott >= 0, used[np.maximum(s.bott, 0)], -1), levels)


def _crossed(paths: Paths, n_resources: int) -> tuple:
    """(the resources the paths cross, the paths on those resources renumbered): the
    filling's arrays by resource then hold those only, not every resource of a large
    network (a 100,000-node 4-ary tree has 5 M, a step of its flows crosses 400,000)."""
    if len(paths.res) and (paths.res.min() < 0 or paths.res.max() >= n_resources):
        raise UsageError("a path uses a resource that has no capacity")
    used, at = np.unique(paths.res, return_inverse=True)
    return used, Paths(paths.indptr, at.astype(np.int64, copy=False), paths.weight)


def check_max_min(paths: Paths, capacity: np.ndarray, result: MaxMinResult, tol: float = 1e-6) -> bool:
    """Feasible, and every flow has a saturated resource on which no flow is faster."""
    F = paths.n_flows
    flow_of = np.repeat(np.arange(F), np.diff(paths.indptr))
    used = np.bincount(paths.res, weights=paths.weight * result.rates[flow_of], minlength=len(capacity))
    if np.any(used > capacity * (1 + tol)):
        return False
    sat = used >= capacity * (1 - tol)
    fastest = np.zeros(len(capacity))
    np.maximum.at(fastest, paths.res, result.rates[flow_of])
    ok = sat[paths.res] & (result.rates[flow_of] >= fastest[paths.res] * (1 - tol))
    has = np.zeros(F, bool)
    np.logical_or.at(has, flow_of, ok)
    return bool(np.all(has | (result.bottleneck == -1)))
