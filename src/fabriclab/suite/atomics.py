"""The atomics and accumulate of the deposit level (csrc/families/deposit_atomic.c), as data.

Four benchmarks, each the op of an OSU Micro-Benchmarks one-sided test and
timed as that test times it (osu_fop_latency.c, osu_cas_latency.c,
osu_acc_latency.c, osu_get_acc_latency.c; docs/atomics.md):

- `sync` is OSU's `-s` synchronisation, every test offering the six that
  osu_util_mpi.c's option parser accepts for an ALL_SYNC test, with the
  test's default (`flush`; osu_get_acc_latency sets none, so it runs its
  enum's first, `lock`);
- `mode=aggregate` is IMB-RMA's aggregate mode instead (IMB_rma_atomic.c):
  n ops in one passive epoch, then one MPI_Win_flush, n = min(`ops_per_flush`,
  OVERALL_VOL / size) as IMB_mem_manager.c sets n_sample (MSGSPERSAMPLE 1000,
  OVERALL_VOL 40 MiB, IMB_settings.h); it completes by flush, so it takes
  `sync=flush` alone;
- `op` the reduction (fop, acc, get_acc; cas has none) and `type` the
  element. MPI defines the bitwise reductions for integers only (MPI-4.0
  sec. 6.9.2), compare-and-swap for integers only (sec. 12.3.4), and
  MPI_NO_OP for the fetching calls only (sec. 12.3.4): a test lists only the
  ops and types its call takes, and `check` refuses a bitwise op on a float.

fop and cas move one 8-byte element, the width of the NICs' atomics, where
OSU's tests move one element of MPI_CHAR (`-T` offers MPI_INT and MPI_FLOAT,
no 8-byte type; osu_util.c); acc and get_acc a vector of SIZE bytes, whole
elements (`type=int8` is OSU's default MPI_CHAR)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

# Element types and their bytes; the integer ones take the bitwise ops.
TYPES = {"int64": 8, "uint64": 8, "double": 8, "int8": 1}
INTEGER = ("int64", "uint64", "int8")
BITWISE = ("band", "bor", "bxor")
REDUCTIONS = ("sum", "prod", "max", "min", "band", "bor", "bxor", "replace")
# OSU's synchronisations (osu_util_mpi.c, `-s`; sync_info names their calls).
SYNCS = ("flush", "flush_local", "lock", "lock_all", "pscw", "fence")
# The modes whose round is an op each way (origin's op, then the target's): OSU
# prints (t_end - t_start) / iterations x 0.5 for them, the time of one op.
BOTH_WAYS = ("fence", "pscw")
MODES = ("osu", "aggregate")
# IMB_settings.h: the most ops of one aggregate sample, and the bytes a sample moves at most.
IMB_MSGS_PER_SAMPLE = 1000
IMB_OVERALL_VOL = 40 << 20


@dataclass(frozen=True)
class Atomic:
    call: str             # the MPI call
    anchor: str           # the OSU test it follows
    syncs: tuple          # OSU's synchronisations, its default first
    ops: tuple            # the reductions it takes; () for compare-and-swap
    types: tuple          # the element types it takes, its default first
    vector: bool          # SIZE is a vector of elements (acc, get_acc); else one element
    fetches: bool         # returns the target's old value to the origin


ATOMICS = {
    "deposit.fop": Atomic("MPI_Fetch_and_op", "osu_fop_latency", SYNCS, REDUCTIONS + ("no_op",),
                          ("int64", "uint64", "double"), vector=False, fetches=True),
    "deposit.cas": Atomic("MPI_Compare_and_swap", "osu_cas_latency", SYNCS, (), ("int64", "uint64"),
                          vector=False, fetches=True),
    "deposit.acc": Atomic("MPI_Accumulate", "osu_acc_latency", SYNCS, REDUCTIONS, tuple(TYPES),
                          vector=True, fetches=False),
    "deposit.get_acc": Atomic("MPI_Get_accumulate", "osu_get_acc_latency",
                              ("lock",) + tuple(s for s in SYNCS if s != "lock"), REDUCTIONS + ("no_op",),
                              tuple(TYPES), vector=True, fetches=True),
}


def window(size: int, asked: int) -> int:
    """Ops of one aggregate flush at SIZE: IMB's n_sample, max(1, min(OVERALL_VOL / size, asked))."""
    return max(1, min(IMB_OVERALL_VOL // max(size, 1), asked))


def sizes(name: str, sizes, params: dict, named: bool = True) -> list:
    """The sizes of `sizes` the benchmark runs: those `check` takes; where it
    was not named (its level was), the others left out rather than refused."""
    if named:
        check(name, sizes, params)
        return list(sizes)
    check(name, (), params)
    return [s for s in sizes if _size_fault(ATOMICS[name], s, params) is None]


def _size_fault(a: Atomic, size: int, params: dict) -> str | None:
    dtype = params.get("type", a.types[0])
    esize = TYPES[dtype]
    if not a.vector and size != esize:
        return f"{a.call} moves one {esize}-byte {dtype}; size {size} is not {esize} (give --sizes {esize})"
    if a.vector and (size <= 0 or size % esize):
        return (f"size {size} is not a positive whole number of {dtype} elements ({esize} bytes each); "
                f"give sizes that are positive multiples of {esize}")
    return None


def check(name: str, sizes, params: dict) -> None:
    """UsageError, in one line, for a point no MPI can run: an op the type
    has not, a size that is not whole elements (one element for fop and cas)."""
    a = ATOMICS[name]
    dtype, op = params.get("type", a.types[0]), params.get("op", "sum")
    if a.ops and op in BITWISE and dtype not in INTEGER:
        raise UsageError(f"{name}: op {op} is not defined for {dtype}; {a.call} takes it on "
                         f"{', '.join(t for t in a.types if t in INTEGER)}")
    fault = next((f for f in (_size_fault(a, s, params) for s in sizes) if f), None)
    if fault:
        raise UsageError(f"{name}: {fault}")
