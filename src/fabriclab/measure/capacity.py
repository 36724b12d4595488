"""What a run needs from its hosts, checked before anything is built or launched.

Every point's memory comes from its benchmark's footprint (footprint.py,
declared in the registry) for the role each rank takes, plus what every rank
holds before any buffer: the MPI library and the core (RANK_BASE, measured)
and rank 0's sample arrays. Ranks are summed per host as the launch places
them (launch.py): all on this host for a local run or an emulated testbed,
host by host for `--hosts`, and the fullest host's worth (`--ppn`, else every
rank) where the launcher decides. Points run one after another and free
their buffers, so the run needs its largest point; when that exceeds the
memory available (MemAvailable, /proc/meminfo: what can be allocated without
swapping), the run is refused unless forced, naming the point, what it needs
and what there is. Hosts other than this one are assumed to have as much
available as this one, and the message says so.

Points the kernel cannot carry (sizes above INT_MAX bytes for an MPI count,
and the footprints' other limits) are named up front; a run in which no
point can be measured is refused."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..units import fmt_bytes, parse_size
from ..suite.footprint import At
from .launch import LaunchSpec
from .plan import Job, Plan

MEMINFO = Path("/proc/meminfo")
SYSCTL = Path("/proc/sys/net/ipv4")
# One rank before any buffer: the MPI library and the core. Peak resident
# size of a rank measuring a 1-byte ping-pong: MPICH 5.0.2 16-23 MiB at 2 to
# 16 ranks on one host (about 0.3 MiB more per rank), Open MPI 5.0.11 13 MiB.
RANK_BASE = 32 << 20
RANK_PER_PEER = 64 << 10
# runner.c keeps max_samples doubles three times on rank 0 (samples, sorted,
# round); pattern benchmarks also gather every rank's samples twice and print
# them as JSON of about 25 characters a sample into a buffer that doubles.
SAMPLE_BYTES = 3 * 8
RANK_SAMPLE_BYTES = 2 * 8 + 2 * 25


@dataclass(frozen=True)
class Placement:
    """Which ranks share a host, as far as the launch options tell."""
    groups: tuple | None        # per host, its ranks as ranges (when known), else None
    per_host: int               # the most ranks one host may hold
    local: bool                 # every host is this one

    def assumption(self) -> str:
        if self.local:
            return ""
        text = "assuming every host has as much memory available as this one"
        if self.groups is None:
            text += f"; the launcher places the ranks, so up to {self.per_host} of them counted on one host"
        return text


def placement(spec: LaunchSpec) -> Placement:
    n = spec.nranks
    if spec.agent or (spec.launcher == "mpiexec" and not spec.hosts and not spec.hostfile):
        return Placement(((range(n),),), n, True)
    if spec.ppn:
        return Placement(None, min(spec.ppn, n), False)
    if spec.hosts and spec.launcher == "mpiexec":
        # -hosts / --host h:k in order of first appearance; Hydra wraps around past the last
        # slot, so slot j takes ranks j, j + S, j + 2S, ... (ranges: millions of ranks count at once)
        slots = [h for h in dict.fromkeys(spec.hosts) for _ in range(spec.hosts.count(h))]
        groups: dict[str, list[range]] = {}
        for j, h in enumerate(slots[:n]):
            groups.setdefault(h, []).append(range(j, n, len(slots)))
        return Placement(tuple(tuple(g) for g in groups.values()),
                         max(sum(map(len, g)) for g in groups.values()), False)
    return Placement(None, n, False)


@dataclass(frozen=True)
class Need:
    """The memory of one point on its fullest host."""
    bench: str
    variant: str
    where: str                  # "4M", "4M stride 8", "1M active 3"
    host_bytes: int
    host_ranks: int
    rank_bytes: int             # the largest rank's, MPI and core included


@dataclass
class Estimate:
    peak: Need | None = None
    points: int = 0             # points the kernels can carry
    skips: dict = field(default_factory=dict)   # (bench, reason) -> where the kernel skips


def _roles(layout, nranks: int) -> str:
    """The role of every rank: the layout's, else rank 0 `s`, rank 1 `r`, the rest idle."""
    if layout is not None:
        return layout.roles
    return ("sr" + "i" * nranks)[:nranks]


def _counts(roles, place: Placement) -> list[dict]:
    """Per host (or the one worst host), how many ranks take each role."""
    out = []
    for g in place.groups or ((range(len(roles)),),):
        c: Counter = Counter()
        for rg in g:
            c.update(roles[rg.start:rg.stop:rg.step])
        out.append(dict(c))
    return out


def _fullest(per_role: dict, counts: list[dict], place: Placement) -> tuple[int, int, int]:
    """(bytes, ranks) of the fullest host and the largest rank's bytes."""
    largest = max(per_role[r] for c in counts for r in c)
    if place.groups is None:     # any ranks may share a host: the per_host largest ones
        left, total = place.per_host, 0
        for b, k in sorted(((per_role[r], k) for r, k in counts[0].items()), reverse=True):
            take = min(k, left)
            total, left = total + take * b, left - take
        return total, place.per_host, largest
    best = max(counts, key=lambda c: sum(per_role[r] * k for r, k in c.items()))
    return sum(per_role[r] * k for r, k in best.items()), sum(best.values()), largest


def sock_limits(params: dict) -> tuple[int, int]:
    """The most one socket queues to send and to receive: twice SO_SNDBUF and
    SO_RCVBUF when set (socket(7): the kernel doubles them), else the
    autotuning maximum of tcp_wmem and tcp_rmem."""
    out = []
    for key, name, default in (("sndbuf", "tcp_wmem", 4 << 20), ("rcvbuf", "tcp_rmem", 6 << 20)):
        given = parse_size(str(params.get(key) or 0), key)
        if given > 0:
            out.append(2 * given)
            continue
        try:
            out.append(int((SYSCTL / name).read_text().split()[2]))
        except (OSError, ValueError, IndexError):
            out.append(default)
    return out[0], out[1]


def _where(at: At, job: Job, layout) -> str:
    text = fmt_bytes(at.size)
    if job.bench.has_stride:
        text += f" stride {at.stride}"
    if "conns" in job.bench.axes:
        text += f" conns {at.conns}"
    if layout is not None and "active" in job.bench.axes:
        text += f" active {layout.active}"
    return text


def _job(job: Job, plan: Plan, place: Placement, nranks: int, est: Estimate) -> None:
    """Every point of one job into the estimate: its skips, or its memory."""
    fp = job.bench.footprint
    if fp is None:
        raise ValueError(f"{job.bench.name} declares no footprint (suite/footprint.py)")
    params = {**job.bench.defaults, **job.params}
    snd, rcv = sock_limits(params) if job.bench.level == "tcp" else (0, 0)
    base = RANK_BASE + RANK_PER_PEER * nranks
    rank0 = plan.sampling.max_samples * (SAMPLE_BYTES + (RANK_SAMPLE_BYTES * nranks if job.bench.pattern else 0))
    buffers = job.buffers or (1,) * len(job.sizes)
    for layout in job.layouts or (None,):
        roles = _roles(layout, nranks)
        counts = _counts(roles, place)
        present = set(roles)
        for conns in job.conns:
            for stride in job.strides:
                for size, nbuf in zip(job.sizes, buffers):
                    at = At(size, nbuf, stride, conns, nranks, roles.count("s"),
                            layout.active if layout is not None else nranks, params,
                            plan.sampling.sample_time, snd, rcv)
                    refused = job.bench.app.refusal(size, at.active, params) if job.bench.app else None
                    if refused:
                        raise UsageError(f"{job.bench.name} {refused}")
                    reason = fp.limit(at)
                    if reason:
                        est.skips.setdefault((job.bench.name, reason), {})[_where(at, job, layout)] = None
                        continue
                    est.points += 1
                    per_role = {r: fp.bytes(r, at) + base for r in present}
                    host, ranks, largest = _fullest(per_role, counts, place)
                    host += rank0
                    if est.peak is None or host > est.peak.host_bytes:
                        est.peak = Need(job.bench.name, job.variant, _where(at, job, layout), host, ranks,
                                        largest + rank0)


def estimate(plan: Plan, spec: LaunchSpec) -> Estimate:
    """The skips and the largest point per host of a plan, as `spec` places its ranks."""
    place = placement(spec)
    est = Estimate()
    for job in plan.jobs:
        _job(job, plan, place, spec.nranks, est)
    return est


def available() -> int | None:
    """MemAvailable of this host in bytes, or None where the kernel does not say."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def skip_notes(est: Estimate) -> list[str]:
    return [f"{bench} skips {', '.join(where)}: {reason}" for (bench, reason), where in est.skips.items()]


def amount(n: int) -> str:
    """Memory for reading: 31.5 GiB, 640 MiB."""
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            v = n / div
            return f"{v:.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"
    return f"{n} B"


def memory_line(need: Need, avail: int, place: Placement) -> str:
    """What the largest point needs against what there is."""
    name = f"{need.bench} [{need.variant}]" if need.variant else need.bench
    ranks = f"{need.host_ranks} rank{'s' if need.host_ranks != 1 else ''}"
    where = "this host" if place.local else "one host"
    text = (f"{name} at {need.where} needs about {amount(need.host_bytes)} of memory on {where} ({ranks}, "
            f"the largest {amount(need.rank_bytes)} with the MPI library), more than the "
            f"{amount(avail)} available here (MemAvailable)")
    more = place.assumption()
    return text + (f"; {more}" if more else "")


def check(plan: Plan, spec: LaunchSpec, force: bool = False) -> list[str]:
    """Notes for the user; raises UsageError for a run that cannot measure
    anything, or whose largest point needs more memory than a host has
    (unless forced: then it is one more note)."""
    est = estimate(plan, spec)
    notes = skip_notes(est)
    if est.points == 0:
        raise UsageError("nothing to measure: " + "; ".join(notes))
    avail = available()
    if avail is None or est.peak.host_bytes <= avail:
        return notes
    line = memory_line(est.peak, avail, placement(spec))
    if not force:
        raise UsageError(f"{line}. Choose smaller sizes, fewer ranks per host or the warm cache, "
                         "or give --force to run it anyway")
    return notes + [line]
