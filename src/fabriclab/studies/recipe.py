"""What a seed study is made of: the runs it needs, the figures it draws from
them and the findings it checks, as data a command can list, show and run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

HOLDS = "holds here"
FAILS = "does not hold here"
UNMEASURED = "not measured"
VERDICTS = (HOLDS, FAILS, UNMEASURED)


@dataclass(frozen=True)
class Step:
    """One `fabriclab run` the study needs. `args` are that command's own
    arguments (benchmarks, sizes, parameters, sampling); the user's launch
    options (ranks, hosts, Slurm, a testbed) are added to every step."""

    name: str                        # the run document's file stem in the study's folder
    args: tuple                      # `fabriclab run` arguments
    feeds: str                       # which figures and findings read it, in words
    ranks: int = 2                   # the rank count it runs at
    # Whether the user's -n sets its rank count: a step that grows with the
    # processes (hotspot, the applications, a network's all-to-all) does; a
    # step that measures one pair keeps its ranks, as the seeds measured two
    # processes, whatever -n the study's other steps take.
    scales: bool = False
    hosts: int = 1                   # hosts it needs to mean anything (1: any machine)
    gpu: bool = False                # needs device memory (a GPU)
    seconds: float = 30.0            # its time at default settings on a 2-core machine, measured
    blocked: str = ""                # why no launch can run it yet (a capability fabriclab lacks)


@dataclass
class Finding:
    """One stated finding of a seed beside what the measurements show."""

    id: str
    claim: str                       # the seed's finding, in its words where short
    where: str                       # section, figure or table of the seed
    published: str                   # the seed's figures the claim rests on
    measured: str = ""               # what this machine's runs show, with numbers
    verdict: str = UNMEASURED        # HOLDS, FAILS or UNMEASURED
    because: str = ""                # why it does not hold, or why it was not measured

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"finding {self.id}: verdict {self.verdict!r} is not one of {VERDICTS}")

    def to_dict(self) -> dict:
        return asdict(self)

    def judged(self, measured: str, holds: bool, because: str = "") -> "Finding":
        """The finding with its measurement and verdict; `because` says why it fails."""
        self.measured, self.verdict = measured, HOLDS if holds else FAILS
        self.because = "" if holds else because
        return self

    def unmeasured(self, because: str) -> "Finding":
        self.verdict, self.because = UNMEASURED, because
        return self


@dataclass
class Runs:
    """The study's run documents by step name; a skipped step has a reason instead."""

    docs: dict = field(default_factory=dict)       # step name -> merged run document
    skipped: dict = field(default_factory=dict)    # step name -> why it did not run
    wire_Bps: Optional[float] = None               # the wire rate `study run` was given (--wire-rate, --technology)
    wire: str = ""                                 # how it was given, for a caption

    def rows(self, step: str, bench: str, where: Optional[str] = None) -> list:
        """The merged rows (report.rows.Row) of one benchmark of a step, by size;
        `where` ("completion=block", "mode=copy,segments=4") keeps the rows whose
        parameters, defaults included, have those values; None keeps all."""
        doc = self.docs.get(step)
        if doc is None:
            return []
        from ..report.rows import rows
        want = dict(kv.split("=", 1) for kv in where.split(",")) if where else {}
        out = [r for r in rows(doc) if r.bench == bench
               and all(str((r.point.params or {}).get(k)) == v for k, v in want.items())]
        return sorted(out, key=lambda r: (r.size, r.stride, r.conns, r.active or 0))

    def missing(self, step: str) -> str:
        """Why a step's figures are absent: its skip reason, or that it has no such points."""
        return self.skipped.get(step) or f"the run {step} has no such points"


@dataclass(frozen=True)
class Study:
    name: str                        # the command's name for it: authors, as the seed is cited
    seed: str                        # "000".."004"
    title: str                       # what it measures, one line
    about: str                       # a paragraph: what it runs and what it shows
    steps: tuple                     # Step, in the order they run
    figures: Callable                # (Runs, Reference) -> [report.figure.Figure]
    findings: Callable               # (Runs, Reference) -> [Finding]
    wire: bool = False               # draws an efficiency against a wire rate (seed 000 Fig. 16)

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    @property
    def ranks(self) -> int:
        return max(s.ranks for s in self.steps)

    @property
    def hosts(self) -> int:
        return max(s.hosts for s in self.steps)
