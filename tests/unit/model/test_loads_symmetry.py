"""The fast solvers (symmetry, aggregation) against brute-force counting of every flow."""

import pytest

from fabriclab.model.loads import enumerate_alltoall, solve
from fabriclab.model.topologies import (Clos64, Crossbar, Dragonfly, FatTree, NodeModel, SwitchArray,
                                        SwitchRing, Torus)

NM = [NodeModel(), NodeModel(adapter_bus=True, host_bus="half"), NodeModel(host_bus="full")]


def per_class_max(topo, loads):
    return {c.key: float(loads[topo.offsets[i]:topo.offsets[i + 1]].max()) if c.count else 0.0
            for i, c in enumerate(topo.classes)}


def assert_same(topo):
    fast = topo.alltoall_class_loads()
    assert fast is not None
    brute = per_class_max(topo, enumerate_alltoall(topo))
    for key, v in brute.items():
        assert fast.get(key, 0.0) == pytest.approx(v, rel=1e-12, abs=1e-9), (topo.describe(), key)


@pytest.mark.parametrize("dims", [(2,), (7,), (3, 3), (4, 5), (2, 3, 4), (3, 3, 3), (2, 2, 2, 2)])
@pytest.mark.parametrize("bidir", [False, True])
@pytest.mark.parametrize("nm", NM)
def test_torus_symmetry_equals_enumeration(dims, bidir, nm):
    assert_same(Torus(dims, bidir, nm))


@pytest.mark.parametrize("m,w,n", [((4, 4), (1, 4), None), ((4, 4, 4), (1, 4, 4), None), ((4, 4, 4), (1, 4, 4), 37),
                                   ((3, 5), (1, 2), 11), ((6, 4, 3), (1, 3, 2), None), ((6, 4, 3), (1, 3, 2), 50),
                                   ((2, 2, 2, 2), (1, 2, 2, 2), 13)])
@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
def test_fattree_aggregation_equals_enumeration(m, w, n, routing):
    assert_same(FatTree(m, w, n_nodes=n, routing=routing, node_model=NodeModel(host_bus="half")))


@pytest.mark.parametrize("n", [2, 15, 16, 17, 31, 45, 60])
@pytest.mark.parametrize("cables", [1, 2, 3])
@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
@pytest.mark.parametrize("placement", ["fill", "balanced"])
def test_switch_array_aggregation_equals_enumeration(n, cables, routing, placement):
    assert_same(SwitchArray(n, 16, cables, routing, NodeModel(), placement))


@pytest.mark.parametrize("n", [3, 16, 17, 24, 25, 33, 40, 57, 70, 96])
@pytest.mark.parametrize("cables", [1, 2, 4])
@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
def test_switch_ring_aggregation_equals_enumeration(n, cables, routing):
    assert_same(SwitchRing(n, 16, cables, routing))


@pytest.mark.parametrize("shape", [(2, 4, 2, 5, None), (2, 4, 2, 9, None), (3, 4, 2, 5, 41), (1, 3, 2, 7, 20),
                                   (2, 4, 2, 3, None)])
@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
def test_dragonfly_aggregation_equals_enumeration(shape, routing):
    p, a, h, g, n = shape
    assert_same(Dragonfly(p, a, h, g, n_nodes=n, routing=routing, node_model=NodeModel(host_bus="full")))


def test_crossbar_loads():
    assert_same(Crossbar(12, 16, NodeModel(host_bus="half")))


@pytest.mark.parametrize("n", [20, 64, 65, 80, 128])
def test_clos64_full_bandwidth_with_dmodk(n):
    # every Clos64 configuration keeps full link bandwidth: the node links decide
    t = Clos64(n)
    loads = per_class_max(t, enumerate_alltoall(t))
    assert max(loads.values()) == pytest.approx(n - 1)


def test_solver_methods_agree_and_report_bottleneck():
    from fabriclab.model.catalog import system
    t = Torus((5, 5), False, NodeModel(adapter_bus=True))
    s = system("sci-2d")
    r1 = solve(t, s.rates(t))
    r2 = solve(t, s.rates(t), method="enumerate")
    assert r1.per_node == pytest.approx(r2.per_node)
    assert r1.bottleneck.key == r2.bottleneck.key
    assert r2.bottleneck.instance is not None
    assert r1.method == "symmetry" and r2.method == "enumeration"
