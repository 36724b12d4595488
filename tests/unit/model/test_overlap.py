"""A schedule timed rank by rank (model/overlap.py): a pair that finishes a step
early starts its next while others still move the last, against hand counts on a
star of 4 hosts at 100 MB/s, where every flow between two hosts gets the whole rate."""

import numpy as np
import pytest

from fabriclab.model import overlap
from fabriclab.model.catalog import system
from fabriclab.model.netfile import NetworkFile
from fabriclab.model.schedule_time import Network
from fabriclab.model.schedules import Schedule, Step, schedule
from fabriclab.model.topologies.custom import CustomNetwork

RATE = 100e6
ALPHA, GAMMA = 1e-4, 1e-9
BIG, SMALL = 4_000_000, 1_000_000


def _star(n: int = 4) -> Network:
    data = {"name": "star", "nodes": [f"h{i}" for i in range(n)], "switches": ["s"],
            "default_rate_MBps": RATE / 1e6, "links": [[f"h{i}", "s"] for i in range(n)]}
    return Network(NetworkFile("star", topo=CustomNetwork.from_dict(data)))


def _step(flows: list, reduce: bool = False) -> Step:
    src, dst, nbytes = (np.array(x, np.int64) for x in zip(*flows))
    return Step(src, dst, nbytes, 0, reduce)


def test_a_pair_done_early_goes_on_while_another_still_moves_its_step():
    """Pairs 0-1 and 2-3 swap BIG then SMALL bytes, and SMALL then BIG: each pair's path is
    2 alpha + (BIG + SMALL) / rate (reducing what it receives), where the steps' sum, each
    step waiting for its slowest pair, is 2 alpha + 2 BIG / rate."""
    first = _step([(0, 1, BIG), (1, 0, BIG), (2, 3, SMALL), (3, 2, SMALL)], reduce=True)
    second = _step([(0, 1, SMALL), (1, 0, SMALL), (2, 3, BIG), (3, 2, BIG)], reduce=True)
    t = _star().time(Schedule("allreduce", "pairs", 4, BIG, [first, second]), ALPHA, GAMMA)
    assert t.seconds == pytest.approx(2 * ALPHA + (BIG + SMALL) * (1 / RATE + GAMMA), rel=1e-12)
    assert sum(s.seconds for s in t.steps) == pytest.approx(t.seconds, rel=1e-12)
    assert all(s.bottleneck.startswith("link h") for s in t.steps)      # a host's cable, named


def test_a_sender_done_early_shares_the_receivers_cable_with_its_last_step():
    """Rank 2 takes no part in the first step and sends SMALL to rank 1 at once, while rank 0's
    BIG still arrives there: the two share rank 1's cable at half the rate each until SMALL
    has arrived, so BIG ends SMALL / rate late, alpha + (BIG + SMALL) / rate."""
    first, second = _step([(0, 1, BIG)]), _step([(2, 1, SMALL)])
    t = _star().time(Schedule("bcast", "pairs", 4, BIG, [first, second]), ALPHA, 0.0)
    assert t.seconds == pytest.approx(ALPHA + (BIG + SMALL) / RATE, rel=1e-12)


def test_a_tree_waits_for_what_each_rank_receives():
    """A binomial bcast's rank 2 sends to rank 3 only once rank 0's message reached it:
    two messages one after the other on the critical path."""
    t = _star().time(schedule("bcast", "binomial", 4, BIG), ALPHA, 0.0)
    assert t.seconds == pytest.approx(2 * (ALPHA + BIG / RATE), rel=1e-12)


def test_catalog_systems_and_large_schedules_keep_the_steps_sum(monkeypatch):
    """A catalog system's thousands of nodes, and a network file's schedules over
    OVERLAP_CELLS ranks x steps, are timed step by step: never simulated."""
    def refused(*_):
        raise AssertionError("simulated")
    monkeypatch.setattr(overlap, "simulate", refused)
    monkeypatch.setattr("fabriclab.model.schedule_time.simulate", refused)
    big = Network(system("sci-ring"), 64).time(schedule("allreduce", "rabenseifner", 64, BIG), ALPHA, GAMMA)
    assert big.seconds > 0
    ring = schedule("allreduce", "ring", 4, BIG)
    monkeypatch.setattr("fabriclab.model.schedule_time.OVERLAP_CELLS", 4 * ring.n_steps - 1)
    assert _star().time(ring, ALPHA, GAMMA).seconds > 0
