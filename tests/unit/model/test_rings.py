"""HPCC's rings as traffic patterns (model/traffic.py ring and random-ring, model/rings.py) on a
built-in topology, with the link loads counted by hand."""
import math

import pytest

from fabriclab.errors import UsageError
from fabriclab.model import rings
from fabriclab.model.catalog import system
from fabriclab.model.loads import solve
from fabriclab.model.traffic import Traffic

MB = 1e6


def _t3d_ring(n: int):
    """A bidirectional ring of T3D links (160 MB/s measured each way), 125 MB/s into and out of a node."""
    s = system("cray-t3d:torus:dims=1,bidirectional=true")
    t = s.build(n)
    return t, s.rates(t)


def test_the_natural_ring_loads_every_link_once_and_is_bound_by_the_node():
    t, rates = _t3d_ring(4)
    r = solve(t, rates, Traffic("ring"))
    assert r.demand == 2                                   # a message to each neighbour
    loads = {c.label: c.load for c in r.classes}
    assert loads["T3D link, dimension 1, + direction"] == 1 and loads["T3D link, dimension 1, - direction"] == 1
    assert r.per_node == pytest.approx(125 * MB) and "transmit" in r.bottleneck.label
    assert r.per_node == pytest.approx(solve(t, rates, Traffic("neighbour")).per_node)


def test_a_ring_in_another_order_crosses_more_links():
    # ring 0 2 1 3 on a ring of 4: to the right 0>2 (0+ 1+), 2>1 (2-), 1>3 (1+ 2+), 3>0 (3+); to the left
    # 0>3 (0-), 2>0 (2+ 3+), 1>2 (1+), 3>1 (3+ 0+); ties go the + way: links 1+ and 3+ carry 3
    t, rates = _t3d_ring(4)
    r = solve(t, rates, Traffic("ring", ring=(0, 2, 1, 3)))
    assert {c.label: c.load for c in r.classes}["T3D link, dimension 1, + direction"] == 3
    assert r.per_node == pytest.approx(2 * 160 * MB / 3) and "T3D link" in r.bottleneck.label


def test_the_random_rings_figure_is_the_geometric_mean_of_their_bandwidths():
    t, rates = _t3d_ring(8)
    p = rings.predict(t, rates, seeds=range(1, 6))
    each = [r.per_node for r in p.randoms]
    assert len(each) == 5 and p.random_Bps == pytest.approx(math.exp(sum(map(math.log, each)) / 5))
    assert p.natural_Bps >= max(each) and min(each) < p.natural_Bps      # the natural ring is the best ring here
    given = rings.predict(t, rates, orders=[(0, 2, 1, 3, 4, 6, 5, 7)])
    assert len(given.randoms) == 1 and given.random_Bps < given.natural_Bps
    assert rings.order_of([2, 3, 1, 0]) == (0, 2, 1, 3)


def test_bad_rings_are_refused():
    t, rates = _t3d_ring(4)
    with pytest.raises(UsageError, match="every node 0..3 once"):
        Traffic("ring", ring=(0, 1, 1, 3)).flows(t)
    with pytest.raises(UsageError, match="one ring"):
        rings.order_of([1, 0, 3, 2])
    with pytest.raises(UsageError, match="at least one seed"):
        rings.predict(t, rates, seeds=())
