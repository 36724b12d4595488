"""`fabriclab tune OP`, the flow: the library's algorithms for OP that its
selection file can name (tuning/mpich.py, openmpi.py), less those the model
rules out (prune.py), measured beside the library's own choice in one run
(their launches interleaved, as every run's are); each size given the
fastest only where compare's interval says it beats the library's choice
(choice.py); the file written, with the environment that uses it; then the
default and the tuned library run against each other in alternating rounds
and compared size by size (analysis/compare.py), with the library's word
that it read the file (the points' `selection_read`)."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from .. import outputs
from ..analysis.compare import Pooled, compare
from ..errors import RunError, Terminated, UsageError
from ..measure import coll_algorithms
from ..measure.session import Request, Session, core_for
from . import DEFAULT_ROUNDS, FACTOR, OPS, choice, mpich, openmpi
from .prune import prune

LIBRARIES = {"mpich": mpich, "openmpi": openmpi}
assert set(OPS) <= set(mpich.OPS) & set(openmpi.OPS)
FIXED = ("algorithm", "form")       # what the tuner sets itself


@dataclass(frozen=True)
class Tuning:
    """What to tune: the operation, the run that measures it (sizes, other
    parameters, sampling, launches, where the ranks go), the folder written."""
    op: str
    run: Request
    out: Path
    rounds: int = DEFAULT_ROUNDS      # default/tuned pairs of the check; 0: no check
    threshold: float = 0.02           # compare's: the smallest change that earns a verdict
    factor: float = FACTOR            # the model's: slower than the best by this at every size is left out
    force: bool = False               # replace an earlier tuning in `out`
    stamped: bool = False             # `out` is a default name stamped to the second: made exclusively

    def check(self) -> "Tuning":
        if self.op not in OPS:
            raise UsageError(f"fabriclab tunes {', '.join(OPS)}, not {self.op!r}")
        given = {p.partition("=")[0] for p in self.run.params}
        if given & set(FIXED):
            raise UsageError(f"tune sets {' and '.join(sorted(given & set(FIXED)))} itself (the blocking form's "
                             "algorithms are what a selection file chooses); leave them out")
        if not 0 <= self.rounds <= 100 or not 0 <= self.threshold < 1 or not 1 < self.factor <= 1000:
            raise UsageError("--rounds must be in 0..100, --threshold in [0, 1) and --prune-factor in (1, 1000]")
        return self

    def files(self) -> list[str]:
        """Every name the tuning writes into its folder."""
        runs = ["measure.json"] + [f"check-{arm}-{r}.json" for r in range(1, self.rounds + 1)
                                   for arm in ("default", "tuned")]
        return ["tune.json", *(lib.FILE for lib in LIBRARIES.values()),
                *(name for run in runs for name in (run, run[:-len(".json")] + ".ndjson"))]

    def check_folder(self) -> None:
        """The folder checked before any work: an earlier tuning in it is replaced only with
        force, and none of the files written may be a link (outputs.py)."""
        outputs.directory(self.out, "the tuning folder")
        held = [name for name in self.files() if os.path.lexists(self.out / name)]
        if held and not self.force:
            raise UsageError(f"{self.out} holds a tuning ({', '.join(held[:3])}{' ...' if len(held) > 3 else ''}); "
                             "pass --force to replace it, or name another folder")
        outputs.files(self.out, self.files())


@dataclass(frozen=True)
class Candidates:
    """What a tuning measures, chosen before anything runs: the measuring run, the checked plan
    of the library's choice, the library's writer, the core, the algorithm control, the names
    to measure, and those left out and ruled out, each with why."""
    measuring: Session
    first: Session
    lib: object
    core: object
    control: object
    names: list
    left: dict
    ruled: dict


@dataclass
class Tuned:
    """What the tuner found and wrote."""
    op: str
    library: str
    ranks: int
    measured: list
    left_out: dict
    ruled_out: dict
    choices: list
    file: str
    environment: dict
    measure: str
    check: list = field(default_factory=list)      # analysis.compare.Change per size
    check_runs: list = field(default_factory=list)
    read: Optional[bool] = None                     # the library's word that it read the file

    def to_dict(self) -> dict:
        return {"op": self.op, "library": self.library, "ranks": self.ranks, "measured": self.measured,
                "left_out": self.left_out, "ruled_out": self.ruled_out,
                "choices": [c.to_dict() for c in self.choices], "file": self.file,
                "environment": self.environment, "measure": self.measure,
                "check": [asdict(c) for c in self.check], "check_runs": self.check_runs, "read": self.read}


def _ok(result, what: str):
    """The run's document; an interrupted run ends the tuning as the signal would, a failed one
    in one line (its points are kept in its document either way)."""
    if result.status == "interrupted":
        raise Terminated() if result.signal == signal.SIGTERM else KeyboardInterrupt()
    if result.status != "complete":
        raise RunError(f"{what} did not complete ({result.error}); its points are in {result.path}")
    return result.document


class Tuner:
    """One tuning; `say` gets every line a user should read on the way."""

    def __init__(self, tuning: Tuning, say: Callable[[str], None] = lambda line: None, progress=None):
        self.t, self.say, self.progress = tuning.check(), say, progress
        self.bench = f"coll.{tuning.op}"
        self.base = replace(tuning.run, benches=(self.bench,), active=str(tuning.run.launch.ranks))

    def _session(self, name: str, params: tuple = (), **over) -> Session:
        req = replace(self.base, params=self.base.params + params, output=str(self.t.out / name), **over)
        return Session(req, say=self.say, inform=lambda line: None, progress=self.progress)

    def commands(self) -> list[str]:
        """The measuring run's launch commands, its candidates chosen as `run` would (nothing
        is launched or written)."""
        return self._candidates().measuring.commands()

    def run(self) -> Tuned:
        self.t.check_folder()
        c = self._candidates()        # every input accepted before the folder is made
        if self._make_folder():
            c = replace(c, measuring=self._measuring(c.names))
        t = self.t
        doc = _ok(c.measuring.run(), "the measuring run")
        choices = choice.choose([p for p in doc.points if p.bench == self.bench], threshold=t.threshold)
        path = t.out / c.lib.FILE
        c.lib.write(path, c.core.path, t.op, t.run.launch.ranks, choice.ranges(choices), c.control.names)
        tuned = Tuned(t.op, c.first.mpi.flavour, t.run.launch.ranks, c.names, c.left, c.ruled, choices, str(path),
                      c.lib.environment(path), str(t.out / "measure.json"))
        self._save(tuned)             # the choices and the file stand whatever the check does
        if t.rounds:
            self._check(tuned)
            self._save(tuned)
        return tuned

    def _candidates(self) -> Candidates:
        """The algorithms to measure, the library's choice checked first (nothing runs)."""
        t = self.t
        first = self._session("measure.json", ("algorithm=auto",)).check()
        lib = LIBRARIES.get(first.mpi.flavour)
        if lib is None:
            raise UsageError(f"fabriclab writes selection files for MPICH and Open MPI, not {first.mpi.flavour}")
        core = core_for(first.request.launch, first.mpi)
        job = first.plan.jobs[0]
        control = coll_algorithms.check(self.bench, job.bench.coll.call, "blocking", coll_algorithms.ALL,
                                        coll_algorithms.probe(core.path))
        names, left = lib.selectable(core.path, t.op, control.names)
        hosts = first.request.site.rank_hosts(first.request.launch) or []    # names, not a testbed's addresses
        names, ruled = prune(t.op, names, job.sizes, hosts, first.network(), t.run.calibration, t.factor)
        for name, why in {**left, **ruled}.items():
            self.say(f"tune: {name} left out: {why}")
        if not names:
            raise UsageError(f"no algorithm of {control.name} is left to measure")
        self.say(f"tune: measuring the library's choice and {', '.join(names)} at {len(job.sizes)} sizes")
        return Candidates(self._measuring(names), first, lib, core, control, names, left, ruled)

    def _measuring(self, names: list) -> Session:
        return self._session("measure.json", ("algorithm=" + ",".join(["auto", *names]),))

    def _make_folder(self) -> bool:
        """The folder made; a stamped one exclusively, since another tuning may have started in
        the same second: True when it took another name (the runs then go there)."""
        t = self.t
        if not t.stamped:
            t.out.mkdir(parents=True, exist_ok=True)
            return False
        self.t = replace(t, out=outputs.new_directory(t.out))
        return self.t.out != t.out

    def _save(self, tuned: Tuned) -> None:
        outputs.write(self.t.out / "tune.json", json.dumps(tuned.to_dict(), indent=1, default=str) + "\n")

    def _check(self, tuned: Tuned) -> None:
        """Default and tuned, one launch each per round, their order swapped every round."""
        docs: dict = {"default": [], "tuned": []}
        env = tuple(sorted(tuned.environment.items()))
        for r in range(self.t.rounds):
            for arm in (("default", "tuned") if r % 2 == 0 else ("tuned", "default")):
                self.say(f"tune: check round {r + 1}/{self.t.rounds}: the {arm} library")
                name = f"check-{arm}-{r + 1}.json"
                s = self._session(name, ("algorithm=auto",), launches=1, env=env if arm == "tuned" else ())
                docs[arm].append(_ok(s.run(), f"the check's {arm} run"))
                tuned.check_runs.append(str(self.t.out / name))
        tuned.check = compare(Pooled(docs["default"]), Pooled(docs["tuned"]), threshold=self.t.threshold)
        info = [p.info or {} for d in docs["tuned"] for p in d.points]
        tuned.read = bool(info) and all(i.get("selection_read") for i in info)
