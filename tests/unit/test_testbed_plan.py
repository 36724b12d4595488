"""The testbed's plan (no root needed): namespaces, cables, addresses, and
routes that make every packet take the model's path; validation's reasoning."""
import re
from pathlib import Path

import pytest
import yaml

import docs  # noqa: E402  (tests/support)
from fabriclab.errors import UsageError
from fabriclab.measure.runner import Watch
from fabriclab.model.topologies.custom import CustomNetwork, load_network_file
from fabriclab.model import validate
from fabriclab.testbed import netns, wiring as tplan

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "testbeds").glob("*.yaml"))


def test_examples_are_shipped():
    assert {p.stem for p in EXAMPLES} >= {"two-switches", "linear-array", "ring", "fat-tree"}


def _lookup(lines: list[str], dst: str, table: int | None) -> list[tuple[str | None, str]]:
    """(via, dev) next hops of the route to dst in a table, from plan route lines."""
    for ln in lines:
        t = re.search(r"table (\d+)", ln)
        if ln.split()[0] == f"{dst}/32" and (int(t.group(1)) if t else None) == table:
            return re.findall(r"(?:via (\S+) )?dev (\S+)", ln)
    raise AssertionError(f"no route to {dst} in table {table}")


def _forward(p: tplan.Plan, s: str, d: str) -> list[str]:
    """The vertices a packet from host s to host d visits, by the plan's own routes and rules."""
    addr = p.addresses
    path, v = [s], s
    while v != d:
        table = None if v in p.hosts else next(int(r.split()[3]) for r in p.rules[v] if r.split()[1] == f"{addr[s]}/32")
        (via, dev), = _lookup(p.routes[v], addr[d], table)
        cab = next(c for c in p.cables if (c.a == v and c.a_if == dev) or (c.b == v and c.b_if == dev))
        nxt = cab.b if cab.a == v else cab.a
        if via:  # the next hop owns the address it is sent to
            owned = {c.end(nxt)[1].split("/")[0] for c in p.cables if nxt in (c.a, c.b) and c.end(nxt)[1]}
            assert via in owned, (v, via, nxt)
        path.append(nxt)
        v = nxt
        assert len(path) < 20
    return path


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_plan_follows_the_models_routes(path):
    net = load_network_file(str(path))
    p = tplan.make(net, "t", source=str(path))
    names = list(net.node_names) + list(net.switch_names)
    assert len(p.cables) == net.cables
    for c in p.cables:
        assert len(c.a_if) <= 15 and len(c.b_if) <= 15
    assert all(len(set(p.interfaces(v))) == len(p.interfaces(v)) for v in names)
    for s in range(net.n_nodes):
        for d in range(net.n_nodes):
            if s != d:
                model = [names[int(net.router.src[c])] for c in net.router.route(s, d)] + [names[d]]
                assert _forward(p, names[s], names[d]) == model


def test_route_is_the_solvers_path():
    """route() picks the same channels as the solver's paths() under D-mod-K."""
    net = load_network_file(str(next(p for p in EXAMPLES if p.stem == "ring")))
    for s in range(net.n_nodes):
        for d in range(net.n_nodes):
            if s != d:
                chans = net.router.route(s, d)
                cols = net.router.paths([s], [d])
                assert sorted(int(r) for _, res, _ in cols for r in res) == sorted(int(net.router.res[c]) for c in chans)


def test_ecmp_gets_multipath_routes():
    net = CustomNetwork.from_dict({"nodes": ["a", "b"], "switches": ["x", "y", "z"], "routing": "ecmp",
                                   "default_rate_MBps": 10,
                                   "links": [["a", "x"], ["b", "z"], ["x", "y"], ["y", "z"],
                                             {"a": "x", "b": "z", "count": 1}]}, where="t")
    p = tplan.make(net, "e")
    assert any("nexthop" not in r for r in p.routes["x"])
    one = tplan.make(CustomNetwork.from_dict({"nodes": ["a", "b"], "switches": ["x", "z"], "routing": "ecmp",
                                              "default_rate_MBps": 10,
                                              "links": [["a", "x"], ["b", "z"], {"a": "x", "b": "z", "count": 2}]},
                                             where="t"), "e")
    assert any(r.count("nexthop") == 2 for r in one.routes["x"])


def test_agent_maps_names_and_addresses():
    net = load_network_file(str(EXAMPLES[0]))
    p = tplan.make(net, "ag")
    text = netns.agent_script(p)
    for h, ip in p.addresses.items():
        assert f"  {h}|{ip}) ns={p.namespace(h)}; name={h};;" in text
    assert "unknown host" in text


@pytest.mark.parametrize("change,msg", [
    (lambda d: d.update(transit_nodes=True), "forward"),
    (lambda d: d["links"].append(["h0", "h1"]), "joins two hosts"),
    (lambda d: d["links"][-1].update(duplex="half"), "half-duplex"),
    (lambda d: d.update(nodes=["h_0"] + d["nodes"][1:], links=[["h_0", "s0"]] + d["links"][1:]), "host name"),
])
def test_plans_refuse_what_cannot_be_emulated(change, msg):
    data = yaml.safe_load(next(p for p in EXAMPLES if p.stem == "two-switches").read_text())
    change(data)
    with pytest.raises(UsageError, match=msg):
        tplan.make(CustomNetwork.from_dict(data, where="x"), "t")


@pytest.mark.parametrize("name", ["", "UPPER", "with-dash", "waytoolongname1"])
def test_testbed_names(name):
    with pytest.raises(UsageError, match="testbed name"):
        tplan.check_name(name)


def test_validation_reasoning():
    path = next(p for p in EXAMPLES if p.stem == "two-switches")
    data = yaml.safe_load(path.read_text())
    net = CustomNetwork.from_dict(data, where=str(path))
    b = validate.bottleneck(net)
    assert b.label == "link trunk (s0→s1)" and b.load == 16 and b.rate_Bps == 20e6
    pairs = validate.saturation_pairs(net, b.channel)
    assert pairs == [("h0", "h4"), ("h1", "h5"), ("h2", "h6"), ("h3", "h7")]
    assert validate.saturation_pairs(net, b.channel, both=True) == pairs
    assert validate.cable_class(net, b.link) == [b.link]
    # Seed 001 Eq. 4-5: B = (N-1) / hot x B_eff = 7 / 16 x the trunk's rate.
    assert validate.predict(net, str(path)) == (pytest.approx(7 / 16 * 20e6), "link trunk (s0→s1)")
    assert validate.predict(net, str(path), [b.link], 16e6)[0] == pytest.approx(7 / 16 * 16e6)
    # calibrated as `fabriclab model` calibrates a file's link (-c 'links[I]=MBPS'), even above its rate
    assert validate.predict(net, str(path), [b.link], 50e6)[0] == pytest.approx(7 / 16 * 50e6)
    assert validate.verdict(10.0, 9.2) == "agrees" and validate.verdict(10.0, 8.5) == "slower"
    fat = load_network_file(str(next(p for p in EXAMPLES if p.stem == "fat-tree")))
    fb = validate.bottleneck(fat)
    both = validate.saturation_pairs(fat, fb.channel, both=True)
    rts = validate.routes(fat)
    idx = {h: i for i, h in enumerate(fat.node_names)}
    for s, d in both:  # each pair crosses the cable one way and comes back over it the other way
        assert fb.channel in rts[(idx[s], idx[d])] and validate.reverse(fat, fb.channel) in rts[(idx[d], idx[s])]


def test_validate_needs_a_cable_between_switches():
    net = CustomNetwork.from_dict({"nodes": 3, "switches": 1, "default_rate_MBps": 10,
                                   "links": [["n0", "s0"], ["n1", "s0"], ["n2", "s0"]]}, where="star")
    with pytest.raises(UsageError, match="no cable joins two switches"):
        validate.bottleneck(net)


class _Watch(Watch):
    """A fabric whose cables carried nothing and whose host h0 (the fake core's) is cut;
    it keeps the spans of the points the run reports."""

    def __init__(self):
        self.spans = []

    def span(self, key, t0, t1):
        self.spans.append((key, t1 - t0))

    def before(self):
        return 0

    def after(self, token):
        return {"testbed": "fake", "counters": {"h0": {"tx_bytes": 0}}, "wire_bytes": 0}

    def stopped(self, rank_hosts):
        from fabriclab.measure.runner import ranks_on
        return f"{ranks_on(rank_hosts, ['h0'])} stopped answering"

    def cleanup(self):
        pass


def test_runs_warn_when_bytes_bypass_the_fabric(fake_core, tmp_path, monkeypatch):
    from fabriclab import schema
    from fabriclab.cli import main
    from fabriclab.measure.session import Site
    watch = _Watch()
    monkeypatch.setattr(Site, "watch", lambda self, spec, counters: watch)
    assert main(["run", "message.stream", "-s", "64K,1M", "-L", "1", "-q", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-o", str(tmp_path / "r.json")]) == 0
    # every point's span, from its begin line to its point line, reaches the watch
    assert [k["size"] for k, _ in watch.spans] == [65536, 1 << 20] and all(s >= 0 for _, s in watch.spans)
    doc = docs.read(tmp_path / "r.json")
    assert all(e["wire_bytes"] == 0 and e["testbed"] == "fake" for e in doc["records"] if e["kind"] == "launch_end")
    bypass = [d for d in doc["records"] if d["kind"] == "diagnostic" and d["code"] == "fabric-bypassed"]
    assert bypass and "only 0 bytes crossed" in bypass[0]["message"]


def test_a_hang_names_the_ranks_that_stopped(fake_core, tmp_path, monkeypatch):
    from fabriclab import schema
    from fabriclab.cli import main
    from fabriclab.measure.session import Site
    monkeypatch.setattr(Site, "watch", lambda self, spec, counters: _Watch())
    monkeypatch.setenv("FAKECORE_MODE", "hang:2")
    assert main(["run", "message.pingpong", "-s", "8:1K:x2", "-L", "1", "-q", "-t", "1", "--point-time", "0.1", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-o", str(tmp_path / "h.json")]) == 1
    doc = docs.read(tmp_path / "h.ndjson")
    assert "Ranks 0, 1 on h0 stopped answering" in doc["footer"]["error"] and len(docs.points(doc)) == 2


def test_counter_lines_are_parsed_per_host():
    from fabriclab.measure.counters import parse
    text = ("n1 net eth0 1000 2000\nn1 net ib0 10 20\nn1 ib mlx5_0/1 100 50\nn2 net eth0 7 9\n"
            "garbage line\nn2 net eth0 1 1\n")
    c = parse(text)
    # IB data counters count 4-byte words (IBA PortXmitData); a repeated interface counts once.
    assert c["n1"]["tx_bytes"] == 1000 + 10 + 400 and c["n1"]["rx_bytes"] == 2000 + 20 + 200
    assert c["n2"]["tx_bytes"] == 7 and c["n1"]["interfaces"]["mlx5_0/1"] == [400, 200]


def _first(lines: list[str], packet: bytes) -> bool:
    """Whether a shaper's u32 filters send `packet` (an IPv4 packet) to the first class:
    some filter all of whose `match uN VALUE MASK at OFFSET` hold."""
    for ln in lines:
        if not ln.startswith("filter "):
            continue
        terms = re.findall(r"match u(8|16) (\S+) (\S+) at (\d+)", ln)
        assert terms and ln.endswith("flowid 10:10")
        if all(int.from_bytes(packet[int(o):int(o) + int(w) // 8], "big") & int(m, 0) == int(v, 0) & int(m, 0)
               for w, v, m, o in terms):
            return True
    return False


def _ipv4(proto: int, payload: int, doff: int = 8, ihl: int = 5) -> bytes:
    """An IPv4 header (`ihl` words), then a TCP header of `doff` words, then payload bytes."""
    total = 4 * ihl + 4 * doff + payload
    ip = bytes([0x40 | ihl, 0]) + total.to_bytes(2, "big") + bytes(5) + bytes([proto]) + bytes(4 * ihl - 10)
    tcp = bytes(12) + bytes([doff << 4, 0x10]) + bytes(4 * doff - 14)
    return ip + tcp + bytes(payload)


def test_only_pure_acknowledgements_go_ahead_of_the_data():
    """Segments without payload jump the data queue; a data segment of any size never
    does (it would overtake its own connection's data), nor does another protocol."""
    lines = netns._shaper("p0", 10e6)
    assert lines[0].startswith("qdisc add dev p0 root handle 1: tbf rate 80000000bit")
    for doff in (5, 8, 11, 15):
        assert _first(lines, _ipv4(6, 0, doff))
    for payload in (1, 4, 12, 40, 100, 8948):
        assert not _first(lines, _ipv4(6, payload))
    assert not _first(lines, _ipv4(17, 0))
    assert not _first(lines, _ipv4(6, 0, 8, ihl=6))
    assert all(netns.BATCH_LINE.fullmatch(ln) for ln in lines)


def test_each_flow_crossing_a_cable_has_a_queue_of_its_own():
    """Round robin among flows: every ordered host pair whose route crosses a cable, and
    no other, gets a class and a bfifo of the cable's queue at that cable's ends, matched
    on its source and destination; pure acknowledgements are still matched first."""
    path = next(p for p in EXAMPLES if p.stem == "linear-array")
    p = tplan.make(load_network_file(str(path)), "t", source=str(path))
    addr = p.addresses
    trunk = next(k for k, c in enumerate(p.cables) if {c.a, c.b} == {"s0", "s1"})
    flows = netns.cable_flows(p, trunk)
    left, right = {"h0", "h1"}, {f"h{i}" for i in range(2, 8)}
    assert set(flows) == {(addr[a], addr[b]) for a in p.hosts for b in p.hosts
                          if (a in left and b in right) or (a in right and b in left)}
    host = next(k for k, c in enumerate(p.cables) if {c.a, c.b} == {"h7", "s3"})
    assert set(netns.cable_flows(p, host)) == ({(addr["h7"], addr[h]) for h in p.hosts if h != "h7"}
                                               | {(addr[h], addr["h7"]) for h in p.hosts if h != "h7"})
    lines = netns._shaper("p1", 20e6, flows)
    filters = [ln for ln in lines if ln.startswith("filter ")]
    assert all(" prio 1 " in ln for ln in filters[:11]) and all(" prio 2 " in ln for ln in filters[11:])
    assert len(filters) == 11 + len(flows)
    classes = {m for ln in filters[11:] for m in re.findall(r"flowid (10:[0-9a-f]+)$", ln)}
    assert len(classes) == len(flows) and "10:10" not in classes and "10:20" not in classes
    for cls in classes:
        assert f"qdisc add dev p1 parent {cls} bfifo limit {netns._queue(20e6)}" in lines
    src, dst = flows[0]
    assert f"match ip src {src}/32 match ip dst {dst}/32 flowid 10:{netns.FLOW_CLASS0:x}" in filters[11]
    assert all(netns.BATCH_LINE.fullmatch(ln) for ln in lines)
    _, shaping = netns.vertex_lines(p, "s1")
    assert sum(ln.startswith("filter ") and " prio 2 " in ln for ln in shaping) == sum(
        len(netns.cable_flows(p, k)) for k, c in enumerate(p.cables) if "s1" in (c.a, c.b))


def test_a_cable_is_found_by_its_name_or_its_ends_and_changed_at_both_ends():
    from fabriclab.testbed import faults
    state = {"name": "t", "namespaces": {"h0": "fltb-t-h0", "s0": "fltb-t-s0", "s1": "fltb-t-s1"},
             "cables": [{"label": "link h0-s0", "index": 0, "a": "h0", "b": "s0", "a_if": "eth0", "b_if": "p0",
                         "rate_MBps": 60.0},
                        {"label": "link s0-s1", "index": 0, "a": "s0", "b": "s1", "a_if": "p1", "b_if": "p0",
                         "rate_MBps": 20.0},
                        {"label": "link s0-s1", "index": 1, "a": "s0", "b": "s1", "a_if": "p2", "b_if": "p1",
                         "rate_MBps": 20.0}]}
    assert faults.find(state, "h0-s0") == faults.find(state, "s0-h0") == 0
    assert faults.find(state, "s0-s1") == 1 and faults.find(state, "s0-s1#1") == 2
    with pytest.raises(UsageError, match="no cable 'h0-s1'.*its cables: h0-s0, s0-s1, s0-s1#1"):
        faults.find(state, "h0-s1")
    assert faults.lines(state, 2, 10) == [
        ("fltb-t-s0", "qdisc change dev p2 root handle 1: tbf rate 80000000bit burst 16384 peakrate 84000000bit mtu 18200 limit 5000000"),
        ("fltb-t-s1", "qdisc change dev p1 root handle 1: tbf rate 80000000bit burst 16384 peakrate 84000000bit mtu 18200 limit 5000000")]
    for bad in ("0", "-1", "inf", "nan", "1e9", "x"):
        with pytest.raises(UsageError):
            faults.rate(bad)
    assert faults.rate("12.5") == 12.5


def test_a_degraded_rate_is_one_tc_takes():
    """tc reads the bucket's rate and peak rate as whole bytes a second (1e-300 MB/s is 0 bit/s,
    refused by tc), needs the peak above the rate (the kernel refuses 10 B/s, both 10 B/s) and
    holds the queue in 32 bits: the rates outside are refused in one line before tc runs."""
    import re
    from fabriclab.testbed import faults, netns
    for bad in ("1e-300", "1e-5", "8590", "1e6"):
        with pytest.raises(UsageError, match="what tc's token bucket takes"):
            faults.rate(bad)
    for good in (faults.MIN_MBPS, faults.MAX_MBPS):
        assert faults.rate(repr(good)) == good
        fields = dict(re.findall(r"(\w+) (\d+)", netns.tbf(good * 1e6).replace("bit", "")))
        assert int(fields["rate"]) // 8 >= 1 and int(fields["peakrate"]) // 8 > int(fields["rate"]) // 8
        assert int(fields["limit"]) < 1 << 32 and int(fields["burst"]) < 1 << 32


def test_frames_are_as_short_as_the_slowest_cable_asks():
    """A testbed's MTU is what its slowest cable sends in FRAME_S (in hundreds of bytes),
    from Ethernet's 1500 to jumbo 9000: every link, the bucket's two frames and the round
    robin's quantum follow it, and a degraded cable keeps its testbed's frames."""
    from fabriclab.testbed import faults
    assert [netns.frame_mtu([r * 1e6]) for r in (0.5, 2, 3, 4, 6, 60)] == [1500, 3000, 4500, 6000, 9000, 9000]
    assert netns.frame_mtu([60e6, 3e6, 20e6]) == 4500
    path = next(p for p in EXAMPLES if p.stem == "dragonfly")          # 3 MB/s global cables
    p = tplan.make(load_network_file(str(path)), "t", source=str(path))
    assert netns.plan_mtu(p) == 4500
    addresses, shaping = netns.vertex_lines(p, "g0s1")
    assert all(" mtu 4500 gso_max_size 4500 " in ln + " " for ln in addresses if " mtu " in ln)
    assert any(ln.endswith("up") and " mtu 4500 " in ln for ln in addresses)
    assert all("mtu 9200 " in ln for ln in shaping if " tbf " in ln)
    assert all("quantum 4600" in ln for ln in shaping if "htb" in ln and "classid" in ln)
    state = {"name": "t", "namespaces": {"s0": "a", "s1": "b"}, "mtu": 1500,
             "cables": [{"label": "link s0-s1", "index": 0, "a": "s0", "b": "s1", "a_if": "p1", "b_if": "p0",
                         "rate_MBps": 3.0}]}
    assert all("mtu 3200 " in ln for _, ln in faults.lines(state, 0, 2))
    two = next(p for p in EXAMPLES if p.stem == "two-switches")       # 20 MB/s trunks: jumbo frames
    assert netns.plan_mtu(tplan.make(load_network_file(str(two)), "t", source=str(two))) == 9000
