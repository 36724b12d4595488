"""HPC Challenge's network figures: the rings (the congestion tests' random ring reused), the
ping-pong pairs, the named set `hpcc`, the figure arithmetic by HPCC's rules (best of two
methods, geometric mean over the random rings, the ratios), the table and bad input."""
import math

import pytest

from fabriclab.analysis import hpcc
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.measure import plan
from fabriclab.schema.document import load
from fabriclab.schema.records import Point, Summary
from fabriclab.suite import congestion, patterns
from fabriclab.suite.benchmarks import REGISTRY


def _cycle(peers) -> list:
    seen, q = [0], peers[0]
    while q != 0 and len(seen) <= len(peers):
        seen.append(q)
        q = peers[q]
    return seen


def test_the_random_ring_is_the_congestion_tests_own():
    assert congestion.ring is patterns.ring
    for n in (2, 3, 5, 8):
        for seed in (1, 2, 7):
            succ = congestion.ring(list(range(n)), seed)
            lay = patterns.ring_layout(n, "random", seed)
            assert lay.peers == tuple(succ[r] for r in range(n)) and lay.roles == "b" * n and lay.active == n
    # the victims' ring of a congestion point is still drawn from the same function
    lays = congestion.layouts(10, {"victims": 4, "split": 1, "seed": 3, "aggressor": "alltoall"})
    victims = [r for r, role in enumerate(lays[0].roles) if role == "v"]
    assert {v: lays[0].peers[v] for v in victims} == patterns.ring(victims, 3)


def test_every_ring_is_one_cycle_through_every_rank_and_the_natural_one_is_r_plus_one():
    for n in range(2, 10):
        assert patterns.ring_layout(n, "natural", 5).peers == tuple((r + 1) % n for r in range(n))
        for seed in range(1, 15):
            assert sorted(_cycle(patterns.ring_layout(n, "random", seed).peers)) == list(range(n))
    assert len({patterns.ring_layout(8, "random", s).peers for s in range(1, 11)}) > 5   # rings differ by seed
    with pytest.raises(UsageError, match="at least 2 ranks"):
        patterns.ring_layout(1, "natural", 1)


def test_the_cross_pattern_is_every_ordered_pair_in_hpcc_order():
    n = 4
    assert patterns.max_active("cross", n) == 12
    pairs = [patterns.cross_pair(n, k) for k in range(1, 13)]
    assert pairs == [(c, s) for c in range(n) for s in range(n) if s != c]
    lay = patterns.layout("cross", n, 5)       # client 1, server 2
    assert lay.roles == "isri" and lay.peers == (-1, 2, 1, -1)


def test_the_hpcc_set_runs_the_pairs_and_every_ring_in_both_ways():
    p = plan.build(["hpcc"], None, None, [], plan.Sampling(), False, nranks=4)
    rings = [j for j in p.jobs if j.bench.name == "message.ring"]
    pp = [j for j in p.jobs if j.bench.name == "message.cross_pingpong"]
    assert len(pp) == 1 and pp[0].sizes == (8, 2_000_000) and len(pp[0].layouts) == 12
    assert len(rings) == 2 + 2 * 10 and all(j.sizes == (8, 2_000_000) for j in rings)
    # the natural ring once per method (seed means nothing there), the random ones per seed and method
    assert sorted(j.variant for j in rings if "order=random" not in j.variant) == ["", "method=irecv"]
    assert {(j.params["seed"], j.params.get("method", "sendrecv")) for j in rings if "order=random" in j.variant} \
        == {(str(s), m) for s in range(1, 11) for m in ("sendrecv", "irecv")}
    # options still override the set: two seeds, one size
    p = plan.build(["hpcc"], "8", None, ["seed=4,5"], plan.Sampling(), False, nranks=4)
    assert {j.params.get("seed") for j in p.jobs if j.params.get("order") == "random"} == {"4", "5"}
    assert all(j.sizes == (8,) for j in p.jobs)


def _pt(bench, size, samples, active=None, batch=8, **params):
    return Point(bench, size, 2 * size, Summary(median=sorted(samples)[len(samples) // 2], min=min(samples)),
                 active=active, samples=list(samples), params=params, concurrent=bench == hpcc.RING,
                 legs_per_op=1 if bench == hpcc.RING else 2, batch=batch)


def _ring(size, order, method, samples, seed="1"):
    return _pt(hpcc.RING, size, samples, 4, order=order, method=method, seed=seed)


def test_the_figures_follow_hpccs_arithmetic():
    L, B = 8, 2_000_000
    pts = [
        # two pairs; a pair's time is its fastest sample, over two legs
        _pt(hpcc.PINGPONG, L, [4e-6, 3e-6, 9e-6], 1), _pt(hpcc.PINGPONG, L, [6e-6, 8e-6], 2),
        _pt(hpcc.PINGPONG, B, [2e-3, 1e-3], 1), _pt(hpcc.PINGPONG, B, [4e-3, 5e-3], 2),
        # the natural ring: the better of its two methods
        _ring(L, "natural", "sendrecv", [10e-6, 12e-6]), _ring(L, "natural", "irecv", [8e-6, 20e-6]),
        _ring(B, "natural", "sendrecv", [4e-3]), _ring(B, "natural", "irecv", [5e-3]),
        # two random rings: their geometric mean, each the better method; launches pool their samples
        _ring(L, "random", "sendrecv", [40e-6], "1"), _ring(L, "random", "irecv", [30e-6, 50e-6], "1"),
        _ring(L, "random", "sendrecv", [10e-6], "2"), _ring(L, "random", "irecv", [12e-6], "2"),
        _ring(L, "random", "irecv", [11e-6], "2"),
        _ring(B, "random", "sendrecv", [16e-3], "1"), _ring(B, "random", "irecv", [18e-3], "1"),
        _ring(B, "random", "sendrecv", [4e-3], "2"), _ring(B, "random", "irecv", [4e-3], "2"),
        Point("message.pingpong", L, 16, Summary(median=1.0), samples=[1.0]),   # another benchmark: ignored
    ]
    f = hpcc.figures(pts)
    assert (f.pairs, f.rings, f.latency_bytes, f.bandwidth_bytes) == (2, 2, L, B)
    assert f.max_pingpong_latency_s == pytest.approx(3e-6)          # max over pairs of min / 2
    assert f.min_pingpong_latency_s == pytest.approx(1.5e-6)
    assert f.avg_pingpong_latency_s == pytest.approx(2.25e-6)
    assert f.min_pingpong_bandwidth_Bps == pytest.approx(B / 2e-3)  # the slow pair: 4 ms / 2
    assert f.max_pingpong_bandwidth_Bps == pytest.approx(B / 0.5e-3)
    assert f.natural_ring_latency_s == pytest.approx(4e-6)          # irecv's 8 us beats sendrecv's 10
    assert f.random_ring_latency_s == pytest.approx(math.sqrt(15e-6 * 5e-6))
    assert f.natural_ring_bandwidth_Bps == pytest.approx(B / 2e-3)
    assert f.random_ring_bandwidth_Bps == pytest.approx(B / math.sqrt(8e-3 * 2e-3))
    assert f.ratios["natural"] == pytest.approx(1.0) and f.ratios["random"] == pytest.approx(0.5)
    s = f.summary()
    assert s["MaxPingPongLatency_usec"] == pytest.approx(3.0) and s["MinPingPongBandwidth_GBytes"] == pytest.approx(1.0)
    # fabriclab's median of the pooled samples instead of the fastest
    m = hpcc.figures(pts, "median")
    assert m.max_pingpong_latency_s == pytest.approx(3.5e-6) and m.natural_ring_latency_s == pytest.approx(5.5e-6)


def test_each_rank_takes_its_better_method_before_the_slowest_rank():
    """Two ranks, two measurements (samples) of each method in one launch: rank 0 is fast by
    sendrecv, rank 1 by irecv. HPCC: per measurement max over ranks of each rank's better
    method (measurement 0: max(2, 3) = 3 us; 1: max(5, 4) = 5 us), then the fastest: 3 us.
    The slowest rank first (sendrecv's samples 6 and 9 us, irecv's 7 and 8) reads 6 us."""
    def ring(method, per_rank, launch=0):
        p = _ring(8, "natural", method, [max(col) for col in zip(*per_rank)])
        p.rank_samples, p.launch = per_rank, launch
        return p
    pts = [ring("sendrecv", [[2e-6, 5e-6], [6e-6, 9e-6]]), ring("irecv", [[7e-6, 8e-6], [3e-6, 4e-6]])]
    assert hpcc.figures(pts).natural_ring_latency_s == pytest.approx(3e-6 / 2)
    assert hpcc.figures(pts, "median").natural_ring_latency_s == pytest.approx(7.5e-6 / 2)   # medians 7.5, 7.5
    # methods measured in different launches are no measurement of HPCC's: the slowest rank first
    apart = [ring("sendrecv", [[2e-6, 5e-6], [6e-6, 9e-6]]), ring("irecv", [[7e-6, 8e-6], [3e-6, 4e-6]], launch=1)]
    assert hpcc.figures(apart).natural_ring_latency_s == pytest.approx(6e-6 / 2)


def test_hpccs_rule_is_the_typical_fastest_of_its_few_measurements():
    """HPCC prints the fastest of 2 measurements at 2,000,000 B (5 at 8 B), each a loop's mean
    (1 ping-pong, 3 ring iterations; 8 at 8 B). The rule forms those from a launch's samples
    in order and reports the median of each run of measurements' fastest: not the fastest of
    all, which one slow-free sample in hundreds would set."""
    B = 2_000_000
    # ping-pong at B: measurements of 1 op = the samples; pairs of them: min(5,3)=3, min(4,6)=4,
    # min(1,9)=1 -> median 3; the fastest of all (1) would read 3x the bandwidth
    assert hpcc.figures([_pt(hpcc.PINGPONG, B, [5e-3, 3e-3, 4e-3, 6e-3, 1e-3, 9e-3], 1, batch=1)]
                        ).min_pingpong_bandwidth_Bps == pytest.approx(B / 1.5e-3)
    # a ring at B with one op a sample: a measurement is the mean of 3 samples (HPCC's loop of 3)
    assert hpcc.measurements([3.0, 6.0, 9.0, 1.0, 1.0, 1.0, 7.0], 1, 3) == [6.0, 1.0]
    assert hpcc.measurements([3.0, 6.0], 8, 3) == [3.0, 6.0]          # a sample holds 8 ops: one each
    assert hpcc.measurements([3.0, None, 6.0], 1, 8) == [4.5]          # too few: one of them all
    assert hpcc.hpcc_time([[4.0, 2.0, 8.0, 6.0], [5.0, 7.0]], 2) == 5.0  # firsts 2, 6, 5
    assert hpcc.hpcc_time([[4.0]], 2) == 4.0
    with pytest.raises(ValueError):
        hpcc.hpcc_time([[]], 2)


def test_the_arithmetic_pieces():
    assert hpcc.geometric_mean([1e-6, 1e-4]) == pytest.approx(1e-5)
    assert hpcc.best_of_methods({"sendrecv": 3.0, "irecv": 2.0}) == 2.0
    assert hpcc.op_time([3.0, 1.0, 2.0, None], "hpcc") == 1.0 and hpcc.op_time([3.0, 1.0, 2.0], "median") == 2.0
    for bad in ([], [0.0, -1.0]):
        with pytest.raises(ValueError):
            hpcc.geometric_mean(bad)
    with pytest.raises(ValueError):
        hpcc.best_of_methods({})
    with pytest.raises(UsageError):
        hpcc.figures([], "mean")
    assert hpcc.figures([]).max_pingpong_latency_s is None and hpcc.figures([]).ratios["natural"] is None


def test_run_hpcc_through_the_fake_core_ends_with_hpccs_table(fake_core, tmp_path, capsys):
    out = tmp_path / "h.json"
    rc = main(["run", "hpcc", "-s", "8,64K", "-p", "seed=1,2", "--core", fake_core["core"], "--mpiexec",
               fake_core["mpiexec"], "-n", "4", "-L", "1", "--validate", "-o", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "HPCC network figures (4 ranks, 12 ping-pong pairs, 2 random rings" in text
    assert "MaxPingPongLatency_usec" in text and "RandomlyOrderedRingBandwidth_GBytes" in text
    assert "ping-pong : natural ring : random ring bandwidth = 1 : " in text and "full crossbar" in text
    doc = load(out)
    assert all(p.validation["errors"] == 0 for p in doc.points)
    f = hpcc.figures(doc.points)
    assert None not in (f.max_pingpong_latency_s, f.random_ring_bandwidth_Bps, f.natural_ring_latency_s)
    assert main(["show", str(out)]) == 0 and "NaturallyOrderedRingLatency_usec" in capsys.readouterr().out
    page = tmp_path / "h.html"
    assert main(["report", str(out), "-o", str(page)]) == 0
    assert "HPCC: latencies (8 B)" in page.read_text()


@pytest.mark.parametrize("argv, why", [
    (["hpcc", "-p", "seed="], "malformed parameter"),
    (["hpcc", "-p", "seed=1,,2"], "empty value"),
    (["message.ring", "-n", "1"], "needs at least 2 ranks"),
    (["message.ring", "-p", "order=natural", "-p", "seed=3"], "applies only with order=random"),
    (["message.ring", "-p", "method=isend"], "must be one of sendrecv, irecv"),
])
def test_bad_input_ends_in_one_line_before_launch(fake_core, capsys, argv, why):
    assert main(["run", *argv, "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-L", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and len(err.splitlines()) == 1


def test_the_registry_states_hpccs_two_benchmarks():
    ring, pp = REGISTRY["message.ring"], REGISTRY["message.cross_pingpong"]
    assert ring.params["method"].choices == ("sendrecv", "irecv") and ring.params["order"].choices == ("natural", "random")
    assert ring.pattern == "ring" and ring.concurrent and pp.pattern == "cross" and pp.legs == 2
    assert ring.suite is None and pp.suite is None        # not in the default run


# hpccoutf.txt's summary as Debian's hpcc 1.5.0 wrote it on two processes (trimmed)
HPCCOUTF = """Begin of Summary section.
VersionMajor=1
CommWorldProcs=2
MPI_Wtick=1.000000e-09
HPL_Tflops=0.00117263
MaxPingPongLatency_usec=0.417278
RandomlyOrderedRingLatency_usec=0.34547
MinPingPongBandwidth_GBytes=0.525042
NaturallyOrderedRingBandwidth_GBytes=9.04285
RandomlyOrderedRingBandwidth_GBytes=5.73175
MinPingPongLatency_usec=0.386972
AvgPingPongLatency_usec=0.402125
MaxPingPongBandwidth_GBytes=11.0856
AvgPingPongBandwidth_GBytes=5.80534
NaturallyOrderedRingLatency_usec=0.347867
FFTEnblk=16
End of Summary section.
"""


def test_hpccoutf_summary_is_read_with_every_figure_checked():
    from fabriclab.imports import hpcc as hpccout
    got = hpccout.summary("HPL output\n" + HPCCOUTF)
    assert got["CommWorldProcs"] == 2 and got["MaxPingPongLatency_usec"] == 0.417278
    assert set(got) == {"CommWorldProcs", *(name for name, _, _ in hpcc.SUMMARY)}   # the same ten names
    assert "HPL_Tflops" not in got
    for bad, why in ((HPCCOUTF.replace("End of Summary section.", ""), "no summary section"),
                     (HPCCOUTF.replace("AvgPingPongLatency_usec=0.402125\n", ""), "lacks AvgPingPongLatency_usec"),
                     (HPCCOUTF.replace("=0.34547", "=nan"), "outside"),
                     (HPCCOUTF.replace("=0.34547", "=fast"), "not a number"),
                     (HPCCOUTF.replace("CommWorldProcs=2", "CommWorldProcs=1"), "2 or more processes"),
                     (HPCCOUTF.replace("=0.34547", "=0"), "did not measure")):
        with pytest.raises(UsageError, match=why):
            hpccout.summary(bad)


def test_the_report_view_draws_each_runs_figures_as_bars():
    from types import SimpleNamespace
    from fabriclab.report import hpcc_view
    pts = [_pt(hpcc.PINGPONG, 8, [4e-6], 1), _pt(hpcc.PINGPONG, 2_000_000, [2e-3], 1),
           _ring(8, "natural", "sendrecv", [10e-6]), _ring(2_000_000, "natural", "irecv", [4e-3]),
           _ring(8, "random", "irecv", [20e-6]), _ring(2_000_000, "random", "irecv", [8e-3])]
    runs = [SimpleNamespace(name=n, doc=SimpleNamespace(points=pts)) for n in ("a", "b")]
    lat, bw = hpcc_view.view(runs)
    assert lat.title == "HPCC: latencies (8 B)" and bw.title == "HPCC: bandwidths (2,000,000 B)"
    assert lat.bars[:3] == [("a max ping-pong", pytest.approx(2.0)), ("a natural ring", pytest.approx(5.0)),
                            ("a random ring", pytest.approx(10.0))]
    assert [name for name, _ in bw.bars] == [f"{r} {k}" for r in "ab" for k in ("min ping-pong", "natural ring",
                                                                                 "random ring")]
    assert bw.bars[1][1] == pytest.approx(1.0)                    # 2,000,000 B over 2 ms, in GB/s
    assert hpcc_view.view([SimpleNamespace(name="x", doc=SimpleNamespace(points=[]))]) == []


def test_fabriclab_import_reads_hpccs_network_figures(tmp_path, capsys):
    src, out = tmp_path / "hpccoutf.txt", tmp_path / "imported.json"
    src.write_text("HPL output\n" + HPCCOUTF)
    assert main(["import", str(src), "--from", "hpcc", "-o", str(out)]) == 0
    doc = load(out)
    assert doc.header.imported["tool"] == "hpcc" and len(doc.points) == 10 and doc.header.nranks == 2
    ring = next(p for p in doc.points if p.imported["column"] == "NaturallyOrderedRingLatency_usec")
    assert (ring.bench, ring.variant, ring.size) == ("message.ring", "method=best", 8)
    assert ring.summary.median == pytest.approx(2 * 0.347867e-6)          # an op is two messages each way
    pp = next(p for p in doc.points if p.imported["column"] == "MinPingPongBandwidth_GBytes")
    assert (pp.bench, pp.variant, pp.size) == ("message.cross_pingpong", "pairs=min", 2_000_000)
    assert pp.bandwidth_Bps == pytest.approx(0.525042e9)                   # its figure read back as printed
    f = hpcc.figures(doc.points)
    assert f.summary() == pytest.approx({k: v for k, v in hpccout_summary().items() if k != "CommWorldProcs"})
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    assert "HPCC network figures (2 ranks, as HPCC printed them" in capsys.readouterr().out


def hpccout_summary() -> dict:
    from fabriclab.imports import hpcc as hpccout
    return hpccout.summary(HPCCOUTF)
