"""Each algorithm's budgets (budget.py) counted before any of its work: an algorithm
past one is left out with the line naming it while the others are printed, exit 2
only when nothing is left; the first level counted on the resources crossed only,
and max-min filling on those, name the same bottlenecks as on every resource."""

import json

import numpy as np
import pytest

from fabriclab.cli.main import main
from fabriclab.errors import UsageError
from fabriclab.model import budget, schedule_time
from fabriclab.model.catalog import system
from fabriclab.model.collective import CollectiveQuestion, predict
from fabriclab.model.maxmin import max_min
from fabriclab.model.topologies.base import Paths, Topology

ASK = ("model", "--no-plot", "--collective", "allreduce", "--sizes", "1K,1M")


def test_an_algorithm_past_a_budget_is_not_computed_and_the_others_are(run_cli, monkeypatch):
    monkeypatch.setattr(budget, "MAX_TIMED_CELLS", 100)     # 2 sizes x the ring's 2 steps x 18 x 17
    rc, out = run_cli(*ASK, "--system", "myrinet-minimal", "--nodes", "18")
    assert rc == 0 and "recursive_doubling us" in out and "ring us" not in out
    assert "ring on 18 nodes is not computed: its repeated steps move 1,224 flows x times at different rates, " \
           "more than 100 (MAX_TIMED_CELLS)." in out
    rc, out = run_cli(*ASK, "--system", "myrinet-minimal", "--nodes", "18", "-f", "json")
    (p,) = json.loads(out)["predictions"]
    assert {pt["algorithm"] for pt in p["points"]} == {"recursive_doubling", "rabenseifner"}
    assert [x["algorithm"] for x in p["not_computed"]] == ["ring"]


def test_a_schedule_past_its_flow_cap_is_not_computed_and_the_others_are(run_cli, monkeypatch):
    """A pairwise alltoall of N ranks holds N (N - 1) flows: past schedules.MAX_FLOWS it is left
    out like a budget's, and bruck, of N log N, is still timed (it ended the command)."""
    from fabriclab.model import schedules
    monkeypatch.setattr(schedules, "MAX_FLOWS", 200)        # 16 x 15 = 240 flows
    rc, out = run_cli("model", "--collective", "alltoall", "--system", "myrinet-minimal", "--nodes", "16",
                      "-s", "8", "--no-plot")
    assert rc == 0 and "bruck us" in out and "pairwise us" not in out
    assert "pairwise on 16 nodes is not computed: the schedule for 16 ranks holds more than 200 flows" in out


def test_budgets_are_counted_before_any_route_is_listed_filled_or_timed(monkeypatch):
    for name in ("_first_level", "_filled", "_step_time"):
        monkeypatch.setattr(schedule_time.Network, name, lambda *_: pytest.fail("worked before the budget"))
    monkeypatch.setattr(budget, "MAX_ROUTED_ENTRIES", 100)
    with pytest.raises(UsageError, match=r"ring on 64 nodes is not computed: .*\(MAX_ROUTED_ENTRIES\) \(and 2 more"):
        predict(system("myrinet-minimal"), CollectiveQuestion("allreduce", (1024,), (64,)))


def test_filling_past_its_budget_is_refused_after_the_first_level_only(monkeypatch):
    monkeypatch.setattr(schedule_time.Network, "_filled", lambda *_: pytest.fail("filled"))
    monkeypatch.setattr(budget, "MAX_FILLED_ENTRIES", 10)
    p = predict(system("qsnet-fattree"), CollectiveQuestion("allreduce", (1000,), (24,), ("ring", "rabenseifner")))
    assert {pt.algorithm for pt in p.points} == {"ring"} and "(MAX_FILLED_ENTRIES)" in p.skipped[0].why


def test_nothing_computed_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(budget, "MAX_ROUTED_ENTRIES", 10)
    assert main([*ASK, "--system", "myrinet-minimal", "--nodes", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ring on 64 nodes is not computed" in err[0] and "2 more like it" in err[0]


@pytest.mark.parametrize("spec", ["qsnet-fattree", "ib-ndr-clos-2to1", "slingshot-dragonfly", "myrinet-m2l:switch-ring:routing=ecmp"])
def test_the_first_level_on_the_resources_crossed_is_the_one_on_every_resource(spec):
    net, rng = schedule_time.Network(system(spec), 300), np.random.default_rng(5)
    src, dst = rng.integers(0, 300, 500), rng.integers(0, 300, 500)
    src, dst = src[src != dst], dst[src != dst]
    load = Topology.loads(net.topo, src, dst)
    share = np.divide(net.cap, load, out=np.full(len(load), np.inf), where=load > 0)
    level, top = net.topo.first_level(src, dst, net.cap, 1e-9)
    assert level == pytest.approx(share.min(), rel=1e-12)
    assert (top == Topology.top_marked_class(net.topo, src, dst, share <= share.min() * (1 + 1e-9))).all()


def test_filling_names_a_bottleneck_by_its_own_number_among_resources_not_crossed():
    paths = Paths(np.array([0, 2, 3]), np.array([7, 3, 7]), np.ones(3))
    res = max_min(paths, np.array([5.0] * 7 + [2.0] + [5.0] * 4))
    assert res.rates.tolist() == [1.0, 1.0] and res.bottleneck.tolist() == [7, 7]
