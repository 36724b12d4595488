"""Execute a plan: one launch of the core per benchmark, records streamed to disk.

The core prints JSON lines on rank 0's stdout (docs/core-protocol.md). Each
point record is summarised here (Python owns the statistics), checked for
problems, and appended to the run's NDJSON stream at once. A launch that stays
silent past the timeout is killed, and the message names the benchmark, the
point and the phase; completed records stay valid on disk."""

from __future__ import annotations

import os
from collections import deque
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from ..analysis import diagnostics, ranks, stats
from ..errors import Terminated, catch_sigterm
from ..schema import StreamWriter
from ..schema.records import Point
from ..schema.run_records import LaunchEnd, LaunchRecord, SkipRecord
from . import failures, protocol, shm
from .pace import Pace
from ..host import sysinfo
from .launch import LaunchSpec, command, wrong_world
from .plan import Job, Plan


@dataclass
class Outcome:
    status: str            # complete | interrupted | failed
    error: str | None
    points: int
    diagnostics: list
    signal: int | None = None   # what interrupted it: SIGINT (Ctrl-C) or SIGTERM
    refused: bool = False       # the core refused the run as bad input (Refusal)
    budget: dict | None = None  # how the run kept its time budget (pace.Pace.summary), or None


class Refusal(str):
    """A launch's error line that is bad input only MPI could tell (the core's
    `refused` error: a thread level below the one a benchmark needs): the
    run fails, and the command exits 2, as for any bad input."""


def derive(rec: dict, hosts: list | None = None) -> Point:
    """A launch's point record from the core's point line (with what the run
    adds: params, cache state, variant, launch): its summary (Python owns the
    statistics) and, for a pattern, every rank's figures (analysis/ranks.py).
    How its time becomes latency and bandwidth is the record's own
    (schema/records.py). ValueError for samples or fields no reader can use."""
    summ = stats.summarize(rec["samples"])
    p = Point.from_dict({**rec, "summary": summ.to_dict()}, "the core's point")
    if p.is_pattern:
        ranks.summarize_point(p, hosts)
    return p


class Launch:
    """One running core: a process group, its stdout lines and stderr tail."""

    def __init__(self, argv: list[str], env: dict):
        self.shm = shm.noted()                 # what /dev/shm and /tmp held before: the rest is this launch's
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.err, env={**os.environ, **env},
                                     start_new_session=True, bufsize=0)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.stray: deque = deque(maxlen=40)   # stdout lines that are not the core's: the launcher's reports

    def lines(self, silence: float):
        """Yield stdout lines; yields None when nothing came for `silence` seconds.

        Reads the raw pipe: a buffered reader could hold a complete line that
        select() no longer reports, and a hang would then hide the last point."""
        fd, pending = self.proc.stdout.fileno(), b""
        while True:
            if not self.sel.select(timeout=silence):
                yield None
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                if pending:
                    yield pending.decode(errors="replace")
                return
            *complete, pending = (pending + chunk).split(b"\n")
            for line in complete:
                yield line.decode(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue

    def said(self, hosts: list | None = None) -> str:
        """After a failure: the dead rank the launcher reports (failures.py), else stderr's last lines."""
        self.err.seek(0)
        return failures.killed("\n".join(self.stray), self.err.read(), hosts) or \
            f"stderr: {self.stderr_tail() or '(empty)'}"

    def stderr_tail(self, n: int = 5) -> str:
        self.err.seek(0)
        lines = [ln.strip() for ln in self.err.read().splitlines() if ln.strip()]
        return " | ".join(lines[-n:])

    def finish(self, grace: float) -> int:
        """Let the job exit by itself within `grace` seconds, else end it; the exit code."""
        try:
            return self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.stop()
            return self.proc.wait()

    def close(self) -> None:
        self.stop()
        self.proc.wait()
        self.proc.stdout.close()
        self.sel.close()
        self.err.close()

    def sweep(self) -> None:
        """Remove what its killed or stopped ranks left in /dev/shm and /tmp (measure/shm.py),
        once every process of the launch is gone: close() and the watch's cleanup() first."""
        shm.sweep_all(self.shm)


class Watch:
    """What a run watches around each launch besides the machine's noise: the
    fabric's interface counters (a testbed, testbed/site.py). The default
    watches nothing."""

    def before(self):
        return None

    def after(self, token) -> dict:
        """Fields for the launch_end record; `wire_bytes` (bytes the hosts sent
        on the fabric) is checked against the payload the launch's points moved."""
        return {}

    def span(self, key: dict, t0: float, t1: float) -> None:
        """A point of the launch ran from t0 to t1 (time.monotonic), from its
        begin line to its point line; key names it (size, stride, conns, active)."""

    def stopped(self, rank_hosts: list[str]) -> str:
        """Asked when a launch went silent, before its ranks are stopped: a
        sentence naming what stopped (ranks, hosts, cables, interfaces), or ''.
        rank_hosts[i] is rank i's host (empty if the core never said hello)."""
        return ""

    def cleanup(self) -> None:
        """Remove what a launch may have left behind."""


# Fewer bytes on the wire than this share of the timed payload: another path was taken.
BYPASS_SHARE = 0.5


@dataclass(frozen=True)
class _Run:
    """What every launch of a run shares."""
    plan: Plan
    core_path: str
    spec: LaunchSpec
    writer: StreamWriter
    silence: float                   # seconds a launch may print nothing
    progress: object
    watch: Watch
    on_hello: Callable[[dict], None]
    executor: Callable[[list, dict], "Launch"]
    diags: list


def run(plan: Plan, core_path: str, spec: LaunchSpec, writer: StreamWriter, timeout: float,
        progress=None, watch: Watch | None = None, on_hello=None, executor=None) -> Outcome:
    """Run every job in each of the plan's launches; stop at the first
    failure. Ctrl-C or SIGTERM ends the run as 'interrupted'.

    A launch may stay silent for `timeout` plus twice the point time cap: one
    point prints nothing between its begin and point lines. Around every
    launch the machine's noise is read (load, steal time, frequencies) and
    recorded with where each rank ended up (a `launch_end` record).
    `on_hello(hello)` hears every launch's hello before its points (the
    session completes the header from the first); `executor(argv, env)`
    starts a launch (Launch: a process group). With the plan's budget each
    launch's point-time cap comes from pace.Pace (never above the plan's)."""
    diags: list = []
    status, error = "complete", None
    r = _Run(plan, core_path, spec, writer, timeout + 2 * plan.sampling.point_time, progress, watch or Watch(),
             on_hello or (lambda hello: None), executor or Launch, diags)
    job, k, sig = None, 0, None
    order = [(k, j) for k in range(plan.launches) for j in plan.order(k)]    # every launch, in run order
    pace = Pace(plan.sampling.point_time, plan.budget, [(j.bench.name, j.variant, j.env) for _, j in order])
    t0 = time.monotonic()
    previous = catch_sigterm()
    try:
        for i, (k, job) in enumerate(order):
            t = time.monotonic()
            cap = pace.cap(i, t - t0)
            error, capped = _launch(job, k, r, replace(plan.sampling, point_time=cap))
            pace.done(i, time.monotonic() - t, capped, cap)
            if error:
                status = "failed"
                break
    except KeyboardInterrupt as e:
        where = f"{job.bench.name}, launch {k + 1} of {plan.launches}" if job else "start-up"
        sig = signal.SIGTERM if isinstance(e, Terminated) else signal.SIGINT
        how = "terminated (SIGTERM)" if sig == signal.SIGTERM else "interrupted"
        status, error = "interrupted", f"{how} during {where}"
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    done = sum(isinstance(x, Point) for x in writer.records)
    return Outcome(status, error, done, diags, sig, isinstance(error, Refusal), pace.summary(time.monotonic() - t0))


@dataclass
class _Reading:
    """One launch of one job, as its lines are read: where records go and
    what the core has said so far."""
    job: Job
    launch: int
    run: _Run
    record: LaunchRecord         # streamed once the hello is in it
    streamed: bool = False
    hosts: list | None = None
    timer: dict = field(default_factory=dict)
    end: dict = field(default_factory=dict)
    points: list = field(default_factory=list)   # the Points of this launch, as streamed
    begun: float = 0.0                           # time.monotonic() at the current point's begin line

    @property
    def writer(self) -> StreamWriter:
        return self.run.writer

    def wrong_world(self, ranks) -> str | None:
        """An error line when the core's world is not the ranks launched (N
        singletons: each rank 0 of 1), else None."""
        if not isinstance(ranks, int) or ranks == self.run.spec.nranks:
            return None
        return wrong_world(self.run.spec, ranks)

    def stream_launch(self) -> None:
        """Stream the launch record (once): at the hello, or at the first sign of
        trouble, so a killed run's stream still names the MPI library, the rank
        hosts and the timer."""
        if not self.streamed:
            self.streamed = True
            self.writer.add(self.record)


def _launch(job: Job, k: int, run: _Run, sampling) -> tuple[str | None, int]:
    """One launch of the core for one job, sampled as `sampling` says (the plan's, with
    this launch's cap): an error line or None, and how many of its points hit the cap."""
    argv, env = command(run.spec, protocol.job_argv(run.core_path, job, sampling, run.plan.validate))
    env = {**env, **dict(job.env)}
    before = sysinfo.noise()
    token = run.watch.before()
    launch = run.executor(argv, env)
    r = _Reading(job, k, run, LaunchRecord(job.bench.name, job.variant, k, argv, env, time.time()))
    try:
        try:
            error = _read(r, launch, run.silence)
            if error and "no output for" in error:
                error += _stopped(r, run.watch)
        finally:
            r.stream_launch()
        rc = launch.finish(grace=0 if error else 30)
        if error is None and rc != 0:
            error = f"{job.bench.name}: the MPI job exited with code {rc}; {launch.said(r.hosts)}"
    finally:
        launch.close()
        run.watch.cleanup()        # a testbed's ranks, in namespaces the launcher's group does not hold
        launch.sweep()
        noise = sysinfo.noise_between(before, sysinfo.noise())
        fabric = run.watch.after(token)
        wire = fabric.pop("wire_bytes", None)
        run.writer.add(LaunchEnd(job.bench.name, job.variant, k, noise, wire,
                                 {"cpu_end": r.end.get("cpu_end"), "ended": time.time(), **fabric}))
    _bypassed(r, wire, fabric.get("fabric", "the fabric"))
    return error, sum(p.stop == "time_cap" for p in r.points)


def _bypassed(r: _Reading, wire, fabric: str) -> None:
    """A warning when far fewer bytes crossed the fabric than the launch's
    points moved: the timed payload is a lower bound on what the wire must carry."""
    payload = sum(p.payload_bytes for p in r.points)
    if wire is None or payload <= (1 << 20) or wire >= BYPASS_SHARE * payload:
        return
    d = replace(diagnostics.fabric_bypassed(wire, payload, fabric), bench=r.job.bench.name)
    r.writer.add(d.record())
    r.run.diags.append(d)


def ranks_on(rank_hosts: list[str], hosts: list[str]) -> str:
    """'Ranks 0, 1 on h0, h4' (the ranks on those hosts), or 'Host h5' where none runs."""
    ranks = [str(i) for i, h in enumerate(rank_hosts) if h in hosts]
    if not ranks:
        return f"Host{'s' if len(hosts) != 1 else ''} {', '.join(hosts)}"
    return f"Rank{'s' if len(ranks) != 1 else ''} {', '.join(ranks)} on {', '.join(hosts)}"


def _stopped(r: _Reading, watch: Watch) -> str:
    """What stopped, as far as the watch can tell."""
    said = watch.stopped(list(r.hosts or []))
    return f". {said}" if said else ""


def _point(r: _Reading, msg: protocol.PointLine, where: str) -> str | None:
    """Summarise, check and stream one point; an error line for an unusable one."""
    job = r.job
    rec = dict(msg.data)
    rec.update(params={**job.bench.defaults, **job.params}, cache=r.run.plan.cache, variant=job.variant,
               launch=r.launch)
    if job.bench.coll and isinstance(rec.get("info"), dict) and isinstance(rec.get("active"), int):
        rec["info"] = {**rec["info"], "bus_factor": job.bench.coll.bus_factor(rec["active"])}
    try:
        p = derive(rec, r.hosts)
    except (ValueError, KeyError, TypeError) as e:  # no samples, negative ones, a torn record
        return f"{job.bench.name}{where}: the core sent an unusable point ({e})"
    found = diagnostics.check_point(p, p.summary, r.run.plan.sampling.target_ci)
    if r.timer:
        found += [replace(d, bench=p.bench, size=p.size, stride=p.stride) for d in
                  diagnostics.check_timer(r.timer.get("overhead_s", 0.0), r.timer.get("resolution_s", 0.0),
                                          p.summary.median * (p.batch or 1))]
    p.diagnostics = [d.to_dict() for d in found]
    r.run.diags.extend(found)
    r.writer.add(p)
    r.points.append(p)
    r.run.watch.span({"size": p.size, "stride": p.stride, "conns": p.conns, "active": p.active}, r.begun,
                     time.monotonic())
    if r.run.progress:
        r.run.progress.advance(job.bench.name, p)
    return None


def _read(r: _Reading, launch: Launch, timeout: float) -> str | None:
    """Read one launch's lines into records; returns an error line or None."""
    name = r.job.bench.name
    phase, where, ended = "starting the MPI job", "", False
    for line in launch.lines(timeout):
        if line is None:  # the ranks run on until the watch has looked (_launch stops them)
            return (f"{name}: no output for {timeout:g} s{where} (phase: {phase}); "
                    f"a rank hung or died. Stderr: {launch.stderr_tail() or '(empty)'}")
        msg = protocol.parse_line(line)
        if msg is None and line.strip():
            launch.stray.append(line)
            wrong = r.wrong_world(protocol.cut_hello_ranks(line))
            if wrong:  # singletons' hello lines cut and interleaved by the launcher's forwarding
                return wrong
        elif isinstance(msg, protocol.Hello):
            phase = "measuring"
            r.record.hello = msg.data
            r.run.on_hello(msg.data)
            r.stream_launch()
            wrong = r.wrong_world(msg.data.get("ranks"))
            if wrong:  # stop before the first point: N singletons would each measure alone
                return wrong
            r.timer, r.hosts = msg.data.get("timer") or {}, msg.data.get("hosts")
        elif isinstance(msg, protocol.Begin):
            where, r.begun = msg.where(), time.monotonic()
        elif isinstance(msg, protocol.PointLine):
            error = _point(r, msg, where)
            if error:
                return error
        elif isinstance(msg, protocol.Skip):
            r.writer.add(SkipRecord.from_dict({**msg.data, "variant": r.job.variant, "launch": r.launch},
                                              "the core's skip"))
            if r.run.progress:
                r.run.progress.advance(name, None)
        elif isinstance(msg, protocol.CoreError):
            return r.wrong_world(msg.ranks) or (Refusal if msg.refused else str)(f"{name}{where}: {msg.message}")
        elif isinstance(msg, protocol.End):
            ended = True
            r.end.update(msg.data)
    if not ended:
        return f"{name}: the MPI job ended early{where} (phase: {phase}); {launch.said(r.hosts)}"
    return None
