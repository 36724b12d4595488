"""Threads per rank of the multi-threaded benchmarks (`threads=True` in the
registry), and the bound on them.

osu_latency_mt runs `senders` threads on rank 0 and `receivers` on rank 1
(its `-t S:R`), IMB-MT `threads` on each rank. More threads than CPUs make
the MPI calls queue on the scheduler rather than on the library, and far
more only measure the scheduler, so a run asks for at most CPU_FACTOR
threads per CPU of the host, per rank: refused in one line before anything
launches otherwise."""

from __future__ import annotations

from ..errors import UsageError

# Threads a rank may run per CPU of the host: 4, so that a 2-core machine still runs
# osu_latency_mt's 1:2 and IMB-MT's 2 threads on both ranks, oversubscribed as OSU's own
# runs of -t 4:4 on small nodes are, while 128 threads on 2 cores are refused.
CPU_FACTOR = 4


def per_rank(bench, params: dict) -> int:
    """The most threads one rank of `bench` runs with these (canonical) parameters; 1 for a
    benchmark that runs none."""
    if not bench.threads:
        return 1
    have = {**bench.defaults, **params}
    counts = [int(have[k]) for k in ("senders", "receivers", "threads") if k in have]
    return max(counts, default=1)


def check(bench, params: dict, cpus: int) -> None:
    """UsageError in one line when a rank would run more than CPU_FACTOR x `cpus` threads."""
    n, most = per_rank(bench, params), CPU_FACTOR * max(cpus, 1)
    if n > most:
        raise UsageError(f"{bench.name}: {n} threads per rank is more than {CPU_FACTOR} per CPU of this "
                         f"host ({cpus} CPUs: at most {most})")
