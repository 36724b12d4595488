"""The CPU a point costs: rank_cpu in the schema (version 17), netperf's service
demand (analysis/cpu.py), the socket tables' columns and the view "CPU per byte"."""
import json

import pytest

from fabriclab import schema
from fabriclab.analysis import cpu, merge
from fabriclab.measure.runner import derive
from fabriclab.report import cpu_cost, cpu_views, tables
from fabriclab.report.curves import RunView
from fabriclab.schema.fields import RecordError
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.facts import SOCKET_LEVELS


def _rec(bench="tcp.stream", size=1024, op_s=2e-6, use=((0.2, 0.3, 2.0), (0.1, 0.1, 2.0))):
    legs = REGISTRY[bench].legs
    return {"bench": bench, "size": size, "stride": 1, "bytes_per_op": size * legs, "legs_per_op": legs,
            "samples": [op_s] * 5, "stop": "converged", "batch": 4,
            "rank_cpu": [{"user_s": u, "sys_s": s, "wall_s": w} for u, s, w in use]}


def _doc(tmp_path, recs, tick_s=0.01):
    w = schema.StreamWriter(tmp_path / "r.ndjson", schema.Header(run_id="r"))
    w.header.timer = {"name": "t", "cpu": {"name": "getrusage(RUSAGE_SELF)", "step_s": 1e-6, "tick_s": tick_s}}
    for r in recs:
        w.add(derive(r))
    return w.close(schema.Footer("complete"))


def test_a_point_reads_rank_cpu_and_refuses_a_wrong_one():
    p = derive(_rec())
    assert p.rank_cpu[0] == {"user_s": 0.2, "sys_s": 0.3, "wall_s": 2.0} and p.to_dict()["rank_cpu"] == p.rank_cpu
    assert derive({k: v for k, v in _rec().items() if k != "rank_cpu"}).rank_cpu is None
    for bad in ([{"user_s": -1, "sys_s": 0, "wall_s": 1}], [{"user_s": 1, "sys_s": 0}], [3], {"user_s": 1}):
        with pytest.raises(RecordError, match="rank_cpu"):
            derive({**_rec(), "rank_cpu": bad})


def test_rank_cpu_is_written_in_the_current_version_and_16_still_read(tmp_path):
    merge.write(_doc(tmp_path, [_rec()]), tmp_path / "r.json")
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["schema_version"] == schema.SCHEMA_VERSION >= 17
    assert d["records"][0]["rank_cpu"][1]["sys_s"] == 0.1 and d["merged"][0]["rank_cpu"][0]["user_s"] == 0.2
    assert merge.merged(schema.load(tmp_path / "r.json"))[0].rank_cpu[1]["wall_s"] == 2.0  # stored, read
    old = {**d, "schema_version": 16,
           "records": [{k: v for k, v in r.items() if k != "rank_cpu"} for r in d["records"]]}
    old.pop("merged"), old.pop("findings")
    (tmp_path / "old.json").write_text(json.dumps(old))
    back = schema.load(tmp_path / "old.json")
    assert back.points[0].rank_cpu is None and merge.merged(back)[0].rank_cpu is None


def test_service_demand_is_cpu_us_per_1024_bytes_or_per_transaction():
    assert cpu.utilisation({"user_s": 0.2, "sys_s": 0.3, "wall_s": 2.0}) == 0.25
    assert cpu.utilisation({"user_s": 3.0, "sys_s": 1.0, "wall_s": 2.0}) == 2.0   # threads: above one CPU
    assert cpu.utilisation({"user_s": 0, "sys_s": 0, "wall_s": 0}) is None
    # a quarter of a CPU while 1024 bytes move every 2 us: 0.5 us of CPU per KB
    assert cpu.demand_per_kb(0.25, 2e-6, 1024) == pytest.approx(0.5)
    assert cpu.demand_per_kb(0.25, 2e-6, 4096) == pytest.approx(0.125) and cpu.demand_per_kb(0.25, 2e-6, 0) is None
    assert cpu.demand_per_transaction(0.5, 8e-6) == pytest.approx(4.0)
    local, remote = cpu.local_remote(cpu.ranks(derive(_rec()), "KB", tick_s=0.01))
    assert (local.utilisation, remote.utilisation) == (0.25, 0.1)
    assert local.demand_us == pytest.approx(0.5) and remote.demand_us == pytest.approx(0.2)
    rr = cpu.ranks(derive(_rec("tcp.rr_poll", op_s=10e-6)), "Tr")
    assert rr[0].per == "Tr" and rr[0].demand_us == pytest.approx(2.5)   # 0.25 CPU x 10 us per round trip


def test_a_short_cpu_interval_is_coarse_and_launches_sum():
    use = ((0.2, 0.3, 0.5), (0.1, 0.1, 0.5))
    assert all(r.coarse for r in cpu.ranks(derive(_rec(use=use)), "KB", tick_s=0.01))       # 50 ticks
    assert not any(r.coarse for r in cpu.ranks(derive(_rec(use=use)), "KB", tick_s=0.004))  # 125 ticks
    assert cpu.tick_of({"cpu": {"tick_s": 0.004}}) == 0.004 and cpu.tick_of(None) == cpu.TICK_S
    two = cpu.merged([derive(_rec()), derive(_rec(use=use))])
    assert two[0] == pytest.approx({"user_s": 0.4, "sys_s": 0.6, "wall_s": 2.5})


def test_every_socket_benchmark_and_only_they_gain_cpu_columns(tmp_path):
    doc = _doc(tmp_path, [_rec(), _rec(size=4096), _rec("tcp.rr_poll", op_s=10e-6), _rec("message.pingpong")])
    blocks = {title.split("  ")[0]: (head, body) for title, head, body in tables._table_blocks(tables.rows(doc))}
    head, body = blocks["tcp.stream"]
    cols = dict(zip(head, body[0]))
    assert (cols["cpu0%"], cols["cpu1%"], cols["us/KB local"], cols["us/KB remote"]) == ("25.0", "10.0", "0.5", "0.2")
    assert "us/Tr local" in blocks["tcp.rr_poll"][0] and "cpu0%" not in blocks["message.pingpong"][0]
    short = _doc(tmp_path / "s", [_rec(use=((0.1, 0.1, 0.5),) * 2)])
    assert dict(zip(*next((h, b[0]) for _, h, b in tables._table_blocks(tables.rows(short)))))["cpu0%"] == "40.0~"
    shown = json.loads(tables.format_doc(doc, "json"))
    stream = next(x for x in shown["cpu"] if x["bench"] == "tcp.stream" and x["size"] == 1024)
    assert stream["per"] == "KB" and stream["ranks"][1]["utilisation"] == 0.1 and len(shown["cpu"]) == 3
    assert shown["rows"][0]["cpu_local_demand_us"] == pytest.approx(0.5)
    socket = {b.name for b in REGISTRY.values() if b.level in SOCKET_LEVELS}
    assert socket and all(cpu_cost.cost_unit(b) for b in socket)
    assert not any(cpu_cost.cost_unit(b.name) for b in REGISTRY.values() if b.level not in SOCKET_LEVELS)


def test_the_view_draws_local_and_remote_demand_against_size(tmp_path):
    doc = _doc(tmp_path, [_rec(), _rec(size=4096, op_s=4e-6), _rec("message.pingpong")])
    figs = cpu_views.view([RunView.of("v", doc)])
    assert [f.id for f in figs] == ["cpu-tcp-stream"]
    local, remote = figs[0].series
    assert local.label == "local" and local.x == [1024, 4096]
    assert local.y == pytest.approx([0.5, 0.25]) and remote.y == pytest.approx([0.2, 0.1])
    assert "us/KB" in figs[0].y.label


def test_the_fake_core_says_how_cpu_was_read_and_gives_every_rank_its_use():
    import fakebuild  # noqa: F401  (tests/support: puts tests/fakes on the path)
    import fakecore
    lines = [json.loads(t) for kind, t in fakecore.script(["tcp.stream", "--sizes", "8,64"], {}) if kind == "out"]
    hello, points = lines[0], [x for x in lines if x["type"] == "point"]
    assert cpu.tick_of(hello["timer"]) == 0.01 and len(points) == 2
    p = derive({**points[0], "variant": ""})
    assert len(p.rank_cpu) == 2 and p.rank_cpu[0]["wall_s"] == pytest.approx(sum(p.samples) * p.batch)
    assert cpu.ranks(p)[1].utilisation == pytest.approx(0.6)


def test_a_patterns_rank_pays_for_the_bytes_it_sent_and_received():
    rec = {**_rec("message.saturation", use=((0.5, 0.5, 2.0), (0.25, 0.25, 2.0), (0.5, 0.5, 2.0))),
           "active": 2, "roles": "ssr", "peers": [2, 2, -1], "bytes_per_op": 2048, "messages_per_op": 2,
           "rank_sent_bytes": [1024, 1024, 0], "rank_recv_bytes": [0, 0, 2048],
           "rank_samples": [[2e-6] * 5] * 3}
    got = [r.demand_us for r in cpu.ranks(derive(rec), "KB")]
    # 2 us per op: ranks 0 and 2 at half a CPU spend 1 us of it per op, rank 1 at a quarter 0.5 us;
    # the senders move 1 KB each, the receiver 2 KB
    assert got == pytest.approx([1.0, 0.5, 0.5])
