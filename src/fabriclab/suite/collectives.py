"""The collective operations' facts: what SIZE is, the bytes an op is about
and its bus bandwidth factor, one entry per operation beside the registry's
(benchmarks.py, the `coll` level; csrc/families/coll.h runs them).

SIZE is the bytes of the count argument the MPI call takes, as OSU and IMB
give it: the whole vector for allreduce, reduce, scan, bcast and the two
reduce-scatters; one block (to or from each rank) for allgather(v),
gather(v), scatter(v) and alltoall(v). An op's bytes (bytes_per_op, nccl-tests'
S: the data the op is about, "algorithm bandwidth" = S / time) are SIZE for
the vector operations and N x SIZE for the block ones, N the ranks taking
part. Bus bandwidth (nccl-tests, doc/PERFORMANCE.md) multiplies it by what a
ring's busiest link carries of it: 2(N-1)/N for allreduce, (N-1)/N for
reduce_scatter, allgather, alltoall, gather and scatter, 1 for bcast and
reduce; scan and barrier have none. reduce_local is MPI_Reduce_local on
each active rank alone, inoutbuf = inbuf op inoutbuf: no communication, the
cost of a reduction that the model's collectives add (gamma). So a bus bandwidth reads against the
wire rate whatever N is."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

# Element types and their bytes (the `dtype` parameter); the integer ones take bitwise reductions.
DTYPES = {"float": 4, "double": 8, "int8": 1, "int32": 4, "int64": 8}
INTEGER = ("int8", "int32", "int64")
REDUCTIONS = ("sum", "max", "min", "band", "bor", "bxor")
BITWISE = ("band", "bor", "bxor")


@dataclass(frozen=True)
class Collective:
    call: str               # the MPI call of the blocking form
    blocks: bool = False    # SIZE is one block of N: the op is about N x SIZE bytes
    bus: str | None = None  # "allreduce": 2(N-1)/N, "spread": (N-1)/N, "one": 1, None: no bus bandwidth
    rooted: bool = False    # takes a root
    reduces: bool = False   # takes a reduction
    block_split: bool = False  # reduce_scatter_block: N equal blocks of SIZE / N elements, the rest dropped
    data: bool = True       # moves data (the barrier does not: no element type, SIZE 0)
    local: bool = False     # no communication: blocking only, one rank is enough

    def bytes_per_op(self, size: int, n: int, esize: int = 1) -> int:
        """The bytes one op is about (what the core reports as bytes_per_op)."""
        if not self.data:
            return 0
        if self.block_split:
            return size // esize // n * n * esize
        return size * n if self.blocks else size

    def bus_factor(self, n: int) -> float | None:
        """Bus bandwidth over algorithm bandwidth at N ranks (None: the operation has none)."""
        if self.bus is None or n < 1:
            return None
        return {"allreduce": 2 * (n - 1) / n, "spread": (n - 1) / n, "one": 1.0}[self.bus]


def check(name: str, coll: Collective, sizes, params: dict, actives) -> None:
    """UsageError, in one line, for a point of the operation no MPI can run: a
    size that is not whole elements, a reduction the type has not, a root
    outside the ranks."""
    dtype, reduce = params.get("dtype", "float"), params.get("reduce", "sum")
    esize = DTYPES.get(dtype, 1)
    bad = [s for s in sizes if s % esize] if coll.data else []
    if bad:
        raise UsageError(f"{name}: size {bad[0]} is not a whole number of {dtype} elements "
                         f"({esize} bytes each); give sizes that are multiples of {esize}")
    if coll.reduces and reduce in BITWISE and dtype not in INTEGER:
        raise UsageError(f"{name}: reduction {reduce} is not defined for {dtype}; it takes "
                         f"{', '.join(INTEGER)}")
    root = int(params.get("root", 0))
    few = [a for a in actives if root >= a]
    if coll.rooted and few:
        raise UsageError(f"{name}: root {root} is not one of the {few[0]} ranks taking part "
                         f"(roots are 0..{few[0] - 1})")


# One entry per operation, in the order the registry lists them.
COLLECTIVES = {
    "allreduce": Collective("MPI_Allreduce", bus="allreduce", reduces=True),
    "bcast": Collective("MPI_Bcast", bus="one", rooted=True),
    "reduce": Collective("MPI_Reduce", bus="one", rooted=True, reduces=True),
    "allgather": Collective("MPI_Allgather", blocks=True, bus="spread"),
    "allgatherv": Collective("MPI_Allgatherv", blocks=True, bus="spread"),
    "reduce_scatter": Collective("MPI_Reduce_scatter", bus="spread", reduces=True),
    "reduce_scatter_block": Collective("MPI_Reduce_scatter_block", bus="spread", reduces=True, block_split=True),
    "gather": Collective("MPI_Gather", blocks=True, bus="spread", rooted=True),
    "gatherv": Collective("MPI_Gatherv", blocks=True, bus="spread", rooted=True),
    "scatter": Collective("MPI_Scatter", blocks=True, bus="spread", rooted=True),
    "scatterv": Collective("MPI_Scatterv", blocks=True, bus="spread", rooted=True),
    "alltoall": Collective("MPI_Alltoall", blocks=True, bus="spread"),
    "alltoallv": Collective("MPI_Alltoallv", blocks=True, bus="spread"),
    "scan": Collective("MPI_Scan", reduces=True),
    "barrier": Collective("MPI_Barrier", data=False),
    # not a collective: each rank reduces two of its own vectors (the model's gamma, docs/model.md §10)
    "reduce_local": Collective("MPI_Reduce_local", reduces=True, local=True),
}
