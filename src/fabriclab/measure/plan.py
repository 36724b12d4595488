"""The run plan: which benchmarks, at which sizes and strides, sampled how.

A plan is pure data built from the command line; the runner executes it and
the header records it, so a run can be repeated exactly. Every value in it is
in its canonical form: sizes, strides and counts are integers and parameters
are plain decimal integers, listed choices or text (units.py's grammar,
facts.Param), so bad input is refused here, before anything is built or
launched, and the core receives nothing it would refuse."""

from __future__ import annotations

import os
import random
from dataclasses import asdict, dataclass, field, replace

from ..errors import UsageError
from ..units import check_range, parse_sizes, parse_strides
from ..suite import atomics, buffers, collectives, congestion, hpcc, patterns, threads
from ..suite.benchmarks import REGISTRY, select
from ..suite.facts import Bench


MAX_PER_OP_S = 3600.0
# A run's time budget (--budget): positive, within a year.
BUDGET_S = (1e-3, 3.2e7)
# Each sampling number's range, for its option and for Sampling.check: finite (NaN and infinity
# fail every comparison), the counts within the core's int, and the times far enough inside a
# double and select()'s timeout that what is computed from them (a launch's allowed silence,
# timeout plus twice the point time; a sample's batch of ops) cannot overflow.
RANGES = {"warmup": (0, 10**9), "min_samples": (1, 10**9), "max_samples": (1, 10**9),
          "target_ci": (1e-12, 0.999), "point_time": (1e-6, 86400.0), "sample_time": (1e-9, 3600.0),
          "per_op": (0.0, MAX_PER_OP_S)}


@dataclass(frozen=True)
class Sampling:
    """Adaptive sampling per point (docs/core-protocol.md, runner step 4)."""
    warmup: int = 20             # warm-up ops per point, run and discarded
    min_samples: int = 10
    max_samples: int = 2000
    target_ci: float = 0.025     # stop when the 95% CI of the median is within +-2.5%
    point_time: float = 0.5      # per-point time cap of one launch, seconds (five launches: 2.5 s a point)
    sample_time: float = 2e-5    # batch ops so one sample lasts at least this long
    per_op: float = 0.0          # seconds of single ops timed one by one after the samples; 0: none

    def check(self) -> "Sampling":
        for name, (lo, hi) in RANGES.items():
            check_range("--" + name.replace("_", "-"), getattr(self, name), lo, hi)
        if self.max_samples < self.min_samples:
            raise UsageError("need 1 <= --min-samples <= --max-samples")
        return self


@dataclass(frozen=True)
class Job:
    bench: Bench
    sizes: tuple
    strides: tuple
    params: dict = field(default_factory=dict)
    conns: tuple = (1,)
    layouts: tuple = ()            # patterns.Layout per active count; () for two-rank benchmarks
    buffers: tuple = ()            # per size: buffers per side (cache state); () = one each
    env: tuple = ()                # (name, value) its launches set: a collective's algorithm (coll_algorithms.py)

    @property
    def npoints(self) -> int:
        return len(self.sizes) * len(self.strides) * len(self.conns) * max(1, len(self.layouts))

    @property
    def variant(self) -> str:
        """The parameters given for this job that differ from the defaults,
        "check=scan,window=8": what tells its points apart from another job of
        the same benchmark ("" for the defaults)."""
        d = self.bench.defaults
        return ",".join(f"{k}={v}" for k, v in sorted(self.params.items()) if d.get(k) != v)

    def to_dict(self) -> dict:
        d = {"bench": self.bench.name, "variant": self.variant, "sizes": list(self.sizes),
             "strides": list(self.strides), "params": dict(self.params)}
        if self.bench.pattern:
            d["layouts"] = [{"active": lay.active, "roles": lay.roles, "peers": list(lay.peers)}
                            for lay in self.layouts]
        if "conns" in self.bench.axes:
            d["conns"] = list(self.conns)
        if self.buffers:
            d["buffers"] = list(self.buffers)
        if self.env:
            d["env"] = dict(self.env)
        return d


@dataclass(frozen=True)
class Plan:
    jobs: tuple
    sampling: Sampling
    validate: bool = False
    cache: str = "warm"
    llc_bytes: int | None = None
    notes: tuple = ()              # what the default suite left out, and why
    launches: int = 1              # independent launches per job (fresh processes each)
    seed: int = 0                  # the shuffle of each launch's order
    budget: float | None = None    # seconds the launches should take in all (measure/pace.py); None: no budget

    @property
    def npoints(self) -> int:
        """Points measured, over all launches."""
        return self.launches * sum(j.npoints for j in self.jobs)

    def order(self, launch: int) -> list[Job]:
        """The jobs of one launch, in the order they run. With several
        launches the order of the jobs and of each job's sizes is shuffled per
        launch (from seed and launch), so a slow drift of the machine is
        spread over all sizes instead of masquerading as a size effect; a
        single launch keeps the registry's order."""
        if self.launches == 1:
            return list(self.jobs)
        rng = random.Random(f"fabriclab:{self.seed}:{launch}")
        jobs = list(self.jobs)
        rng.shuffle(jobs)
        out = []
        for j in jobs:
            idx = list(range(len(j.sizes)))
            rng.shuffle(idx)
            out.append(replace(j, sizes=tuple(j.sizes[i] for i in idx),
                               buffers=tuple(j.buffers[i] for i in idx) if j.buffers else ()))
        return out

    def to_dict(self) -> dict:
        return {"jobs": [j.to_dict() for j in self.jobs], "sampling": asdict(self.sampling),
                "validate": self.validate, "cache": {"state": self.cache, "llc_bytes": self.llc_bytes,
                                                     "warm_region_bytes": buffers.WARM_REGION},
                "launches": self.launches, "seed": self.seed, "budget_s": self.budget}


def parse_params(items: list[str] | None) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"malformed parameter {item!r}: expected KEY=VALUE, e.g. window=64")
        out[key.strip()] = value.strip()
    return out


def variants(params: dict, canonical=lambda key, value: value) -> list[dict]:
    """One dict per combination: "check=epoll,scan" gives a job per value.
    Each value is first put in its canonical form (`canonical(key, value)`),
    so window=1K,1024 is one job, not two."""
    out = [{}]
    for k, v in params.items():
        values = [x.strip() for x in str(v).split(",")]
        if not all(values):
            raise UsageError(f"malformed parameter {k}={v!r}: empty value in a list")
        out = [{**d, k: x} for d in out for x in dict.fromkeys(canonical(k, x) for x in values)]
    return out


# Limits of the axes, checked before anything is launched (the parameters'
# ranges are facts of the registry: facts.Param).
MAX_CONNS = 1024       # file descriptors and MPI requests per rank
MAX_SEGMENT_BYTES = 1 << 20
MAX_LAUNCHES = 1000
MAX_DATAGRAM = 65507  # an IPv4 UDP payload: 65535 - 20 (IP header) - 8 (UDP header)


def _check_limits(b: Bench, sizes, conns) -> None:
    if "conns" in b.axes and not all(1 <= c <= MAX_CONNS for c in conns):
        raise UsageError(f"{b.name}: connections must be 1..{MAX_CONNS}, got {min(conns) if min(conns) < 1 else max(conns)}")
    if "segments" in b.params and (max(sizes) > MAX_SEGMENT_BYTES or min(sizes) < 1):
        raise UsageError(f"{b.name}: segment sizes must be 1 B..{MAX_SEGMENT_BYTES >> 20} MiB")
    if b.level == "udp" and max(sizes) > MAX_DATAGRAM:
        raise UsageError(f"{b.name}: a datagram carries at most {MAX_DATAGRAM} bytes, got size {max(sizes)}")


def _unit_steps(spec: str) -> str:
    """Active counts step by one unless told: "1:8" is 1, 2, ..., 8 (a
    saturation curve wants every count; "1:64:x2" still sweeps geometrically)."""
    return ",".join(p + ":+1" if p.count(":") == 1 else p for p in spec.split(","))


def _check_options(chosen: list, given: dict, cache: str, strides, conns, active) -> None:
    """A parameter or axis option no selected benchmark has is an error, so typos cannot pass silently."""
    unknown = set(given) - {k for b in chosen for k in b.params}
    if unknown:
        raise UsageError(f"parameter {sorted(unknown)[0]!r} is not accepted by the selected benchmarks")
    if cache not in buffers.CACHE_STATES:
        raise UsageError(f"--cache must be warm or cold, not {cache!r}")
    for opt, axis, value in (("--strides", "stride", strides), ("--conns", "conns", conns),
                             ("--active", "active", active)):
        if value is not None and not any(axis in b.axes for b in chosen):
            raise UsageError(f"{opt} applies to benchmarks with a {axis} axis; none is selected")


def _settled(b: Bench, mine: dict, named: bool) -> list[dict]:
    """The variants of a benchmark's parameters, each checked whole: a
    parameter that means nothing beside the others (Bench.idle: window=8 with
    variant=collective) is refused for a benchmark named on the command
    line, and left at its default for one selected through its level (there
    it was given for the others)."""
    out, seen = [], []
    for params in variants(mine, b.canonical):
        idle = b.idle(params)
        if idle and named:
            raise UsageError(next(iter(idle.values())))
        params = {k: v for k, v in params.items() if k not in idle}
        if {**b.defaults, **params} not in seen:   # window=1,8 may leave two alike
            seen.append({**b.defaults, **params})
            out.append(params)
    return out


def _victim_buffers(name: str, sizes, lays, cache: str, llc_bytes) -> tuple:
    """message.victim running benchmark `name`: checked against the victims (congestion.py),
    a collective's sizes against its elements; the buffers of a two-rank benchmark's ops."""
    inner = REGISTRY.get(name)
    victims = lays[0].roles.count("v") if lays else 0
    congestion.check_victim(inner, name, victims)
    if inner.coll:
        collectives.check(inner.name, inner.coll, sizes, inner.defaults, [victims])
    return () if inner.pattern else tuple(buffers.plan(sizes, cache, llc_bytes, inner.own_buffers({})))


def _ruled_out(b: Bench, given: dict, nranks: int, named: bool) -> str | None:
    """Where the run's ranks cannot form a benchmark's grid or neighbourhood in a variant of
    its parameters (Bench.rules, suite/halo.py): UsageError when it was named, else the note
    that leaves it out of its level, as a rank count below its minimum does."""
    if not b.rules:
        return None
    variants = _settled(b, {k: v for k, v in given.items() if k in b.params}, named)
    try:
        for params in variants:
            b.rules(b.name, (), {**b.defaults, **params}, nranks)
    except UsageError as e:
        if named:
            raise
        return f"{b.name} left out of the {b.level} level: {e}"
    return None


def _jobs(b, s, st, cn, mine: dict, named: bool, nranks: int, active_list, cache: str, llc_bytes) -> list:
    """One job per variant of a benchmark's parameters, with its pattern's layouts."""
    out = []
    for params in _settled(b, mine, named):
        lays = ()
        if b.pattern == "congestion":
            lays = tuple(congestion.layouts(nranks, {**b.defaults, **params}, active_list))
        elif b.pattern == "ring":   # message.ring: the natural ring, or the random ring of its seed
            have = {**b.defaults, **params}
            lays = (patterns.ring_layout(nranks, have["order"], int(have["seed"])),)
        elif b.pattern:
            acts = active_list if active_list and "active" in b.axes else None
            if "active" not in b.axes:   # no active axis: every pair or rank takes part (osu_mbw_mr, IMB)
                acts = [patterns.max_active(b.pattern, nranks)]
            matching = int(params.get("seed", b.defaults.get("seed", 1)))  # bisection's pairs
            lays = tuple(patterns.layouts(b.pattern, nranks, acts, matching))
        if b.coll:
            collectives.check(b.name, b.coll, s, {**b.defaults, **params}, [lay.active for lay in lays])
        if b.name in atomics.ATOMICS:   # sizes it cannot take: refused where named, else left out
            s = atomics.sizes(b.name, s, {**b.defaults, **params}, named)
            if not s:
                continue
        # an app's op is a whole application, a collective's one call on the same buffers (as
        # IMB and OSU run them), a victim's its ring's few slots, HPCC's ring its four buffers:
        # none has a cache state to rotate
        bufs = () if b.pattern in ("app", "group", "congestion", "ring") else tuple(buffers.plan(s, cache, llc_bytes, b.own_buffers(params)))
        if "victim" in b.params:
            bufs = _victim_buffers({**b.defaults, **params}["victim"], s, lays, cache, llc_bytes)
        out.append(Job(b, tuple(s), tuple(st), params, tuple(cn), lays, bufs))
    return out


def build(names: list[str] | None, sizes: str | None, strides: str | None, params: list[str] | None,
          sampling: Sampling, validate: bool, nranks: int = 2, conns: str | None = None,
          active: str | None = None, cache: str = "warm", llc_bytes: int | None = None,
          launches: int = 1, seed: int = 0, budget: float | None = None) -> Plan:
    """Default sweeps come from the registry; --sizes/--strides/--conns/--active override them.

    A parameter applies to every selected benchmark that accepts it, in
    the variants where it means something (_settled). A named set
    (suite/hpcc.py: `hpcc`) brings its benchmarks with its own sweeps and
    parameters, which the options override. `budget`: seconds the launches
    should take in all (measure/pace.py), or None."""
    asked = list(names or ())
    names, preset = hpcc.expand(names)
    chosen = select(names)
    given = parse_params(params)
    _check_options(chosen, given, cache, strides, conns, active)
    size_list = parse_sizes(sizes) if sizes else None
    stride_list = parse_strides(strides) if strides else None
    conn_list = parse_sizes(conns, "connection count") if conns else None
    active_list = parse_sizes(_unit_steps(active), "active count") if active else None
    jobs, notes = [], []
    for b in chosen:
        try:
            b.check_ranks(nranks)
        except UsageError as e:
            if b.name in (names or ()):       # named: what was asked cannot run
                raise
            notes.append(f"{b.name} left out of {f'the {b.level} level' if names else 'the default suite'}: {e}")
            continue
        if (why := _ruled_out(b, given, nranks, b.name in asked)):
            notes.append(why)
            continue
        pre = preset.get(b.name, {})
        s = size_list or parse_sizes(pre.get("sizes", b.sizes))
        st = (stride_list or parse_strides(b.strides)) if b.has_stride else [1]
        cn = (conn_list or parse_sizes(b.conns, "connection count")) if "conns" in b.axes else [1]
        mine = {k: v for k, v in given.items() if k in b.params}
        _check_limits(b, s, cn)
        mine = {**pre["params"], **mine} if pre else mine if names else {**b.suite_params, **mine}
        jobs += _jobs(b, s, st, cn, mine, b.name in asked, nranks, active_list, cache, llc_bytes)
    for j in jobs:     # threads per rank, bounded by this host's CPUs (suite/threads.py)
        threads.check(j.bench, j.params, os.cpu_count() or 1)
    if not 1 <= launches <= MAX_LAUNCHES:
        raise UsageError(f"--launches must be 1..{MAX_LAUNCHES}, not {launches}")
    if budget is not None:
        check_range("--budget", budget, *BUDGET_S)
    return Plan(tuple(jobs), sampling.check(), validate, cache, llc_bytes, tuple(notes), launches, seed, budget)
