"""Networks read from files: the format, routing, and one-line errors."""

import json

import pytest
import yaml

from fabriclab.errors import UsageError
from fabriclab.model.loads import enumerate_alltoall, solve
from fabriclab.model.resources import MB
from fabriclab.model.topologies import CustomNetwork, FatTree, SwitchRing, load_network_file


def two_switches(cables=1):
    links = [[f"n{i}", "s0"] for i in range(4)] + [[f"n{i}", "s1"] for i in range(4, 8)]
    links.append({"a": "s0", "b": "s1", "count": cables, "rate_MBps": 160})
    return {"nodes": 8, "switches": 2, "default_rate_MBps": 160, "links": links}


def test_yaml_and_json_files(tmp_path):
    for suffix, dump in ((".yaml", yaml.safe_dump), (".json", json.dumps)):
        f = tmp_path / f"net{suffix}"
        f.write_text(dump(two_switches()))
        t = load_network_file(str(f))
        r = solve(t, None)
        # the single cable carries 4 × 4 messages each way: 7/16 × 160
        assert r.per_node / MB == pytest.approx(7 / 16 * 160)
        assert "s0" in r.bottleneck.label


def test_parallel_cables_and_efficiency():
    d = two_switches(cables=2)
    d["links"][-1]["efficiency"] = 0.5
    t = CustomNetwork.from_dict(d)
    r = solve(t, None)
    assert r.per_node / MB == pytest.approx(7 / 8 * 80)


def _graph_of_ring(S, per, cables):
    nodes = [f"n{i}" for i in range(S * per)]
    links = [[nodes[i], f"s{i // per}"] for i in range(S * per)]
    links += [{"a": f"s{i}", "b": f"s{(i + 1) % S}", "count": cables, "name": "isl"} for i in range(S)]
    return {"nodes": nodes, "switches": S, "routing": "ecmp", "default_rate_MBps": 100, "links": links}


@pytest.mark.parametrize("S,cables", [(3, 2), (4, 2), (6, 1)])
def test_file_router_matches_structured_ring_with_ecmp(S, cables):
    per = 16 - 2 * cables
    custom = CustomNetwork.from_dict(_graph_of_ring(S, per, cables))
    ring = SwitchRing(S * per, 16, cables, "ecmp")
    lc = enumerate_alltoall(custom)
    lr = ring.alltoall_class_loads()
    isl = [i for i, c in enumerate(custom.classes) if c.label.startswith("link isl")]
    assert len(isl) == 2 * S
    inter = max(lc[custom.offsets[i]:custom.offsets[i + 1]].max() for i in isl)
    assert inter == pytest.approx(max(lr["isl.cw"], lr["isl.ccw"]))
    node = max(lc[custom.offsets[i]:custom.offsets[i + 1]].max() for i in range(len(custom.classes)) if i not in isl)
    assert node == pytest.approx(lr["inject"])


def _export_fat_tree(t, routing):
    """The fat tree t as a file: node i on leaf (i // m1, lane 0); level-i elements (t, lane)."""
    n = t.n_nodes
    nodes = [f"n{i}" for i in range(n)]
    sw = {}
    links = []
    for lv in range(1, t.h + 1):
        for e in range(t.E[lv]):
            sw[(lv, e)] = f"L{lv}_{e}"
    for i in range(n):
        links.append([nodes[i], sw[(1, i // t.m[0])]])
    for lv in range(1, t.h):
        W, w, m = int(t.W[lv]), t.w[lv], t.m[lv]
        for e in range(t.E[lv]):
            top, lane = divmod(e, W)
            for p in range(w):
                parent = (top // m) * int(t.W[lv + 1]) + lane + W * p
                links.append([sw[(lv, e)], sw[(lv + 1, parent)]])
    d = {"nodes": nodes, "switches": list(sw.values()), "routing": routing, "default_rate_MBps": 1,
         "links": links}
    return CustomNetwork.from_dict(d)


def test_file_router_matches_fat_tree_with_ecmp():
    t = FatTree.kary_ntree(2, 3, routing="ecmp")
    c = _export_fat_tree(t, "ecmp")
    assert solve(c, None).per_node == pytest.approx(1e6)   # full bisection: the node link decides
    loads = enumerate_alltoall(c)
    assert loads.max() == pytest.approx(7)


@pytest.mark.parametrize("k", [2, 4])
def test_file_router_matches_fat_tree_with_d_mod_k(k):
    t = FatTree.kary_ntree(k, 3, routing="d-mod-k")
    c = _export_fat_tree(t, "d-mod-k")
    lt, lc = enumerate_alltoall(t), enumerate_alltoall(c)
    # the same multiset of link loads: every lane of the top level is used as in the built-in tree
    assert sorted(lt.tolist()) == pytest.approx(sorted(lc.tolist()))
    assert solve(c, None).per_node == pytest.approx(1e6)


BAD = [
    ({"nodes": 2}, "'nodes' and 'links' are required"),
    ({"nodes": 1, "links": [["n0", "n0"]]}, "at least 2 nodes"),
    ({"nodes": 2, "links": [["n0", "x"]], "default_rate_MBps": 1}, "unknown endpoint 'x'"),
    ({"nodes": 2, "links": [["n0", "n0"]], "default_rate_MBps": 1}, "two different endpoints"),
    ({"nodes": 2, "links": [["n0", "n1"]]}, "no rate_MBps"),
    ({"nodes": 2, "links": [{"a": "n0", "b": "n1", "rate_MBps": -5}]}, "rate_MBps must be greater than 0"),
    ({"nodes": 2, "links": [{"a": "n0", "b": "n1", "rate_MBps": 5, "count": 0}]}, "count must be a positive"),
    ({"nodes": 2, "links": [{"a": "n0", "b": "n1", "rate_MBps": 5, "colour": 1}]}, "unknown key 'colour'"),
    ({"nodes": 3, "links": [["n0", "n1"]], "default_rate_MBps": 1}, "cannot reach"),
    ({"nodes": ["a", "a"], "links": [["a", "a"]]}, "twice"),
    ({"nodes": 2, "links": [["n0", "n1"]], "default_rate_MBps": 1, "routing": "random"}, "routing must be"),
    ({"nodes": 2, "links": [], "default_rate_MBps": 1}, "non-empty list"),
    ({"nodes": 2, "switches": ["n0"], "links": [["n0", "n1"]], "default_rate_MBps": 1}, "node and a switch"),
    ({"nodes": 2, "link": []}, "unknown key 'link'"),
    ([1, 2], "top level must be a mapping"),
    ({"nodes": 2, "links": [{"a": "n0", "b": "n1", "rate_MBps": 5, "payload_B": 64}]}, "needs both payload_B"),
    ({"nodes": 2, "links": [{"a": "n0", "b": "n1", "rate_MBps": 5, "payload_B": 64, "overhead_B": 8,
                             "efficiency": 0.5}]}, "not both"),
    ({"nodes": 2, "packet": {"payload": 4}, "links": [["n0", "n1"]], "default_rate_MBps": 1}, "'packet' must be"),
    ({"nodes": 2, "prices": {"router": "x"}, "links": [["n0", "n1"]], "default_rate_MBps": 1}, "unknown part"),
    ({"nodes": 2, "prices": {"cable": 5}, "links": [["n0", "n1"]], "default_rate_MBps": 1}, "price item name"),
]


@pytest.mark.parametrize("data,msg", BAD)
def test_bad_files_give_one_clear_line(data, msg):
    with pytest.raises(UsageError) as e:
        CustomNetwork.from_dict(data, where="net.yaml")
    text = str(e.value)
    assert msg in text and "\n" not in text and text.startswith("net.yaml")


def test_unreadable_and_malformed(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        load_network_file(str(tmp_path / "missing.yaml"))
    f = tmp_path / "x.yaml"
    f.write_text("nodes: [a, b\nlinks: :")
    with pytest.raises(UsageError, match="not valid YAML") as e:
        load_network_file(str(f))
    assert "\n" not in str(e.value)
    g = tmp_path / "x.json"
    g.write_text("{nodes: 2}")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_network_file(str(g))


def test_transit_nodes_make_a_ring_of_hosts():
    d = {"nodes": 4, "transit_nodes": True, "default_rate_MBps": 1,
         "links": [["n0", "n1"], ["n1", "n2"], ["n2", "n3"], ["n3", "n0"]]}
    t = CustomNetwork.from_dict(d)
    loads = enumerate_alltoall(t)
    # 8 one-hop and 4 two-hop messages: 16 link crossings over 8 link directions; D-mod-K sends
    # both messages of a distance-2 pair with the same destination residue the same way
    assert loads.sum() == pytest.approx(16)
    assert sorted(loads.tolist()) == [1, 1, 2, 2, 2, 2, 3, 3]
    # without transit the same ring of hosts is disconnected for non-neighbours
    d["transit_nodes"] = False
    with pytest.raises(UsageError, match="cannot reach"):
        CustomNetwork.from_dict(d)


def test_payload_changes_packet_formats_not_fixed_efficiencies():
    from fabriclab.model.resources import Rates
    d = {"nodes": 2, "packet": {"payload_B": 1000, "overhead_B": 24, "max_payload_B": 256},
         "links": [{"a": "n0", "b": "n1", "rate_MBps": 100},
                   {"a": "n0", "b": "n1", "rate_MBps": 100, "efficiency": 0.5, "name": "fixed"}]}
    t = CustomNetwork.from_dict(d)
    rate = lambda payload: [c.own.effective(0, payload) / MB for c in t.classes]
    assert rate(None) == pytest.approx([100 * 256 / 280] * 2 + [50, 50])     # 1000 B travel as 256-byte packets
    assert rate(64) == pytest.approx([100 * 64 / 88] * 2 + [50, 50])
    # D-mod-K sends n0 -> n1 (d = 1) over the second of the two parallel links, the fixed one
    r = solve(t, Rates({}, 0, 64))
    assert r.per_node == pytest.approx(50e6) and r.bottleneck.instance == "link fixed (n0→n1)"
