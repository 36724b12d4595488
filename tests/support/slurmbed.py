"""A real Slurm on this machine for the integration tests: munged, slurmctld
and two slurmd nodes, n1 and n2, from Debian's packages (`make test` installs
them). Up in about 0.3 s; down in well under a second, plus Slurm's KillWait
after a step that failed.

Everything lives under one temporary directory: configuration, state, logs,
pid files and munge's own socket and key, so a system Slurm or munge (if any)
is neither read nor disturbed; clients get SLURM_CONF, daemons `-f`. No
systemd or cgroups: processes are tracked by parentage (proctrack/linuxproc)
and not bound (task/none). Each slurmd runs in a UTS namespace of its own
whose host name is its node name, so MPI_Get_processor_name tells which node
a rank ran on, as on a cluster. Stopping goes by the pid files and then
checks that no process that belonged to this cluster is left."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

NODES = ("n1", "n2")
PROGRAMS = ("munged", "mungekey", "slurmctld", "slurmd", "sinfo", "srun", "salloc", "unshare", "runuser")
START_TIMEOUT = 30.0


class SlurmError(RuntimeError):
    pass


@dataclass
class Cluster:
    root: Path
    conf: Path                     # slurm.conf of slurmctld and every client
    procs: dict = field(default_factory=dict)    # name -> Popen of a started daemon
    pidfiles: dict = field(default_factory=dict)  # name -> its pid file
    start_s: float = 0.0           # how long start() took

    def environ(self) -> dict:
        """The environment for a client (salloc, srun, sinfo) of this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def log_tails(self, lines: int = 5) -> str:
        out = []
        for log in sorted(self.root.glob("log/*")):
            text = log.read_text(errors="replace").strip().splitlines()[-lines:]
            out.append(f"{log.name}: " + " | ".join(text))
        return "\n".join(out)


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _write_conf(root: Path) -> Path:
    ctld, *nodes = _free_ports(1 + len(NODES))
    host = socket.gethostname()
    d = str(root)
    lines = [
        "ClusterName=fabriclab",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ctld}",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={d}/munge/socket",
        # no systemd, no cgroups: processes tracked by their parentage, no binding plugin
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
        "SlurmdParameters=config_overrides",   # nodes are what the lines below say, not the hardware
        "MpiDefault=none",                     # fabriclab must pass --mpi itself
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "ReturnToService=2", "KillWait=1", "InactiveLimit=0",
        f"StateSaveLocation={d}/state", f"SlurmdSpoolDir={d}/spool/%n",
        f"SlurmctldPidFile={d}/run/slurmctld.pid", f"SlurmdPidFile={d}/run/slurmd-%n.pid",
        f"SlurmctldLogFile={d}/log/slurmctld.log", f"SlurmdLogFile={d}/log/slurmd-%n.log",
        *(f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={p} CPUs=1 State=UNKNOWN"
          for n, p in zip(NODES, nodes)),
        f"PartitionName=fabriclab Nodes={','.join(NODES)} Default=YES OverSubscribe=YES MaxTime=INFINITE State=UP",
    ]
    conf = root / "slurm.conf"
    conf.write_text("\n".join(lines) + "\n")
    for n in NODES:
        # slurmd reads mpi.conf beside its slurm.conf; two PMIx servers on one
        # machine must not share a client directory ("pmixp_mkdir ... File exists")
        (root / n).mkdir()
        shutil.copy(conf, root / n / "slurm.conf")
        (root / "pmix" / n).mkdir(parents=True)
        (root / n / "mpi.conf").write_text(f"PMIxCliTmpDirBase={d}/pmix/{n}\n")
        (root / "spool" / n).mkdir(parents=True)
    return conf


def _spawn(c: Cluster, name: str, argv: list[str]) -> None:
    out = open(c.root / "log" / f"{name}.out", "w")
    c.procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=c.environ())
    out.close()


def _wait(c: Cluster, phase: str, ready, deadline: float) -> None:
    """Poll ready() until it holds; fail naming the phase if a daemon died or time ran out."""
    while not ready():
        dead = [f"{n} (exit {p.returncode})" for n, p in c.procs.items() if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            why = f"{', '.join(dead)} ended" if dead else f"not done after {START_TIMEOUT:g} s"
            raise SlurmError(f"Slurm start-up failed while {phase}: {why}\n{c.log_tails()}")
        time.sleep(0.1)


def _all_idle(c: Cluster) -> bool:
    p = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=c.environ(), capture_output=True, text=True,
                       timeout=10)
    states = dict(line.split() for line in p.stdout.splitlines() if len(line.split()) == 2)
    return all(states.get(n) == "idle" for n in NODES)


def start() -> Cluster:
    if os.geteuid() != 0:
        pytest.fail("the Slurm tests start slurmd (as root) and munged (as the munge user): run them as root")
    missing = [p for p in PROGRAMS if not shutil.which(p)]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed; run `make test`, which installs Slurm and munge")
    # munged runs as the munge user: it must reach its directory through ours
    root = Path(tempfile.mkdtemp(prefix="fabriclab-slurm-"))
    root.chmod(0o711)
    for sub in ("state", "run", "log"):
        (root / sub).mkdir()
    munge = root / "munge"
    munge.mkdir(mode=0o711)
    shutil.chown(munge, "munge", "munge")
    c = Cluster(root, _write_conf(root))
    deadline = time.monotonic() + START_TIMEOUT
    try:
        key = munge / "munge.key"
        subprocess.run(["runuser", "-u", "munge", "--", "mungekey", "-c", "-k", str(key)], check=True,
                       capture_output=True, timeout=30)
        c.pidfiles["munged"] = munge / "munged.pid"
        _spawn(c, "munged", ["runuser", "-u", "munge", "--", "munged", "-F", f"--socket={munge}/socket",
                             f"--key-file={key}", f"--pid-file={munge}/munged.pid",
                             f"--log-file={root}/log/munged.log", f"--seed-file={munge}/seed"])
        _wait(c, "starting munged", lambda: (munge / "socket").exists() and c.pidfiles["munged"].exists(),
              deadline)
        c.pidfiles["slurmctld"] = root / "run" / "slurmctld.pid"
        _spawn(c, "slurmctld", ["slurmctld", "-D", "-f", str(c.conf)])
        for n in NODES:
            c.pidfiles[n] = root / "run" / f"slurmd-{n}.pid"
            _spawn(c, n, ["unshare", "--uts", "sh", "-c",
                          f'hostname {n} && exec slurmd -D -N {n} -f "{root / n / "slurm.conf"}"'])
        _wait(c, "waiting for slurmctld and both slurmd to write their pid files",
              lambda: all(p.exists() for p in c.pidfiles.values()), deadline)
        _wait(c, f"waiting for sinfo to show {' and '.join(NODES)} idle", lambda: _all_idle(c), deadline)
    except BaseException:
        stop(c, check=False)
        raise
    return c


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def leftovers(c: Cluster) -> list[tuple]:
    """Live processes that belong to this cluster: its path in their command
    line or environment (daemons, slurmstepd, tasks, srun), this one aside."""
    mark, found = str(c.root).encode(), []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if (d / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (d / "cmdline").read_bytes()
            if mark in cmd or mark in (d / "environ").read_bytes():
                found.append((int(d.name), cmd.replace(b"\0", b" ").decode(errors="replace").strip()))
        except (OSError, IndexError):
            continue
    return found


def stop(c: Cluster, check: bool = True) -> None:
    """SIGTERM each daemon by its pid file (nodes, controller, munge last), wait
    for it, SIGKILL what stays; then no process of the cluster may be left."""
    order = [*NODES, "slurmctld", "munged"]
    for name in order:
        pid = _pid(c.pidfiles[name]) if name in c.pidfiles else None
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        proc = c.procs.get(name)
        if proc is None:
            continue
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    left = []
    for _ in range(50):  # slurmstepd and tasks end a moment after their slurmd
        left = leftovers(c)
        if not left:
            break
        time.sleep(0.1)
    for pid, _ in left:  # end them all the same, so one failure does not spread
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not left:
        shutil.rmtree(c.root, ignore_errors=True)
    if check:
        assert not left, f"processes left after stopping Slurm (kept {c.root}): {left}"


@pytest.fixture(scope="module")
def slurm():
    """A running two-node Slurm for one test module; stopped (and checked) after it."""
    t0 = time.monotonic()
    c = start()
    c.start_s = time.monotonic() - t0
    yield c
    stop(c)
