"""`fabriclab model --collective OP`: each algorithm's predicted time of a
collective against size and node count on a catalog system or network file,
the best algorithm at each size, the sizes where the best changes, and the
bottleneck (schedules.py, schedule_time.py; docs/model.md §10).

The answer is typed (`CollectivePrediction`); what an operation's bytes and
bus bandwidth are belongs to the measured side (suite/collectives.py), and
the command line adds them to the times."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..errors import UsageError
from .budget import refusal
from .schedule_time import PLACEMENTS, Network, place
from .schedules import ALGORITHMS, TooLarge, schedule

# When nothing is measured (docs/model.md §10): one message's start, about an MPI
# library's small-message half round trip on a current fabric, and one byte's local
# reduction at 4 GB/s (a sum of doubles streamed from and to memory).
ALPHA = 2e-6
GAMMA = 0.25e-9
TIE = 1e-3       # predictions within 0.1% are a tie: the first algorithm listed keeps the lead
MAX_POINTS = 10_000


@dataclass(frozen=True)
class CollectiveQuestion:
    op: str
    sizes: tuple
    nodes: tuple
    algorithms: tuple = ()        # default: every algorithm the model has for op
    per_node: int = 1
    placement: str = "block"
    alpha: float = ALPHA
    gamma: float = GAMMA
    root: int = 0

    def checked(self) -> "CollectiveQuestion":
        """The question with its algorithms filled in; UsageError in one line for a bad one."""
        if self.op not in ALGORITHMS:
            raise UsageError(f"the model has no schedules for {self.op!r}: it has {', '.join(ALGORITHMS)}")
        algs = self.algorithms or tuple(ALGORITHMS[self.op])
        bad = [a for a in algs if a not in ALGORITHMS[self.op]]
        if bad:
            raise UsageError(f"{self.op} has no algorithm {bad[0]!r} in the model: {', '.join(ALGORITHMS[self.op])}")
        if self.placement not in PLACEMENTS:
            raise UsageError(f"placement must be one of {', '.join(PLACEMENTS)}, not {self.placement!r}")
        if not 1 <= self.per_node <= 1024:
            raise UsageError(f"ranks per node must be from 1 to 1024, not {self.per_node}")
        points = len(algs) * len(self.sizes) * len(self.nodes)
        if points > MAX_POINTS:
            raise UsageError(f"{points:,} predictions asked (algorithms x sizes x node counts); at most "
                             f"{MAX_POINTS:,}: give fewer sizes or node counts")
        return CollectiveQuestion(self.op, tuple(self.sizes), tuple(self.nodes), tuple(dict.fromkeys(algs)),
                                  self.per_node, self.placement, self.alpha, self.gamma, self.root)


@dataclass(frozen=True)
class CollectivePoint:
    algorithm: str
    nodes: int
    ranks: int
    size: int
    seconds: float
    steps: int
    bottleneck: str


@dataclass(frozen=True)
class Lead:
    """A run of sizes, at one node count, over which one algorithm is predicted fastest."""
    nodes: int
    algorithm: str
    first: int
    last: int


@dataclass(frozen=True)
class Skipped:
    """An algorithm left out at one node count: timing it would pass a budget (budget.py)."""
    nodes: int
    algorithm: str
    why: str


@dataclass
class CollectivePrediction:
    system: str
    question: CollectiveQuestion
    points: list = field(default_factory=list)     # [CollectivePoint]
    leads: list = field(default_factory=list)      # [Lead], by node count then size
    missing: list = field(default_factory=list)    # node counts the system has no configuration of
    skipped: list = field(default_factory=list)    # [Skipped], by node count then algorithm

    def best(self, nodes: int, size: int) -> CollectivePoint:
        """The fastest algorithm's point (ties to the first listed)."""
        cands = [p for p in self.points if p.nodes == nodes and p.size == size]
        order = {a: i for i, a in enumerate(self.question.algorithms)}
        fastest = min(p.seconds for p in cands)
        return min((p for p in cands if p.seconds <= fastest * (1 + TIE)), key=lambda p: order[p.algorithm])

    def to_dict(self) -> dict:
        return {"system": self.system, "question": asdict(self.question),
                "points": [asdict(p) for p in self.points], "leads": [asdict(x) for x in self.leads],
                "missing_nodes": list(self.missing), "not_computed": [asdict(x) for x in self.skipped]}


def predict(system, q: CollectiveQuestion, calibration=None, progress=None) -> CollectivePrediction:
    """Every (node count, algorithm, size) of `q` on `system`; `progress(done, total)` after each."""
    q = q.checked()
    out = CollectivePrediction(system.label, q)
    total, done = len(q.nodes) * len(q.algorithms) * len(q.sizes), 0
    for n in q.nodes:
        try:
            net = Network(system, n, calibration)
        except UsageError:
            if getattr(system, "n_nodes", n) != n:
                raise
            out.missing.append(n)
            continue
        ranks = n * q.per_node
        if not q.root < ranks:
            raise UsageError(f"root {q.root} is not one of the {ranks} ranks")
        where = place(ranks, net.nodes, q.placement, q.per_node)
        for alg in q.algorithms:
            done += len(q.sizes)
            _time_algorithm(out, net, n, alg, where)
            if progress:
                progress(done, total)
    if not out.points:
        raise UsageError(_nothing(out))
    out.leads = _leads(out)
    return out


def _time_algorithm(out: CollectivePrediction, net: Network, n: int, alg: str, where) -> None:
    """Every size of one algorithm at n nodes, or, where timing it would pass a budget
    (budget.py, checked before any of it is timed), the line that says which."""
    q, ranks = out.question, len(where)
    net.routed = 0           # each algorithm has the budgets to itself (budget.py)
    try:
        line = refusal(net, (schedule(q.op, alg, ranks, size, q.root) for size in q.sizes), where)
    except TooLarge as e:         # its schedule alone is past schedules.MAX_FLOWS: the others may be timed
        line = str(e).split("; ")[0]
    if line:
        out.skipped.append(Skipped(n, alg, line))
        return
    for size in q.sizes:
        t = net.time(schedule(q.op, alg, ranks, size, q.root), q.alpha, q.gamma, where, busiest=False)
        out.points.append(CollectivePoint(alg, n, ranks, size, t.seconds, sum(s.repeat for s in t.steps),
                                          t.bottleneck))


def _nothing(p: CollectivePrediction) -> str:
    """The line of a prediction with no point at all."""
    if p.skipped:
        s = p.skipped[0]
        return f"{s.algorithm} on {s.nodes:,} nodes is not computed: {s.why}" + (
            f" (and {len(p.skipped) - 1} more like it); use fewer nodes" if len(p.skipped) > 1 else "; use fewer nodes")
    return (f"{p.system} has no configuration of {', '.join(f'{n:,}' for n in p.missing)} "
            "nodes: give other node counts")


def _leads(p: CollectivePrediction) -> list:
    """Maximal runs of sizes with the same fastest algorithm, at each node count."""
    out: list = []
    for n in dict.fromkeys(pt.nodes for pt in p.points):
        for size in p.question.sizes:
            alg = p.best(n, size).algorithm
            if out and out[-1].nodes == n and out[-1].algorithm == alg:
                out[-1] = Lead(n, alg, out[-1].first, size)
            else:
                out.append(Lead(n, alg, size, size))
    return out
