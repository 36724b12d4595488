"""What one point of the levels below MPI holds (fabric*.c, ucx*.c), on
footprint.py's model: states, op contexts and registered or mapped regions."""

from __future__ import annotations

from .footprint import (FAB_MR, FAB_NET, FI_CONTEXT2, PAGE, STATE, At, Footprint, const, message, page, payload,
                        scatter_receiver)


# ---- fabric*.c: every rank's state and op contexts (2 per window op, and
# the acks'); send and receive regions of `buffers` slots, registered with the
# provider. No MPI count limits a transfer.

def contexts(n: int) -> int:
    return page(FI_CONTEXT2 * n)


def _fab(at: At, regions: int, rma: bool = False) -> int:
    """fabric.c: fab_begin's state and contexts, `regions` regions, and an RMA point's table of keys."""
    return PAGE + contexts(2 * at.window + 2) + regions * at.slots + (page(16 * at.nranks) if rma else 0)


FABRIC_PAIR = Footprint({"s": lambda at: _fab(at, 2), "r": lambda at: _fab(at, 2), "i": lambda at: _fab(at, 0)})
FABRIC_RMA = Footprint({"s": lambda at: _fab(at, 2, True), "r": lambda at: _fab(at, 2, True),
                        "i": lambda at: _fab(at, 0, True)})


def _fp(at: At, regions: int) -> int:
    """fabric_patterns.c: fp_begin's state and contexts, and `regions` regions."""
    return PAGE + contexts(2 * at.window + at.nranks + 2) + regions * at.slots


FABRIC_BOTH = Footprint({"b": lambda at: _fp(at, 1 + 1), "i": lambda at: _fp(at, 0)})
FABRIC_PAIRS = Footprint({"s": lambda at: _fp(at, 1), "r": lambda at: _fp(at, 1), "i": lambda at: _fp(at, 0)})
# A hotspot_put target holds a region per sender; every rank the senders and keys tables.
FABRIC_HOTSPOT = Footprint({"s": lambda at: _fp(at, 1) + page(4 * at.nranks) + page(16 * at.nranks),
                            "t": lambda at: _fp(at, 0) + page(at.senders * at.size * at.buffers)
                            + page(4 * at.nranks) + page(16 * at.nranks),
                            "i": lambda at: _fp(at, 0) + page(4 * at.nranks) + page(16 * at.nranks)})
# Registration: one buffer of SIZE bytes on rank 0, and every rank's state.
FABRIC_MR = Footprint({"s": lambda at: PAGE + page(at.size), "r": STATE, "i": STATE})


def _fabric_conns(at: At) -> int:
    """fabric_via.c: per connection an endpoint set (fab_net: its address
    table and control buffer, a page each), two registrations, an op count
    and a context; both regions on every rank; at the peak, set-up's table of
    linked ranks and the last endpoint's table of names."""
    c = at.conns
    book = page(FAB_NET * c) + 2 * page(FAB_MR * c) + page(8 * c) + contexts(c + 2)
    return PAGE + book + 2 * at.slots + 2 * PAGE * c + 2 * PAGE


def _fabric_scatter(at: At, receiver: bool) -> int:
    msg, slots = message(at)
    base = PAGE + contexts(2 * at.window + 2)
    if not receiver:
        return base + page(msg * slots)
    segments = at.param("segments")
    return base + scatter_receiver(at) + page(16 * segments * at.window) + page(8 * segments)


FABRIC_CONNS = Footprint({"s": _fabric_conns, "r": _fabric_conns, "i": _fabric_conns},
                         limit=payload("no payload to send"))
FABRIC_SCATTER = Footprint({"s": lambda at: _fabric_scatter(at, False), "r": lambda at: _fabric_scatter(at, True),
                            "i": lambda at: PAGE + contexts(2 * at.window + 2)},
                           limit=lambda at: "no payload to scatter" if at.size == 0 else None)


# ---- ucx.c: the active ranks' send and receive regions, mapped with the
# context, and 2 x window request pointers; an RMA origin unpacks the
# target's key at set-up.
def _ucx(at: At, key: bool = False) -> int:
    return 2 * at.slots + page(16 * at.window) + (PAGE if key else 0)


UCX_PAIR = Footprint({"s": _ucx, "r": _ucx, "b": _ucx})
UCX_RMA = Footprint({"s": lambda at: _ucx(at, True), "r": _ucx})
UCX_MR = Footprint({"s": lambda at: page(at.size)})
# ucx_mt.c: the state, and on the active ranks a 48-byte entry per thread and one region per
# side holding every thread's `buffers` slots, mapped with the context.
UCX_MT_THREAD = 48


def _ucx_mt(at: At) -> int:
    threads = at.param("threads")
    return PAGE + page(UCX_MT_THREAD * threads) + 2 * page(at.size * at.buffers * threads)


UCX_MT = Footprint({"s": _ucx_mt, "r": _ucx_mt, "i": STATE})


# ---- the atomics (fabric_atomic.c, ucx_atomic.c) and the message rate over
# several endpoints (fabric_rate.c, ucx_rate.c).
def atomic_limit(at: At) -> str | None:
    """Both atomics kernels: one FI_UINT64 / 8-byte word per op."""
    return None if at.size == 8 else "atomics update one 8-byte word: size 8 only"


# fabric: every rank its state and every rank's key (fab_mr_share); the origin its operand and
# fetched values, the target its word, a page each.
FABRIC_ATOMIC = Footprint({"s": lambda at: 2 * PAGE + page(16 * at.nranks), "r": lambda at: 2 * PAGE
                           + page(16 * at.nranks), "i": lambda at: PAGE + page(16 * at.nranks)}, limit=atomic_limit)
# ucx: the origin's operand and replies and, at set-up, the target's packed key; the target's word, a
# page UCP allocates (memory=ucx, counted with fl_account) or one of the program's (program).
UCX_ATOMIC = Footprint({"s": const(3 * PAGE), "r": const(2 * PAGE), "i": STATE}, limit=atomic_limit)


def _fabric_rate(at: At, region: bool) -> int:
    """fabric_rate.c: Q endpoint sets (fab_net: a control buffer and, rdm, an address table each),
    Q registrations per side, Q x W + 2 contexts, one region; at the peak, set-up's table of linked
    ranks and the last endpoint's table of names (before its control buffer)."""
    q = at.param("endpoints")
    nets = page(FAB_NET * q) + 2 * page(FAB_MR * q) + q * (PAGE + page(8 * at.nranks))
    return (PAGE + nets + contexts(q * at.window + 2) + (at.slots if region else 0) + page(at.nranks)
            + page(256 * at.nranks) - PAGE)


FABRIC_RATE = Footprint({"s": lambda at: _fabric_rate(at, True), "r": lambda at: _fabric_rate(at, True),
                         "i": lambda at: _fabric_rate(at, False)})


def _ucx_rate(at: At) -> int:
    """ucx_rate.c: Q workers' and endpoints' handles, Q x W + 1 requests and one mapped region
    (a peer's worker address, a page at set-up, is freed before the region is mapped)."""
    q = at.param("endpoints")
    return PAGE + 2 * page(8 * q) + page(8 * (q * at.window + 1)) + at.slots


UCX_RATE = Footprint({"s": _ucx_rate, "r": _ucx_rate, "i": STATE})
