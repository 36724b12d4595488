"""What a seed study is made of: the runs it needs, the figures it draws from
them and the findings it checks, as data a command can list, show and run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

# What a finding is judged on: this machine's runs, or the model alone with the
# seed's formulas and parameters (seed 001's projections, which need no host).
# Each has its three verdicts, worded so that a verdict says which it is.
MEASUREMENTS, MODEL = "measurements", "model"
HOLDS = "holds here"
FAILS = "does not hold here"
UNMEASURED = "not measured"
MODEL_HOLDS = "holds in the model"
MODEL_FAILS = "does not hold in the model"
UNJUDGED = "not judged"             # the model cannot decide it (the seed's prices are not in its text)
VERDICTS_ON = {MEASUREMENTS: (HOLDS, FAILS, UNMEASURED), MODEL: (MODEL_HOLDS, MODEL_FAILS, UNJUDGED)}
VERDICTS = VERDICTS_ON[MEASUREMENTS] + VERDICTS_ON[MODEL]


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
    """One stated finding of a seed beside what the measurements, or the model, show."""

    id: str
    claim: str                       # the seed's finding, in its words where short
    where: str                       # section, figure or table of the seed
    published: str                   # the seed's figures the claim rests on
    measured: str = ""               # what this machine's runs show, with numbers
    verdict: str = ""                # one of VERDICTS_ON[judged_on]; default: its third (not measured, not judged)
    because: str = ""                # why it does not hold, or why it was not measured or judged
    judged_on: str = MEASUREMENTS    # MEASUREMENTS or MODEL
    model: str = ""                  # judged on the model: what it computes with the seed's parameters

    def __post_init__(self):
        if self.judged_on not in VERDICTS_ON:
            raise ValueError(f"finding {self.id}: judged on {self.judged_on!r}, not one of {tuple(VERDICTS_ON)}")
        allowed = VERDICTS_ON[self.judged_on]
        self.verdict = self.verdict or allowed[2]
        if self.verdict not in allowed:
            raise ValueError(f"finding {self.id}: verdict {self.verdict!r} is not one of {allowed}")

    def to_dict(self) -> dict:
        return asdict(self)

    def judged(self, shown: str, holds: bool, because: str = "") -> "Finding":
        """The finding with what its evidence shows (the measurements, or the model's
        numbers when judged on the model) and its verdict; `because` says why it fails."""
        yes, no, _ = VERDICTS_ON[self.judged_on]
        if self.judged_on == MODEL:
            self.model = shown
        else:
            self.measured = shown
        self.verdict, self.because = (yes, "") if holds else (no, because)
        return self

    def unmeasured(self, because: str) -> "Finding":
        """Not measured (judged on the measurements) or not judged (on the model), and why."""
        self.verdict, self.because = VERDICTS_ON[self.judged_on][2], because
        return self


@dataclass
class Runs:
    """The study's run documents by step name; a skipped step has a reason instead."""

    docs: dict = field(default_factory=dict)       # step name -> merged run document
    skipped: dict = field(default_factory=dict)    # step name -> why it did not run
    wire_Bps: Optional[float] = None               # the wire rate `study run` was given (--wire-rate, --technology)
    wire: str = ""                                 # how it was given, for a caption
    prices: Optional[str] = None                   # a price list for the model's costs (--prices FILE)
    # What a study computes from its inputs alone, once per run of the study however
    # often its figures and findings read it (seed 001's model curves: seconds).
    derived: dict = field(default_factory=dict)

    def once(self, name: str, make: Callable):
        """derived[name], made by make() the first time it is asked for."""
        if name not in self.derived:
            self.derived[name] = make()
        return self.derived[name]

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
    prices: bool = False             # draws the model's costs from a price list (seed 001 Fig. 14-15)

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
