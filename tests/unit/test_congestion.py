"""Congestion impact (suite/congestion.py): the seeded split and ring, the layouts the core
checks, the model's prediction on a network file worked by hand, the impact factors of a run's
points with the tail's bootstrap (analysis/launches.py ratio_ci q), and bad input refused."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from op_histogram import histogram  # noqa: E402  (tests/support)
from fabriclab.analysis import launches
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.suite import congestion
from fabriclab.verdicts import congestion as judged
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.verdicts.coll_prediction import placed
from fabriclab.schema.summaries import ROLE_NAMES

REPO = Path(__file__).resolve().parents[2]
FAT = str(REPO / "examples" / "testbeds" / "fat-tree.yaml")
TWO = str(REPO / "examples" / "testbeds" / "two-switches.yaml")


def test_a_fifth_are_victims_at_least_two_and_two_aggressors_are_left():
    assert [congestion.victim_count(n, 0) for n in (4, 5, 8, 10, 20, 64)] == [2, 2, 2, 2, 4, 13]
    assert congestion.victim_count(8, 6) == 6
    for n, v in ((8, 7), (8, 1), (3, 0), (100, 99)):
        with pytest.raises(UsageError):
            congestion.victim_count(n, v)


def test_the_split_is_seeded_and_the_ring_goes_through_every_victim_once():
    a, b = congestion.split(64, 13, 1), congestion.split(64, 13, 1)
    assert a == b and len(set(a)) == 13 and congestion.split(64, 13, 2) != a
    rings = [congestion.ring(a, seed) for seed in (1, 2, 3)]
    for succ in rings:
        assert sorted(succ) == a and sorted(succ.values()) == a
        seen, v = [], a[0]
        while v not in seen:
            seen.append(v)
            v = succ[v]
        assert len(seen) == 13 and all(succ[v] != v for v in a)
    assert rings[0] != rings[1]           # a draw is a new ring


@pytest.mark.parametrize("aggressor", congestion.AGGRESSORS)
def test_the_layouts_are_isolated_then_every_aggressor_loading(aggressor):
    iso, cong = congestion.layouts(10, {"aggressor": aggressor, "seed": "4", "split": "2", "victims": "4"})
    assert (iso.active, cong.active) == (0, 6)
    assert iso.roles.count("v") == cong.roles.count("v") == 4 and set(iso.roles) == {"v", "i"}
    agg = [r for r, role in enumerate(cong.roles) if role not in "vi"]
    assert len(agg) == 6 and cong.roles.count("i") == 0
    for r, role in enumerate(cong.roles):
        if role == "v":
            assert cong.roles[cong.peers[r]] == "v" and iso.peers[r] == cong.peers[r]
    heads = [r for r in agg if cong.peers[r] < 0]
    if aggressor == "alltoall":
        assert set(cong.roles[r] for r in agg) == {"a"} and len(heads) == 6
    elif aggressor in congestion.ONE_SIDED:
        (hot,) = heads
        assert all(cong.peers[r] == hot and cong.roles[r] == "a" for r in agg if r != hot) and cong.roles[hot] == "t"
    else:                    # a registered pattern over the aggressors: every sender names an aggressor
        assert set(cong.roles[r] for r in agg) <= set("srbt")
        assert all(cong.peers[r] in agg for r in agg if cong.roles[r] in "sb")
        victim, load = judged.flows(cong.roles, list(cong.peers), aggressor)
        assert len(load) == {"incast": 5, "pairs": 3, "bipairs": 6, "shift": 6, "bisection": 6}[aggressor]
    assert cong.core_text().startswith("6:") and set(cong.roles) <= set(ROLE_NAMES)


@pytest.mark.parametrize("aggressor", ["pairs", "bipairs", "bisection"])
def test_a_pairing_aggressor_needs_an_even_count(aggressor):
    with pytest.raises(UsageError, match="even number"):
        congestion.layouts(10, {"aggressor": aggressor, "victims": "3"})


def test_an_active_count_other_than_none_or_all_is_refused():
    with pytest.raises(UsageError, match="0 .isolated. or 6"):
        congestion.layouts(8, {}, [3])
    assert [lay.active for lay in congestion.layouts(8, {}, [6])] == [6]


def test_the_flows_of_each_aggressor():
    roles, peers = "vtava", [3, -1, 1, 0, 1]     # victims 0 and 3; aggressors 1 (hotspot), 2, 4
    victim, load = judged.flows(roles, peers, "alltoall")
    assert sorted(victim) == [(0, 3), (0, 3), (3, 0), (3, 0)]
    assert sorted(load) == [(1, 2), (1, 4), (2, 1), (2, 4), (4, 1), (4, 2)]
    assert sorted(judged.flows("vtsvs", [3, -1, 1, 0, 1], "incast")[1]) == [(2, 1), (4, 1)]
    assert sorted(judged.flows(roles, peers, "put_incast")[1]) == [(2, 1), (4, 1)]
    assert sorted(judged.flows(roles, peers, "get_bcast")[1]) == [(1, 2), (1, 4)]


def test_the_prediction_on_two_switches_by_hand():
    """Victims h0 and h4 across the 20 MB/s trunk (host cables 60), aggressors h1-h3 and h5-h7
    all-to-all. Each victim's successor is its predecessor, so its two windows to the other are
    one flow (one connection). Alone, that flow has a trunk direction to itself: 20 MB/s. Beside
    the aggressors, each trunk direction carries it and 3 x 3 aggressor flows, every one limited
    there: 20 / 10 each, so the impact is 20 / 2 = 10."""
    hosts = [f"h{i}" for i in range(8)]
    net, where = placed(TWO, hosts)
    roles = "vaaavaaa"
    peers = [4, -1, -1, -1, 0, -1, -1, -1]
    p = judged.predict(net, where, roles, peers, "alltoall")
    assert p.isolated_Bps == pytest.approx(20e6, rel=1e-6)
    assert p.congested_Bps == pytest.approx(2e6, rel=1e-6)
    assert p.impact == pytest.approx(10, rel=1e-6)
    assert "trunk" in p.bottleneck and any("trunk" in c for c in p.shared)
    # victims on one switch share no cable with an incast into h5: nothing to predict but 1
    q = judged.predict(net, where, "vvssstss", [1, 0, 5, 5, 5, -1, 5, 5], "incast")
    assert q.impact == pytest.approx(1.0) and q.shared == []
    # victims on one host: nothing leaves it
    assert judged.predict(net, np.zeros(8, dtype=np.int64), roles, peers, "alltoall") is None


def test_the_prediction_on_the_fat_tree_names_the_shared_up_link():
    hosts = [f"h{i}" for i in range(8)]
    net, where = placed(FAT, hosts)
    (_, cong) = congestion.layouts(8, {"aggressor": "alltoall"})
    p = judged.predict(net, where, cong.roles, list(cong.peers), "alltoall")
    assert p.impact == pytest.approx(2.0, rel=1e-6) and p.shared


def _point(bench, active, samples, seed="1", roles="vaaav", peers=(4, -1, -1, -1, 0), hist=None):
    return SimpleNamespace(bench=bench, size=131072, active=active, samples=list(samples),
                           params={"aggressor": "alltoall", "seed": seed}, roles=roles, peers=list(peers),
                           op_histogram=hist)




def test_the_tail_is_of_single_ops_where_every_launch_timed_them():
    """With --per-op the p99's factor is the ratio of the launches' single-op p99s: here the
    congested ops have a tail (1% at 10x) that their batched samples, means of many ops, hide."""
    rng = np.random.default_rng(5)
    pts = []
    for _ in range(3):
        ops = rng.lognormal(np.log(1e-6), 0.01, 20000)
        slow = ops.copy()
        slow[rng.choice(len(slow), 400, replace=False)] *= 10
        samples = ops[:200]
        pts += [_point("message.victim_latency", 0, samples, hist=histogram(ops)),
                _point("message.victim_latency", 3, samples * 1.1, hist=histogram(slow))]
    (m,) = judged.impacts(pts)
    assert m.tail_of == "ops" and 9 <= m.tail[1] <= m.tail[0] <= m.tail[2] <= 11
    assert 1.09 <= m.median[0] <= 1.11                     # the median stays the samples'
    assert any(line.split()[-3] == "ops" for line in judged.lines([m]))
    pts[-1].op_histogram = None                            # a launch without single ops: the samples' tail
    (m,) = judged.impacts(pts)
    assert m.tail_of == "samples" and 1.09 <= m.tail[0] <= 1.11


def test_the_impact_factors_pool_launches_and_draws():
    rng = np.random.default_rng(3)
    pts = []
    for seed, slow in (("1", 2.0), ("2", 3.0)):
        for _ in range(3):
            base = rng.lognormal(np.log(1e-3), 0.02, 200)
            pts += [_point("message.victim_bandwidth", 0, base, seed),
                    _point("message.victim_bandwidth", 3, base * slow, seed)]
    (m,) = judged.impacts(pts)
    assert (m.victims, m.aggressors, m.aggressor) == (2, 3, "alltoall")
    assert sorted(round(x, 6) for x in m.draws) == [2.0, 3.0]
    r, lo, hi = m.median
    assert 1.9 <= lo <= r <= hi <= 3.1 and 2.0 <= r <= 3.0
    assert m.tail[1] <= m.tail[0] <= m.tail[2] and m.predicted is None
    assert any(line.startswith("bandwidth ") for line in judged.lines([m]))


def test_a_test_measured_only_isolated_has_no_factor():
    assert judged.impacts([_point("message.victim_latency", 0, [1e-6] * 20)]) == []


def test_the_tail_ratio_is_of_the_launch_quantiles():
    base = [np.arange(1, 101, dtype=float)] * 3
    new = [2 * x for x in base]
    assert launches.ratio_ci(base, new, q=0.99)[0] == pytest.approx(2.0)
    spiky = [np.r_[np.ones(99), 50.0]] * 3
    assert launches.ratio_ci(base, spiky, q=0.99)[0] == pytest.approx(1 / 99)
    assert launches.ratio_ci(base, spiky)[0] == pytest.approx(1 / 50.5)
    with pytest.raises(ValueError):
        launches.ratio_ci(base, new, q=1.0)


def test_every_role_has_a_footprint():
    for name in congestion.BENCHES:
        b = REGISTRY[name]
        assert b.pattern == "congestion" and set(b.footprint.alloc) == set("vaisrbt")


@pytest.mark.parametrize("argv, says", [
    (["-n", "5", "--victims", "9"], "victims=9 with 5 ranks"),
    (["-n", "3"], "at least 4 ranks"),
    (["-n", "5", "--aggressor", "alltoall,flood"], "unknown aggressor 'flood'"),
    (["-n", "5", "--victim", "pingpong"], "unknown victim test 'pingpong'"),
    (["-n", "5", "--victim", "message.nothing"], "'message.nothing' cannot be a victim test: no such benchmark"),
    (["-n", "5", "--victim", "message.hotspot"], "its hotspot pattern gives its ranks roles"),
    (["-n", "5", "--victim", "fabric.pingpong"], "its level runs in a core of its own"),
    (["-n", "5", "--victim", "message.victim_latency"], "a congestion test measures congestion itself"),
    (["-n", "8", "--victim", "message.bibw"], "its bipairs pattern"),
    (["-n", "5", "--victim", "coll.allreduce", "--sizes", "6"], "not a whole number of float elements"),
    (["-n", "5", "--param", "victim=coll.bcast"], "by their options"),
    (["-n", "5", "--draws", "0"], "--draws: 0 is not between 1 and 100"),
    (["-n", "5", "--param", "seed=3"], "by their options"),
])
def test_bad_input_is_one_line_and_exit_2_before_anything_runs(argv, says, capsys):
    assert main(["congestion", *argv, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_the_report_tables_the_impact_factors():
    from fabriclab.report import html
    pts = [_point("message.victim_bandwidth", 0, [1e-3] * 50), _point("message.victim_bandwidth", 3, [2e-3] * 50)]
    doc = SimpleNamespace(points=pts, header=SimpleNamespace(hosts=None, network=None))
    out = "".join(html._congestion([SimpleNamespace(name="r", doc=doc)]))
    assert 'id="congestion"' in out and "<td>bandwidth</td>" in out and "2.00 [2.00, 2.00]" in out
    assert html._congestion([SimpleNamespace(name="r", doc=SimpleNamespace(points=[], header=doc.header))]) == []


def test_a_victim_test_is_a_gpcnet_test_or_any_benchmark_by_its_full_name():
    assert congestion.victim_test("latency") == ("message.victim_latency", None)
    assert congestion.victim_test("coll.allreduce") == ("message.victim", "coll.allreduce")
    with pytest.raises(UsageError, match="unknown victim test 'ring'"):
        congestion.victim_test("ring")
    assert congestion.test_name("message.victim_allreduce", {}) == "allreduce"
    assert congestion.test_name("message.victim", {"victim": "message.pingpong"}) == "message.pingpong"


@pytest.mark.parametrize("name, victims, ok", [
    ("message.pingpong", 2, True), ("coll.allreduce", 2, True), ("app.sort", 3, True), ("message.alltoall", 2, True),
    ("memory.copy", 2, True), ("tcp.rr_poll", 2, True), ("deposit.put_lat", 2, True),
    ("message.pairs_nothing", 2, False), ("message.saturation", 4, False), ("ucx.pingpong", 2, False),
    ("message.victim", 2, False),
])
def test_which_benchmarks_a_victim_runs(name, victims, ok):
    bench = REGISTRY.get(name)
    if ok:
        congestion.check_victim(bench, name, victims)
    else:
        with pytest.raises(UsageError, match="cannot be a victim test"):
            congestion.check_victim(bench, name, victims)


def test_a_benchmark_that_needs_more_ranks_than_the_victims_is_refused():
    fake = SimpleNamespace(pattern=None, level="message", min_ranks=3)
    with pytest.raises(UsageError, match="it needs 3 ranks and there are 2 victims"):
        congestion.check_victim(fake, "message.three", 2)


def test_a_victim_running_a_benchmark_holds_what_that_benchmark_holds():
    """The footprint of message.victim's victims is the benchmark's point on the victims (two of
    ten here: a fifth) plus two pages; an aggressor's is the GPCNeT tests' own."""
    from fabriclab.suite.footprint import PAGE, At
    fp = REGISTRY["message.victim"].footprint
    for name, role in (("message.pingpong", "s"), ("coll.allreduce", "b")):
        inner = REGISTRY[name]
        at = At(size=64 << 10, buffers=1, nranks=10, active=8, params={"victim": name, "victims": "0"})
        mine = At(size=64 << 10, buffers=1, nranks=2, active=2, params=dict(inner.defaults))
        layout = 2 * PAGE if inner.pattern else 0
        assert fp.allocated("v", at) == 2 * PAGE + layout + inner.footprint.allocated(role, mine)
    at = At(size=8, nranks=10, active=8, params={**REGISTRY["message.victim"].defaults, "aggressor": "alltoall"})
    assert fp.allocated("a", at) == REGISTRY["message.victim_latency"].footprint.allocated("a", at)


@pytest.mark.parametrize("command", [["congestion"], ["check", "-o", "{tmp}/check"]])
def test_the_default_number_of_ranks_is_one_the_command_takes(command, fake_core, tmp_path, capsys):
    """congestion and check's congestion test need two victims and two aggressors: -n is 4 unless given."""
    argv = [a.format(tmp=tmp_path) for a in command]
    assert main([*argv, "--dry-run", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"]]) == 0, \
        capsys.readouterr().err
    out = capsys.readouterr().out
    assert "message.victim_" in out and " -n 4 " in out


def test_a_check_without_the_congestion_test_launches_two_ranks_by_default(fake_core, tmp_path, capsys):
    """Inside an allocation of two tasks, `check --tests collectives` fits: only the congestion
    test needs four ranks."""
    argv = ["check", "--tests", "collectives", "-o", str(tmp_path / "c"), "--dry-run", "--core", fake_core["core"],
            "--mpiexec", fake_core["mpiexec"]]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "coll.allreduce" in out and " -n 2 " in out and " -n 4 " not in out
