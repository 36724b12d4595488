"""The CPU a point cost each rank: utilisation and netperf's service demand.

The core reads getrusage(RUSAGE_SELF) around every round of a point's
samples and sums the rounds (point `rank_cpu`: user and system seconds of
every thread of the rank's process, an MPI library's progress threads
included, and the wall seconds they span; docs/core-protocol.md). From them:

- utilisation: CPU seconds over wall seconds; above 1 when several threads
  ran at once (iperf3's and netperf's CPU figures are shares of all CPUs,
  this one is of one CPU).
- service demand, the "Service Demand ... us/KB" columns of netperf's output
  (netperf manual, "CPU Utilization", with -c/-C): microseconds of CPU
  per KB moved, KB being 1024 bytes; for request/response, microseconds per
  transaction ("us/Tr"). netperf takes the CPU's utilisation over the test's
  elapsed time and divides by the throughput over the same time
  (calc_service_demand in netperf's netlib.c); so does this: the rank's
  utilisation over the samples' span times the point's median time per op,
  divided by the KB one op moves (the point's payload bytes per op; a
  pattern's rank: the bytes it sent and received per op), or by one
  transaction (one op of a request/response benchmark).

netperf reports the sending side as "local" and the other as "remote"; the
core's two-rank benchmarks run the sending or requesting side on rank 0, so
local is rank 0 and remote rank 1 (`local_remote`).

getrusage's fields count microseconds, and on Linux the sum of user and
system comes from the scheduler's run time (the header's timer `cpu.step_s`,
1 us here), but the split between user and system is sampled at the kernel's
clock tick: over fewer than COARSE_TICKS ticks (the header's `cpu.tick_s`,
1/sysconf(_SC_CLK_TCK)) the split, and on a kernel that counts ticks the sum
as well, is coarse; such a rank's figures say so (`coarse`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

KB = 1024            # netperf's KB: service demand is CPU us per 1024 bytes
COARSE_TICKS = 100   # a CPU interval shorter than this many ticks is coarse
TICK_S = 0.01        # USER_HZ = 100, where a run's header does not say


@dataclass(frozen=True)
class RankCpu:
    """One rank's CPU over a point's samples and what it costs per unit of work."""
    rank: int
    user_s: float
    sys_s: float
    wall_s: float
    utilisation: Optional[float]   # CPU seconds per wall second (may exceed 1)
    demand_us: Optional[float]     # us of CPU per KB moved, or per transaction
    per: str                       # "KB" or "Tr": what demand_us is per
    coarse: bool                   # fewer than COARSE_TICKS ticks in its interval

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


def tick_of(timer: Optional[dict]) -> float:
    """The accounting tick a run's header timer records (its `cpu.tick_s`), TICK_S when it does not."""
    t = ((timer or {}).get("cpu") or {}).get("tick_s")
    return t if isinstance(t, (int, float)) and t > 0 else TICK_S


def utilisation(use: dict) -> Optional[float]:
    """CPU seconds (user + system) per wall second of one rank_cpu entry; None without wall time."""
    wall = use.get("wall_s") or 0
    return (use["user_s"] + use["sys_s"]) / wall if wall > 0 else None


def demand_per_kb(util: Optional[float], op_s: Optional[float], bytes_per_op: int) -> Optional[float]:
    """netperf's service demand in us/KB: CPU seconds per wall second x seconds per op, per KB of an op."""
    if util is None or not op_s or op_s <= 0 or bytes_per_op <= 0:
        return None
    return util * op_s * 1e6 / (bytes_per_op / KB)


def demand_per_transaction(util: Optional[float], op_s: Optional[float]) -> Optional[float]:
    """netperf's request/response service demand in us/Tr: CPU us per op (one transaction)."""
    if util is None or not op_s or op_s <= 0:
        return None
    return util * op_s * 1e6


def _rank_bytes(p, q: int) -> int:
    """The payload bytes rank q handles per op: a pattern's rank, what it sent and received; else the op's."""
    if p.rank_sent_bytes is not None and p.rank_recv_bytes is not None and q < len(p.rank_sent_bytes):
        return p.rank_sent_bytes[q] + p.rank_recv_bytes[q]
    return p.bytes_per_op


def ranks(p, per: str = "KB", tick_s: float = TICK_S) -> list:
    """Every rank's RankCpu for point p ([] without rank_cpu): per "KB" (a bandwidth
    benchmark) or "Tr" (request/response)."""
    out = []
    for q, use in enumerate(p.rank_cpu or []):
        u = utilisation(use)
        d = (demand_per_transaction(u, p.summary.median) if per == "Tr"
             else demand_per_kb(u, p.summary.median, _rank_bytes(p, q)))
        out.append(RankCpu(q, use["user_s"], use["sys_s"], use["wall_s"], u, d, per,
                           use["wall_s"] < COARSE_TICKS * tick_s))
    return out


def local_remote(rs: list) -> tuple:
    """(local, remote) as netperf reports them: rank 0's and rank 1's RankCpu (None where missing)."""
    return (rs[0] if rs else None), (rs[1] if len(rs) > 1 else None)


def merged(ps: list) -> Optional[list]:
    """A point's rank_cpu over its launches: per rank, the sums of user, system and wall
    seconds of the launches that have it (None when none has)."""
    have = [p.rank_cpu for p in ps if p.rank_cpu]
    if not have:
        return None
    n = min(len(x) for x in have)
    return [{k: sum(x[q][k] for x in have) for k in ("user_s", "sys_s", "wall_s")} for q in range(n)]
