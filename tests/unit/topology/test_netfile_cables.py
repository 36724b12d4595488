"""A network file's cable facts (ports, guids, degraded, source): read, checked in one
line, kept for listing; parallel cables as separate links routed exactly as `count`."""

import numpy as np
import pytest

from fabriclab.errors import UsageError
from fabriclab.model.loads import solve
from fabriclab.model.resources import MB
from fabriclab.model.topologies import CustomNetwork


PER_LEAF = (3, 5, 6)                 # hosts on leaf0..2: uneven, so D-mod-K's spread depends on order
CABLES = 3                           # from each leaf to each spine


def leaf_spine(separate: bool, routing: str = "d-mod-k") -> dict:
    """2 spines, 3 leaves, 3 cables from each leaf to each spine: as `count: 3` or as
    separate named links interleaved across spines (spine0, spine1, spine0, ...), so that
    file order differs from count's."""
    hosts = [f"h{i}" for i in range(sum(PER_LEAF))]
    leaf_of = [leaf for leaf, n in enumerate(PER_LEAF) for _ in range(n)]
    links = [{"a": h, "b": f"leaf{leaf_of[i]}", "rate_MBps": 100} for i, h in enumerate(hosts)]
    for leaf in range(3):
        if not separate:
            links += [{"a": f"leaf{leaf}", "b": f"spine{s}", "count": CABLES, "rate_MBps": 100} for s in range(2)]
            continue
        for k in range(CABLES):
            for s in range(2):
                pa, pb = 10 + CABLES * s + k, 1 + CABLES * leaf + k
                links.append({"a": f"leaf{leaf}", "b": f"spine{s}", "rate_MBps": 100, "ports": [pa, pb],
                              "name": f"leaf{leaf} [{pa}] -- spine{s} [{pb}]"})
    return {"name": "ls", "nodes": hosts, "switches": ["leaf0", "leaf1", "leaf2", "spine0", "spine1"],
            "routing": routing, "links": links}


FIRST = sum(PER_LEAF)                # the index of leaf0's first cable to a spine


def per_cable_loads(net: CustomNetwork) -> dict:
    """(link endpoints, cable order among that pair, direction) -> all-to-all load, from the
    channel -> cable map, independent of how the file groups the cables."""
    loads, _ = net.alltoall_resource_loads()
    names = net.node_names + net.switch_names
    out, seen = {}, {}
    for ch, (i, c) in enumerate(net.channel_cable):
        a, b = names[int(net.router.src[ch])], names[int(net.router.dst[ch])]
        k = seen.setdefault((a, b), {}).setdefault((i, c), len(seen[(a, b)]))
        out[(a, b, k)] = float(loads[int(net.router.res[ch])])
    return out


@pytest.mark.parametrize("routing", ["d-mod-k", "ecmp"])
@pytest.mark.parametrize("by_switch", [True, False])
def test_separate_parallel_links_route_exactly_as_count(routing, by_switch):
    counted = CustomNetwork.from_dict(leaf_spine(False, routing), by_switch=by_switch)
    separate = CustomNetwork.from_dict(leaf_spine(True, routing), by_switch=by_switch)
    assert counted.cables == separate.cables == FIRST + 3 * 2 * CABLES
    lc, ls = per_cable_loads(counted), per_cable_loads(separate)
    assert lc == ls and max(lc.values()) > 0
    rc, rs = solve(counted, None), solve(separate, None)
    assert rs.per_node == pytest.approx(rc.per_node, rel=1e-12)


def test_separate_entries_in_file_order_would_predict_otherwise(monkeypatch):
    """The check above can fail: D-mod-K over the uplinks in raw file order (spine0, spine1,
    spine0, ...) spreads the destinations otherwise, and here predicts 59 MB/s, not 39."""
    from fabriclab.model.topologies import custom
    counted = solve(CustomNetwork.from_dict(leaf_spine(False)), None).per_node
    net = CustomNetwork.from_dict(leaf_spine(True))
    order = [i for i, _ in net.channel_cable[::2]]
    assert order[FIRST:FIRST + 6] == [FIRST + k for k in (0, 2, 4, 1, 3, 5)]   # leaf0's to spine0 first
    monkeypatch.setattr(custom, "_pair_order", lambda ends, n: np.arange(len(ends)))
    raw = solve(CustomNetwork.from_dict(leaf_spine(True)), None).per_node
    assert counted / MB == pytest.approx(39.39, abs=0.01) and raw / MB == pytest.approx(59.09, abs=0.01)


def test_bottleneck_names_the_cable():
    d = leaf_spine(True)
    d["links"][FIRST]["rate_MBps"] = 1.0                   # leaf0 [10] -- spine0 [1]: one slow cable
    d["links"][FIRST]["degraded"] = "1X SDR, both ends 4X EDR"
    r = solve(CustomNetwork.from_dict(d), None)
    assert "leaf0 [10] -- spine0 [1]" in r.bottleneck.instance


def test_facts_are_kept_and_listed():
    d = leaf_spine(True)
    d["links"][0]["guids"] = ["0x0002c903000e0b72", None]
    d["links"][0]["ports"] = [1, 7]
    d["links"][FIRST + 1]["degraded"] = "4X SDR"
    d["source"] = {"format": "ibnetdiscover", "read": "fabric.txt", "given": {"hosts": "map.txt", "rates": [1, 2.5]}}
    net = CustomNetwork.from_dict(d)
    cables = net.cable_facts()
    assert len(cables) == len(d["links"])
    c0 = cables[0]
    assert c0["ends"] == ("h0", "leaf0") and c0["ports"] == (1, 7) and c0["guids"] == ("0x0002c903000e0b72", None)
    assert c0["rate_MBps"] == 100 and c0["count"] == 1 and c0["degraded"] is None
    assert [c["name"] for c in net.degraded_cables()] == ["leaf0 [13] -- spine1 [1]"] == [d["links"][FIRST + 1]["name"]]
    assert net.source == {"format": "ibnetdiscover", "read": "fabric.txt",
                          "given": {"hosts": "map.txt", "rates": [1, 2.5]}}
    assert CustomNetwork.from_dict(leaf_spine(False)).source is None
    d["source"] = {"format": "slurm", "read": "topology.conf", "plugin": "topology/tree", "block_sizes": [16, 32]}
    assert CustomNetwork.from_dict(d).source["block_sizes"] == [16, 32]


def test_guids_are_kept_lower_case_and_null_ends_allowed():
    d = leaf_spine(False)
    d["links"][0].update(guids=["0xABC", "0x1"], ports=[None, 3])
    c = CustomNetwork.from_dict(d).cable_facts()[0]
    assert c["guids"] == ("0xabc", "0x1") and c["ports"] == (None, 3)


BAD = [
    ({"ports": [0, 1]}, "links[0]: ports[0] must be a port number from 1 to 255 or null, got 0"),
    ({"ports": [1, 256]}, "ports[1] must be a port number from 1 to 255"),
    ({"ports": [True, 1]}, "ports[0] must be a port number"),
    ({"ports": [1.0, 1]}, "ports[0] must be a port number"),
    ({"ports": [1]}, "ports must be [A, B], each a port 1-255 or null, got a list of 1 entry"),
    ({"ports": "1,2"}, "ports must be [A, B]"),
    ({"guids": ["0x", None]}, "guids[0] must be a GUID, '0x' and 1 to 16 hex digits, or null, got '0x'"),
    ({"guids": [None, "0x12345678901234567"]}, "guids[1] must be a GUID"),
    ({"guids": [None, "0xfg"]}, "guids[1] must be a GUID"),
    ({"guids": [None, 12]}, "guids[1] must be a GUID"),
    ({"guids": [None, "0x1\n"]}, "guids[1] must be a GUID"),
    ({"degraded": ""}, "degraded '' is empty or holds a character that does not print"),
    ({"degraded": "slow\x1b[2J"}, "degraded 'slow\\x1b[2J' is empty or holds"),
    ({"degraded": 3}, "degraded must be text, got 3"),
    ({"degraded": "x" * 201}, "is longer than 200 characters"),
    ({"port": [1, 2]}, "unknown key 'port'"),
]


@pytest.mark.parametrize("extra,msg", BAD)
def test_bad_cable_facts_give_one_line(extra, msg):
    d = leaf_spine(False)
    d["links"][0].update(extra)
    with pytest.raises(UsageError) as e:
        CustomNetwork.from_dict(d, where="net.yaml")
    text = str(e.value)
    assert msg in text and "\n" not in text and text.startswith("net.yaml: links[")


def test_ports_on_a_counted_link_and_a_port_taken_twice():
    d = leaf_spine(False)
    d["links"][FIRST]["ports"] = [1, 2]
    with pytest.raises(UsageError, match=r"links\[14\]: ports name one cable's ends; give each of the 3"):
        CustomNetwork.from_dict(d)
    d = leaf_spine(True)
    d["links"][FIRST + 1]["ports"] = [10, 99]
    with pytest.raises(UsageError, match=r"links\[15\]: port 10 of 'leaf0' carries links\[14\] already"):
        CustomNetwork.from_dict(d)
    d["links"][FIRST]["guids"] = d["links"][FIRST + 1]["guids"] = ["0xa", None]
    with pytest.raises(UsageError, match=r"links\[15\]: port 10 of 'leaf0' \(0xa\) carries links\[14\] already"):
        CustomNetwork.from_dict(d)


def test_a_host_s_two_adapters_each_have_a_port_1():
    """Told apart by their port GUIDs, as ibnetdiscover prints them."""
    d = leaf_spine(True)
    d["links"].append({"a": "h0", "b": "leaf1", "rate_MBps": 100, "ports": [1, 40], "guids": ["0x11", None]})
    d["links"][0].update(ports=[1, 30], guids=["0x10", None])
    net = CustomNetwork.from_dict(d)
    assert [c["ports"] for c in net.cable_facts() if "h0" in c["ends"]] == [(1, 30), (1, 40)]
    d["links"][-1]["guids"] = ["0x10", None]
    with pytest.raises(UsageError, match=r"port 1 of 'h0' \(0x10\) carries links\[0\] already"):
        CustomNetwork.from_dict(d)


BAD_SOURCE = [
    ("ibnetdiscover", "source must be a mapping of format, read and given, got 'ibnetdiscover'"),
    ({"read": "x"}, "source: 'format' is required (ibnetdiscover or slurm or file)"),
    ({"format": "lldp"}, "source: format must be 'ibnetdiscover' or 'slurm' or 'file', got 'lldp'"),
    ({"format": "file", "read": "a\tb"}, "source: read 'a\\tb' is empty or holds"),
    ({"format": "file", "read": ["x"]}, "source: read must be text, got a list of 1 entry"),
    ({"format": "file", "when": [[1]]}, "source: when[0] must be null, true, false, a number or text"),
    ({"format": "file", 3: 1}, "source: key must be text, got 3"),
    ({"format": "file", "given": [1]}, "source: given must be a mapping of option to value"),
    ({"format": "file", "given": {"rate": float("inf")}}, "given: rate must be a finite number"),
    ({"format": "file", "given": {"rate": {"a": 1}}}, "given: rate must be null, true, false, a number or text"),
    ({"format": "file", "given": {"rate": list(range(65))}}, "given: rate: at most 64 values, got 65"),
    ({"format": "file", "given": {f"k{i}": 1 for i in range(33)}}, "given: at most 32 entries, got 33"),
    ({"format": "file", "given": {"\x07": 1}}, "given: key '\\x07' is empty or holds"),
]


@pytest.mark.parametrize("src,msg", BAD_SOURCE)
def test_bad_source_gives_one_line(src, msg):
    d = leaf_spine(False)
    d["source"] = src
    with pytest.raises(UsageError) as e:
        CustomNetwork.from_dict(d, where="net.yaml")
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_channel_cable_covers_every_cable_once_each_way():
    net = CustomNetwork.from_dict(leaf_spine(True))
    cc = net.channel_cable
    assert len(cc) == 2 * net.cables and sorted(set(cc)) == sorted((i, 0) for i in range(len(net.link_names)))
    # each cable's two channels join the same two vertices, one each way
    src, dst = np.asarray(net.router.src), np.asarray(net.router.dst)
    for ch in range(0, len(cc), 2):
        assert (src[ch], dst[ch]) == (dst[ch + 1], src[ch + 1]) and cc[ch] == cc[ch + 1]
