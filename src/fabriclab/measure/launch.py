"""Launcher command lines: mpiexec (MPICH/Hydra, Open MPI, Intel MPI) and Slurm srun.

fabriclab never starts remote processes itself: MPI's own launcher (or the
site's Slurm) does, and this module only writes its command line and the
environment it needs. Each flavour's quirks live here:
- Open MPI refuses to run as root unless OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set;
- Open MPI refuses more ranks than cores unless oversubscription is allowed;
- Open MPI's UCX one-sided component warns on a host without UCX hardware, so
  single-host runs leave it out (docs/mpi.md).
- srun is told to kill the whole step when one task dies.

Placement: ranks are bound to distinct cores by default (`bind="core"`:
MPICH `-bind-to core`, Open MPI `--bind-to core`, srun `--cpu-bind=cores`),
since an unbound rank that the scheduler moves between cores changes its
timings from launch to launch (about 1.2-1.7x on a 2-core VM). Binding is
left to nobody when this host would run more ranks than it has cores
(stacking two busy-polling ranks on one core is worse than letting them
float); the launch spec records what was asked and what was done."""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass, field

from ..errors import UsageError

LAUNCHERS = ("auto", "mpiexec", "srun")
BINDINGS = ("core", "none")


@dataclass(frozen=True)
class LaunchSpec:
    launcher: str                 # "mpiexec" or "srun"
    path: str                     # the launcher executable
    flavour: str                  # mpich | openmpi | intel | unknown (mpiexec only)
    nranks: int = 2
    hosts: tuple = ()             # explicit host list ("h1,h2"), may repeat a host
    hostfile: str | None = None
    ppn: int | None = None        # ranks per node
    extra: tuple = ()             # extra launcher arguments, passed verbatim
    env: dict = field(default_factory=dict)
    bind: str = "core"            # core | none: what the user asked for
    # Hosts reached through an ssh-like agent (an emulated testbed): mpiexec runs
    # behind `prefix` on the first host and the MPI is forced onto TCP over `iface`.
    agent: str | None = None
    prefix: tuple = ()
    iface: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hosts"] = list(self.hosts)
        d["extra"] = list(self.extra)
        d["prefix"] = list(self.prefix)
        d["transport"] = self.transport
        return d

    @property
    def transport(self) -> str | None:
        """What the launch forces the MPI onto, or None (the MPI's own choice)."""
        return f"tcp over {self.iface}" if self.iface else None


def make_spec(launcher: str, mpiexec: str, flavour: str, nranks: int, hosts: str | None = None,
              hostfile: str | None = None, ppn: int | None = None, extra: list[str] | None = None,
              bind: str = "core") -> LaunchSpec:
    """Validate launcher options; 'auto' picks srun inside a Slurm allocation."""
    if launcher not in LAUNCHERS:
        raise UsageError(f"unknown launcher {launcher!r}; choose one of {', '.join(LAUNCHERS)}")
    if bind not in BINDINGS:
        raise UsageError(f"--bind must be core or none, not {bind!r}")
    if nranks < 1:
        raise UsageError(f"the number of ranks must be at least 1, not {nranks}")
    if ppn is not None and ppn < 1:
        raise UsageError(f"ranks per node must be at least 1, not {ppn}")
    if hostfile and not os.path.isfile(hostfile):
        raise UsageError(f"hostfile not found: {hostfile}")
    if hosts and hostfile:
        raise UsageError("give either --hosts or --hostfile, not both")
    if launcher == "auto":
        launcher = "srun" if os.environ.get("SLURM_JOB_ID") and shutil.which("srun") else "mpiexec"
    if launcher == "srun":
        path = shutil.which("srun")
        if not path:
            raise UsageError("launcher srun not found on PATH; run inside a Slurm allocation or use --launcher mpiexec")
        flavour = "slurm"
    else:
        path = mpiexec
    host_list = tuple(h for h in (hosts or "").split(",") if h)
    return LaunchSpec(launcher, path, flavour, nranks, host_list, hostfile, ppn, tuple(extra or ()), bind=bind)


def binding(spec: LaunchSpec, local_cpus: int | None = None) -> str:
    """What the launch does: "core", or "none" when asked or when this host
    would run more ranks than it has cores (ranks of one host, as far as the
    options tell: all of them without --hosts/--hostfile, else --ppn or the
    host's repeats in --hosts)."""
    if spec.bind == "none" or spec.agent:
        # Emulated hosts share this machine's cores: each would bind its rank to core 0.
        return "none"
    local_cpus = local_cpus or os.cpu_count() or 1
    if spec.hostfile:
        per_host = spec.ppn or 1
    elif spec.hosts:
        per_host = spec.ppn or max(spec.hosts.count(h) for h in spec.hosts)
    else:
        per_host = spec.ppn or spec.nranks
    return "core" if per_host <= local_cpus or spec.launcher == "srun" else "none"


def command(spec: LaunchSpec, argv: list[str], local_cpus: int | None = None,
            is_root: bool | None = None) -> tuple[list[str], dict]:
    """The full command line and the environment additions for one launch."""
    local_cpus = local_cpus or os.cpu_count() or 1
    is_root = (os.geteuid() == 0) if is_root is None else is_root
    env = dict(spec.env)
    bind = binding(spec, local_cpus)
    if spec.launcher == "srun":
        cmd = [spec.path, "-n", str(spec.nranks), "--kill-on-bad-exit=1",
               "--cpu-bind=cores" if bind == "core" else "--cpu-bind=none"]
        if spec.hosts:
            cmd.append("--nodelist=" + ",".join(dict.fromkeys(spec.hosts)))
        if spec.ppn:
            cmd.append(f"--ntasks-per-node={spec.ppn}")
        return [*cmd, *spec.extra, *argv], env
    cmd = [*spec.prefix, spec.path, "-n", str(spec.nranks)]
    if spec.agent:
        cmd += _through_agent(spec, env)
    if spec.flavour == "openmpi":
        if spec.hosts:
            cmd += ["--host", ",".join(_slots(spec.hosts))]
        elif spec.hostfile:
            cmd += ["--hostfile", spec.hostfile]
        if spec.ppn:
            cmd += ["--map-by", f"ppr:{spec.ppn}:node"]
        elif not spec.hosts and not spec.hostfile and spec.nranks > local_cpus:
            cmd += ["--map-by", ":OVERSUBSCRIBE"]
        cmd += ["--bind-to", bind]
        if is_root:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if not spec.hosts and not spec.hostfile:
            # One host: no fabric for UCX to drive, and its one-sided component
            # would only warn; shared memory serves both paths.
            env.setdefault("OMPI_MCA_osc", "^ucx")
    else:  # MPICH, Intel MPI and other Hydra-based launchers
        if spec.hosts:  # host:n keeps repeated hosts, so ranks 0 and 1 share a node as asked
            cmd += ["-hosts", ",".join(_slots(spec.hosts))]
        elif spec.hostfile:
            cmd += ["-f", spec.hostfile]
        if spec.ppn:
            cmd += ["-ppn", str(spec.ppn)]
        if bind == "core":
            cmd += ["-bind-to", "core"]
    return [*cmd, *spec.extra, *argv], env


def _through_agent(spec: LaunchSpec, env: dict) -> list[str]:
    """Launch through the ssh-like agent and force TCP over spec.iface. Both
    MPIs otherwise find a faster path between emulated hosts that share one
    kernel and bypass the emulated network (../shared/TESTBED.md: MPICH's
    default moved 14 KB over the interface in a 1 GB test)."""
    if spec.flavour == "openmpi":
        return ["--mca", "plm_rsh_agent", spec.agent, "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", spec.iface, "--mca", "oob_tcp_if_include", spec.iface]
    env.update(MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="tcp", FI_TCP_IFACE=spec.iface)
    return ["-launcher", "ssh", "-launcher-exec", spec.agent]


def _slots(hosts: tuple) -> list[str]:
    """Both Hydra's -hosts and Open MPI's --host take host:n; a host listed k times gets k."""
    counts: dict[str, int] = {}
    for h in hosts:
        counts[h] = counts.get(h, 0) + 1
    return [f"{h}:{n}" for h, n in counts.items()]
