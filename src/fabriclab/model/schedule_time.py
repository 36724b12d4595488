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

On a network file, a schedule of at most OVERLAP_CELLS ranks x steps is
timed rank by rank instead (overlap.py): each rank enters its next step when
its own flows of the last are done, as MPI libraries run the steps, so the
flows of different steps may share the network and the op may end before
(or after) the steps' sum. The steps' times it reports are how much later
each step's last rank was done than any earlier step's, and add up the same.

Max-min rates depend only on the flows' routes, not on their bytes, so the
rates of a set of (source, destination) pairs are solved once and reused by
every step that repeats it: a repeated step (a ring's, a chain's; schedules.py)
is routed and solved once, and its repeats cost one multiplication each,
in blocks of rows (`ROWS`) so that a 4,096-rank ring never holds its
8,190 x 4,096 bytes at once.

Most steps need no filling at all: the first level of max-min filling is the
lowest share min over resources of capacity / load, and a flow crossing a
resource at that level gets it. When every flow of a step crosses one (a
ring's or a torus's steps, whose flows are all alike by symmetry, and most
steps on a fat tree), every rate is that level, found from the loads alone;
a topology counts its loads without listing each route link by link where it
can (a torus by difference arrays along its ringlets), so a 100,000-node
ring's recursive doubling never holds its flows x hops. Only the other steps
are filled flow by flow, within a budget of listed route entries checked
before they are listed (limits.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from .limits import MAX_FILLED_ENTRIES, MAX_ROUTED_ENTRIES, MAX_TIMED_CELLS
from .loads import class_rates, display_label, resource_capacity
from .maxmin import max_min
from .netfile import NetworkFile
from .overlap import OVERLAP_CELLS, simulate
from .schedules import Schedule, Step
from .topologies.base import Topology

PLACEMENTS = ("block", "cyclic")
ROWS = 512          # repeats of a step timed together (ROWS x flows floats at a time)
REL_TOL = 1e-9      # shares this close to the lowest are saturated with it (maxmin.max_min's rel_tol)


@dataclass(frozen=True)
class StepTime:
    seconds: float           # the step's time over all its repeats
    bottleneck: str          # the resource that froze the slowest flow of its costliest repeat ("" if none)
    repeat: int = 1
    slowest: float = -1.0    # the costliest repeat's seconds (default: seconds / repeat)

    @property
    def each(self) -> float:
        return self.slowest if self.slowest >= 0 else self.seconds / self.repeat


@dataclass
class ScheduleTime:
    seconds: float
    steps: list = field(default_factory=list)     # [StepTime]
    busiest: str = ""        # the resource busy longest over the whole schedule (its bytes over its rate)
    busiest_s: float = 0.0   # its busy seconds

    @property
    def bottleneck(self) -> str:
        """The bottleneck of the step that costs most."""
        return max(self.steps, key=lambda s: s.each).bottleneck if self.steps else ""


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


class Network:
    """A system's topology at `nodes` nodes (a network file: its own) with each resource's
    rate, and the solved rates of each flow pattern; it times any number of schedules."""

    def __init__(self, system, nodes: int | None = None, calibration=None):
        n = nodes if nodes is not None else getattr(system, "n_nodes", None)
        self.topo = system.build(n) if n is not None else None
        if self.topo is None:
            raise UsageError(f"{system.label} has no configuration of {n} nodes")
        rates = system.rates(self.topo, system.calibrated(calibration))
        self.cap = resource_capacity(self.topo, class_rates(self.topo, rates))
        self.cls = self.topo.class_of(np.arange(self.topo.n_resources))
        self.labels = [display_label(c, rates) for c in self.topo.classes]
        self.solved: dict = {}
        self.by_rank = isinstance(system, NetworkFile)      # small: timed rank by rank (overlap.py)
        self.routed = 0          # route entries listed so far (MAX_ROUTED_ENTRIES)

    @property
    def nodes(self) -> int:
        return self.topo.n_nodes

    def rates(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Max-min rate and bottleneck resource (one of its class) of each flow, cached by
        the pattern."""
        key = (src.tobytes(), dst.tobytes())
        if key not in self.solved:
            self.solved[key] = self._first_level(src, dst) or self._filled(src, dst)
        return self.solved[key]

    def _first_level(self, src: np.ndarray, dst: np.ndarray):
        """(rates, bottlenecks) when every flow crosses a resource of the lowest share
        capacity / load, which then is every flow's max-min rate; None otherwise."""
        if not len(src):
            return None
        self._budget(src, dst)
        self._budget(src, dst)       # listed twice where they take more than one block
        level, top = self.topo.first_level(src, dst, self.cap, REL_TOL)
        if (top < 0).any():
            return None
        return np.full(len(src), level), self.topo.offsets[top]

    def _filled(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Max-min filling flow by flow, its routes listed whole (MAX_FILLED_ENTRIES)."""
        lengths = self.topo.route_lengths(src, dst)
        entries = int(lengths.sum()) if lengths is not None else 0
        if entries > MAX_FILLED_ENTRIES:
            raise UsageError(f"{len(src):,} flows of {entries:,} route entries are too many to share max-min on "
                             f"{self.topo.describe()} (at most {MAX_FILLED_ENTRIES:,}); use fewer nodes")
        res = max_min(self.topo.paths(src, dst), self.cap)
        return res.rates, res.bottleneck

    def _loads(self, src: np.ndarray, dst: np.ndarray, weights=None) -> np.ndarray:
        self._budget(src, dst)
        return self.topo.loads(src, dst, weights)

    def _budget(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Count the route entries a topology lists to load these flows (none where it
        counts by intervals) and refuse, before listing them, past MAX_ROUTED_ENTRIES."""
        if type(self.topo).loads is not Topology.loads:
            return
        lengths = self.topo.route_lengths(src, dst)
        self.routed += int(lengths.sum()) if lengths is not None else 0
        if self.routed > MAX_ROUTED_ENTRIES:
            raise UsageError(f"the routes of this schedule on {self.topo.describe()} hold more than "
                             f"{MAX_ROUTED_ENTRIES:,} entries, too many to time; use fewer nodes")

    def time(self, sched: Schedule, alpha: float, gamma: float, placement=None, busiest: bool = True) -> ScheduleTime:
        """The predicted time of `sched` with ranks on the nodes `placement` (default: one
        rank a node, in order); without `busiest`, the busiest resource is left out (it
        loads every step again, at every size)."""
        if not (alpha >= 0 and gamma >= 0 and np.isfinite(alpha) and np.isfinite(gamma)):
            raise UsageError("alpha and gamma must be finite and not negative")
        where = np.arange(sched.ranks, dtype=np.int64) if placement is None else np.asarray(placement, np.int64)
        if len(where) != sched.ranks or where.min(initial=0) < 0 or where.max(initial=0) >= self.nodes:
            raise UsageError(f"the placement must put each of the {sched.ranks} ranks on one of the network's "
                             f"{self.nodes} nodes")
        if self.by_rank and sched.ranks * sched.n_steps <= OVERLAP_CELLS:
            steps = self._overlapped(sched, where, alpha, gamma)
        else:
            steps = [self._step_time(step, where, alpha, gamma) for step in sched.steps]
        busiest, busy_s = self.busiest(sched, where) if busiest else ("", 0.0)
        return ScheduleTime(float(sum(s.seconds for s in steps)), steps, busiest, busy_s)

    def _overlapped(self, sched: Schedule, where: np.ndarray, alpha: float, gamma: float) -> list:
        """Each step taken once, timed rank by rank (overlap.py): a step's seconds are how
        much later its last rank is done than the last rank of any step before it, so
        they add up to the schedule's time."""
        steps = sched.expanded()
        src = where[np.concatenate([s.src for s in steps])] if steps else np.zeros(0, np.int64)
        dst = where[np.concatenate([s.dst for s in steps])] if steps else np.zeros(0, np.int64)

        def rates(flows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            r, bott = self.rates(src[flows], dst[flows])
            return r, np.where(bott >= 0, self.cls[np.maximum(bott, 0)], -1)

        if not steps:
            return []
        ends, labels = simulate(steps, sched.ranks, src == dst, rates, alpha, gamma)
        reached = np.maximum.accumulate(ends)
        each = np.diff(reached, prepend=0.0)
        return [StepTime(float(t), self.labels[k] if k >= 0 else "", 1, float(t)) for t, k in zip(each, labels)]

    def busiest(self, sched: Schedule, where: np.ndarray) -> tuple[str, float]:
        """The resource busy longest over the whole schedule, every step's bytes on it over
        its rate (what a counter on each cable would rank first), and its busy seconds."""
        work = np.zeros(self.topo.n_resources)
        for step in sched.steps:
            src, dst = where[step.src], where[step.dst]
            remote = src != dst
            if remote.any():
                work += self._loads(src[remote], dst[remote], step.totals()[remote])
        if not work.any():
            return "", 0.0
        busy = work / self.cap
        top = int(np.argmax(busy))
        return self.labels[int(self.cls[top])], float(busy[top])

    def _inverse_rates(self, step: Step, where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Seconds per byte of each flow (0 between ranks of one node) and its bottleneck's label index."""
        src, dst = where[step.src], where[step.dst]
        remote = src != dst
        inv, label = np.zeros(len(src)), np.full(len(src), -1, np.int64)
        if remote.any():
            rates, bott = self.rates(src[remote], dst[remote])
            inv[remote] = 1.0 / rates
            label[remote] = np.where(bott >= 0, self.cls[np.maximum(bott, 0)], -1)
        return inv, label

    def _step_time(self, step: Step, where: np.ndarray, alpha: float, gamma: float) -> StepTime:
        inv, label = self._inverse_rates(step, where)
        region = step.tape[step.start - step.repeat + 1:step.start + len(step.src)]
        if step.repeat > 1 and region.min() != region.max() and (inv == inv[0]).all() and (label == label[0]).all():
            return _alike(step, float(inv[0]), self.labels[label[0]] if label[0] >= 0 else "", alpha, gamma)
        same = step.repeat == 1 or region.min() == region.max()    # every repeat alike
        if not same and step.repeat * len(inv) > MAX_TIMED_CELLS:
            raise UsageError(f"a step of {len(inv):,} flows taken {step.repeat:,} times at different rates is too "
                             f"much to time (at most {MAX_TIMED_CELLS:,} flows x times); use fewer nodes")
        rows = step.windows()
        total, worst, worst_label = 0.0, -1.0, -1
        for lo in range(0, 1 if same else step.repeat, ROWS):
            chunk = rows[lo:lo + ROWS].astype(float)
            work = chunk * inv
            slow = work.argmax(axis=1)
            t = work[np.arange(len(chunk)), slow] + alpha + gamma * _reduced(step, chunk)
            total += float(t.sum())
            k = int(t.argmax())
            if t[k] > worst:
                worst, worst_label = float(t[k]), int(label[slow[k]])
        if same:
            total = worst * step.repeat
        return StepTime(total, self.labels[worst_label] if worst_label >= 0 else "", step.repeat, worst)


def _alike(step: Step, inv: float, label: str, alpha: float, gamma: float) -> StepTime:
    """A repeated step whose flows all share one rate and bottleneck: each time costs its
    largest flow's bytes over that rate (and the same bytes reduced), so only each
    window's maximum is needed, O(tape) however many flows x times."""
    most = _sliding_max(step.tape[step.start - step.repeat + 1:step.start + len(step.src)], len(step.src))
    t = most * inv + alpha + (gamma * most if step.reduce else 0.0)
    return StepTime(float(t.sum()), label, step.repeat, float(t.max()))


def _sliding_max(a: np.ndarray, w: int) -> np.ndarray:
    """The maximum of every window a[i:i + w], in O(len(a)) (van Herk 1992; Gil and
    Werman 1993): the larger of a block's suffix maximum and the next block's prefix one."""
    a = np.asarray(a, float)
    blocks = np.concatenate((a, np.full(-len(a) % w, -np.inf))).reshape(-1, w)
    prefix = np.maximum.accumulate(blocks, axis=1).ravel()
    suffix = np.maximum.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].ravel()
    i = np.arange(len(a) - w + 1)
    return np.maximum(suffix[i], prefix[i + w - 1])


def _reduced(step: Step, chunk: np.ndarray) -> np.ndarray:
    """The most bytes a rank reduces, each repeat of the chunk (a repeated step's
    destinations are distinct: schedules.py)."""
    if not step.reduce:
        return np.zeros(len(chunk))
    if step.repeat == 1:
        return np.array([np.bincount(step.dst, weights=chunk[0]).max(initial=0)])
    return chunk.max(axis=1)


def schedule_time(sched: Schedule, system, alpha: float, gamma: float, placement=None,
                  calibration=None, nodes: int | None = None) -> ScheduleTime:
    """The predicted time of `sched` on `system` (a network file, or a catalog system at
    `nodes` nodes) with ranks on the nodes `placement` (default: one rank a node, in order)."""
    return Network(system, nodes, calibration).time(sched, alpha, gamma, placement)
