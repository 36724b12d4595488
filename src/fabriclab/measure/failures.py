"""The launcher's report of a rank that died, read from what it printed.

A rank killed by a signal (the kernel's out-of-memory killer, a batch
system, a crash) takes no last word of its own: its launcher says which
process died, where and how, each in its own wording and on its own stream.
Recorded texts are in tests/data/killed/.

- MPICH's Hydra, on standard output: since MPICH 4 the process id and host
  ("=   PID 16480 RUNNING AT vm", "=   EXIT CODE: 9") and the signal
  ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)"),
  no rank; before, the rank too ("=   RANK 1 PID 65033 RUNNING AT host",
  "=   KILLED BY SIGNAL: 9 (Killed)"). With more than two ranks it reports
  the first process its clean-up collects, which may be one it ended itself.
- Open MPI, on standard error, over two lines: "prterun noticed that process
  rank 1 with PID 18447 on node vm exited on signal 9 (Killed)." (mpirun
  before Open MPI 5).
- Slurm's srun, on standard error: "srun: error: nid001: task 1: Killed".

`killed` turns the first report found into one sentence for the run's error
line, naming the rank from the hello's host list when the launcher names
only a host that runs a single rank."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HYDRA_OLD = re.compile(r"RANK (\d+) PID (\d+) RUNNING AT (\S+)\s*=*\s*(?:KILLED BY SIGNAL: (\d+) \(([^)]*)\)|"
                        r"EXIT CODE: (\d+))")
_HYDRA = re.compile(r"=\s+PID (\d+) RUNNING AT (\S+)\s*=\s*EXIT CODE: (\d+)")
_HYDRA_STRING = re.compile(r"EXIT STRING: (.+?) \(signal (\d+)\)")
_OPEN_MPI = re.compile(r"noticed that process rank (\d+) with PID (\d+) on node (\S+) exited on signal (\d+)"
                       r"(?: \(([^)]*)\))?")
_SRUN = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): (.+)")


@dataclass(frozen=True)
class Death:
    """One dead process as the launcher reports it."""
    rank: int | None
    pid: int | None
    host: str | None
    signal: int | None
    how: str                    # the signal's name, or "exit code N", as printed

    def sentence(self, hosts: list | None = None) -> str:
        rank = self.rank
        if rank is None and self.host and hosts and hosts.count(self.host) == 1:
            rank = hosts.index(self.host)
        who = f"rank {rank}" if rank is not None else "a rank"
        pid = f" (PID {self.pid})" if self.pid is not None else ""
        host = f" on {self.host}" if self.host else ""
        how = f"killed by signal {self.signal} ({self.how})" if self.signal is not None else f"ended ({self.how})"
        text = f"the launcher reports {who}{pid}{host} {how}"
        if self.signal == 9:
            text += "; SIGKILL comes from the kernel's out-of-memory killer (dmesg says) or a batch system's limits"
        return text


def _one_line(text: str) -> str:
    """Report lines joined: Open MPI wraps its sentence."""
    return " ".join(text.split())


def parse(stdout: str, stderr: str) -> Death | None:
    """The first dead rank either stream reports, or None."""
    both = _one_line(stdout + "\n" + stderr)
    m = _HYDRA_OLD.search(both)
    if m:
        rank, pid, host, sig, name, code = m.groups()
        return Death(int(rank), int(pid), host, int(sig) if sig else None, name or f"exit code {code}")
    m = _OPEN_MPI.search(both)
    if m:
        rank, pid, host, sig, name = m.groups()
        return Death(int(rank), int(pid), host, int(sig), name or "signal")
    m = _HYDRA.search(both)
    if m:
        pid, host, code = m.groups()
        s = _HYDRA_STRING.search(both)
        if s:
            return Death(None, int(pid), host, int(s.group(2)), s.group(1))
        return Death(None, int(pid), host, None, f"exit code {code}")
    for line in stderr.splitlines():
        m = _SRUN.search(line)
        if m:
            host, tasks, how = m.groups()
            first = re.match(r"\d+", tasks).group()
            return Death(int(first), None, host, 9 if how.strip() == "Killed" else None, how.strip())
    return None


def killed(stdout: str, stderr: str, hosts: list | None = None) -> str | None:
    """One sentence for the error line, or None when no launcher report is found."""
    death = parse(stdout, stderr)
    return death.sentence(hosts) if death else None
