"""Collective schedules (model/schedules.py): the bytes each moves against hand counts, and
their time on a full-bisection network (model/schedule_time.py) against the closed forms
of Thakur, Rabenseifner and Gropp (2005)."""
import math

import numpy as np
import pytest

from fabriclab.errors import UsageError
from fabriclab.model.netfile import NetworkFile
from fabriclab.model.schedule_time import StepTime, Network, place, schedule_time
from fabriclab.model.schedules import ALGORITHMS, Schedule, blocks, schedule
from fabriclab.model.topologies.custom import CustomNetwork

NS = (2, 3, 4, 5, 8)
N_BYTES = 840 * 64          # divisible by every N of NS: the closed forms' n/N is whole
ODD_BYTES = 1001            # not divisible: balanced blocks differ by a byte


def _log2(n: int) -> int:
    return (n - 1).bit_length()


def _fold(n: int) -> tuple[int, int]:
    p = 1 << (n.bit_length() - 1)
    return p, n - p


@pytest.mark.parametrize("n", NS)
def test_ring_allreduce_sends_and_reduces_2_n_minus_1_over_n(n):
    s = schedule("allreduce", "ring", n, N_BYTES)
    assert s.n_steps == 2 * (n - 1)
    assert (s.sent() == 2 * (n - 1) * N_BYTES // n).all() and (s.received() == s.sent()).all()
    assert (s.reduced() == (n - 1) * N_BYTES // n).all()
    odd = schedule("allreduce", "ring", n, ODD_BYTES)   # every block but two of its own, each sent once
    b = blocks(ODD_BYTES, n)
    assert [int(x) for x in odd.sent()] == [2 * ODD_BYTES - b[(r + 1) % n] - b[(r + 2) % n] for r in range(n)]


@pytest.mark.parametrize("n", NS)
def test_recursive_doubling_folds_the_ranks_over_a_power_of_two(n):
    s = schedule("allreduce", "recursive_doubling", n, N_BYTES)
    p, rem = _fold(n)
    steps = int(math.log2(p))
    want_sent = [N_BYTES if r < 2 * rem and r % 2 == 0 else steps * N_BYTES + (N_BYTES if r < 2 * rem else 0)
                 for r in range(n)]
    want_reduced = [0 if r < 2 * rem and r % 2 == 0 else (steps + (r < 2 * rem)) * N_BYTES for r in range(n)]
    assert list(s.sent()) == want_sent and list(s.reduced()) == want_reduced
    assert s.n_steps == steps + (2 if rem else 0)


@pytest.mark.parametrize("n", NS)
def test_rabenseifner_moves_what_the_ring_moves_in_log_steps(n):
    s = schedule("allreduce", "rabenseifner", n, N_BYTES)
    p, rem = _fold(n)
    if rem == 0:
        assert (s.sent() == 2 * (n - 1) * N_BYTES // n).all()
        assert (s.reduced() == (n - 1) * N_BYTES // n).all()
        assert s.n_steps == 2 * int(math.log2(n))
    else:   # the folded even ranks send their vector and get the result back
        assert all(s.sent()[r] == N_BYTES for r in range(0, 2 * rem, 2))
        assert all(s.received()[r] == N_BYTES for r in range(0, 2 * rem, 2))


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("algorithm", ["binomial", "scatter_allgather", "pipelined_chain"])
def test_every_rank_of_a_bcast_receives_the_vector(n, algorithm):
    s = schedule("bcast", algorithm, n, N_BYTES)
    got, gave = s.received(), s.sent()
    assert (got[1:] >= N_BYTES).all()
    # the ring of scatter + allgather passes the root its own blocks as well, as MPICH's does
    assert got[0] == (0 if algorithm != "scatter_allgather" else (n - 1) * N_BYTES // n)
    if algorithm != "scatter_allgather":     # a tree and a chain send each rank the vector once
        assert (got[1:] == N_BYTES).all() and gave.sum() == (n - 1) * N_BYTES
    if algorithm == "binomial":
        assert s.n_steps == _log2(n)
    if algorithm == "scatter_allgather":     # the root's other blocks scattered, then a ring of N - 1 blocks
        assert gave[0] == (n - 1) * N_BYTES // n + (n - 1) * N_BYTES // n
        assert (got[1:] == [N_BYTES * (len(_below(r, n)) + n - 1) // n for r in range(1, n)]).all()


def _below(r: int, n: int) -> range:
    """The ranks of r's subtree in a binomial tree rooted at 0 (r itself included)."""
    low = r & -r
    return range(r, min(r + low, n))


@pytest.mark.parametrize("n", NS)
def test_a_pipelined_chain_takes_segments_plus_ranks_minus_two_steps(n):
    s = schedule("bcast", "pipelined_chain", n, 5 * (64 << 10))
    assert s.n_steps == 5 + n - 2


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("algorithm", ["ring", "recursive_doubling", "bruck"])
def test_every_rank_of_an_allgather_ends_with_every_block(n, algorithm):
    s = schedule("allgather", algorithm, n, 96)
    p, rem = _fold(n)
    folded = {r for r in range(0, 2 * rem, 2)} if algorithm == "recursive_doubling" else set()
    # a folded rank gets the whole result back, its own block included (as MPICH sends it)
    assert [int(x) for x in s.received()] == [96 * n if r in folded else 96 * (n - 1) for r in range(n)]
    if algorithm == "bruck":
        assert s.n_steps == _log2(n)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("algorithm", ["ring", "recursive_halving"])
def test_reduce_scatter_leaves_each_rank_its_block(n, algorithm):
    s = schedule("reduce_scatter", algorithm, n, N_BYTES)
    p, rem = _fold(n)
    if algorithm == "ring" or rem == 0:
        assert (s.sent() == (n - 1) * N_BYTES // n).all() and (s.reduced() == s.received()).all()
    b = blocks(ODD_BYTES, n)
    odd = schedule("reduce_scatter", "ring", n, ODD_BYTES)
    assert [int(x) for x in odd.sent()] == [ODD_BYTES - b[r] for r in range(n)]


@pytest.mark.parametrize("n", NS)
def test_alltoall_pairwise_and_bruck(n):
    pw = schedule("alltoall", "pairwise", n, 64)
    assert (pw.sent() == 64 * (n - 1)).all() and pw.n_steps == n - 1
    br = schedule("alltoall", "bruck", n, 64)
    per_step = [sum(1 for j in range(n) if j & (1 << k)) for k in range(_log2(n))]
    assert (br.sent() == 64 * sum(per_step)).all() and br.n_steps == _log2(n)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("algorithm", ["linear", "binomial"])
def test_gather_and_scatter_conserve_each_ranks_block(n, algorithm):
    g = schedule("gather", algorithm, n, 64)
    assert g.received()[0] == 64 * (n - 1) and ((g.sent() - g.received())[1:] == 64).all()
    sc = schedule("scatter", algorithm, n, 64, root=n - 1)
    net = sc.received() - sc.sent()
    assert net[n - 1] == -64 * (n - 1) and (np.delete(net, n - 1) == 64).all()


def test_a_reduce_sends_each_vector_once_to_the_root():
    s = schedule("reduce", "binomial", 5, 100)
    assert list(s.sent()) == [0, 100, 100, 100, 100] and s.reduced()[0] == 100 * _log2(5)


@pytest.mark.parametrize("args,msg", [
    (("allreduce", "fastest", 4, 8), "has no algorithm 'fastest': ring"),
    (("barrier", "ring", 4, 8), "no schedules for 'barrier'"),
    (("allreduce", "ring", 0, 8), "ranks must be an integer"),
    (("allreduce", "ring", 4, -1), "size must be a whole number"),
    (("bcast", "binomial", 4, 8, 4), "root 4 is not one of the 4 ranks"),
])
def test_bad_input_is_one_line(args, msg):
    with pytest.raises(UsageError, match=msg):
        schedule(*args)


# ---- the time of a schedule against the closed forms, on a full-bisection network

def _star(n: int, rate_mbps: float = 100.0) -> NetworkFile:
    data = {"name": "star", "nodes": [f"h{i}" for i in range(n)], "switches": ["s"],
            "default_rate_MBps": rate_mbps, "links": [[f"h{i}", "s"] for i in range(n)]}
    return NetworkFile("star", topo=CustomNetwork.from_dict(data))


ALPHA, GAMMA = 2e-6, 1e-10


def _beta(net: NetworkFile) -> float:
    cap = Network(net).cap
    assert np.allclose(cap, cap[0])
    return float(cap[0])


@pytest.mark.parametrize("n", [2, 4, 8])
def test_the_solver_gives_each_closed_form_exactly(n):
    net, size = _star(n), N_BYTES
    beta = _beta(net)
    t = lambda op, alg: schedule_time(schedule(op, alg, n, size), net, ALPHA, GAMMA).seconds
    lg = math.log2(n)
    assert t("allreduce", "ring") == pytest.approx(
        2 * (n - 1) * ALPHA + 2 * (n - 1) / n * size / beta + (n - 1) / n * size * GAMMA, rel=1e-12)
    assert t("allreduce", "recursive_doubling") == pytest.approx(lg * (ALPHA + size / beta + size * GAMMA), rel=1e-12)
    assert t("allreduce", "rabenseifner") == pytest.approx(
        2 * lg * ALPHA + 2 * (n - 1) / n * size / beta + (n - 1) / n * size * GAMMA, rel=1e-12)
    assert t("bcast", "binomial") == pytest.approx(math.ceil(lg) * (ALPHA + size / beta), rel=1e-12)


def test_shared_cables_slow_a_step_and_are_named():
    """On two switches joined by one 20 MB/s trunk (a0 a1 | b0 b1), a ring placed a0 b0 a1 b1
    crosses it twice each way every step, so each block goes at half the trunk's rate, and
    the trunk is the bottleneck; placed in order, it crosses once each way."""
    data = {"name": "two", "nodes": ["a0", "a1", "b0", "b1"], "switches": ["s0", "s1"], "default_rate_MBps": 60,
            "links": [["a0", "s0"], ["a1", "s0"], ["b0", "s1"], ["b1", "s1"],
                      {"a": "s0", "b": "s1", "rate_MBps": 20, "name": "trunk"}]}
    net = NetworkFile("two", topo=CustomNetwork.from_dict(data))
    trunk = Network(net).cap.min()
    ring = schedule("allgather", "ring", 4, 1 << 20)
    across = schedule_time(ring, net, 0.0, 0.0, [0, 2, 1, 3])
    assert across.seconds == pytest.approx(3 * (1 << 20) / (trunk / 2), rel=1e-9)
    assert across.bottleneck.startswith("link trunk")
    in_order = schedule_time(ring, net, 0.0, 0.0, place(4, 4, "block"))
    assert in_order.seconds == pytest.approx(3 * (1 << 20) / trunk, rel=1e-9)


def test_ranks_on_one_node_cost_alpha_only_and_bad_placements_are_one_line():
    net = _star(2)
    # recursive doubling's first step pairs 0-1 and 2-3: on one node each, placed by block
    doubling = schedule_time(schedule("allreduce", "recursive_doubling", 4, 4096), net, ALPHA, 0.0,
                             place(4, 2, "block"))
    assert doubling.steps[0] == StepTime(ALPHA, "", 1, ALPHA) and doubling.steps[1].seconds > ALPHA
    assert list(place(4, 2, "cyclic")) == [0, 1, 0, 1] and list(place(3, 2, "block")) == [0, 0, 1]
    with pytest.raises(UsageError, match="do not fit"):
        place(5, 2, "block", per_node=2)
    with pytest.raises(UsageError, match="placement must be one of"):
        place(4, 2, "random")
    with pytest.raises(UsageError, match="each of the 4 ranks on one of the network's 2 nodes"):
        schedule_time(schedule("allreduce", "ring", 4, 64), net, ALPHA, 0.0, [0, 1, 2, 3])
    with pytest.raises(UsageError, match="alpha and gamma"):
        schedule_time(schedule("allreduce", "ring", 2, 64), net, -1.0, 0.0)


def test_schedules_cover_eight_operations():
    assert set(ALGORITHMS) == {"allreduce", "bcast", "reduce", "allgather", "reduce_scatter", "alltoall",
                               "gather", "scatter"}


@pytest.mark.parametrize("n", [2, 4, 8])
def test_per_step_bytes_of_the_power_of_two_algorithms(n):
    """Each step of each rank, against the textbook: the ring's n/N blocks, doubling's whole
    vector, Rabenseifner's halves n/2, n/4, ... then back up, Bruck's 2^k blocks."""
    per_step = lambda alg, op="allreduce", size=N_BYTES: [sorted(set(s.nbytes.tolist())) for s in
                                                          schedule(op, alg, n, size).expanded()]
    assert per_step("ring") == [[N_BYTES // n]] * (2 * (n - 1))
    assert per_step("recursive_doubling") == [[N_BYTES]] * int(math.log2(n))
    halves = [[N_BYTES >> k] for k in range(1, int(math.log2(n)) + 1)]
    assert per_step("rabenseifner") == halves + halves[::-1]
    assert per_step("bruck", "allgather", 64) == [[64 << k] for k in range(int(math.log2(n)))]
    steps = schedule("allreduce", "rabenseifner", n, N_BYTES).steps
    for s in steps:   # every rank in every step
        assert sorted(s.src.tolist()) == list(range(n))
    # halving reduces what each rank receives; doubling back up reduces nothing
    assert [s.reduce for s in steps] == [True] * (len(steps) // 2) + [False] * (len(steps) // 2)


def _two_switches() -> NetworkFile:
    """a0 a1 | b0 b1 on two switches joined by one 20 MB/s trunk: flows' rates differ."""
    data = {"name": "two", "nodes": ["a0", "a1", "b0", "b1"], "switches": ["s0", "s1"], "default_rate_MBps": 60,
            "links": [["a0", "s0"], ["a1", "s0"], ["b0", "s1"], ["b1", "s1"],
                      {"a": "s0", "b": "s1", "rate_MBps": 20, "name": "trunk"}]}
    return NetworkFile("two", topo=CustomNetwork.from_dict(data))


@pytest.mark.parametrize("op,alg,size", [("allreduce", "ring", ODD_BYTES), ("allreduce", "ring", 3),
                                         ("bcast", "pipelined_chain", 5 * (64 << 10) + 7),
                                         ("bcast", "scatter_allgather", ODD_BYTES)])
def test_a_repeated_step_costs_what_its_repeats_cost_one_by_one(op, alg, size):
    """A ring or chain is kept as one step repeated; timed at once it costs exactly what
    its repeats cost as separate steps of the same pattern, on a network whose flows get
    different rates, with blocks that differ by a byte (or are empty)."""
    net, n = Network(_two_switches()), 4
    s = schedule(op, alg, n, size)
    assert any(st.repeat > 1 for st in s.steps) and len(s.steps) < s.n_steps
    one_by_one = Schedule(op, alg, n, size, s.expanded())
    assert one_by_one.n_steps == s.n_steps and (one_by_one.sent() == s.sent()).all()
    assert (one_by_one.reduced() == s.reduced()).all()
    for where in ([0, 2, 1, 3], [0, 1, 2, 3], [0, 0, 1, 1]):
        packed, single = net.time(s, ALPHA, GAMMA, where), net.time(one_by_one, ALPHA, GAMMA, where)
        assert packed.seconds == pytest.approx(single.seconds, rel=1e-12)
        assert packed.bottleneck == single.bottleneck


def test_a_ring_keeps_its_pattern_when_blocks_are_empty():
    """3 bytes on 8 ranks: five of the eight blocks are empty, every step still sends one
    message to the next rank (MPICH sends the empty ones), and 3 bytes move N - 1 hops."""
    s = schedule("allgather", "ring", 8, 0)
    assert s.steps == []
    r = schedule("reduce_scatter", "ring", 8, 3)
    assert len(r.steps) == 1 and r.steps[0].repeat == 7 and len(r.steps[0].src) == 8
    assert r.sent().sum() == 3 * 7 and r.reduced().sum() == 3 * 7


@pytest.mark.bounds
def test_a_schedule_too_large_to_time_is_one_line():
    with pytest.raises(UsageError, match="more than 16,000,000 flows"):
        schedule("alltoall", "pairwise", 5000, 8)
    big = schedule("allreduce", "ring", 1 << 20, 1 << 20)     # two stored steps, 2 x (2^20 - 1) taken
    assert len(big.steps) == 2 and big.n_steps == 2 * ((1 << 20) - 1)


def test_the_busiest_cable_over_the_whole_schedule_is_named_beside_the_costliest_steps():
    """A binomial bcast of 256 KiB on a0 a1 | b0 b1 from a0: a0 -> b0 over the 20 MB/s trunk, then
    a0 -> a1 and b0 -> b1. The trunk costs the most of any step; over the whole op a0's own cable
    (60 MB/s) carries two sends, 8.7 ms, the trunk one, 13.1 ms: the trunk is both."""
    net = Network(_two_switches())
    t = net.time(schedule("bcast", "binomial", 4, 1 << 18), 0.0, 0.0, [0, 1, 2, 3])
    assert t.bottleneck.startswith("link trunk") and t.busiest.startswith("link trunk")
    assert t.busiest_s == pytest.approx((1 << 18) / _Network_cap_min(net))
    ring = net.time(schedule("allgather", "ring", 4, 1 << 18), 0.0, 0.0, [0, 1, 2, 3])
    assert ring.busiest.startswith("link trunk") and ring.busiest_s == pytest.approx(3 * (1 << 18) / _Network_cap_min(net))


def _Network_cap_min(net) -> float:
    return float(net.cap.min())
