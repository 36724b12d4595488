"""Timing collectives at scale: results at small sizes as the filling of every flow
gave them, a 4,096-node ring timed without listing a route link by link, the
budgets refused before the work they bound, and the torus's interval counts
against its listed routes."""

import json
from pathlib import Path

import numpy as np
import pytest

from fabriclab.errors import UsageError
from fabriclab.model import schedule_time
from fabriclab.model.catalog import system
from fabriclab.model.collective import CollectiveQuestion, predict
from fabriclab.model.schedules import schedule
from fabriclab.model.topologies.base import NodeModel, Topology
from fabriclab.model.topologies.torus import Torus

DATA = Path(__file__).parents[2] / "data" / "model" / "collective_times.json"


def _question(key: str, points: list) -> tuple:
    name, op, nodes = key.split("/")
    sizes = tuple(dict.fromkeys(p[1] for p in points))
    if nodes.endswith("x2"):
        return name, CollectiveQuestion(op, sizes, (int(nodes[:-2]),), per_node=2, placement="cyclic")
    return name, CollectiveQuestion(op, sizes, (int(nodes),))


def _step_by_step(name: str, q: CollectiveQuestion) -> list:
    """[algorithm, size, seconds, bottleneck] of each point, its steps timed one after another."""
    net = schedule_time.Network(system(name), q.nodes[0])
    where = schedule_time.place(q.nodes[0] * q.per_node, net.nodes, q.placement, q.per_node)
    out = []
    for alg in q.checked().algorithms:
        for size in q.sizes:
            steps = [net._step_time(s, where, q.alpha, q.gamma)
                     for s in schedule(q.op, alg, q.nodes[0] * q.per_node, size).steps]
            out.append([alg, size, sum(s.seconds for s in steps), max(steps, key=lambda s: s.each).bottleneck])
    return out


@pytest.mark.parametrize("key", sorted(json.loads(DATA.read_text())["expected"]))
def test_small_sizes_keep_the_times_of_filling_every_flow(key):
    want = json.loads(DATA.read_text())["expected"][key]
    got = _step_by_step(*_question(key, want))
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert [g[2] for g in got] == pytest.approx([w[2] for w in want], rel=1e-9)
    assert [g[3] for g in got] == [w[3] for w in want]


def test_a_4096_node_ring_is_timed_without_listing_routes(monkeypatch):
    def listed(*_):
        raise AssertionError("a route listed link by link")
    monkeypatch.setattr(Torus, "paths", listed)
    p = predict(system("sci-ring"), CollectiveQuestion("allreduce", (8, 1 << 20), (4096,)))
    assert len(p.points) == 6 and all(pt.seconds > 0 and pt.bottleneck for pt in p.points)


def test_a_step_of_unequal_rates_past_the_budget_is_refused_before_it_is_timed(monkeypatch):
    monkeypatch.setattr(schedule_time, "MAX_TIMED_CELLS", 100)
    monkeypatch.setattr(schedule_time.Step, "windows", lambda *_: pytest.fail("timed"))
    net = schedule_time.Network(system("sci-2d"), 16)
    (step, _) = schedule("allreduce", "ring", 16, 1000).steps
    with pytest.raises(UsageError, match="too much to time"):
        net._step_time(step, np.arange(16), 2e-6, 0.0)


def test_routes_past_the_budget_are_refused_before_they_are_listed(monkeypatch):
    net = schedule_time.Network(system("myrinet-minimal"), 200)
    monkeypatch.setattr(schedule_time, "MAX_ROUTED_ENTRIES", 1000)
    monkeypatch.setattr(type(net.topo), "paths", lambda *_: pytest.fail("listed"))
    r = np.arange(128)
    with pytest.raises(UsageError, match="too many to time"):
        net.rates(r, r ^ 64)
    monkeypatch.setattr(schedule_time, "MAX_FILLED_ENTRIES", 10)
    monkeypatch.setattr(schedule_time, "max_min", lambda *_: pytest.fail("filled"))
    with pytest.raises(UsageError, match="too many to share"):
        net._filled(r, r ^ 64)


@pytest.mark.parametrize("dims,bidirectional", [((7,), False), ((8,), True), ((3, 4), False), ((5, 5, 3), True)])
@pytest.mark.parametrize("node_model", [NodeModel(), NodeModel(True, "half"), NodeModel(True, "full")])
def test_torus_interval_counts_match_its_listed_routes(dims, bidirectional, node_model):
    t, rng = Torus(dims, bidirectional, node_model), np.random.default_rng(len(dims))
    src, dst = rng.integers(0, t.n_nodes, 300), rng.integers(0, t.n_nodes, 300)
    src, dst = src[src != dst], dst[src != dst]
    w = rng.random(len(src))
    assert t.loads(src, dst, w) == pytest.approx(Topology.loads(t, src, dst, w))
    assert (t.route_lengths(src, dst) >= np.diff(t.paths(src, dst).indptr)).all()
    for share in (0.02, 0.3):
        marked = rng.random(t.n_resources) < share
        assert (t.top_marked_class(src, dst, marked) == Topology.top_marked_class(t, src, dst, marked)).all()


@pytest.mark.parametrize("spec", ["myrinet-m2l:switch-array", "myrinet-m2l:switch-array:cables=2,routing=ecmp",
                                  "myrinet-m2l:switch-ring", "myrinet-m2l:switch-ring:routing=ecmp"])
def test_switch_chains_count_their_routes_without_listing_them(spec):
    topo, rng = system(spec).build(150), np.random.default_rng(3)
    src, dst = rng.integers(0, 150, 400), rng.integers(0, 150, 400)
    assert (topo.route_lengths(src, dst) >= np.diff(topo.paths(src, dst).indptr)).all()
