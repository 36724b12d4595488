"""The registry's entries of the levels below MPI: libfabric (fabric*.c) and
UCX's UCP (ucx*.c)."""

from __future__ import annotations

from . import footprint_levels as fp
from .facts import choice, entry as _b, integer
from .param_sets import (CONNS, ENDPOINTS, FABRIC, FABRIC_ATOMIC, FABRIC_PATH, FABRIC_RMA, HOTSPOT_VIEWS,
                         LEVEL_STREAM_SUITE, LEVEL_SUITE, PUTS, RATE_SIZES, SEGMENTS, SEGMENT_SIZES, SENDS, UCX,
                         UCX_ATOMIC)


ENTRIES = [
    # ---- fabric: libfabric, ranks 0 and 1 or a pattern (MPI only sets up: addresses, keys)
    _b("fabric.pingpong", "fi_tsend/fi_trecv round trip (fi_inject up to the inject size)", "latency", legs=2,
       params={**FABRIC, **FABRIC_PATH, "completion": choice("poll", "block")},
       suite={**LEVEL_SUITE, "params": {"completion": "poll,block"}}, views=("layers", "via-latency"),
       caps=("msg",), footprint=fp.FABRIC_PAIR),
    _b("fabric.stream", "a window of fi_tsend to pre-posted receives, acked per window", "bandwidth",
       params={**FABRIC, **FABRIC_PATH, **SENDS}, suite=LEVEL_STREAM_SUITE, caps=("msg",), views=("layers",),
       footprint=fp.FABRIC_PAIR),
    _b("fabric.bibw", "both ranks of a pair stream a window of fi_tsend at each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params={**FABRIC, **FABRIC_PATH, **SENDS}, suite=None,
       views=("bidirectional",), caps=("msg",), footprint=fp.FABRIC_BOTH),
    _b("fabric.put_lat", "fi_write of SIZE bytes into a registered remote buffer, then its completion",
       "latency", params=FABRIC_RMA, suite=None, caps=("rma",), footprint=fp.FABRIC_RMA),
    _b("fabric.put_bw", "a window of fi_write, then their completions", "bandwidth",
       params={**FABRIC_RMA, **PUTS}, suite=None, caps=("rma",), footprint=fp.FABRIC_RMA),
    _b("fabric.get_bw", "a window of fi_read, then their completions", "bandwidth",
       params={**FABRIC_RMA, **PUTS}, suite=None, caps=("rma",), footprint=fp.FABRIC_RMA),
    _b("fabric.hotspot_put", "ACTIVE ranks fi_write windows into rank 0 at once (hotspot write)", "bandwidth",
       axes=("size", "active"), pattern="hotspot", params={**FABRIC_RMA, **PUTS}, suite=None,
       views=HOTSPOT_VIEWS, caps=("rma",), footprint=fp.FABRIC_HOTSPOT),
    _b("fabric.saturation", "ACTIVE pairs (i, i+N/2) stream fi_tsend at once; the plateau is the link's rate",
       "bandwidth", axes=("size", "active"), pattern="pairs", params={**FABRIC, **FABRIC_PATH, **SENDS},
       suite=None, views=("saturation", "fairness"), caps=("msg",), footprint=fp.FABRIC_PAIRS),
    _b("fabric.mr_reg", "fi_mr_reg then fi_close of a SIZE-byte buffer: the price of zero copy", "latency",
       sizes="4K:64M:x4", min_ranks=1, params=FABRIC, suite=None, size_label="region size", views=("registration",),
       footprint=fp.FABRIC_MR),
    _b("fabric.conns", "CONNS endpoints; completions from one shared CQ or a CQ per endpoint checked in turn",
       "bandwidth", sizes="4K,64K", axes=("size", "conns"), conns=CONNS,
       params={**FABRIC, "check": choice("cq", "scan")}, suite=None, views=("via-conns",),
       caps=("msg",), footprint=fp.FABRIC_CONNS),
    _b("fabric.scatter", "32 segments of SIZE bytes: an iovec receive by the provider, or receive and copy",
       "bandwidth", sizes=SEGMENT_SIZES, params={**FABRIC, "mode": choice("iovec", "copy"), **SEGMENTS, **SENDS},
       suite=None, views=("via-scatter",), size_label="segment size", caps=("msg",), footprint=fp.FABRIC_SCATTER),
    _b("fabric.atomic", "one 8-byte fi_atomic, fi_fetch_atomic or fi_compare_atomic on the target's word, then "
       "its completion (fabtests' fi_rdm_atomic)", "latency", sizes="8", params={**FABRIC, **FABRIC_ATOMIC},
       suite=None, size_label="operand size", caps=("atomic",), footprint=fp.FABRIC_ATOMIC),
    _b("fabric.msg_rate", "ENDPOINTS endpoints each stream a window of fi_tsend, acked per window "
       "(perftest's ib_send_bw -q)", "bandwidth", sizes=RATE_SIZES, params={**FABRIC, **FABRIC_PATH, **ENDPOINTS},
       suite=None, caps=("msg",), footprint=fp.FABRIC_RATE),
    # ---- ucx: UCP, ranks 0 and 1 or a pattern (MPI only sets up: worker addresses, remote keys)
    _b("ucx.pingpong", "ucp_tag_send_nbx/ucp_tag_recv_nbx round trip", "latency", legs=2, params=UCX,
       suite=LEVEL_SUITE, views=("layers",), footprint=fp.UCX_PAIR),
    _b("ucx.stream", "a window of ucp_tag_send_nbx to pre-posted receives, acked per window", "bandwidth",
       params={**UCX, **SENDS}, suite=LEVEL_STREAM_SUITE, views=("layers",), footprint=fp.UCX_PAIR),
    _b("ucx.bibw", "both ranks of a pair stream a window of tagged sends at each other at once", "bandwidth",
       concurrent=True, pattern="bipairs", params={**UCX, **SENDS}, suite=None, views=("bidirectional",),
       footprint=fp.UCX_PAIR),
    _b("ucx.put_bw", "a window of ucp_put_nbx into a mapped remote buffer, then a flush", "bandwidth",
       params={**UCX, **PUTS}, suite=None, footprint=fp.UCX_RMA),
    _b("ucx.get_bw", "a window of ucp_get_nbx from a mapped remote buffer, then a flush", "bandwidth",
       params={**UCX, **PUTS}, suite=None, footprint=fp.UCX_RMA),
    _b("ucx.mr_reg", "ucp_mem_map then ucp_mem_unmap of a SIZE-byte buffer", "latency", sizes="4K:64M:x4",
       min_ranks=1, params=UCX, suite=None, size_label="region size", views=("registration",), footprint=fp.UCX_MR),
    _b("ucx.atomic", "one ucp_atomic_op_nbx on the target's 8-byte word, then its completion (ucx_perftest's "
       "ucp_add, ucp_fadd, ucp_swap, ucp_cswap)", "latency", sizes="8", params={**UCX, **UCX_ATOMIC}, suite=None,
       size_label="operand size", footprint=fp.UCX_ATOMIC),
    _b("ucx.msg_rate", "ENDPOINTS workers each stream a window of tagged sends, acked per window "
       "(perftest's ib_send_bw -q)", "bandwidth", sizes=RATE_SIZES, params={**UCX, **ENDPOINTS}, suite=None,
       footprint=fp.UCX_RATE),
    # ucx_perftest -T THREADS -M THREAD_MODE's tag_lat: a UCP worker per thread (csrc/families/ucx_mt.c,
    # docs/threads.md); its threads make no MPI call, the core asks MPI_THREAD_MULTIPLE as for every `threads`
    _b("ucx.mt_pingpong", "THREADS threads of rank 0 ping-pong tagged messages with THREADS of rank 1 at once, a "
       "UCP worker each: ucx_perftest -T's tag_lat", "latency", sizes="0:64K:x4", legs=2, threads=True,
       params={**UCX, "threads": integer(2, 1, 127), "thread_mode": choice("single", "serialized", "multi")},
       suite=None, views=("threads",), footprint=fp.UCX_MT),
]
