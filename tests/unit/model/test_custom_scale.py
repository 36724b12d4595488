"""Networks from files at scale: every pair checked by name, bounded sizes, and
routes aggregated per attachment switch giving exactly the per-flow loads."""

import time

import numpy as np
import pytest

from fabriclab.errors import UsageError
from fabriclab.model.choices import PATTERNS
from fabriclab.model.loads import enumerate_alltoall, enumerate_loads, solve
from fabriclab.model.routing import GraphRouter, unreachable_pair
from fabriclab.model.topologies import CustomNetwork, NodeModel
from fabriclab.model.traffic import Traffic


def leaf_spine(hosts, per_leaf, spines, routing, place=None, uplinks=None, trunk=None):
    """Leaves of `per_leaf` hosts (host i on leaf place(i)), each joined to every spine."""
    leaves = -(-hosts // per_leaf)
    place = place or (lambda i: i // per_leaf)
    links = [{"a": f"h{i}", "b": f"leaf{place(i)}", "count": uplinks(i) if uplinks else 1} for i in range(hosts)]
    links += [{"a": f"leaf{l}", "b": f"spine{s}", "count": trunk(l, s) if trunk else 1,
               "rate_MBps": 100 + 10 * ((l + s) % 3)} for l in range(leaves) for s in range(spines)]
    return {"nodes": [f"h{i}" for i in range(hosts)],
            "switches": [f"leaf{l}" for l in range(leaves)] + [f"spine{s}" for s in range(spines)],
            "routing": routing, "default_rate_MBps": 100, "links": links}


def switch_ring(routing):
    """Five switches in a ring (routes of 1 and 2 switch hops, ties both ways for ECMP), 2-3 hosts each,
    hosts interleaved over the switches so that D-mod-K keys differ along every route."""
    hosts = 13
    links = [{"a": f"h{i}", "b": f"s{(3 * i) % 5}", "count": 1 + (i % 4 == 0)} for i in range(hosts)]
    links += [{"a": f"s{k}", "b": f"s{(k + 1) % 5}", "count": 1 + k % 2, "name": f"ring{k}"} for k in range(5)]
    links.append({"a": "s0", "b": "s2", "duplex": "half", "rate_MBps": 50})
    return {"nodes": [f"h{i}" for i in range(hosts)], "switches": 5, "routing": routing, "default_rate_MBps": 100,
            "links": links}


def networks(routing):
    return {
        "leaf-spine": leaf_spine(22, 4, 3, routing, place=lambda i: (i * 7) % 6, uplinks=lambda i: 1 + (i % 5 == 1),
                                 trunk=lambda l, s: 1 + (l + s) % 2),
        "ring of switches": switch_ring(routing),
    }


def _compare(data, node_model=NodeModel()):
    fast = CustomNetwork.from_dict(data, node_model=node_model)
    ref = CustomNetwork.from_dict(data, node_model=node_model, by_switch=False)
    return fast, ref


@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
@pytest.mark.parametrize("name", ["leaf-spine", "ring of switches"])
def test_aggregated_equals_per_flow_for_every_pattern(routing, name):
    data = networks(routing)[name]
    fast, ref = _compare(data)
    assert fast.fast is not None and ref.fast is None
    for pattern in PATTERNS:
        tr = Traffic(pattern, target=3, seed=5)
        if pattern == "all-to-all":
            agg, used = fast.alltoall_resource_loads()
            per_flow = enumerate_alltoall(ref)
            assert used == "aggregation"
        else:
            src, dst = tr.flows(fast)
            agg, per_flow = enumerate_loads(fast, src, dst), enumerate_loads(ref, src, dst)
        np.testing.assert_allclose(agg, per_flow, rtol=1e-12, atol=1e-12, err_msg=pattern)
        a, b = solve(fast, None, tr), solve(ref, None, tr, method="enumerate")
        assert a.per_node == pytest.approx(b.per_node, rel=1e-12)
        assert a.bottleneck.instance == b.bottleneck.instance, pattern


@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
def test_per_destination_aggregation_for_other_networks(routing):
    """A host on two switches, a host-to-host link, or forwarding hosts: routed per destination
    host, sources with the same neighbours aggregated; equal to every flow counted."""
    base = leaf_spine(14, 4, 2, routing, place=lambda i: (i * 3) % 4)
    dual = dict(base, links=base["links"] + [{"a": "h0", "b": "leaf2", "count": 2}, ["h5", "h6"]])
    transit = dict(base, transit_nodes=True, links=base["links"] + [["h1", "h2"], ["h2", "spine1"]])
    for data in (dual, transit):
        net = CustomNetwork.from_dict(data, node_model=NodeModel(adapter_bus=True, host_bus="full"))
        assert net.fast is None
        agg, used = net.alltoall_resource_loads()
        assert used == "aggregation per destination"
        np.testing.assert_allclose(agg, enumerate_alltoall(net), rtol=1e-12, atol=1e-12)


def test_d_mod_k_key_is_the_destination_index():
    """D-mod-K sends destination d up spine d mod 2: the route depends on the destination host,
    not only on its leaf, which is why its flows are aggregated per destination host."""
    data = leaf_spine(8, 4, 2, "d-mod-k", place=lambda i: 0 if i < 4 else 1)
    net = CustomNetwork.from_dict(data)
    loads, _ = net.alltoall_resource_loads()
    up = [net.offsets[net._class_index[f"links[{8 + s}].ab"]] for s in range(2)]   # leaf0 -> spine s
    assert loads[up[0]] == loads[up[1]] == 8        # 4 sources × the 2 remote destinations of each parity
    p = net.paths(np.array([0, 0]), np.array([5, 7]))
    assert p.path(0)[1][0] == p.path(1)[1][0] == up[1]


def test_large_leaf_spine_builds_one_table_per_leaf():
    data = leaf_spine(1024, 32, 8, "d-mod-k")
    t0 = time.perf_counter()
    net = CustomNetwork.from_dict(data)
    r = solve(net, None)
    assert time.perf_counter() - t0 < 20                  # per flow this took minutes
    assert r.method == "aggregation" and len(net.fast._tables) == 32
    # 32 hosts per leaf, 8 uplinks of 100-120 MB/s: the leaf's uplinks are the bottleneck
    assert r.bottleneck.kind == "link" and "leaf" in r.bottleneck.instance and "spine" in r.bottleneck.instance


# ---------------------------------------------------------------- connectivity, by name
def test_every_pair_is_checked_and_named():
    """67 nodes: n65 and n66 have their own switches, joined to each other but not to the rest.
    Only the first 65 destinations used to be checked."""
    links = [[f"n{i}", "s0"] for i in range(65)] + [["n65", "s1"], ["n66", "s2"], ["s1", "s2"]]
    with pytest.raises(UsageError) as e:
        CustomNetwork.from_dict({"nodes": 67, "switches": 3, "default_rate_MBps": 1, "links": links},
                                where="net.yaml")
    assert str(e.value) == "net.yaml: node 'n0' cannot reach node 'n65'"


def test_unreachable_pair_cases():
    # no forwarding: nodes 0, 1 on switch 3; node 2 on switch 4; switches unconnected
    assert unreachable_pair(5, 3, [0, 1, 2], [3, 3, 4], False) == (0, 2)
    # a direct node-to-node link joins node 2 to node 0 but not to node 1
    assert unreachable_pair(5, 3, [0, 1, 2, 0], [3, 3, 4, 2], False) == (1, 2)
    # node 2 on both switches reaches all; 0 and 1 share switch 3
    assert unreachable_pair(5, 3, [0, 1, 2, 2], [3, 3, 4, 3], False) is None
    # forwarding nodes: a chain 0-1-2 is connected, a lone node 3 is not
    assert unreachable_pair(4, 4, [0, 1], [1, 2], True) == (0, 3)


def test_router_names_nodes_in_errors():
    g = GraphRouter(3, 3, [0, 1], [1, 0], [0, 1], names=["alpha", "beta", "gamma"])
    with pytest.raises(UsageError, match="no route from node 'alpha' to node 'gamma'"):
        g.paths(np.array([0]), np.array([2]))


@pytest.mark.parametrize("pattern", ["all-to-all", "permutation"])
def test_cli_refuses_a_disconnected_file_for_every_pattern(tmp_path, capsys, pattern):
    import yaml
    from fabriclab.cli.main import main
    links = [[f"n{i}", "s0"] for i in range(65)] + [["n65", "s1"], ["n66", "s2"], ["s1", "s2"]]
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump({"nodes": 67, "switches": 3, "default_rate_MBps": 1, "links": links}))
    assert main(["model", "--topology-file", str(f), "-T", pattern, "--no-plot"]) == 2
    assert "node 'n0' cannot reach node 'n65'" in capsys.readouterr().err


# ---------------------------------------------------------------- bounded sizes
@pytest.mark.parametrize("data,msg", [
    ({"nodes": 100_000_000, "links": [["n0", "n1"]]}, "at most 100,000 nodes, got 100,000,000"),
    ({"nodes": 2, "switches": 10 ** 9, "links": [["n0", "n1"]]}, "at most 100,000 switches"),
    ({"nodes": 2, "switches": 1, "links": [["n0", "s0"], {"a": "n1", "b": "s0", "count": 10 ** 9}]},
     "more than 500,000 cables"),
    ({"nodes": 2, "switches": 1, "links": [{"a": "n0", "b": "s0", "count": 300_000},
                                             {"a": "n1", "b": "s0", "count": 300_000}]},
     "links[1]: more than 500,000 cables"),
])
def test_sizes_beyond_the_limits_are_refused_at_once(data, msg):
    data = {"default_rate_MBps": 1, **data}
    t0 = time.perf_counter()
    with pytest.raises(UsageError) as e:
        CustomNetwork.from_dict(data, where="net.yaml")
    assert msg in str(e.value) and "\n" not in str(e.value)
    assert time.perf_counter() - t0 < 2


@pytest.mark.bounds
def test_per_destination_routing_has_a_budget():
    """Without the per-switch decomposition a table per destination node is needed: refused
    up front when their size exceeds the budget, naming the way out."""
    data = leaf_spine(10_000, 40, 16, "ecmp")
    data["links"].append(["h0", "leaf1"])                 # h0 on two leaves
    net = CustomNetwork.from_dict(data)
    t0 = time.perf_counter()
    with pytest.raises(UsageError, match="exceed the model's budget .* attach each node to one switch"):
        solve(net, None)
    assert time.perf_counter() - t0 < 1
