"""The registry's entries that run on a group of ranks as one: the seeds'
applications (app_*.c), MPI's collectives and neighbourhood collectives
(coll*.c) and the noise benchmarks on every rank (noise.c)."""

from __future__ import annotations

from ..units import MAX_VALUE
from . import apps, footprint_apps as fp, footprint_mpi as fpm, halo, noise
from .collectives import COLLECTIVES
from .facts import Bench, choice, entry as _b, integer, text
from .param_sets import (APP_AXES, APP_EXCHANGE, APP_SCALE, COLL_ALGORITHM, COLL_DTYPE, COLL_FORM, COLL_IN_PLACE,
                         COLL_OVERLAP, COLL_REDUCE, COLL_ROOT, COLL_SIZES, COLL_SUITE, COLL_SUITE_OPS, COLL_SYNC,
                         HALO_SIZES, NEIGHBORHOOD)


def _coll(op: str, summary: str) -> Bench:
    """A collective's entry: its parameters follow from what the operation takes."""
    c = COLLECTIVES[op]
    if c.local:     # MPI_Reduce_local: one form, nothing in place, no algorithm, nothing to overlap
        params = {**COLL_DTYPE, **COLL_REDUCE, **COLL_SYNC}
        return Bench(f"coll.{op}", summary, "bandwidth", sizes=COLL_SIZES, axes=("size", "active"), params=params,
                     pattern="group", concurrent=True, views=("collectives",), coll=c, min_ranks=1,
                     size_label="vector size", footprint=fp.coll(op))
    params = {**COLL_FORM, **(COLL_DTYPE if c.data else {}), **(COLL_REDUCE if c.reduces else {}),
              **(COLL_ROOT if c.rooted else {}), **(COLL_IN_PLACE if c.data and op != "bcast" else {}), **COLL_SYNC,
              **COLL_ALGORITHM, **COLL_OVERLAP}
    return Bench(f"coll.{op}", summary, "bandwidth" if c.data else "latency",
                 sizes=COLL_SIZES if c.data else "0", axes=("size", "active"), params=params,
                 pattern="group", concurrent=True, views=("collectives",), coll=c,
                 suite=(COLL_SUITE if c.data else {}) if op in COLL_SUITE_OPS else None,
                 size_label="vector size" if not c.blocks else "block size", footprint=fp.coll(op))



def _neighbor(op: str, summary: str, footprint) -> Bench:
    # 3 ranks at least: OSU's default neighbourhood (dim 1, radius 1) needs a side of 3
    return _b(f"coll.neighbor_{op}", summary, "latency", sizes=HALO_SIZES, concurrent=True, pattern="all",
              min_ranks=3, params=NEIGHBORHOOD, suite=None, views=("halo",), size_label="block size", footprint=footprint,
              rules=halo.check_neighbourhood)



# In the default suite each app is one size on 1 and 2 ranks, with its
# default parameters (the packed transpose, the sort at E = 8): five launches
# of each cost about 14 s of the 3 minutes (a launch takes about 0.6 s before
# its first point); the other modes and sizes run when named.
ENTRIES = [
    # ---- app: the seeds' applications on the first ACTIVE ranks
    _b("app.transpose", "M x M array of 8-byte words by row blocks transposed: pack+alltoall+unpack, "
       "derived datatypes, or one-sided deposit", "bandwidth", sizes="256:4K:x2", axes=APP_AXES, min_ranks=1,
       pattern="app", concurrent=True,
       params={"mode": choice("packed", "datatype", "deposit"), "deposit": choice("auto", "put", "stores"),
               **APP_EXCHANGE},
       suite={"sizes": "1K"},
       views=("transpose", "phases"), size_label="array side M", size_unit="words", footprint=fp.APP_TRANSPOSE,
       app=apps.TRANSPOSE),
    # n = 2048 takes about 1.1 s an op on one rank of a 2-core host, 5.5 s a launch at five ops:
    # the default sweep stops at 1K so that it runs within 60 s on 2 ranks.
    _b("app.matmul", "C = A B of n x n doubles by row blocks, B gathered (MPI_Allgatherv), local BLAS dgemm",
       "latency", sizes="256:1K:x2", axes=APP_AXES, min_ranks=1, pattern="app", concurrent=True,
       params={**APP_SCALE, "local": choice("auto", "blas", "loop")}, suite={"sizes": "512"},
       views=("speedup", "phases"), size_label="matrix side n", size_unit="elements", footprint=fp.APP_MATMUL,
       app=apps.MATMUL),
    # 16M keys take 0.4-1 s an op on one rank of a 2-core host and a point runs at least five ops
    # per launch: the default sweep stops at 4M so that it runs within 60 s on 2 ranks.
    _b("app.sort", "bucket sort of E-byte keys: bucket by key range, MPI_Alltoallv, local radix sort",
       "bandwidth", sizes="64K:4M:x4", axes=APP_AXES, min_ranks=1, pattern="app", concurrent=True,
       params={"elem": choice("8", "4", "16", "32", "64"), **APP_SCALE, "seed": integer(1, 0, MAX_VALUE),
               **APP_EXCHANGE},
       suite={"sizes": "256K"},
       views=("speedup", "sort-rate", "phases"), size_label="keys", size_unit="keys", footprint=fp.APP_SORT,
       app=apps.SORT),
    # ---- coll: MPI's collective operations on the first ACTIVE ranks
    _coll("allreduce", "MPI_Allreduce of a SIZE-byte vector: every rank gets the reduction"),
    _coll("bcast", "MPI_Bcast of SIZE bytes from the root"),
    _coll("reduce", "MPI_Reduce of a SIZE-byte vector to the root"),
    _coll("allgather", "MPI_Allgather: every rank gets every rank's SIZE-byte block"),
    _coll("allgatherv", "MPI_Allgatherv with equal SIZE-byte blocks"),
    _coll("reduce_scatter", "MPI_Reduce_scatter of a SIZE-byte vector, a block of it to each rank"),
    _coll("reduce_scatter_block", "MPI_Reduce_scatter_block of a SIZE-byte vector in N equal blocks"),
    _coll("gather", "MPI_Gather of every rank's SIZE-byte block to the root"),
    _coll("gatherv", "MPI_Gatherv with equal SIZE-byte blocks"),
    _coll("scatter", "MPI_Scatter of a SIZE-byte block from the root to each rank"),
    _coll("scatterv", "MPI_Scatterv with equal SIZE-byte blocks"),
    _coll("alltoall", "MPI_Alltoall: a SIZE-byte block from every rank to every rank"),
    _coll("alltoallv", "MPI_Alltoallv with equal SIZE-byte blocks"),
    _coll("scan", "MPI_Scan of a SIZE-byte vector: rank r gets the reduction over ranks 0..r"),
    _coll("barrier", "MPI_Barrier"),
    _coll("reduce_local", "MPI_Reduce_local of a SIZE-byte vector on each rank alone (the cost of reducing: "
                          "the model's gamma)"),
    # neighbourhood collectives (csrc/families/coll_neighbor.c) on every rank's neighbourhood
    _neighbor("allgather", "MPI_Neighbor_allgather: every rank gets each source neighbour's SIZE-byte block",
              fpm.NEIGHBOR_GATHER),
    _neighbor("allgatherv", "MPI_Neighbor_allgatherv with equal SIZE-byte blocks", fpm.NEIGHBOR_GATHER),
    _neighbor("alltoall", "MPI_Neighbor_alltoall: a SIZE-byte block to and from each neighbour",
              fpm.NEIGHBOR_ALLTOALL),
    _neighbor("alltoallv", "MPI_Neighbor_alltoallv with equal SIZE-byte blocks", fpm.NEIGHBOR_ALLTOALL),
    _neighbor("alltoallw", "MPI_Neighbor_alltoallw with equal SIZE-byte blocks of MPI_BYTE", fpm.NEIGHBOR_ALLTOALL),
    # ---- noise: every rank on its own core (suite/noise.py, csrc/families/noise.c, docs/noise.md)
    _b("noise.fwq", "a fixed work quantum (WORK multiply-adds) timed back to back on every rank's core, every "
       "quantum of the record kept (LLNL's FWQ)", "latency", sizes="0", concurrent=True, pattern="all",
       min_ranks=1, params={"work": integer(noise.FWQ_WORK, noise.FWQ_MIN_WORK, 1 << 30),
                            "quanta": integer(noise.FWQ_QUANTA, 1, 1 << 22)},
       suite=None, views=("noise",), size_label="size (none)", footprint=fp.NOISE_FWQ,
       first_sample=noise.fwq_first_sample),
    _b("noise.detour", "a tight loop reading the clock on every rank's core: gaps above THRESHOLD x the "
       "shortest are detours, each kept (the selfish detour)", "latency", sizes="0", concurrent=True,
       pattern="all", min_ranks=1, params={"threshold": text(noise.DETOUR_THRESHOLD, noise.threshold),
                                           "record_ms": integer(noise.DETOUR_RECORD_MS, 1, 60000)},
       suite=None, views=("noise",), size_label="size (none)", footprint=fp.NOISE_DETOUR,
       first_sample=noise.detour_first_sample),
]
