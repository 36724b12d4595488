"""The MPI library's collective algorithms: the names each operation and form
accepts, read from the library itself (the core's `--probe coll`, which lists
its MPI_T control variables: csrc/families/coll_controls.c), how a job asks
for one (an environment variable for its launches) and the refusal of a name
the library does not know, before anything launches.

`-p algorithm=auto` (the default) sets nothing: the library chooses, as it
would for an application; `all` runs every name the library accepts. Another name is one value of the operation's
control in the job's form: MPICH reads MPIR_CVAR_<OP>_INTRA_ALGORITHM (and
MPIR_CVAR_I<OP>_... for the non-blocking and persistent forms) from the
environment; Open MPI reads coll_tuned_<op>_algorithm as
OMPI_MCA_coll_tuned_<op>_algorithm, which counts only with
coll_tuned_use_dynamic_rules=1, and coll_libnbc_i<op>_algorithm for the
non-blocking forms (docs/collectives.md, "Algorithms"). `-p progress=thread`
starts the library's own progress thread the same way (for overlap)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError
from .protocol import probe_records, run_probe, unreadable

PROBE_TIMEOUT = 30.0
AUTO = "auto"
ALL = "all"      # one job per name the control accepts
# How each MPI reads a control variable from the environment.
MCA_PREFIX = "OMPI_MCA_"
TUNED = "coll_tuned_"


@dataclass(frozen=True)
class Control:
    """One control: the MPI call and form it selects the algorithm of, its name, the values it accepts."""
    call: str
    form: str
    name: str
    names: tuple

    def environment(self, flavour: str, value: str) -> dict:
        """The variables a launch sets to run `value` (UsageError for an MPI whose convention is unknown)."""
        if flavour in ("mpich", "intel"):
            return {self.name: value}
        if flavour == "openmpi":
            env = {MCA_PREFIX + self.name: value}
            if self.name.startswith(TUNED):
                env[f"{MCA_PREFIX}{TUNED}use_dynamic_rules"] = "1"
            return env
        raise UsageError(f"fabriclab does not know how this MPI ({flavour}) takes {self.name} from its "
                         "environment; leave algorithm=auto")


def parse(lines) -> dict:
    """{(call, form): Control} from the probe's JSON lines; RunError for an error line."""
    out = {}
    for line, d in probe_records("coll", lines):
        if d.get("type") != "control":
            continue
        try:
            c = Control(str(d["call"]), str(d["form"]), str(d["control"]), tuple(map(str, d["names"])))
        except (KeyError, TypeError) as e:
            raise unreadable("coll", line, e) from None
        out[(c.call, c.form)] = c
    return out


def probe(core_path: str, timeout: float = PROBE_TIMEOUT) -> dict:
    """The controls of the MPI the core was built with (it initialises only MPI_T: no launch, no files)."""
    return run_probe(core_path, "coll", parse, timeout)


def check(bench: str, call: str, form: str, name: str, controls: dict) -> Control:
    """The control that runs `name`, or UsageError in one line with the names accepted."""
    c = controls.get((call, form))
    if c is None:
        offered = sorted({f for (k, f) in controls if k == call})
        raise UsageError(f"{bench}: this MPI has no algorithm control for {call} in the {form} form"
                         + (f" (it has one for: {', '.join(offered)})" if offered else "")
                         + "; use algorithm=auto")
    if name not in c.names and name != ALL:
        raise UsageError(f"{bench}: algorithm {name!r} is not one {c.name} accepts for the {form} form; "
                         f"accepted: {', '.join(dict.fromkeys((AUTO, *c.names, ALL)))}")
    return c


def progress_environment(flavour: str) -> dict:
    """The variables that start the library's own progress thread: MPICH's
    MPIR_CVAR_ASYNC_PROGRESS (which raises the thread level to
    MPI_THREAD_MULTIPLE itself); Open MPI 5 has none for every path, only its
    TCP BTL's btl_tcp_progress_thread (ranks on other hosts)."""
    if flavour in ("mpich", "intel"):
        return {"MPIR_CVAR_ASYNC_PROGRESS": "1"}
    if flavour == "openmpi":
        return {MCA_PREFIX + "btl_tcp_progress_thread": "1"}
    raise UsageError(f"fabriclab does not know how this MPI ({flavour}) starts a progress thread; "
                     "leave progress=library")


def settle(plan, core_path: str, flavour: str, probe_fn=None):
    """(plan, header record): each collective job that names an algorithm
    checked against the library's controls and given the environment that
    selects it (`all`: one job per name), and one with progress=thread the
    environment that starts the library's progress thread; the record lists
    what was set, per job."""
    def asks(job) -> bool:
        return job.bench.coll is not None and job.params.get("algorithm", AUTO) != AUTO

    def threads(job) -> dict:
        return progress_environment(flavour) if job.params.get("progress") == "thread" else {}

    if not any(asks(j) or threads(j) for j in plan.jobs):
        return plan, {}
    controls = (probe_fn or probe)(core_path) if any(asks(j) for j in plan.jobs) else {}
    jobs, record = [], []
    for job in plan.jobs:
        if not (asks(job) or threads(job)):
            jobs.append(job)
            continue
        form, name = job.params.get("form", "blocking"), job.params.get("algorithm", AUTO)
        c = check(job.bench.name, job.bench.coll.call, form, name, controls) if asks(job) else None
        for value in (c.names if name == ALL else (name,)):
            env = {**(c.environment(flavour, value) if c else {}), **threads(job)}
            one = replace(job, params={**job.params, "algorithm": value}, env=tuple(sorted(env.items())))
            record.append({"bench": one.bench.name, "variant": one.variant, "control": c.name if c else None,
                           "env": env})
            jobs.append(one)
    return replace(plan, jobs=tuple(jobs)), {"coll": {"jobs": record}}
