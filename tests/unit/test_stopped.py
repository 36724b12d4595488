"""When a launch goes silent: which cable is cut and whose routes cross it
(a testbed, from the model's routes), and what a real cluster's interface
counters can tell (hosts that do not answer, interfaces that went down or
stopped counting). No root: plans, states and readings are built here."""
import json
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.measure import counters
from fabriclab.measure.runner import ranks_on
from fabriclab.model.topologies.custom import load_network_file
from fabriclab.testbed import wiring as tplan
from fabriclab.testbed.site import crossing_hosts, cut_cables

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "testbeds").glob("*.yaml"))
TWO = next(p for p in EXAMPLES if p.stem == "two-switches")


def _state(path=TWO) -> dict:
    """A testbed's state as `up` writes it (through JSON, as run reads it back)."""
    p = tplan.make(load_network_file(str(path)), "t", source=str(path))
    return json.loads(json.dumps(p.to_dict()))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_plan_records_the_cables_each_route_crosses(path):
    net = load_network_file(str(path))
    p = tplan.make(net, "t", source=str(path))
    index = {(c.link, c.index): k for k, c in enumerate(p.cables)}
    for s, src in enumerate(p.hosts):
        for d, dst in enumerate(p.hosts):
            if s != d:
                model = {index[net.channel_cable[c]] for c in net.router.route(s, d)}
                assert set(p.crossing[src][dst]) == model


def _cable(state, a, b) -> int:
    return next(k for k, c in enumerate(state["cables"]) if {c["a"], c["b"]} == {a, b})


def test_a_cut_trunk_names_the_ranks_whose_routes_cross_it():
    st = _state()
    trunk = _cable(st, "s0", "s1")
    said = cut_cables(st, [trunk], ["h0", "h4"])
    assert said == ("Ranks 0, 1 on h0, h4 stopped answering: their routes cross cable s0:p4 <-> s1:p4 "
                    "(link trunk), which is down")
    # Ranks on one side of the trunk only: their routes do not cross it.
    assert cut_cables(st, [trunk], ["h0", "h1"]) == \
        "Cable s0:p4 <-> s1:p4 (link trunk) is down (no rank's route crosses it)"
    assert crossing_hosts(st["crossing"], trunk, ["h0", "h1", "h2", "h5", "h5"]) == ["h0", "h1", "h2", "h5"]


def test_a_cut_host_cable_names_the_ranks_on_that_host():
    st = _state()
    h4 = _cable(st, "h4", "s1")
    assert cut_cables(st, [h4], ["h0", "h4", "h4"]) == \
        "Ranks 1, 2 on h4 stopped answering: cable h4:eth0 <-> s1:p0 (link h4-s1) is down"
    both = cut_cables(st, [h4, _cable(st, "s0", "s1")], ["h0", "h4"])
    assert both.startswith("Rank 1 on h4 stopped answering") and "; Ranks 0, 1 on h0, h4" in both


def test_what_is_said_without_ranks_routes_or_a_cut():
    st = _state()
    trunk = _cable(st, "s0", "s1")
    assert cut_cables(st, [], ["h0", "h4"]) == "Every cable of testbed t is up"
    assert cut_cables(st, [trunk], []) == "Cable s0:p4 <-> s1:p4 (link trunk) is down"   # no hello yet
    del st["crossing"]                                 # a state written before routes were kept
    assert cut_cables(st, [trunk], ["h0", "h4"]) == "Cable s0:p4 <-> s1:p4 (link trunk) is down"
    assert cut_cables(st, [_cable(st, "h4", "s1")], ["h0", "h4"]).startswith("Rank 1 on h4 stopped answering")


def test_ranks_on():
    assert ranks_on(["h0", "h0"], ["h0"]) == "Ranks 0, 1 on h0"
    assert ranks_on(["h0", "h4"], ["h4"]) == "Rank 1 on h4"
    assert ranks_on(["h0"], ["h5", "h6"]) == "Hosts h5, h6"


def test_counter_lines_carry_the_interface_state():
    text = ("n1 net eth0 1000 2000 up\nn1 net ib0 10 20 lowerlayerdown\nn1 ib mlx5_0/1 100 50 ACTIVE\n"
            "n2 net eth0 7 9\nn2 net eth1 \u00b2 9 up\nn2 net eth2 1 2 up extra\n")
    c = counters.parse(text)
    assert c["n1"]["states"] == {"eth0": "up", "ib0": "lowerlayerdown", "mlx5_0/1": "active"}
    assert c["n2"]["states"] == {"eth0": ""} and c["n2"]["tx_bytes"] == 7   # ² is no count; 7 fields no line


def _reading(**hosts) -> dict:
    """{host: {iface: (tx, rx, state)}} as parse() returns it."""
    out = {}
    for h, ifs in hosts.items():
        out[h] = {"tx_bytes": sum(v[0] for v in ifs.values()), "rx_bytes": sum(v[1] for v in ifs.values()),
                  "interfaces": {i: [v[0], v[1]] for i, v in ifs.items()}, "states": {i: v[2] for i, v in ifs.items()}}
    return out


def test_counters_name_what_stopped():
    start = _reading(n1={"eth0": (0, 0, "up"), "eth1": (5, 5, "down")}, n2={"ib0": (0, 0, "active")},
                     n3={"eth0": (0, 0, "up")}, n4={"eth0": (0, 0, "up")})
    first = _reading(n1={"eth0": (900, 800, "up"), "eth1": (5, 5, "down")}, n2={"ib0": (400, 400, "down")},
                     n3={"eth0": (70, 70, "up")}, n4={"eth0": (10, 10, "up")})
    last = _reading(n1={"eth0": (900, 800, "up"), "eth1": (5, 5, "down")}, n2={"ib0": (400, 400, "down")},
                    n3={"eth0": (90, 70, "up")})
    said = counters.silent(start, first, last, ["n1", "n2", "n3", "n4"])
    parts = said.split("; ")
    assert parts[0] == "Rank 3 on n4 stopped answering: n4 did not answer the counter read"
    assert parts[1] == "Rank 1 on n2 stopped answering: interface ib0 of n2 went down"   # eth1 was down before
    assert parts[2] == ("Ranks 0, 1 on n1, n2: eth0 on n1, ib0 on n2 stopped counting (no byte in 2 s after "
                        "carrying the launch's traffic)")
    assert len(parts) == 3                                                              # n3 still counts
    assert counters.silent(start, first, start, ["n1"]) == ""                           # nothing moved at all
    assert counters.silent(start, {}, {}, ["n1"]).startswith("No host answered the counter read")


def test_the_counter_watch_reads_twice_after_a_hang(monkeypatch):
    from fabriclab.measure.launch import make_spec
    readings = iter([_reading(n1={"eth0": (0, 0, "up")}, n2={"eth0": (0, 0, "up")}),
                     _reading(n1={"eth0": (50, 50, "up")}, n2={"eth0": (50, 50, "up")}),
                     _reading(n1={"eth0": (50, 50, "up")}, n2={"eth0": (80, 50, "up")})])
    w = counters.CounterWatch(make_spec("mpiexec", "mpiexec", "mpich", 2, "n1,n2", bind="none"))
    monkeypatch.setattr(w, "read", lambda timeout=counters.TIMEOUT: next(readings))
    monkeypatch.setattr(counters, "QUIET_S", 0.0)
    w.before()
    assert w.stopped(["n1", "n2"]).startswith("Rank 0 on n1: eth0 on n1 stopped counting (no byte in 0 s")
