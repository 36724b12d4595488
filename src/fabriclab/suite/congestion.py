"""Congestion impact (GPCNeT: Chunduri et al., "GPCNeT: Designing a
Benchmark Suite for Inducing and Measuring Contention in HPC Networks",
SC'19): who is a victim and who an aggressor, and the victims' random ring
(the model's prediction of the impact and the impact factors a run measured
are verdicts/congestion.py's).

- The aggressors' traffic (param `aggressor`): alltoall; a registered
  pattern's flows laid over the aggressors (incast, the hotspot pattern;
  pairs, bipairs, shift at step 1, bisection); or a one-sided load on one
  hotspot (put_incast, get_bcast).
- The split: a seeded choice (param `split`) of `victims` ranks, by default
  a fifth of them (GPCNeT's share), at least two, and at least two
  aggressors left.
- The ring: a seeded permutation of the victims (patterns.ring, param `seed`; a list of
  seeds runs a draw each, as GPCNeT redraws its random rings), each victim's
  successor its peer in the layout.
- Each victim benchmark runs two points per draw: active 0, the aggressors
  idle (isolated), and active A, every aggressor loading (congested). The
  launches of a run interleave them (measure/plan.py)."""

from __future__ import annotations

import random
from typing import Optional

from ..errors import UsageError
from . import patterns
from .patterns import Layout, ring

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
