"""What timing one algorithm's schedules at one node count will cost, counted
before any of it is timed, against the budgets of limits.py.

Three passes over the schedules' flow patterns (a pattern is solved once
however many steps and sizes share it, schedule_time.py):

1. from the schedules alone, the route entries a topology lists to count the
   new patterns' loads, twice (their loads, then the classes at the first
   level): at most MAX_ROUTED_ENTRIES, before any is listed;
2. each new pattern's first level of max-min filling (schedule_time.py), which
   pass 1 bounds; then the route entries of the patterns it does not settle,
   shared max-min flow by flow (MAX_FILLED_ENTRIES), and the flows x times of
   the repeated steps whose flows move at different rates (MAX_TIMED_CELLS),
   before any is filled or timed;
3. the timing itself (collective.py), which no budget then stops.

The budgets are each algorithm's, so that `model --collective`'s three
allreduce algorithms at their budgets stay within about 10 s of CPU together;
an algorithm past one is left out with the line that says which."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .limits import MAX_FILLED_ENTRIES, MAX_ROUTED_ENTRIES, MAX_TIMED_CELLS
from .topologies.base import Topology


@dataclass
class _Patterns:
    """The new flow patterns of an algorithm's schedules, and its repeated steps."""
    flows: dict = field(default_factory=dict)     # key -> (source nodes, destination nodes), int32
    repeated: list = field(default_factory=list)  # (key or None where no flow leaves its node, flows x times)


def refusal(net, schedules, where: np.ndarray) -> str:
    """'' when timing `schedules` (one algorithm's, at every size) on `net` with ranks on
    the nodes `where` stays within every budget, else the line that names the first one
    it passes; the first levels it solves stay in `net` for the timing."""
    pats = _patterns(net, schedules, where)
    topo = net.topo
    listed = type(topo).loads is Topology.loads
    routed = 2 * sum(_entries(topo, s, d) for s, d in pats.flows.values()) if listed else 0
    if routed > MAX_ROUTED_ENTRIES:
        return (f"its routes on {topo.describe()} hold {routed:,} entries to count, more than "
                f"{MAX_ROUTED_ENTRIES:,} (MAX_ROUTED_ENTRIES)")
    settled = {k: _settle(net, k, s, d) for k, (s, d) in pats.flows.items()}
    filled = sum(_entries(topo, *pats.flows[k]) for k, ok in settled.items() if ok is None)
    if filled > MAX_FILLED_ENTRIES:
        return (f"its flows on {topo.describe()} would be shared max-min over {filled:,} route entries, more "
                f"than {MAX_FILLED_ENTRIES:,} (MAX_FILLED_ENTRIES)")
    cells = sum(c for k, c in pats.repeated if k is not None and not _alike(net, k, settled))
    if cells > MAX_TIMED_CELLS:
        return (f"its repeated steps move {cells:,} flows x times at different rates, more than "
                f"{MAX_TIMED_CELLS:,} (MAX_TIMED_CELLS)")
    return ""


def _patterns(net, schedules, where: np.ndarray) -> _Patterns:
    """The remote flows of every step, as schedule_time.py keys them, that `net` has not
    solved; and each repeated step of unequal repeats with its flows x times."""
    out = _Patterns()
    for sched in schedules:
        for step in sched.steps:
            src, dst = where[step.src], where[step.dst]
            remote = src != dst
            key = (src[remote].tobytes(), dst[remote].tobytes()) if remote.any() else None
            if key is not None and key not in net.solved and key not in out.flows:
                out.flows[key] = (src[remote].astype(np.int32), dst[remote].astype(np.int32))
            region = step.tape[step.start - step.repeat + 1:step.start + len(step.src)]
            if step.repeat > 1 and region.min() != region.max():
                out.repeated.append((key if remote.all() else (), step.repeat * len(step.src)))
    return out


def _entries(topo, src: np.ndarray, dst: np.ndarray) -> int:
    """Route entries of the flows: counted where a topology can, else 16 a flow, the
    bound of short routes (Topology.blocks)."""
    lengths = topo.route_lengths(src, dst)
    return int(lengths.sum()) if lengths is not None else 16 * len(src)


def _settle(net, key, src: np.ndarray, dst: np.ndarray):
    """The pattern's rates when its first level settles every flow (kept in `net`), else None."""
    got = net._first_level(src.astype(np.int64), dst.astype(np.int64))
    if got is not None:
        net.solved[key] = got
    return got


def _alike(net, key, settled: dict) -> bool:
    """Whether every flow of a repeated step moves at one rate with one bottleneck, so that
    it is timed by sliding maxima (schedule_time.py) and not flow by flow."""
    if key == ():
        return False            # flows within a node cost nothing, the others something
    got = settled.get(key) or net.solved.get(key)
    return got is not None and len(np.unique(got[0])) == 1 and len(np.unique(net.cls[got[1]])) == 1
