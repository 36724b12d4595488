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


def max_min(paths: Paths, capacity: np.ndarray, demand: Optional[np.ndarray] = None,
            rel_tol: float = 1e-9) -> MaxMinResult:
    """Max-min fair rates for the flows in `paths` over resources of `capacity` (bytes/s)."""
    cap = np.asarray(capacity, float)
    F = paths.n_flows
    if F == 0:
        return MaxMinResult(np.zeros(0), np.zeros(0, np.int64), 0)
    if np.any(cap <= 0):
        raise UsageError("every resource needs a positive capacity for max-min sharing")
    R = len(cap)
    res, wt, fptr = paths.res, paths.weight, paths.indptr
    if len(res) and (res.min() < 0 or res.max() >= R):
        raise UsageError("a path uses a resource that has no capacity")
    # resource -> (flow, weight) CSR
    flow_of = np.repeat(np.arange(F, dtype=np.int64), np.diff(fptr))
    order = stable_order(res)
    r_flow = flow_of[order]
    rptr = np.zeros(R + 1, np.int64)
    np.cumsum(np.bincount(res, minlength=R), out=rptr[1:])

    W = np.bincount(res, weights=wt, minlength=R)           # weight of live flows per resource
    U = np.zeros(R)                                          # capacity taken by frozen flows
    rate = np.full(F, np.nan)
    bott = np.full(F, -1, np.int64)
    live = np.ones(F, bool)
    if np.any(np.diff(fptr) == 0):
        raise UsageError("a flow crosses no resource, so its max-min rate is unbounded")
    # fill level at which each resource saturates; it only rises as flows freeze
    key = np.full(R, np.inf)
    pos_w = W > 0
    key[pos_w] = cap[pos_w] / W[pos_w]
    if demand is not None:
        dem = np.asarray(demand, float)
        dorder = np.argsort(dem, kind="stable")
    else:
        dem, dorder = None, np.zeros(0, np.int64)
    dptr = 0
    stamp = np.full(F, -1, np.int64)
    rstamp = np.full(R, -1, np.int64)
    level, levels, n_live = 0.0, 0, F
    cand, T = np.zeros(0, np.int64), -np.inf
    while n_live:
        # candidates: live resources whose key was below a threshold T when
        # chosen; keys only rise, so the minimum is among them until they run out
        if len(cand):
            ck = key[cand]
            keep = ck <= T
            cand, ck = cand[keep], ck[keep]
        if not len(cand):
            act = np.nonzero(np.isfinite(key))[0]
            if not len(act):
                if dem is None:
                    break
                T, cand, ck = np.inf, act, key[act]
            else:
                m = max(256, len(act) // 64)
                T = float(np.partition(key[act], m - 1)[m - 1]) if len(act) > m else np.inf
                cand = act[key[act] <= T]
                ck = key[cand]
        levels += 1
        nxt = float(ck.min()) if len(ck) else np.inf
        cap_hit = None
        if dem is not None:
            while dptr < F and not live[dorder[dptr]]:
                dptr += 1
            if dptr < F and dem[dorder[dptr]] <= nxt:
                nxt = float(dem[dorder[dptr]])
                e = dptr
                while e < F and dem[dorder[e]] <= nxt * (1 + rel_tol):
                    e += 1
                cap_hit = dorder[dptr:e]
                cap_hit = cap_hit[live[cap_hit]]
        if not np.isfinite(nxt):
            raise UsageError("max-min filling made no progress (a flow has no finite bound)")
        level = max(level, nxt)
        frozen = []
        sat = np.zeros(0, np.int64)
        if cap_hit is not None:
            frozen.append(cap_hit)
        else:
            sat = cand[ck <= level * (1 + rel_tol)]
            pos = _gather(rptr, sat)
            fl = r_flow[pos]
            owner = np.repeat(sat, rptr[sat + 1] - rptr[sat])
            alive = live[fl]
            fl, owner = fl[alive], owner[alive]
            bott[fl] = owner
            frozen.append(fl)
        fz = _distinct(np.concatenate(frozen), stamp)
        fz = fz[live[fz]]
        rate[fz] = level
        live[fz] = False
        n_live -= len(fz)
        pos = _gather(fptr, fz)
        rr, ww = res[pos], wt[pos]
        np.subtract.at(W, rr, ww)
        np.add.at(U, rr, ww * level)
        aff = _distinct(rr, rstamp)
        ok = W[aff] > 1e-9 * cap[aff] / np.maximum(key[aff], 1e-300)
        key[aff] = np.where(ok, (cap[aff] - U[aff]) / np.where(ok, W[aff], 1.0), np.inf)
        key[sat] = np.inf
    return MaxMinResult(rate, bott, levels)


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
