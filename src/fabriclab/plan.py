"""The run plan: which benchmarks, at which sizes and strides, sampled how.

A plan is pure data built from the command line; the runner executes it and
the header records it, so a run can be repeated exactly."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .benchmarks import Bench, select
from .errors import UsageError
from .units import parse_sizes, parse_strides


@dataclass(frozen=True)
class Sampling:
    """Adaptive sampling per point (docs/core-protocol.md, runner step 4)."""
    warmup: int = 20             # warm-up ops per point, run and discarded
    min_samples: int = 10
    max_samples: int = 2000
    target_ci: float = 0.025     # stop when the 95% CI of the median is within +-2.5%
    point_time: float = 1.0      # per-point time cap, seconds
    sample_time: float = 2e-5    # batch ops so one sample lasts at least this long

    def check(self) -> "Sampling":
        if self.warmup < 0:
            raise UsageError("--warmup must be 0 or more")
        if self.min_samples < 1 or self.max_samples < self.min_samples:
            raise UsageError("need 1 <= --min-samples <= --max-samples")
        if not 0 < self.target_ci < 1:
            raise UsageError("--target-ci must be a fraction between 0 and 1, e.g. 0.025")
        if self.point_time <= 0 or self.sample_time <= 0:
            raise UsageError("--point-time and --sample-time must be positive")
        return self

    def core_args(self) -> list[str]:
        return ["--warmup", str(self.warmup), "--min-samples", str(self.min_samples),
                "--max-samples", str(self.max_samples), "--target-ci", repr(self.target_ci),
                "--point-time", repr(self.point_time), "--sample-time", repr(self.sample_time)]


@dataclass(frozen=True)
class Job:
    bench: Bench
    sizes: tuple
    strides: tuple
    params: dict = field(default_factory=dict)

    @property
    def npoints(self) -> int:
        return len(self.sizes) * len(self.strides)

    def core_args(self) -> list[str]:
        args = [self.bench.name, "--sizes", ",".join(map(str, self.sizes)),
                "--strides", ",".join(map(str, self.strides))]
        for k, v in self.params.items():
            args += ["--param", f"{k}={v}"]
        return args

    def to_dict(self) -> dict:
        return {"bench": self.bench.name, "sizes": list(self.sizes), "strides": list(self.strides),
                "params": dict(self.params)}


@dataclass(frozen=True)
class Plan:
    jobs: tuple
    sampling: Sampling
    validate: bool = False

    @property
    def npoints(self) -> int:
        return sum(j.npoints for j in self.jobs)

    def to_dict(self) -> dict:
        return {"jobs": [j.to_dict() for j in self.jobs], "sampling": asdict(self.sampling),
                "validate": self.validate}


def parse_params(items: list[str] | None) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"malformed parameter {item!r}: expected KEY=VALUE, e.g. window=64")
        out[key.strip()] = value.strip()
    return out


def build(names: list[str] | None, sizes: str | None, strides: str | None, params: list[str] | None,
          sampling: Sampling, validate: bool, nranks: int = 2) -> Plan:
    """Default sweeps come from the registry; --sizes/--strides override them.

    A parameter applies to every selected benchmark that accepts it; one that
    no selected benchmark accepts is an error, so typos cannot pass silently."""
    chosen = select(names)
    given = parse_params(params)
    unknown = set(given) - {k for b in chosen for k in b.params}
    if unknown:
        raise UsageError(f"parameter {sorted(unknown)[0]!r} is not accepted by the selected benchmarks")
    size_list = parse_sizes(sizes) if sizes else None
    stride_list = parse_strides(strides) if strides else None
    jobs = []
    for b in chosen:
        if b.min_ranks > nranks:
            raise UsageError(f"{b.name} needs at least {b.min_ranks} ranks; this run has {nranks}")
        s = size_list or parse_sizes(b.sizes)
        st = (stride_list or parse_strides(b.strides)) if b.has_stride else [1]
        mine = {k: v for k, v in given.items() if k in b.params}
        for k, v in mine.items():
            b.check_param(k, v)
        jobs.append(Job(b, tuple(s), tuple(st), mine))
    return Plan(tuple(jobs), sampling.check(), validate)
