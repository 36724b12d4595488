"""Per-cable truth of a testbed launch (testbed/cables.py) and the validation's
comparison cable by cable (testbed/cablecheck.py), from recorded counters:
the spans' bytes, rates and busiest windows, the shapers' deltas, the model's
predicted utilization of every cable direction under all-to-all, and the
verdicts on the cables and on the emulation."""
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)

from fabriclab.datafile import read_data_file
from fabriclab.model.topologies.custom import CustomNetwork
from fabriclab.testbed import cablecheck, cables, wiring as plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "testbeds"


def _state(name: str) -> dict:
    f = str(EXAMPLES / name)
    net = CustomNetwork.from_dict(read_data_file(f, "network file"), where=f)
    return net, plan.make(net, "t", source=f).to_dict()


def _net_dev(rows: dict) -> str:
    """/proc/net/dev's text with these interfaces' transmit bytes and packets."""
    head = "Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes ...\n"
    return head + "".join(f"{dev}: 0 0 0 0 0 0 0 0 {b} {p} 0 0 0 0 0 0\n" for dev, (b, p) in rows.items())


def test_net_dev_is_read_as_transmit_bytes_and_packets():
    assert cables._net_dev(_net_dev({"eth0": (1234, 5), "lo": (9, 1)})) == {"eth0": (1234, 5), "lo": (9, 1)}


def _samples(rate_Bps: float, seconds: float, idle_from: float = 1e9) -> list:
    """Readings every 0.1 s of a cable h0 -> s0 (h0's eth0) sending at rate_Bps until idle_from."""
    out, sent = [], 0
    for k in range(int(seconds / 0.1) + 1):
        t = k * 0.1
        out.append((t, {"h0": {"eth0": (int(sent), k)}}, (100 * k, 10 * k, 5 * k), 0.002 * k, 3 * k))
        sent += rate_Bps * 0.1 if t < idle_from else 0
    return out


def test_a_span_gives_bytes_utilization_and_the_busiest_windows():
    dirs = [{"cable": 0, "from": "h0", "to": "s0", "dev": "eth0", "rate_Bps": 10e6}]
    got = cables.span_cables(dirs, _samples(10e6, 2.0, idle_from=1.0), 0.0, 2.0)
    (c,) = got["cables"]
    assert c["bytes"] == pytest.approx(10e6) and c["util"] == pytest.approx(0.5)
    assert c["p90_util"] == pytest.approx(1.0) and c["at_rate"] == pytest.approx(0.5)
    assert got["cpu"]["idle"] == pytest.approx(0.1) and got["cpu"]["softirq"] == pytest.approx(0.05)
    assert got["cpu"]["softirq_wait"] == pytest.approx(0.02 / (cables.os.cpu_count() or 1))
    assert got["cpu"]["backlog_drops"] == 60                                  # 3 a reading, 20 readings apart
    assert cables.span_cables(dirs, _samples(10e6, 2.0), 5.0, 6.0) == {}      # no reading inside


def test_a_window_spans_the_times_its_own_counters_were_read():
    # h0's counters read 50 ms after the pass began in every other pass (its reader
    # descheduled): over the pass's own times its windows read 1.5x and 0.5x the rate
    dirs = [{"cable": 0, "from": "h0", "to": "s0", "dev": "eth0", "rate_Bps": 10e6}]
    late = [(t, devs, cpu, w, drops, {"h0": t + (0.05 if k % 2 else 0.0)})
            for k, (t, devs, cpu, w, drops) in enumerate(_samples(10e6, 2.0))]
    for k, s in enumerate(late):   # the bytes h0 had sent when its counters were really read
        s[1]["h0"]["eth0"] = (int(10e6 * s[5]["h0"]), k)
    (c,) = cables.span_cables(dirs, late, 0.0, 2.0)["cables"]
    assert c["p90_util"] == pytest.approx(1.0) and c["util"] == pytest.approx(1.0)


def test_shaper_counters_are_taken_per_direction_over_the_launch():
    dirs = [{"cable": 3, "from": "s0", "to": "s1", "dev": "p4", "rate_Bps": 1e6}]
    before = {"s0 p4": dict(bytes=10, packets=1, drops=2, overlimits=3, requeues=0)}
    after = {"s0 p4": dict(bytes=110, packets=3, drops=7, overlimits=13, requeues=1)}
    assert cables.qdisc_delta(dirs, before, after) == [
        {"cable": 3, "from": "s0", "to": "s1", "bytes": 100, "packets": 2, "drops": 5, "overlimits": 10, "requeues": 1}]
    assert cables.qdisc_delta(dirs, {}, after) == []


def test_the_fat_tree_s_trunks_are_the_bottleneck_and_its_host_cables_carry_their_share():
    net, state = _state("fat-tree.yaml")
    trunks = [i for i, ln in enumerate(net.links) if isinstance(ln, dict)]
    pred = cablecheck.predicted(net, state["cables"], {i: 7.5e6 for i in trunks})
    assert len(pred) == 2 * len(state["cables"])
    host = [d for d in pred if d["from"].startswith("h") or d["to"].startswith("h")]
    trunk = [d for d in pred if d not in host]
    # every host sends 7 flows and receives 7; every trunk direction carries 6 (2 hosts x 6 remote / 2 spines)
    assert {d["flows"] for d in host} == {7.0} and {d["flows"] for d in trunk} == {6.0}
    assert {round(d["util"], 9) for d in trunk} == {1.0}
    assert {round(d["util"], 9) for d in host} == {round((7 / 16e6) / (6 / 7.5e6), 9)}


def test_ecmp_splits_each_flow_evenly_over_equal_cost_cables():
    net, state = _state("ring.yaml")
    net.routing = "ecmp"
    flows = cablecheck.channel_flows(net)
    # the loads are a flow split: every host's flows add up to the flows it sends
    n = net.n_nodes
    total_host_out = sum(f for c, f in flows.items() if int(net.router.src[c]) < n)
    assert total_host_out == pytest.approx(n * (n - 1))


def _size_row(hot_util: float, wait: float = 0.01, p90: float = 1.0, host_util: float = 0.5) -> dict:
    rows = [{"cable": 8, "from": "l0", "to": "sp0", "label": "link l0-sp0", "flows": 6, "predicted_util": 1.0,
             "measured_util": hot_util, "ratio": hot_util, "p90_util": p90, "at_rate": 0.6, "drops": 4,
             "overlimits": 9},
            {"cable": 0, "from": "h0", "to": "l0", "label": "link h0-l0", "flows": 7, "predicted_util": 0.6,
             "measured_util": host_util, "ratio": host_util / 0.6, "p90_util": 0.9, "at_rate": 0.1, "drops": 0,
             "overlimits": 0}]
    return {"size": 262144, "cables": rows, "cpu": {"idle": 0.0, "softirq": 0.2, "softirq_wait": wait},
            "seconds": 3.0}


def test_idle_bottleneck_cables_are_named_and_a_busier_cable_outranks_them():
    said = cablecheck.explain(_size_row(0.85), ratio=0.86)
    assert "carried 0.85 of their rate" in said and "link l0-sp0 (l0→sp0)" in said and "dropped 4 packets" in said
    assert "idled" in said
    said = cablecheck.explain(_size_row(0.85, host_util=0.95), ratio=0.86)
    assert "link h0-l0 (h0→l0) ran at 0.95 of its rate where the model gives it 0.60" in said
    assert "idled" not in cablecheck.explain(_size_row(0.99), ratio=0.99)


def test_an_emulation_short_of_cpu_or_rate_is_not_faithful():
    assert cablecheck.emulation(_size_row(0.9))["faithful"]
    e = cablecheck.emulation(_size_row(0.9, wait=0.3))
    assert not e["faithful"] and "waited for a CPU 30%" in e["reasons"][0]
    e = cablecheck.emulation(_size_row(0.6, p90=0.7))
    assert not e["faithful"] and e["slow_cables"] == ["link l0-sp0 (l0→sp0)"]
    e = cablecheck.emulation(_size_row(0.9), calibrating_p90=0.72)
    assert not e["faithful"] and "saturation test brought the bottleneck cable to 0.72" in e["reasons"][0]
    assert cablecheck.emulation(_size_row(0.9), calibrating_p90=0.97)["faithful"]
    row = _size_row(0.9)
    row["cpu"]["backlog_drops"] = 7
    e = cablecheck.emulation(row)
    assert not e["faithful"] and "dropped 7 packets at its input backlog" in e["reasons"][0]


def _doc(records: list):
    """A document of these records (launch and launch_end), read as readers take it."""
    return docs.typed(docs.document({}, records, {"status": "complete"}))


def test_compare_takes_the_median_over_launches_and_the_shapers_sum():
    pred = [{"cable": 8, "from": "l0", "to": "sp0", "label": "x", "flows": 6.0, "rate_Bps": 1.0, "util": 1.0}]

    def end(util):
        span = {"size": 4096, "seconds": 2.0, "cpu": {"idle": 0.0, "softirq": 0.2, "softirq_wait": 0.01},
                "cables": [{"cable": 8, "from": "l0", "to": "sp0", "util": util, "p90_util": 1.0, "at_rate": 0.5}]}
        return {"kind": "launch_end", "bench": "message.alltoall", "spans": [span],
                "shapers": [{"cable": 8, "from": "l0", "to": "sp0", "drops": 2, "overlimits": 5}]}
    (row,) = cablecheck.compare(pred, _doc([end(0.8), end(0.9), end(0.95)]))
    (c,) = row["cables"]
    assert row["size"] == 4096 and c["measured_util"] == 0.9 and c["drops"] == 6 and c["overlimits"] == 15


def test_links_named_by_interface_are_compared_with_the_model_s_flows_on_real_hosts():
    """Two hosts per switch, one trunk; h0's link names eth1. Counters of two launches say eth1 moved
    6 units each way, h1's eth0 (not named) anything; h2..h3 name eth0 and moved 3 units: half the
    bytes for the same flows, so their share ratio is half h0's."""
    data = {"nodes": ["h0", "h1", "h2", "h3"], "switches": ["s0", "s1"], "default_rate_MBps": 10,
            "links": [{"a": "h0", "b": "s0", "iface": "eth1"}, ["h1", "s0"], {"a": "h2", "b": "s1", "iface": "eth0"},
                      {"a": "s1", "b": "h3", "iface": "eth0"}, {"a": "s0", "b": "s1", "rate_MBps": 5}]}
    net = CustomNetwork.from_dict(data, where="net")
    hosts = {"h0": "n0", "h1": "n1", "h2": "n2", "h3": "n3"}

    def end(k):
        c = {"n0": {"interfaces": {"eth1": [6, 6], "lo": [99, 99]}}, "n2": {"interfaces": {"eth0": [3, 3]}},
             "n3": {"interfaces": {"eth0": [3, 3]}}, "n1": {"interfaces": {"eth0": [1, 1]}}}
        return {"kind": "launch_end", "bench": "message.alltoall", "launch": k, "counters": c, "ended": 10.0 + k}
    records = [{"kind": "launch", "bench": "message.alltoall", "launch": k, "started": 9.0 + k} for k in (0, 1)]
    rows = cablecheck.interface_links(net, hosts, _doc(records + [end(0), end(1)]))
    assert [(r["from"], r["to"], r["host"], r["iface"]) for r in rows] == [
        ("h0", "s0", "n0", "eth1"), ("s0", "h0", "n0", "eth1"), ("h2", "s1", "n2", "eth0"),
        ("s1", "h2", "n2", "eth0"), ("h3", "s1", "n3", "eth0"), ("s1", "h3", "n3", "eth0")]
    assert {r["flows"] for r in rows} == {3.0} and rows[0]["bytes"] == 12 and rows[2]["bytes"] == 6
    assert rows[0]["ratio"] == pytest.approx(2 * rows[2]["ratio"])
    assert rows[0]["util"] == pytest.approx(12 / (2.0 * 10e6))              # two launches of 1 s each


@pytest.mark.parametrize("link,msg", [
    ({"a": "s0", "b": "s1", "iface": "eth0"}, "neither end is a node"),
    ({"a": "h0", "b": "s0", "iface": "eth0;reboot"}, "iface must be an interface name"),
    ({"a": "h0", "b": "s0", "iface": "a" * 16}, "iface must be an interface name"),
    ({"a": "h0", "b": "s0", "iface": ["eth0"]}, "got a list of 1 entry"),
])
def test_an_interface_that_cannot_be_a_host_s_is_refused(link, msg):
    from fabriclab.errors import UsageError
    links = [link, ["h1", "s1"], ["s0", "s1"]] + ([["h0", "s0"]] if link["a"] == "s0" else [])
    with pytest.raises(UsageError, match=msg):
        CustomNetwork.from_dict({"nodes": ["h0", "h1"], "switches": ["s0", "s1"], "default_rate_MBps": 1,
                                 "links": links}, where="net")
    ok = CustomNetwork.from_dict({"nodes": ["h0", "h1"], "switches": ["s0", "s1"], "default_rate_MBps": 1,
                                  "links": [{"a": "h0", "b": "s0", "iface": "mlx5_0/1"}, ["h1", "s1"], ["s0", "s1"]]},
                                 where="net")
    assert ok.links[0]["iface"] == "mlx5_0/1"


def test_the_report_ranks_the_loaded_cables_and_lists_every_one():
    from fabriclab.report import figures, html
    from fabriclab.report.rows import Row
    from fabriclab.schema.records import MergedPoint, Summary
    size = _size_row(0.85)
    size["cables"] += [{**size["cables"][0], "cable": 9 + k, "from": f"l{k}", "measured_util": 0.9 + k / 100,
                        "ratio": 0.9 + k / 100} for k in range(30)]
    v = {"network": "net.yaml", "testbed": "t", "verdict": "slower", "predicted_bottleneck": "link l0-sp0",
         "predicted_Bps": 9e6, "nominal_Bps": 9.3e6, "calibrated_rate_Bps": 7.9e6, "tolerance": 0.1,
         "per_size": [{"size": 262144, "measured_Bps": 8e6, "ratio": 0.89}], "cables": [size],
         "emulation": cablecheck.emulation(size), "explanation": cablecheck.explain(size, 0.89)}
    point = MergedPoint(bench="message.alltoall", size=262144, bytes_per_op=1, summary=Summary(median=1.0))
    doc = docs.of([])
    doc.add_block("validation", v)
    run = figures.RunView("v", doc, rows=[Row.of(point)])
    _, cab = figures.validation([run])
    # the host cable (predicted 0.6) is loaded; the 31 saturated and it make 32 rows: 12 lowest, 12 highest
    # each direction named as the model names it: the cable's name, then its direction
    assert len(cab.bars) == 24 and cab.bars[0] == ("link h0-l0 (h0\u2192l0)", pytest.approx(0.5 / 0.6))
    assert cab.bars[1] == ("link l0-sp0 (l0\u2192sp0)", 0.85)
    assert "12 lowest and highest of 32" in cab.note
    assert "Emulation faithful" in cab.note
    text = "".join(html._cables([run]))
    assert text.count("<tr>") >= 33 and "cable by cable" in text
