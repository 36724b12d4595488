"""Congestion impact (GPCNeT: Chunduri et al., "GPCNeT: Designing a
Benchmark Suite for Inducing and Measuring Contention in HPC Networks",
SC'19): who is a victim and who an aggressor, the victims' random ring, the
model's prediction of the impact, and the impact factors a run measured.

- The aggressors' traffic (param `aggressor`): alltoall; a registered
  pattern's flows laid over the aggressors (incast, the hotspot pattern;
  pairs, bipairs, shift at step 1, bisection); or a one-sided load on one
  hotspot (put_incast, get_bcast).
- The split: a seeded choice (param `split`) of `victims` ranks, by default
  a fifth of them (GPCNeT's share), at least two, and at least two
  aggressors left.
- The ring: a seeded permutation of the victims (param `seed`; a list of
  seeds runs a draw each, as GPCNeT redraws its random rings), each victim's
  successor its peer in the layout.
- Each victim benchmark runs two points per draw: active 0, the aggressors
  idle (isolated), and active A, every aggressor loading (congested). The
  launches of a run interleave them (measure/plan.py).
- The impact factor is congested over isolated time per op (GPCNeT's
  congestion impact factor; above 1: the victims are slower), for the
  median and the 99th percentile of the samples (the slowest victim's
  time per op, per sample), each with compare's two-level bootstrap
  interval over every launch of every draw (analysis/launches.py
  ratio_ci); the draws' own median ratios give their spread.
- On a known network (the run's testbed or `--network`) the model routes
  the victims' flows alone and beside the aggressors' and gives each its
  max-min share (model/schedule_time.py Network.rates): the predicted
  bandwidth impact factor is the slowest victim flow's rate alone over its
  rate beside them (a victim's op ends with its slowest flow), and the
  cables that its flows share with aggressor flows are named."""

from __future__ import annotations

# numpy is imported where it is used: `fabriclab --help` and `list` load this module

import math
import random
from dataclasses import dataclass, field
from typing import Optional

from ..errors import UsageError
from . import patterns
from .patterns import Layout

BENCHES = ("message.victim_latency", "message.victim_bandwidth", "message.victim_allreduce", "message.victim")
# The victim tests by name: GPCNeT's three, each a benchmark; any other registered benchmark
# is named in full and runs as message.victim (its param `victim`).
TESTS = {"latency": "message.victim_latency", "bandwidth": "message.victim_bandwidth",
         "allreduce": "message.victim_allreduce"}
ANY = "message.victim"
# What message.victim can run (message_victim.c): a two-rank benchmark (no pattern) or one whose
# every rank takes part, each victim active; of the core's own levels (libfabric and UCX build
# cores of their own).
VICTIM_PATTERNS = (None, "group", "app", "all")
VICTIM_LEVELS = ("memory", "deposit", "message", "tcp", "app", "coll")
# The aggressors' traffic: every aggressor to every other, a registered pattern's flows laid
# over the aggressors (patterns.py: incast is the hotspot pattern, its target the first
# aggressor), or a one-sided load on one hotspot.
PATTERNS = {"incast": "hotspot", "pairs": "pairs", "bipairs": "bipairs", "shift": "shift",
            "bisection": "bisection"}
ONE_SIDED = ("put_incast", "get_bcast")
AGGRESSORS = ("alltoall", "incast", "put_incast", "get_bcast", "pairs", "bipairs", "shift", "bisection")
VICTIM_SHARE = 0.2          # GPCNeT: a fifth of the ranks are victims
MIN_RANKS = 4               # two victims and two aggressors
P_TAIL = 0.99               # the tail's impact factor, as GPCNeT's 99th percentile


def victim_count(nranks: int, asked: int) -> int:
    """`victims` (0: a fifth of the ranks, at least 2), checked: two victims
    make a ring, two aggressors load each other."""
    v = asked or max(2, round(nranks * VICTIM_SHARE))
    if nranks < MIN_RANKS:
        raise UsageError(f"congestion needs at least {MIN_RANKS} ranks (2 victims, 2 aggressors); this run has "
                         f"{nranks}")
    if not 2 <= v <= nranks - 2:
        raise UsageError(f"victims={v} with {nranks} ranks: there must be at least 2 victims and 2 aggressors "
                         f"(victims 2..{nranks - 2})")
    return v


def victim_test(test: str) -> tuple[str, Optional[str]]:
    """(the benchmark that runs victim test `test`, the benchmark message.victim runs for it
    or None); UsageError for a name that is neither one of TESTS nor a benchmark's full name
    (which the plan checks, check_victim)."""
    if test in TESTS:
        return TESTS[test], None
    if "." in test:
        return ANY, test
    raise UsageError(f"unknown victim test {test!r}: {', '.join(TESTS)}, or a registered benchmark's full name "
                     "(message.pingpong, coll.allreduce, ...)")


def test_name(bench: str, params: dict) -> str:
    """What a victim test is called: its short name, or the benchmark message.victim ran."""
    if bench == ANY:
        return str(params.get("victim", ""))
    return next((k for k, v in TESTS.items() if v == bench), bench)


def check_victim(bench, name: str, victims: int) -> None:
    """UsageError unless message.victim can run benchmark `bench` (the registry's entry for
    `name`, None if it has none) among `victims` ranks."""
    why = ("no such benchmark (`fabriclab list` shows them)" if bench is None
           else "a congestion test measures congestion itself" if bench.pattern == "congestion"
           else "its level runs in a core of its own" if bench.level not in VICTIM_LEVELS
           else f"its {bench.pattern} pattern gives its ranks roles of their own"
           if bench.pattern not in VICTIM_PATTERNS
           else f"it needs {bench.min_ranks} ranks and there are {victims} victims" if bench.min_ranks > victims
           else None)
    if why:
        raise UsageError(f"victim {name!r} cannot be a victim test: {why}; a victim runs a two-rank benchmark "
                         f"or one whose every rank takes part ({', '.join(p for p in VICTIM_PATTERNS if p)}) "
                         f"of the levels {', '.join(VICTIM_LEVELS)}")


def split(nranks: int, victims: int, seed: int) -> list[int]:
    """The victims' ranks: a seeded choice, the same for every draw of the ring."""
    return sorted(random.Random(f"fabriclab:victims:{seed}").sample(range(nranks), victims))


def ring(victims: list[int], seed: int) -> dict:
    """{victim: its successor} on a seeded random ring through every victim."""
    order = list(victims)
    random.Random(f"fabriclab:ring:{seed}").shuffle(order)
    return {v: order[(i + 1) % len(order)] for i, v in enumerate(order)}


def layouts(nranks: int, params: dict, actives: Optional[list] = None) -> list[Layout]:
    """The isolated layout (active 0) and the congested one (active A, every
    aggressor loading), or those of `actives`, which must be 0 or A."""
    v = split(nranks, victim_count(nranks, int(params.get("victims", 0))), int(params.get("split", 1)))
    aggressors = [r for r in range(nranks) if r not in v]
    top = len(aggressors)
    for a in actives or ():
        if a not in (0, top):
            raise UsageError(f"a congestion point's active count is 0 (isolated) or {top} (every aggressor "
                             f"loading), not {a}")
    succ = ring(v, int(params.get("seed", 1)))
    load = _load(aggressors, params.get("aggressor", "alltoall"), int(params.get("seed", 1)))
    out = []
    for a in actives or (0, top):
        roles, peers = ["i"] * nranks, [-1] * nranks
        for r in v:
            roles[r], peers[r] = "v", succ[r]
        for r, (role, peer) in load.items() if a else ():
            roles[r], peers[r] = role, peer
        out.append(Layout(a, "".join(roles), tuple(peers)))
    return out


def _load(aggressors: list[int], kind: str, seed: int) -> dict:
    """{rank: (role, peer)} of the aggressors loading: 'a' and no peer (alltoall), origins 'a'
    naming the first aggressor, the hotspot 't' (the one-sided loads), or a pattern's layout
    over them."""
    if kind == "alltoall":
        return {r: ("a", -1) for r in aggressors}
    if kind in ONE_SIDED:
        return {r: ("a", aggressors[0]) if r != aggressors[0] else ("t", -1) for r in aggressors}
    n = len(aggressors)
    if PATTERNS[kind] in ("pairs", "bipairs", "bisection") and n % 2:
        raise UsageError(f"the {kind} aggressor pairs the aggressors and needs an even number of them, not {n}")
    lay = patterns.layout(PATTERNS[kind], n, 1 if kind == "shift" else patterns.max_active(PATTERNS[kind], n), seed)
    return {r: (lay.roles[i], aggressors[lay.peers[i]] if lay.peers[i] >= 0 else -1)
            for i, r in enumerate(aggressors)}


# ---- the model's prediction ----

def flows(roles: str, peers: list, aggressor: str) -> tuple[list, list]:
    """([(src, dst)] of the victims: each to its successor and its
    predecessor; [(src, dst)] of the aggressors' load)."""
    vic = [r for r, x in enumerate(roles) if x == "v"]
    pred = {peers[r]: r for r in vic}
    victim = [(r, peers[r]) for r in vic] + [(r, pred[r]) for r in vic]
    agg = [r for r, x in enumerate(roles) if x not in "vi"]
    hot = next((r for r in agg if peers[r] < 0), None)
    if aggressor == "alltoall":
        load = [(a, b) for a in agg for b in agg if a != b]
    elif aggressor == "get_bcast":
        load = [(hot, a) for a in agg if a != hot]
    elif aggressor == "put_incast":
        load = [(a, hot) for a in agg if a != hot]
    else:                     # a pattern's: each sender (s, b) to its peer
        load = [(r, peers[r]) for r in agg if roles[r] in "sb"]
    return victim, load


@dataclass
class Prediction:
    isolated_Bps: float          # the slowest victim flow alone
    congested_Bps: float         # ... beside the aggressors' flows
    bottleneck: str              # the cable that limits it beside them
    shared: list                 # cables its victims' flows share with aggressor flows

    @property
    def impact(self) -> float:
        return self.isolated_Bps / self.congested_Bps if self.congested_Bps > 0 else math.inf

    def to_dict(self) -> dict:
        return {"isolated_Bps": self.isolated_Bps, "congested_Bps": self.congested_Bps,
                "impact": self.impact, "bottleneck": self.bottleneck, "shared": self.shared}


def predict(net, where, roles: str, peers: list, aggressor: str) -> Optional[Prediction]:
    """The model's bandwidth impact of the congested layout (roles, peers);
    None when no victim flow leaves its host. A flow is an ordered pair of
    ranks, one connection: where a victim's successor is also its
    predecessor (two victims), its two windows to it are one flow, for a
    fabric arbitrates between connections (queue pairs; on the testbed a
    queue per pair of hosts, docs/testbed.md) and not between the messages
    queued on one; a victim's op ends with its slowest flow."""
    import numpy as np
    victim, load = flows(roles, peers, aggressor)
    victim = list(dict.fromkeys((s, d) for s, d in victim if where[s] != where[d]))
    load = list(dict.fromkeys((s, d) for s, d in load if where[s] != where[d]))
    if not victim:
        return None
    pairs = victim + load
    src = np.array([where[s] for s, _ in pairs], dtype=np.int64)
    dst = np.array([where[d] for _, d in pairs], dtype=np.int64)
    nv = len(victim)
    alone, _ = net.rates(src[:nv], dst[:nv])
    rates, bott = net.rates(src, dst)
    worst = int(np.argmin(rates[:nv]))
    paths = net.topo.paths(src, dst)

    def labels(j):
        return {net.labels[int(net.cls[x])] for x in paths.res[paths.indptr[j]:paths.indptr[j + 1]]}
    mine = set().union(*(labels(j) for j in range(nv)))
    theirs = set().union(*(labels(j) for j in range(nv, len(pairs)))) if load else set()
    b = int(bott[worst])
    return Prediction(float(alone.min()), float(rates[worst]), net.labels[int(net.cls[b])] if b >= 0 else "",
                      sorted(mine & theirs))


# ---- what a run measured ----

@dataclass
class Impact:
    """One victim test at one size under one aggressor, over every draw."""
    bench: str
    test: str                    # its name (test_name): latency, ..., or the benchmark message.victim ran
    size: int
    aggressor: str
    victims: int
    aggressors: int
    isolated_s: float            # median of the isolated launches' medians, s per op
    congested_s: float
    median: tuple                # (impact, lo, hi): congested / isolated time per op
    tail: tuple                  # the same of the 99th percentiles
    draws: list = field(default_factory=list)        # each draw's median impact
    predicted: Optional[Prediction] = None
    tail_of: str = "samples"     # the p99 of single ops ("ops": --per-op) or of the batched samples

    def to_dict(self) -> dict:
        return {"bench": self.bench, "test": self.test, "size": self.size, "aggressor": self.aggressor,
                "victims": self.victims, "aggressors": self.aggressors, "isolated_s": self.isolated_s, "congested_s": self.congested_s,
                "median": list(self.median), "p99": list(self.tail), "p99_of": self.tail_of, "draws": self.draws,
                "predicted": self.predicted.to_dict() if self.predicted else None}


def _groups(points) -> dict:
    """{(bench, size, params but the ring's seed): {seed: ([isolated launches], [congested], [layout],
    ([isolated launches' single-op histograms], [congested]))}}."""
    out: dict = {}
    for p in points:
        if p.bench not in BENCHES or p.active is None or not p.samples:
            continue
        params = dict(p.params or {})
        seed = params.pop("seed", "1")
        key = (p.bench, p.size, tuple(sorted(params.items())))
        iso, cong, lay, hists = out.setdefault(key, {}).setdefault(seed, ([], [], [None], ([], [])))
        (cong if p.active else iso).append(p.samples)
        hists[bool(p.active)].append(p.op_histogram)
        if p.active and p.roles:
            lay[0] = (p.roles, list(p.peers or []))
    return out


def impacts(points, hosts: Optional[list] = None, network: Optional[str] = None,
            calibration: Optional[str] = None) -> list[Impact]:
    """The impact factors of a run's points (every launch, not merged)."""
    import numpy as np
    from ..analysis.launches import ratio_ci
    from .coll_prediction import placed
    net, where = placed(network, hosts or [], calibration)
    out = []
    for (bench, size, params), draws in sorted(_groups(points).items()):
        iso = [x for d in draws.values() for x in d[0]]
        cong = [x for d in draws.values() for x in d[1]]
        if not iso or not cong:
            continue
        per = [float(np.median([np.median(x) for x in c]) / np.median([np.median(x) for x in i]))
               for i, c, _, _ in draws.values() if i and c]
        tail, tail_of = _tail(iso, cong, [h for d in draws.values() for h in d[3][0]],
                              [h for d in draws.values() for h in d[3][1]])
        lay = next((d[2][0] for d in draws.values() if d[2][0]), None)
        agg = dict(params).get("aggressor", "alltoall")
        pred = None
        if net is not None and lay and bench == "message.victim_bandwidth":
            pred = predict(net, where, lay[0], lay[1], agg)
        out.append(Impact(bench, test_name(bench, dict(params)), size, agg, lay[0].count("v") if lay else 0,
                          sum(x not in "vi" for x in lay[0]) if lay else 0,
                          float(np.median([np.median(x) for x in iso])),
                          float(np.median([np.median(x) for x in cong])),
                          ratio_ci(iso, cong), tail, per, pred, tail_of))
    return out


def _tail(iso: list, cong: list, iso_ops: list, cong_ops: list) -> tuple:
    """(the p99's impact (ratio, lo, hi), what it is of): of single ops where every launch of
    both sides timed them (--per-op: each launch's p99, resampled over launches as compare's
    tails are), else of the launches' samples (their order statistic, launches.ratio_ci q)."""
    from ..analysis.launches import ratio_ci
    from ..analysis.tails import quantiles
    name = f"p{P_TAIL * 100:g}"
    x = [quantiles(h).get(name) for h in iso_ops if h]
    y = [quantiles(h).get(name) for h in cong_ops if h]
    if x and y and len(x) == len(iso) and len(y) == len(cong) and None not in x + y:
        return ratio_ci([[v] for v in x], [[v] for v in y]), "ops"
    return ratio_ci(iso, cong, q=P_TAIL), "samples"


def lines(found: list[Impact]) -> list[str]:
    """The impact factors as `show` and `fabriclab congestion` print them."""
    from ..units import fmt_bytes, fmt_time
    if not found:
        return []
    out = ["congestion impact: congested / isolated time per op of the slowest victim (above 1: slower), "
           "95% CI over launches and draws",
           f"{'victim test':<26}{'size':>7} {'aggressor':<11}{'V/A':>6} {'isolated':>10} {'congested':>10}  "
           f"{'median (95% CI)':<24}{'p99 (95% CI)':<24}{'p99 of':<9}{'draws':<14}model"]

    def ci(t):
        r, lo, hi = t
        return f"{r:.2f} [{lo:.2f}, {hi:.2f}]" if all(map(math.isfinite, (r, lo, hi))) else f"{r:.2f}"
    for m in found:
        spread = f"{min(m.draws):.2f}-{max(m.draws):.2f}" if len(m.draws) > 1 else "one"
        model = (f"{m.predicted.impact:.2f} ({m.predicted.bottleneck})" if m.predicted else "-")
        out.append(f"{m.test:<26}{fmt_bytes(m.size):>7} {m.aggressor:<11}"
                   f"{m.victims:>3}/{m.aggressors:<2} {fmt_time(m.isolated_s):>10} {fmt_time(m.congested_s):>10}  "
                   f"{ci(m.median):<24}{ci(m.tail):<24}{m.tail_of:<9}{spread:<14}{model}")
        if m.predicted and m.predicted.shared:
            out.append(f"  shared with the aggressors: {', '.join(m.predicted.shared)}")
    return out
