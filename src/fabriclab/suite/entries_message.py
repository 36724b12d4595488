"""The registry's entries of the message level: two-sided MPI between two ranks,
traffic patterns, message rate, HPCC's figures, threads, halo exchanges and
congestion (message*.c)."""

from __future__ import annotations

from typing import Callable

from ..units import MAX_VALUE
from . import footprint_mpi as fp, halo
from .facts import Bench, choice, entry as _b, integer, text
from .param_sets import (ALLTOALL_WINDOW, COMPLETION, CONGESTION, CONNS, CONNS_SUITE, HALO_SIZES, HOTSPOT_VIEWS,
                         POSTAL_SUITE, RR_SUITE, SEGMENTS, SEGMENT_SIZES, SENDS, SHIFT_WINDOW)


def entries(registry: Callable[[str], Bench]) -> list[Bench]:
    """The message level's entries, in registry order; `registry` finds an
    entry by name for message.victim, whose footprint is the benchmark it runs."""
    return [*_HEAD, _victim(registry), *_TAIL]


_HEAD = [
    # ---- message: two-sided MPI
    _b("message.pingpong", "MPI_Send/MPI_Recv round trip between two ranks", "latency", legs=2,
       params={"completion": COMPLETION}, suite={"params": {"completion": "wait,test"}}, views=("layers",),
       footprint=fp.MPI_PAIR),
    _b("message.stream", "a window of MPI_Isend to pre-posted receives, acked per window", "bandwidth",
       params={**SENDS, "completion": COMPLETION}, suite=POSTAL_SUITE,
       views=("layers", "postal", "bidirectional"), footprint=fp.MPI_STREAM),
    _b("message.postal_restricted", "restricted postal semantics: receives posted before the sends",
       "bandwidth", params={**SENDS, "mode": choice("ready", "ssend")}, suite=POSTAL_SUITE, views=("postal",),
       footprint=fp.MPI_STREAM),
    _b("message.postal_full", "full postal semantics: sends posted before the receives (library buffers)",
       "bandwidth", params=SENDS, suite=POSTAL_SUITE, views=("postal",), footprint=fp.MPI_POSTAL_FULL),
    _b("message.bibw", "both ranks of a pair stream a window at each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params=SENDS, suite=RR_SUITE,
       views=("bidirectional",), footprint=fp.MPI_BOTH),
    _b("message.hotspot", "ACTIVE ranks stream windows to rank 0 at once (hotspot write)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params=SENDS, suite=None,
       views=HOTSPOT_VIEWS, footprint=fp.MPI_HOTSPOT),
    _b("message.saturation", "ACTIVE pairs (i, i+N/2) stream at once; the plateau is the link's rate",
       "bandwidth", axes=("size", "active"), pattern="pairs", params=SENDS, suite=None,
       views=("saturation", "fairness"), footprint=fp.MPI_PAIRS),
    _b("message.alltoall", "all-to-all personalized exchange: SIZE bytes to every other rank", "bandwidth",
       concurrent=True, pattern="all", min_ranks=2,
       params={"variant": choice("collective", "pairwise", "concurrent"), **ALLTOALL_WINDOW},
       suite=None, views=("alltoall", "validation"), footprint=fp.MPI_ALLTOALL),
    _b("message.bisection", "a seeded random perfect matching; every pair streams both ways at once",
       "bandwidth", concurrent=True, pattern="bisection", params={**SENDS, "seed": integer(1, 0, MAX_VALUE)},
       suite=None,
       views=("alltoall",), footprint=fp.MPI_BOTH),
    _b("message.shift", "every rank streams to rank + ACTIVE and receives from rank - ACTIVE at once: mpiGraph's "
       "step, all steps the N x N pair matrix", "bandwidth", axes=("size", "active"), concurrent=True,
       pattern="shift", min_ranks=2, params=SHIFT_WINDOW, suite=None, views=(), footprint=fp.MPI_BOTH),
    # message rate, timed as the anchors time it (csrc/families/message_rate.c, docs/message-rate.md):
    # every pair (k, k+N/2) at once; `window=1,2,4,8,16,32,64,128` is osu_mbw_mr's -V profile
    _b("message.mbw_mr", "every pair (i, i+N/2) streams windows at once, a barrier before each: osu_mbw_mr's "
       "MB/s and messages/s over the senders' mean time", "bandwidth", sizes="1:4M:x2", concurrent=True,
       pattern="pairs", params={"window": integer(64, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]},
       reduce="senders-mean", suite={"sizes": "8,4K,64K"}, views=("message-rate",), footprint=fp.MPI_PAIRS),
    _b("message.uniband", "every pair (i, i+N/2) streams windows at once: IMB-MPI1 Uniband's Mbytes/sec and "
       "Msg/sec over the slowest rank's time", "bandwidth", concurrent=True, pattern="pairs",
       params={"window": integer(256, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]},
       suite=None, views=("message-rate",), footprint=fp.MPI_PAIRS),
    _b("message.biband", "both ranks of every pair stream windows at each other at once: IMB-MPI1 Biband's "
       "Mbytes/sec and Msg/sec over the slowest rank's time", "bandwidth", concurrent=True, pattern="bipairs",
       params={"window": integer(256, 1, 1 << 20), "window_buffers": SENDS["window_buffers"]},
       suite=None, views=("message-rate",), footprint=fp.MPI_BOTH),
    # HPC Challenge's network figures (csrc/families/message_ring.c, analysis/hpcc.py, docs/hpcc.md):
    # ping-pong between every ordered pair in turn, and the natural and random rings in HPCC's two ways
    _b("message.cross_pingpong", "MPI_Send/MPI_Recv round trip between the ACTIVE-th ordered pair of ranks, the "
       "others idle: HPCC's ping-pong over pairs", "latency", sizes="8,2000000", axes=("size", "active"), legs=2,
       pattern="cross", suite=None, views=("hpcc",), footprint=fp.MPI_PAIR),
    _b("message.ring", "every rank sends SIZE bytes to both ring neighbours and receives from both: HPCC's "
       "naturally or randomly ordered ring, by two MPI_Sendrecv or by MPI_Irecv/MPI_Isend", "latency",
       sizes="8,2000000", concurrent=True, pattern="ring", suite=None, views=("hpcc",),
       params={"order": choice("natural", "random"), "method": choice("sendrecv", "irecv"),
               "seed": integer(1, 0, MAX_VALUE, only=("order", "random"))}, footprint=fp.MPI_RING),
    # threads per rank (csrc/families/message_mt.c, docs/threads.md): osu_latency_mt's S:R
    # threads, IMB-MT's T threads each on a communicator of its own; suite/threads.py bounds them
    _b("message.latency_mt", "SENDERS threads of rank 0 ping-pong with RECEIVERS threads of rank 1 at once: "
       "osu_latency_mt's latency", "latency", sizes="0:64K:x4", legs=2, threads=True,
       params={"senders": integer(1, 1, 127), "receivers": integer(2, 1, 127),
               # per-op: sender thread 0's round trips timed one by one; osu: OSU's shared t_start
               # and t_total over every sender thread, its race included (message_mt.c)
               "clock": choice("loop", "per-op", "osu")}, suite=None,
       views=("threads",), footprint=fp.MPI_LATENCY_MT),
    _b("message.mt_uniband", "THREADS thread pairs stream windows from rank 0 to rank 1 at once, a "
       "communicator each: IMB-MT's UniBandMT", "bandwidth", sizes="1:4M:x4", concurrent=True, threads=True,
       params={"threads": integer(2, 1, 127), **SENDS}, suite=None,
       views=("threads",), footprint=fp.MPI_MT_BAND),
    _b("message.mt_biband", "THREADS thread pairs stream windows both ways between ranks 0 and 1 at once: "
       "IMB-MT's BiBandMT", "bandwidth", sizes="1:4M:x4", concurrent=True, threads=True,
       params={"threads": integer(2, 1, 127), **SENDS}, suite=None,
       views=("threads",), footprint=fp.MPI_MT_BAND),
    # halo exchange (csrc/families/message_halo.c): IMB-P2P's Stencil2D and Stencil3D
    _b("message.stencil2d", "IMB-P2P Stencil2D: every rank exchanges SIZE bytes with its 4 neighbours on a periodic "
       "2-D grid of the ranks (Irecv, Isend, Waitall)", "bandwidth", sizes=HALO_SIZES, concurrent=True,
       pattern="all", min_ranks=4, params={"touch": choice("on", "off")}, suite=None, views=("halo",),
       footprint=fp.HALO_2D, rules=halo.check_stencil),
    _b("message.stencil3d", "IMB-P2P Stencil3D: every rank exchanges SIZE bytes with its 6 neighbours on a periodic "
       "3-D grid of the ranks (Irecv, Isend, Waitall)", "bandwidth", sizes=HALO_SIZES, concurrent=True,
       pattern="all", min_ranks=8, params={"touch": choice("on", "off")}, suite=None, views=(),
       footprint=fp.HALO_3D, rules=halo.check_stencil),
    # congestion (GPCNeT): victims on a seeded random ring time a test while the other ranks
    # load the network (suite/congestion.py); ACTIVE is 0 (isolated) or every aggressor
    _b("message.victim_latency", "victims on a random ring exchange SIZE bytes with both neighbours while the "
       "aggressors load the network (GPCNeT's random ring latency)", "latency", sizes="8",
       axes=("size", "active"), concurrent=True, pattern="congestion", min_ranks=4, params=CONGESTION,
       suite=None, views=(), footprint=fp.congestion()),
    _b("message.victim_bandwidth", "victims on a random ring stream a window of SIZE bytes to and from both "
       "neighbours while the aggressors load the network (GPCNeT's random ring bandwidth)", "bandwidth",
       sizes="128K", axes=("size", "active"), concurrent=True, pattern="congestion", min_ranks=4,
       params={**CONGESTION, "window": integer(4, 1, 1024)}, suite=None, views=(), footprint=fp.congestion()),
    _b("message.victim_allreduce", "the victims allreduce SIZE bytes of doubles while the aggressors load the "
       "network (GPCNeT's 8-byte allreduce)", "latency", sizes="8", axes=("size", "active"), concurrent=True,
       pattern="congestion", min_ranks=4, params=CONGESTION, suite=None, views=(),
       footprint=fp.congestion(allreduce=True)),
]

_TAIL = [
    _b("message.conns", "CONNS receives on CONNS tags, completed by MPI_Waitany or a round-robin MPI_Test",
       "bandwidth", sizes="4K,64K", axes=("size", "conns"), conns=CONNS, params={"check": choice("waitany", "scan")},
       suite={**CONNS_SUITE, "params": {"check": "waitany,scan"}}, views=("via-conns",), footprint=fp.MPI_CONNS),
    _b("message.scatter", "32 segments of SIZE bytes at a stride in the receiver: datatype or unpack",
       "bandwidth", sizes=SEGMENT_SIZES, params={"mode": choice("datatype", "copy"), **SEGMENTS, **SENDS},
       suite={"sizes": "8,64,1K", "params": {"mode": "datatype,copy"}},
       views=("via-scatter",), size_label="segment size", footprint=fp.MPI_SCATTER),
]


def _victim(registry: Callable[[str], Bench]) -> Bench:
    return _b("message.victim", "the victims run the benchmark param VICTIM names among themselves, with its "
              "default parameters, while the aggressors load the network", "latency", sizes="8",
              axes=("size", "active"), concurrent=True, pattern="congestion", min_ranks=4,
              params={**CONGESTION, "victim": text("message.pingpong")}, suite=None, views=(),
              footprint=fp.congestion_of(registry))
