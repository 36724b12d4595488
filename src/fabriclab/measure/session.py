"""The measure wing's one entry point: a typed request in, a run, a typed result out.

`Session(request).run()` plans the points, checks the options and the
memory they need, builds the core, settles the levels below MPI, launches,
streams every record, and returns the run's document with how it ended.
`fabriclab run` parses its options into a `Request` and prints the result;
`testbed validate`, `study run`, `doctor --aa` and every other caller build
a `Request` and call the same entry point in their own process.

Where the ranks run is a `Site`: this machine, named hosts or a Slurm
allocation (the default), or an emulated testbed (testbed/site.py), which
supplies its own launch spec, the watch of its cables and its network file.
Everything a run reports on the way (the plan's notes, the providers chosen,
the machine check) goes to one callable, `say`; its progress to a `Progress`."""

from __future__ import annotations

import os
import random
import shlex
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from .. import __version__, outputs
from ..analysis import merge
from ..errors import UsageError
from ..schema import Document, Footer, Header, StreamWriter
from ..units import check_range, fmt_time
from ..suite.buffers import CACHE_STATES
from .launch import LaunchSpec
from .plan import BUDGET_S, Plan, Sampling

# Launches per point: see docs/statistics.md ("How many launches") for why
# five, and what the default suite trims to afford them.
DEFAULT_LAUNCHES = 5
DEFAULT_TIMEOUT_S = 60.0
# The default suite's time budget per point measured (measure/pace.py): its 1,710 points on
# two ranks (five launches) took 110-125 s on an idle 2-core VM and 175-190 s when the VM ran
# Python at a third of its speed; 0.09 s a point (154 s there) keeps `make run` under 3 minutes
# on such a day, and grows with the points of more ranks (docs/statistics.md, "Time budget").
DEFAULT_BUDGET_PER_POINT_S = 0.09
# The ranges of a request's numbers, for their options and Request.check: a launch may stay
# silent for timeout + 2 * point time (runner.py), which select() takes only below ~9e9 s.
TIMEOUT_S = (1e-3, 1e6)
LAUNCHES = (1, 10_000)
SEED = (-(1 << 63), (1 << 63) - 1)


@dataclass(frozen=True)
class Launch:
    """Which MPI, which launcher and how the ranks are placed (the options
    `run` and `doctor` share: docs/mpi.md)."""

    ranks: int = 2
    hosts: Optional[str] = None          # "h1,h2": a host repeated takes more ranks
    hostfile: Optional[str] = None
    ppn: Optional[int] = None
    launcher: str = "auto"               # mpiexec | srun | auto
    bind: str = "core"
    srun_mpi: Optional[str] = None
    launcher_args: tuple = ()
    mpicc: Optional[str] = None
    mpiexec: Optional[str] = None
    mpi_home: Optional[str] = None
    rebuild: bool = False
    core: Optional[str] = None           # a prebuilt core, or None: build and cache one


class Site:
    """Where a run's ranks go: this machine, the hosts of --hosts or
    --hostfile, or a Slurm allocation. A testbed is a Site of its own
    (testbed/site.py)."""

    testbed: Optional[str] = None        # the testbed's name, when the ranks run on one

    def spec(self, launch: Launch, mpi) -> LaunchSpec:
        """The launch spec of the run, checked (UsageError for bad options)."""
        from .launch import make_spec
        return make_spec(launch.launcher, mpi.mpiexec, mpi.flavour, launch.ranks, launch.hosts, launch.hostfile,
                         launch.ppn, list(launch.launcher_args), launch.bind, launch.srun_mpi)

    def watch(self, spec: LaunchSpec, counters: bool):
        """What to watch around each launch (runner.Watch), or None."""
        if counters:
            from .counters import CounterWatch
            return CounterWatch(spec)
        return None

    def network(self) -> Optional[str]:
        """The network file the hosts are joined by, when the site knows it."""
        return None

    def host_names(self, launch: Launch) -> Optional[list]:
        """The hosts the ranks go to, by name, where the options name them (--hosts,
        --hostfile, the Slurm allocation a run inside one launches into); None for this
        machine alone."""
        from .launch import hostfile_hosts, slurm_hosts
        if launch.hosts:
            return list(dict.fromkeys(h for h in launch.hosts.split(",") if h))
        if launch.hostfile:
            return hostfile_hosts(launch.hostfile)
        if os.environ.get("SLURM_JOB_ID") and os.environ.get("SLURM_JOB_NODELIST"):
            return slurm_hosts(os.environ["SLURM_JOB_NODELIST"])
        return None

    def rank_hosts(self, launch: Launch) -> Optional[list]:
        """Each rank's host where the options place them one by one (--hosts naming one host
        per rank), else None."""
        hosts = [h for h in (launch.hosts or "").split(",") if h]
        return hosts if len(hosts) == launch.ranks else None


@dataclass(frozen=True)
class Request:
    """Everything one run needs: which points, how they are sampled, where
    the ranks go, where the results are written."""

    benches: tuple = ()                  # levels or benchmarks; () = the default suite
    sizes: Optional[str] = None
    strides: Optional[str] = None
    params: tuple = ()                   # "key=value", each checked against its benchmark's rules
    conns: Optional[str] = None
    active: Optional[str] = None
    cache: str = "warm"
    validate: bool = False
    sampling: Sampling = field(default_factory=Sampling)
    launches: int = DEFAULT_LAUNCHES
    seed: Optional[int] = None           # the per-launch shuffle's; None: drawn and recorded
    launch: Launch = field(default_factory=Launch)
    site: Site = field(default_factory=Site)
    output: Optional[str] = None         # RUN.json; None: results/fabriclab-TIMESTAMP.json
    timeout: float = DEFAULT_TIMEOUT_S
    counters: bool = False
    network: Optional[str] = None        # the network file the hosts are joined by (the apps' exchange model)
    calibration: Optional[str] = None
    force: bool = False                  # run even where the memory estimate says it does not fit
    env: tuple = ()                      # (name, value) every launch sets: a library setting tried (the tuner's file)
    argv: tuple = ()                     # the command as typed, recorded in the header
    budget: Optional[float] = None       # seconds for all launches (measure/pace.py); None: no budget
    budget_per_point: Optional[float] = None   # or seconds per point the plan measures (the default suite's)

    def budget_for(self, plan) -> Optional[float]:
        """The run's time budget in seconds for the plan that runs: --budget, or per point, or None."""
        if self.budget_per_point is None:
            return self.budget
        return min(BUDGET_S[1], max(BUDGET_S[0], self.budget_per_point * plan.npoints))

    def check(self) -> "Request":
        if self.cache not in CACHE_STATES:
            raise UsageError(f"--cache must be one of {', '.join(CACHE_STATES)}, not {self.cache!r}")
        check_range("--timeout", self.timeout, *TIMEOUT_S)
        check_range("--launches", self.launches, *LAUNCHES)
        if self.budget_per_point is not None:
            check_range("the time budget per point", self.budget_per_point, 1e-6, 3600.0)
        if self.budget is not None and self.budget_per_point is not None:
            raise UsageError("a run has one time budget: in seconds or per point, not both")
        if self.seed is not None:
            check_range("--seed", self.seed, *SEED)
        if self.output and (Path(self.output).name in ("", ".", "..") or self.output.endswith("/")):
            raise UsageError(f"cannot write {self.output}: it is a directory; name a file inside it")
        if self.output and Path(self.output).suffix.lower() == ".ndjson":
            raise UsageError(f"-o {self.output} names the stream: give the document, "
                             f"{Path(self.output).with_suffix('.json')}; its stream goes beside it as .ndjson")
        if self.calibration and not self.network and self.site.testbed is None:
            raise UsageError("--calibration applies to the network of --network or --testbed")
        return self


@dataclass
class Result:
    """How a run ended, and its document (points kept whatever the status)."""

    document: Document
    path: Path                           # RUN.json
    stream: Path                         # RUN.ndjson
    status: str                          # complete | interrupted | failed
    error: Optional[str]
    points: int
    seconds: float
    signal: Optional[int] = None         # what interrupted it: SIGINT or SIGTERM
    refused: bool = False                # failed on bad input only MPI could tell (runner.Refusal)

    @property
    def exit_code(self) -> int:
        """0; 1 for a failed run (2 when the core refused it as bad input); 128 + the signal for an
        interrupted one (the shell's 130, 143)."""
        if self.status == "failed" and self.refused:
            return 2
        if self.status == "failed":
            return 1
        if self.status == "interrupted":
            return 128 + (self.signal or 2)
        return 0


def _quiet(line: str) -> None:
    """A `say` that keeps everything to itself."""


class Session:
    """One run of a request. `check()` does everything that can refuse the
    request before anything is built; `commands()` the launch commands a dry
    run prints; `run()` the run itself.

    `say(line)` receives every line a user should read on the way (the notes
    of the plan); `inform(line)` what a quiet run keeps to itself (the
    providers chosen, the machine check; `say` by default); `progress(total)` makes
    the progress display (cli/progress.py), or None; `executor(argv, env)`
    starts one launch (runner.Launch, the default; tests pass a fake)."""

    def __init__(self, request: Request, say: Callable[[str], None] = _quiet, progress=None, executor=None,
                 inform: Optional[Callable[[str], None]] = None):
        self.request = request.check()
        self.say, self.progress, self.executor = say, progress, executor
        self.inform = say if inform is None else inform
        self.plan: Optional[Plan] = None
        self.mpi = self.spec = None
        self._exchange: Callable[[Document], dict] = lambda doc: {}

    # ---- before anything is built

    def check(self, force: bool = False) -> "Session":
        """The plan, the MPI and launcher, the memory of every point and the
        network files, each checked: bad input ends here (UsageError). With
        `force` (and --force) a plan that does not fit in memory is a note."""
        if self.plan is not None:
            return self
        self.plan = self._plan()
        self._first_samples()
        self.mpi, self.spec = self._resolve()
        self._hosts_on_network()
        from . import capacity as resources
        for note in resources.check(self.plan, self.spec, force=self.request.force or force):
            self.say(note)
        self._exchange = self._model_blocks()
        return self

    def _first_samples(self) -> None:
        """A point whose first sample cannot come before --timeout (Bench.first_sample: a datagram
        paced at 1 b/s, a noise record of hours) is refused here: launched, its silence would be
        read as a hung rank, after the whole timeout."""
        t = self.request.timeout
        silence = t + 2 * self.plan.sampling.point_time      # what runner.py lets a launch stay silent
        for job in self.plan.jobs:
            floor = job.bench.first_sample
            for size in job.sizes if floor else ():
                got = floor({**job.bench.defaults, **job.params}, size)
                if got and got[0] > silence:
                    took = f"{got[0]:,.0f} s" if got[0] >= 10 else fmt_time(got[0])
                    raise UsageError(f"{job.bench.name}: its first sample needs {got[1]}, at least {took}: beyond "
                                     f"--timeout {t:g} s (and twice --point-time) the launch would be taken for "
                                     "hung; ask for a shorter one, or raise --timeout")

    def _plan(self) -> Plan:
        from ..host import sysinfo
        from .plan import build
        r = self.request
        caches = sysinfo.cache_sizes()
        seed = r.seed if r.seed is not None else random.randrange(1 << 31)
        plan = build(list(r.benches), r.sizes, r.strides, list(r.params), r.sampling, r.validate, r.launch.ranks,
                     conns=r.conns, active=r.active, cache=r.cache,
                     llc_bytes=max(caches.values()) if caches else None, launches=r.launches, seed=seed,
                     budget=r.budget)
        for note in plan.notes:
            self.say(note)
        return plan

    def _resolve(self):
        return resolve(self.request.launch, self.request.site)

    def _hosts_on_network(self) -> None:
        """With a network file, the file read and checked, and every host the ranks go to one of its
        nodes, by name (verdicts/placement.py): UsageError in one line before anything launches
        otherwise (a run on one host records the file without naming its hosts)."""
        network = self.network()
        if not network:
            return
        from ..verdicts import coll_prediction, placement
        nodes = coll_prediction.system(network).topo.node_names     # read and checked, whatever the jobs use
        hosts = self.request.site.host_names(self.request.launch)
        if hosts:
            placement.require(hosts, nodes, network)

    def _model_blocks(self) -> Callable[[Document], dict]:
        """The apps' exchange phases (verdicts/exchange_prediction.py) and the collectives
        (verdicts/coll_prediction.py) predicted from the network the run crossed, when a
        network is known and a job exchanges or is a collective the model has; the files are
        read here, before anything launches, so a bad one ends the run at once."""
        from ..verdicts import coll_prediction, exchange_prediction, halo_prediction, rate_prediction
        network = self.network()
        jobs = self.plan.jobs
        wanted = [m for m, any_job in ((exchange_prediction, any(j.bench.app and j.bench.app.exchanges for j in jobs)),
                                       (coll_prediction, any(coll_prediction.modelled(j.bench.name) for j in jobs)),
                                       (halo_prediction, any(halo_prediction.modelled(j.bench.name) for j in jobs)),
                                       (rate_prediction, any(rate_prediction.modelled(j.bench.name) for j in jobs)))
                  if any_job]
        if not wanted:
            return lambda doc: {}
        if not network and self.request.site.testbed is not None:
            raise UsageError(f"testbed {self.request.site.testbed}'s network file is no longer there; "
                             "give it with --network")
        if not network:
            return lambda doc: {}
        blocks = [m.predictor(network, self.request.calibration) for m in wanted]
        return lambda doc: {k: v for b in blocks for k, v in b(doc).items()}

    def network(self) -> Optional[str]:
        """The network file the hosts are joined by: --network, or the site's own (a testbed's file)."""
        r = self.request
        return str(Path(r.network).resolve()) if r.network else r.site.network()

    def commands(self) -> list[str]:
        """The exact launch commands of the first launch, nothing run. The
        levels below MPI get their provider and transports from the core's
        probe when the core is built already (the probe launches nothing)."""
        from . import build, protocol
        from ..suite.benchmarks import LIBRARY_LEVELS
        from .launch import command
        self.check(force=True)
        if self.request.output:       # what the run would refuse, a dry run refuses too
            outputs.document(output_path(self.request.output, datetime.now(timezone.utc)), given=self.request.output)
        core_path = self.request.launch.core or build.planned(self.mpi).path
        plan = self.plan
        below = any(j.bench.level in LIBRARY_LEVELS or j.bench.coll for j in plan.jobs)
        if below and Path(core_path).exists():
            plan, _ = self._settle(plan, build.Core(core_path, "", "", False))
        elif below:
            self.say("the core is not built yet: the fabric and ucx levels' providers and transports, and "
                     "the collectives' algorithms, are settled when the run starts")
        out = []
        for job in plan.order(0):
            argv, env = command(self.spec, protocol.job_argv(core_path, job, plan.sampling, plan.validate))
            env = {**env, **dict(job.env)}
            prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            out.append((prefix + " " if prefix else "") + shlex.join(argv))
        return out

    # ---- the run

    def run(self) -> Result:
        from . import runner
        self.check()
        r = self.request
        out = outputs.document(output_path(r.output, datetime.now(timezone.utc)), given=r.output)
        core = core_for(r.launch, self.mpi)
        plan, levels = self._settle(self.plan, core)
        plan = replace(plan, budget=r.budget_for(plan))     # of the settled plan: settling may leave levels out
        if not r.output:              # a stamped name: another run may have started in the same second
            out = outputs.unique(out)
        writer = StreamWriter(out.with_suffix(".ndjson"), self._header(out, core, plan, levels))
        head = _HeaderCompletion(writer, self._host_check(writer))
        t0 = time.monotonic()
        progress = self.progress(plan.npoints) if self.progress else None
        try:
            outcome = runner.run(plan, core.path, self.spec, writer, r.timeout, progress,
                                 r.site.watch(self.spec, r.counters), on_hello=head.hello, executor=self.executor)
        finally:
            if progress:
                progress.close()
        seconds = time.monotonic() - t0
        extra = {"end_time": datetime.now(timezone.utc).isoformat()}
        if outcome.budget:
            extra["budget"] = outcome.budget
        doc = writer.close(Footer(outcome.status, outcome.error, seconds, outcome.points, extra))
        for name, block in self._derived(doc).items():
            doc.add_block(name, block)
        merge.write(doc, out)
        return Result(doc, out, out.with_suffix(".ndjson"), outcome.status, outcome.error, outcome.points, seconds,
                      outcome.signal, outcome.refused)

    def _derived(self, doc: Document) -> dict:
        try:
            return self._exchange(doc)
        except (ValueError, KeyError, TypeError, UsageError):
            return {}    # the records are what counts; a reader can predict again

    def _settle(self, plan: Plan, core):
        """(plan, header record): the fabric jobs' providers chosen and the ucx
        jobs' transports checked from the core's probes (measure/fabrics.py);
        the collectives' algorithms checked and set (measure/coll_algorithms.py); the
        request's own environment added to every job (recorded with the plan)."""
        from . import build, coll_algorithms, fabrics
        plan, record, notes = fabrics.settle(plan, core.path, build.levels(core.path), self.one_host,
                                             named=bool(self.request.benches),
                                             testbed=self.request.site.testbed is not None)
        plan, algorithms = coll_algorithms.settle(plan, core.path, self.mpi.flavour)
        record.update(algorithms)
        if self.request.env:
            extra = dict(self.request.env)
            plan = replace(plan, jobs=tuple(replace(j, env=tuple(sorted({**dict(j.env), **extra}.items())))
                                            for j in plan.jobs))
        for note in notes:
            self.say(note)
        for rec in record.values():
            for job in rec["jobs"]:
                if "provider" in job:
                    self.inform(f"{job['bench']}: provider {job['provider']} ({job['why']})")
        return plan, record

    @property
    def one_host(self) -> bool:
        s = self.spec
        return s.launcher == "mpiexec" and not s.hosts and not s.hostfile

    def _header(self, out: Path, core, plan: Plan, levels: dict) -> Header:
        """The run's header as far as it is known before the first launch; the
        first hello completes it (_HeaderCompletion)."""
        from ..host import machine, sysinfo
        from .launch import binding
        r = self.request
        check = machine.run_start()      # before anything loads the machine: the check sees it as the run found it
        if check.get("findings"):
            self.inform(machine.short_line(check["findings"]))
        return Header(run_id=out.stem, fabriclab_version=__version__, argv=["fabriclab", *r.argv],
                      start_time=datetime.now(timezone.utc).isoformat(), host=sysinfo.host(), nranks=r.launch.ranks,
                      mpi=self.mpi.to_dict(), launcher={**self.spec.to_dict(), "binding": binding(self.spec)},
                      core={"path": core.path, "source_hash": core.source_hash, "cache_key": core.cache_key},
                      plan=plan.to_dict(), network=self.network(), machine=check, levels=levels or None)

    def _host_check(self, writer: StreamWriter) -> list:
        """The load and CPUs of this host against the ranks (one host only), as diagnostic records."""
        from ..analysis import diagnostics
        if not self.one_host:
            return []
        host = writer.header.host
        found = diagnostics.check_host(host["loadavg_1min"] or 0.0, host["cpu_count"] or 1, self.request.launch.ranks)
        for d in found:
            writer.add(d.record())
        return found


class _HeaderCompletion:
    """Completes the header from the first launch's hello (the MPI library,
    the ranks' hosts, CPUs and affinity, the timer) and writes it; places the
    ranks on hosts and warns once about more ranks than CPUs on a host (unless
    the check before the run did) and about ranks stacked on one CPU."""

    def __init__(self, writer: StreamWriter, early: list):
        self.writer, self.early = writer, early

    def hello(self, h: dict) -> None:
        from ..analysis import diagnostics
        w = self.writer
        if w.header_written:
            return
        head = w.header
        head.mpi = {**head.mpi, "library": h.get("mpi_library"), "mpi_version": h.get("mpi_version")}
        if isinstance(h.get("thread_level"), dict):   # what the core asked MPI_Init_thread for, what it granted
            head.mpi["thread_level"] = h["thread_level"]
        head.hosts, head.timer = h.get("hosts"), h.get("timer")
        head.core = {**head.core, "version": h.get("core_version")}
        placement: dict = {}
        for host, cpus in zip(h.get("hosts") or [], h.get("cpus") or []):
            p = placement.setdefault(host, {"ranks": 0, "cpus": cpus})
            p["ranks"] += 1
        over = {k: v for k, v in placement.items() if v["ranks"] > v["cpus"]}
        stacked = diagnostics.stacked_ranks(h.get("hosts") or [], h.get("affinity") or [])
        head.placement = {"hosts": placement, "oversubscribed": bool(over), "stacked": bool(stacked)}
        w.complete_header()
        for d in stacked + self._oversubscribed(over):
            w.add(d.record())

    def _oversubscribed(self, over: dict) -> list:
        from ..analysis import diagnostics
        if not over or any(d.code == diagnostics.OVERSUBSCRIBED for d in self.early):
            return []
        host, p = next(iter(over.items()))
        found = diagnostics.check_host(0.0, p["cpus"], p["ranks"])[:1]
        return [replace(d, message=f"{d.message} on host {host}") for d in found]


def output_path(opt: Optional[str], started: datetime) -> Path:
    """RUN.json from -o (".json" added where it lacks it, in any case), or a timestamped name under
    results/ (made unique when the run starts: outputs.unique); -o naming the stream is refused
    earlier (Request.check)."""
    if opt:
        path = Path(opt)
        return path if path.suffix.lower() == ".json" else path.with_suffix(path.suffix + ".json")
    return Path("results") / f"fabriclab-{started.strftime('%Y%m%d-%H%M%S')}.json"


def resolve(launch: Launch, site: Site | None = None):
    """(MPI, LaunchSpec) from the launch options; UsageError for bad ones."""
    from . import mpi
    m = mpi.discover(launch.mpicc, launch.mpiexec, launch.mpi_home, need_compiler=not launch.core)
    return m, (site or Site()).spec(launch, m)


def core_for(launch: Launch, m):
    """The core a command will launch: --core as given, else the cached build."""
    import os
    from . import build
    if launch.core:
        if not os.access(launch.core, os.X_OK):
            raise UsageError(f"--core {launch.core} is not an executable file")
        return build.Core(os.path.abspath(launch.core), "", "prebuilt", False)
    return build.ensure_core(m, launch.rebuild)


def run(request: Request, **kw) -> Result:
    """One run of a request (Session(request, **kw).run())."""
    return Session(request, **kw).run()
