"""Traffic patterns and what the solver makes of them."""

import numpy as np
import pytest

from fabriclab.errors import UsageError
from fabriclab.model.catalog import system
from fabriclab.model.loads import solve
from fabriclab.model.topologies import Torus
from fabriclab.model.traffic import Traffic, all_pairs, derangement


def test_all_pairs():
    s, d = all_pairs(5)
    assert len(s) == 20 and not np.any(s == d)
    assert len(set(zip(s.tolist(), d.tolist()))) == 20


def test_derangement_has_no_fixed_point():
    rng = np.random.default_rng(3)
    for n in (2, 3, 10, 101):
        p = derangement(n, rng)
        assert sorted(p.tolist()) == list(range(n)) and not np.any(p == np.arange(n))


def test_hotspot_is_bound_by_the_target():
    s = system("myrinet-clos64")
    t = s.build(32)
    r = solve(t, s.rates(t), Traffic("hotspot", target=5))
    assert r.bottleneck.key == "eject"
    assert r.per_node == pytest.approx(s.tech.resources["link"].effective(3) / 31)


def test_permutation_on_full_fat_tree_gets_full_link():
    # 256 nodes on 64-port switches: two levels. With ECMP a leaf's at most d outgoing flows spread
    # over u = d up-links (load <= 1 each), so every node gets its whole link
    s = system("infiniband-ndr:folded-clos:routing=ecmp")
    t = s.build(256)
    assert t.h == 2
    r = solve(t, s.rates(t), Traffic("permutation", seed=2))
    assert r.demand == 1
    assert r.per_node == pytest.approx(s.tech.resources["link"].effective(t.max_switches_on_route()))
    assert r.bottleneck.label.endswith("node to switch (injection)")


def test_bisection_pairs_cross_the_cut_of_a_linear_array():
    s = system("myrinet-minimal")
    t = s.build(30)
    tr = Traffic("bisection", seed=1)
    r = solve(t, s.rates(t), tr)
    assert r.method == "enumeration"
    # two switches of 15 nodes: the one cable carries every pair that crosses, in the busier direction
    src, dst = tr.flows(t)
    sw = lambda x: np.asarray(x) // 15
    crossing = max(int(np.sum((sw(src) == 0) & (sw(dst) == 1))), int(np.sum((sw(src) == 1) & (sw(dst) == 0))))
    assert crossing > 1
    assert r.per_node == pytest.approx(s.tech.resources["link"].effective(t.max_switches_on_route()) / crossing)


def test_nearest_neighbour_on_torus():
    t = Torus((4, 4), True)
    src, dst = Traffic("neighbour").flows(t)
    assert len(src) == 16 * 4
    # every link carries exactly one neighbour message
    p = t.paths(src, dst)
    assert np.allclose(np.bincount(p.res, minlength=t.n_resources), 1)


def test_bad_patterns():
    with pytest.raises(UsageError):
        Traffic("gossip")
    with pytest.raises(UsageError):
        Traffic("hotspot", target=99).flows(Torus((3,)))
