"""The registry's entries of the memory and deposit levels: one process's copies
(memory.c) and one-sided deposits (deposit*.c), the atomics among them
(atomics.py)."""

from __future__ import annotations

from . import atomics, footprint_mpi as fp
from .facts import Bench, Param, choice, entry as _b, integer
from .param_sets import (ECT_SUITE, HOTSPOT_VIEWS, MEMORY_SIZES, PUTS, RMA_WINDOW_SUITE, STORES, STRIDED, STRIDES,
                         SYNC)


def _atomic(name: str, summary: str, sizes: str, suite: dict | None = None) -> Bench:
    """An atomic's entry (atomics.py): OSU's syncs, IMB's aggregate mode, the ops and types its call takes."""
    a = atomics.ATOMICS[name]
    params = {"sync": choice(*a.syncs), "mode": Param("osu", atomics.MODES, only=("sync", "flush")),
              "ops_per_flush": integer(atomics.IMB_MSGS_PER_SAMPLE, 1, 1 << 16, only=("mode", "aggregate")),
              **({"op": choice(*a.ops)} if a.ops else {}), "type": choice(*a.types),
              # per-op: the clock read around every op as OSU's loops read it (deposit_atomic.c, docs/atomics.md)
              "clock": Param("loop", ("loop", "per-op"), only=("mode", "osu"))}
    return _b(name, summary, "latency", sizes=sizes, params=params, suite=suite, views=("atomics",),
              footprint=fp.ATOMIC)



ENTRIES = [
    # ---- memory: one process copies (rank 0; others idle)
    _b("memory.memcpy", "libc memcpy of SIZE bytes (reference)", "bandwidth", sizes=MEMORY_SIZES, min_ranks=1,
       copy="contiguous", size_label="copy size", footprint=fp.COPY),
    _b("memory.copy", "8-byte word copy loop, contiguous loads and stores", "bandwidth", sizes=MEMORY_SIZES,
       min_ranks=1, params=STORES, copy="contiguous", size_label="copy size", footprint=fp.COPY),
    _b("memory.strided_store", "ECT: contiguous loads, stores at a stride of S words", "bandwidth",
       sizes="32K,512K,64M", axes=STRIDED, strides=STRIDES, min_ranks=1, params=STORES,
       suite=ECT_SUITE, views=("strided",), copy="strided", size_label="copy size", footprint=fp.COPY),
    _b("memory.strided_load", "ECT: loads at a stride of S words, contiguous stores", "bandwidth",
       sizes="32K,512K,64M", axes=STRIDED, strides=STRIDES, min_ranks=1, params=STORES,
       suite=ECT_SUITE, views=("strided",), copy="strided", size_label="copy size", footprint=fp.COPY),
    # ---- deposit: one-sided, origin rank 0 and target rank 1, or a pattern
    _b("deposit.put_lat", "MPI_Put of SIZE bytes then completion (flush or fence)", "latency", params=SYNC,
       footprint=fp.RMA_PAIR),
    _b("deposit.get_lat", "MPI_Get of SIZE bytes then completion (flush or fence)", "latency", params=SYNC,
       footprint=fp.RMA_PAIR),
    _b("deposit.put_bw", "a window of MPI_Put then one completion", "bandwidth", params={**SYNC, **PUTS},
       suite=RMA_WINDOW_SUITE, views=("bidirectional",), footprint=fp.RMA_PAIR),
    _b("deposit.get_bw", "a window of MPI_Get then one completion", "bandwidth", params={**SYNC, **PUTS},
       suite=RMA_WINDOW_SUITE, footprint=fp.RMA_PAIR),
    _b("deposit.strided_direct", "strided deposit with a vector-datatype MPI_Put", "bandwidth",
       sizes="4K,256K", axes=STRIDED, strides=STRIDES, params=SYNC,
       views=("strided",), footprint=fp.STRIDED_DIRECT),
    _b("deposit.strided_packed", "strided deposit by buffer packing: contiguous put, unpack at the target",
       "bandwidth", sizes="4K,256K", axes=STRIDED, strides=STRIDES, params={"sync": choice("fence", "flush")},
       views=("strided",), footprint=fp.STRIDED_PACKED),
    _b("deposit.strided_shm", "strided deposit by direct stores into a shared-memory window", "bandwidth",
       sizes="4K,256K", axes=STRIDED, strides=STRIDES, views=("strided",), footprint=fp.STRIDED_SHM),
    _b("deposit.put_bibw", "both ranks of a pair put a window into each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params=PUTS, suite=None,
       views=("bidirectional",), footprint=fp.RMA_BIPAIRS),
    _b("deposit.hotspot_put", "ACTIVE ranks put windows into rank 0 at once (hotspot write)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params=PUTS, suite=None,
       views=HOTSPOT_VIEWS, footprint=fp.RMA_HOTSPOT_PUT),
    _b("deposit.hotspot_get", "ACTIVE ranks get windows from rank 0 at once (hotspot read)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params=PUTS, suite=None,
       views=HOTSPOT_VIEWS, footprint=fp.RMA_HOTSPOT_GET),
    _atomic("deposit.fop", "MPI_Fetch_and_op of one element then OSU's sync (or IMB's aggregate flush)", "8",
            suite={}),
    _atomic("deposit.cas", "MPI_Compare_and_swap of one element then OSU's sync (or IMB's aggregate flush)", "8"),
    _atomic("deposit.acc", "MPI_Accumulate of SIZE bytes then OSU's sync (or IMB's aggregate flush)", "8:4M:x2"),
    _atomic("deposit.get_acc", "MPI_Get_accumulate of SIZE bytes then OSU's sync (or IMB's aggregate flush)",
            "8:4M:x2"),
]
