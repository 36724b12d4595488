"""The time of a collective's schedule (schedules.py) on a network file.

Each step's flows are routed on the network and share its resources max-min
fairly (maxmin.py). The step takes

    alpha + max over flows of (bytes / rate) + gamma x (the most bytes a rank reduces)

and the steps add up (the alpha-beta-gamma cost model of Thakur, Rabenseifner
and Gropp 2005, with beta from the network's routes instead of one link).
alpha is the time of one message's start (seconds), gamma the time of one
byte of local reduction (seconds per byte); both are given, and the rates
come from the network file or its calibration, as for every other figure of
the model. A flow between ranks placed on one node never reaches the
network (exchange.py) and costs its step alpha only.

Max-min rates depend only on the flows' routes, not on their bytes, so the
rates of a set of (source, destination) pairs are solved once and reused by
every step that repeats it (a ring's steps are one pattern)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from .loads import class_rates, display_label, resource_capacity
from .maxmin import max_min
from .schedules import Schedule

PLACEMENTS = ("block", "cyclic")


@dataclass(frozen=True)
class StepTime:
    seconds: float
    bottleneck: str          # the resource that froze the slowest flow ("" without network flows)


@dataclass
class ScheduleTime:
    seconds: float
    steps: list = field(default_factory=list)     # [StepTime]

    @property
    def bottleneck(self) -> str:
        """The bottleneck of the step that costs most."""
        return max(self.steps, key=lambda s: s.seconds).bottleneck if self.steps else ""


def place(ranks: int, nodes: int, how: str = "block", per_node: int | None = None) -> np.ndarray:
    """The node of each rank: `block` fills a node with per_node ranks (default: as few per
    node as fit) before the next, `cyclic` deals them out one per node in turn."""
    if how not in PLACEMENTS:
        raise UsageError(f"placement must be one of {', '.join(PLACEMENTS)}, not {how!r}")
    per = per_node or -(-ranks // nodes)
    if per < 1 or per * nodes < ranks:
        raise UsageError(f"{ranks} ranks do not fit on {nodes} nodes at {per} a node")
    r = np.arange(ranks, dtype=np.int64)
    return r // per if how == "block" else r % nodes


class _Network:
    """A network file's topology with each resource's rate, and the solved rates of each flow pattern."""

    def __init__(self, system, calibration=None):
        self.topo = system.build(system.n_nodes)
        rates = system.rates(self.topo, system.calibrated(calibration))
        self.cap = resource_capacity(self.topo, class_rates(self.topo, rates))
        self.cls = self.topo.class_of(np.arange(self.topo.n_resources))
        self.labels = [display_label(c, rates) for c in self.topo.classes]
        self.solved: dict = {}

    def rates(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Max-min rate and bottleneck resource of each flow (cached by the pattern)."""
        key = (src.tobytes(), dst.tobytes())
        if key not in self.solved:
            res = max_min(self.topo.paths(src, dst), self.cap)
            self.solved[key] = (res.rates, res.bottleneck)
        return self.solved[key]


def schedule_time(sched: Schedule, system, alpha: float, gamma: float, placement: np.ndarray | None = None,
                  calibration=None) -> ScheduleTime:
    """The predicted time of `sched` on `system` (a model.netfile.NetworkFile) with ranks on
    the nodes `placement` (default: one rank a node, in order)."""
    if not (alpha >= 0 and gamma >= 0 and np.isfinite(alpha) and np.isfinite(gamma)):
        raise UsageError("alpha and gamma must be finite and not negative")
    net = _Network(system, calibration)
    where = np.arange(sched.ranks, dtype=np.int64) if placement is None else np.asarray(placement, np.int64)
    if len(where) != sched.ranks or where.min(initial=0) < 0 or where.max(initial=0) >= net.topo.n_nodes:
        raise UsageError(f"the placement must put each of the {sched.ranks} ranks on one of the network's "
                         f"{net.topo.n_nodes} nodes")
    out = ScheduleTime(0.0)
    for step in sched.steps:
        out.steps.append(_step_time(net, step, where, alpha, gamma))
    out.seconds = float(sum(s.seconds for s in out.steps))
    return out


def _step_time(net: _Network, step, where: np.ndarray, alpha: float, gamma: float) -> StepTime:
    src, dst = where[step.src], where[step.dst]
    remote = src != dst
    transfer, label = 0.0, ""
    if remote.any():
        rates, bott = net.rates(src[remote], dst[remote])
        times = step.nbytes[remote] / rates
        slowest = int(np.argmax(times))
        transfer = float(times[slowest])
        res = int(bott[slowest])
        label = net.labels[int(net.cls[res])] if res >= 0 else ""
    return StepTime(alpha + transfer + gamma * float(step.reduced.max(initial=0)), label)
