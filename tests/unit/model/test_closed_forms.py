"""Closed forms (the test oracles) against brute-force counting over the routes."""

import numpy as np
import pytest

from fabriclab.model import closed_forms as cf
from fabriclab.model.loads import enumerate_alltoall
from fabriclab.model.topologies import (Crossbar, Dragonfly, FatTree, NodeModel, SwitchArray, SwitchRing,
                                        Torus)


def brute(topo):
    loads = enumerate_alltoall(topo)
    return {c.key: loads[topo.offsets[i]:topo.offsets[i + 1]] for i, c in enumerate(topo.classes)}


@pytest.mark.parametrize("r,f", [(2, 1), (5, 1), (9, 1), (2, 2), (3, 2), (6, 2), (2, 3), (3, 3), (4, 3), (3, 4)])
def test_sci_hot_link_and_blink(r, f):
    """Seed 001 Eq. 1 and Eq. 2 (Bugge) equal the counted loads, on every instance."""
    t = Torus((r,) * f, False, NodeModel(adapter_bus=True))
    b = brute(t)
    n = r ** f
    for i in range(f):
        assert np.allclose(b[f"link.d{i}+"], cf.sci_hot_link(n, r))
    assert np.allclose(b["adapter_bus"], cf.sci_hot_blink(r, f))


def test_blink_worked_example():
    # seed 001 §5: 3×3 torus, hot-B-link = 2·8 + 1·1·2² = 20
    assert cf.sci_hot_blink(3, 2) == 20


@pytest.mark.parametrize("dims", [(2, 3), (3, 5), (2, 3, 4), (4, 2, 3, 2)])
def test_mixed_radix_blink(dims):
    t = Torus(dims, False, NodeModel(adapter_bus=True))
    assert np.allclose(brute(t)["adapter_bus"], cf.torus_blink_mixed(dims))


@pytest.mark.parametrize("r", [2, 3, 4, 7, 8])
def test_bidirectional_ring_links(r):
    t = Torus((r, 3), True)
    b = brute(t)
    plus, minus = cf.bidir_ring_link(3 * r, r)
    assert np.allclose(b["link.d0+"], plus)
    assert np.allclose(b["link.d0-"], minus)


@pytest.mark.parametrize("k", [8, 10])
def test_channel_load_bound_is_8B_over_k(k):
    """DIGEST §6: a bidirectional k-ary 2-cube gives about 8B/k under uniform traffic (odd k: exactly
    balanced channels, mean hops from the routes)."""
    t = Torus((k, k), True)
    b = brute(t)
    total = sum(v.sum() for key, v in b.items() if key.startswith("link"))
    n = k * k
    hops = total / (n * (n - 1))
    bound = cf.channel_load_bound(n, 4 * n, hops, 1.0)
    assert bound == pytest.approx(8.0 / k, rel=0.05)
    # the exact bound can only be lower (the most loaded channel decides)
    worst = max(v.max() for key, v in b.items() if key.startswith("link"))
    assert (n - 1) / worst <= bound + 1e-12


@pytest.mark.parametrize("k,n", [(2, 3), (3, 2), (4, 2), (4, 3), (2, 5)])
@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
def test_kary_ntree_levels(k, n, routing):
    t = FatTree.kary_ntree(k, n, routing=routing)
    b = brute(t)
    for lv in range(n):
        assert np.allclose(b[f"up.{lv}"], cf.kary_ntree_level(k, n, lv))
        assert np.allclose(b[f"down.{lv}"], cf.kary_ntree_level(k, n, lv))


@pytest.mark.parametrize("n", [3, 12, 16])
def test_crossbar(n):
    b = brute(Crossbar(n, 16))
    assert np.allclose(b["inject"], cf.crossbar_link(n))


@pytest.mark.parametrize("switches,cables", [(3, 1), (4, 1), (5, 2), (6, 1)])
def test_switch_array_middle_cut(switches, cables):
    # all switches full: 16 - cables node ports at both ends, 16 - 2 cables in between; use a
    # balanced array of k nodes per switch by taking k = 16 - 2·cables everywhere
    k = 16 - 2 * cables
    assert k % cables == 0, "the D-mod-K closed form needs cables to divide k"
    t = SwitchArray(switches * k, 16, cables, "d-mod-k", NodeModel(), "balanced")
    assert np.all(t.per_switch == k), "balanced placement must give every switch k nodes"
    b = brute(t)
    assert b["isl+"].max() == pytest.approx(cf.switch_array_link(switches, k, cables))


@pytest.mark.parametrize("switches,cables", [(3, 1), (5, 2), (7, 4)])
def test_switch_ring_odd(switches, cables):
    k = 16 - 2 * cables
    assert k % cables == 0, "the D-mod-K closed form needs cables to divide k"
    t = SwitchRing(switches * k, 16, cables)
    b = brute(t)
    assert np.allclose(b["isl.cw"], cf.switch_ring_link(switches, k, cables))


@pytest.mark.parametrize("p,a,h", [(1, 2, 1), (2, 4, 2), (1, 3, 2)])
def test_dragonfly_global(p, a, h):
    t = Dragonfly(p, a, h, a * h + 1)
    assert np.allclose(brute(t)["global"], cf.dragonfly_global(p, a, h))


@pytest.mark.parametrize("radix,over", [(8, 3.0), (8, 1.0), (12, 2.0)])
def test_two_level_oversubscribed_clos(radix, over):
    shapes = FatTree.folded_shapes(radix, over)
    (d, L), (_, u) = shapes[2]
    t = FatTree.folded_clos(d * L, radix, levels=2, oversubscription=over, routing="ecmp")
    b = brute(t)
    assert np.allclose(b["up.1"], cf.two_level_up(d, u, d * L))
    assert (b["up.1"].max() > b["up.0"].max()) == (d > u + 1e-9 and d * (d * L - d) / u > d * L - 1)


@pytest.mark.parametrize("radix,over,d,u", [(64, 2.0, 42, 21), (64, 1.0, 32, 32), (64, 3.0, 48, 16),
                                            (8, 3.0, 6, 2), (7, 1.0, 3, 3)])
def test_oversubscribed_leaf_never_exceeds_the_ratio(radix, over, d, u):
    (m, w) = FatTree.folded_shapes(radix, over)[2]
    assert (m[0], w[1]) == (d, u)
    assert m[0] / w[1] <= over + 1e-12 and m[0] + w[1] <= radix
