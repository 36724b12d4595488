"""Traffic patterns without MPI: role layouts, per-rank figures, fairness,
the saturation plateau, cache-state buffer planning, and the schema of
pattern points."""
import copy
import math

import numpy as np
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.analysis import merge, ranks
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.suite import buffers, patterns
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.measure.plan import Sampling, build, variants
from fabriclab.measure.runner import derive

NS = range(2, 17)


def _check_peers(lay):
    for q, (role, peer) in enumerate(zip(lay.roles, lay.peers)):
        if role == "i":
            assert peer == -1
        if peer >= 0:
            assert peer != q and 0 <= peer < len(lay.roles)


@pytest.mark.parametrize("n", NS)
def test_hotspot_roles(n):
    for a in range(1, n):
        lay = patterns.layout("hotspot", n, a)
        assert lay.roles == "t" + "s" * a + "i" * (n - 1 - a)
        assert all(lay.peers[q] == 0 for q in range(1, a + 1))
        _check_peers(lay)
    assert [lay.active for lay in patterns.layouts("hotspot", n, None)] == list(range(1, n))


@pytest.mark.parametrize("n", [k for k in NS if k % 2 == 0])
@pytest.mark.parametrize("pattern,send,recv", [("pairs", "s", "r"), ("bipairs", "b", "b")])
def test_pair_roles_cross_the_halves(n, pattern, send, recv):
    half = n // 2
    for a in range(1, half + 1):
        lay = patterns.layout(pattern, n, a)
        for k in range(half):
            if k < a:
                assert (lay.roles[k], lay.roles[k + half]) == (send, recv)
                assert (lay.peers[k], lay.peers[k + half]) == (k + half, k)
            else:
                assert lay.roles[k] == lay.roles[k + half] == "i"
        _check_peers(lay)
    expect = list(range(1, half + 1)) if pattern == "pairs" else [half]
    assert [lay.active for lay in patterns.layouts(pattern, n, None)] == expect


@pytest.mark.parametrize("n", NS)
def test_all_roles(n):
    lay = patterns.layout("all", n, n)
    assert lay.roles == "b" * n and lay.peers == (-1,) * n
    assert lay.core_text() == f"{n}:" + ",".join("b" * n)


@pytest.mark.parametrize("n", [k for k in NS if k % 2 == 0])
@pytest.mark.parametrize("seed", [1, 7])
def test_bisection_is_a_perfect_matching_and_the_models(n, seed):
    from types import SimpleNamespace

    from fabriclab.model.traffic import Traffic
    lay = patterns.layout("bisection", n, n // 2, seed)
    assert lay.roles == "b" * n
    assert all(lay.peers[lay.peers[q]] == q and lay.peers[q] != q for q in range(n))
    src, dst = Traffic("bisection", seed=seed).flows(SimpleNamespace(n_nodes=n))
    assert {(int(s), int(d)) for s, d in zip(src, dst)} == {(q, lay.peers[q]) for q in range(n)}


def test_core_text_and_bad_active():
    assert patterns.layout("hotspot", 4, 2).core_text() == "2:t,s0,s0,i"
    assert patterns.layout("pairs", 4, 1).core_text() == "1:s2,i,r0,i"
    for pattern, n, a in [("hotspot", 4, 4), ("pairs", 4, 3), ("hotspot", 4, 0)]:
        with pytest.raises(UsageError, match="outside"):
            patterns.layout(pattern, n, a)


# ---- per-rank figures and fairness on fixed data

def _pattern_point():
    """Hotspot, 4 ranks, 2 senders: rank 1 takes 1 us per 1000-byte op, rank 2 2 us."""
    return {"bench": "message.hotspot", "size": 1000, "stride": 1, "conns": 1, "active": 2,
            "bytes_per_op": 2000, "legs_per_op": 1, "concurrent": False, "messages_per_op": 2,
            "samples": [2e-6, 2.1e-6, 1.9e-6], "roles": "tssi", "peers": [-1, 0, 0, -1],
            "rank_sent_bytes": [0, 1000, 1000, 0], "rank_recv_bytes": [2000, 0, 0, 0],
            "rank_samples": [[2e-6, 2e-6, 2e-6], [1e-6, 1.1e-6, 0.9e-6], [2e-6, 2.1e-6, 1.9e-6], None]}


def test_per_rank_aggregate_and_fairness():
    rec = _pattern_point()
    rec = derive(rec, ["h0", "h0", "h1", "h1"]).to_dict()
    by = {r["rank"]: r for r in rec["ranks"]}
    assert set(by) == {0, 1, 2}  # the idle rank is not listed
    assert by[0]["role"] == "target" and by[0]["bandwidth_Bps"] == pytest.approx(2000 / 2e-6)
    assert by[1]["bandwidth_Bps"] == pytest.approx(1e9) and by[2]["bandwidth_Bps"] == pytest.approx(5e8)
    assert by[2]["host"] == "h1" and by[1]["median_s"] == pytest.approx(1e-6)
    assert rec["aggregate_bandwidth_Bps"] == pytest.approx(2000 / 2e-6)  # all payload / slowest
    assert rec["message_rate_per_s"] == pytest.approx(2 / 2e-6)
    f = rec["fairness"]
    assert f["n"] == 2 and f["min_max_ratio"] == pytest.approx(0.5)
    assert f["jain"] == pytest.approx((1.5e9 ** 2) / (2 * (1e18 + 0.25e18)))


def test_fairness_extremes():
    assert ranks.fairness([3.0, 3.0, 3.0]).jain == pytest.approx(1.0)
    # eight equal shares whose index rounded a last bit above 1 and failed the schema's check
    even = ranks.fairness([8459776330.097977] * 8)
    assert even.jain == 1.0 and type(even).from_dict(even.to_dict()) == even
    one = ranks.fairness([5.0, 0.0, 0.0, 0.0])
    assert one.jain == pytest.approx(0.25) and one.min_max_ratio == 0
    assert ranks.fairness([]) is None and ranks.fairness([0.0]) is None


def test_passive_target_has_no_figures():
    rec = _pattern_point()
    rec["rank_samples"][0] = None
    rec = derive(rec).to_dict()
    target = next(r for r in rec["ranks"] if r["role"] == "target")
    assert target["median_s"] is None and target["bandwidth_Bps"] is None


# ---- the saturation plateau

def test_plateau_at_the_knee():
    rates = [100, 195, 290, 300, 302, 301, 303]
    p = ranks.plateau(list(range(1, 8)), rates)
    assert p == {"active": 4, "rate_Bps": 303, "reached": True}


def test_plateau_not_reached_when_every_pair_gains():
    p = ranks.plateau([1, 2, 3, 4], [100, 200, 300, 400])
    assert p["reached"] is False and p["active"] == 4 and p["rate_Bps"] == 400


def test_plateau_with_noise_and_a_drop():
    rng = np.random.default_rng(3)
    for _ in range(50):
        knee = int(rng.integers(2, 7))
        rates = [min(a, knee) * 100.0 * (1 + rng.uniform(-0.005, 0.005)) for a in range(1, 9)]
        assert ranks.plateau(list(range(1, 9)), rates)["active"] == knee
    assert ranks.plateau([1, 2, 3], [100, 150, 120])["active"] == 2  # contention after the peak
    assert ranks.plateau([], []) is None


# ---- cache-state buffer planning

def test_warm_buffers_wrap_within_the_region():
    for size in (0, 1, 8, 4096, 65536, buffers.WARM_REGION, 4 << 20):
        n = buffers.count(size, "warm", 32 << 20)
        assert n >= 1 and (n == 1 or n * size <= buffers.WARM_REGION)
    assert buffers.count(4 << 20, "warm", 32 << 20) == 1
    assert buffers.count(4096, "warm", 32 << 20) == buffers.WARM_REGION // 4096


def test_cold_buffers_exceed_twice_the_llc():
    llc = 32 << 20
    for size in (8, 4096, 1 << 20, 64 << 20, 256 << 20):
        n = buffers.count(size, "cold", llc)
        assert n >= 2 and (n - 1) * size >= 2 * llc > (n - 2) * size
    assert buffers.plan([8, 1 << 20], "cold", None) == [buffers.count(8, "cold", buffers.DEFAULT_LLC),
                                                       buffers.count(1 << 20, "cold", buffers.DEFAULT_LLC)]
    with pytest.raises(UsageError, match="warm or cold"):
        buffers.count(8, "lukewarm", llc)


def test_every_op_of_a_window_has_its_own_buffer():
    for cache in buffers.CACHE_STATES:
        for size in (0, 8, 4096, 64 << 10, 4 << 20):
            for window in (1, 16, 64):
                n = buffers.count(size, cache, 32 << 20, window)
                assert n == max(window, buffers.count(size, cache, 32 << 20))
    assert buffers.count(64 << 10, "warm", 32 << 20, 64) == 64          # a working set of 4 MiB per side
    assert buffers.count(8, "warm", 32 << 20, 64) == buffers.WARM_REGION // 8   # small ones still rotate 64 KiB


def test_plan_carries_buffers_and_cache():
    plan = build(["message.pingpong", "message.stream"], "8,1M", None, ["window=8,128", "window_buffers=per-op"],
                 Sampling(), False, 2, cache="cold", llc_bytes=1 << 20)
    pingpong, stream8, stream128 = plan.jobs
    cold8 = buffers.count(8, "cold", 1 << 20)
    assert pingpong.buffers == (cold8, 3)
    # windows: 8 ops need no more than the cold rotation's 3 buffers of 1 MiB; 128 ops need 128
    assert stream8.buffers == (cold8, 8) and stream128.buffers == (cold8, 128)
    assert plan.to_dict()["cache"]["state"] == "cold"


# ---- plans of patterns and variants

def test_pattern_plans_and_axes():
    plan = build(["message.hotspot", "message.saturation", "message.alltoall"], "8", None, None, Sampling(),
                 False, 8, active="1:3")
    hot, sat, a2a = plan.jobs
    assert [lay.active for lay in hot.layouts] == [1, 2, 3] and [lay.active for lay in sat.layouts] == [1, 2, 3]
    assert [lay.active for lay in a2a.layouts] == [8]  # no active axis: everyone
    assert plan.npoints == 3 + 3 + 1


def test_variants_of_listed_parameter_values():
    assert variants({"check": "epoll,scan", "window": "8"}) == [{"check": "epoll", "window": "8"},
                                                                 {"check": "scan", "window": "8"}]
    plan = build(["tcp.conns"], "4K", None, ["check=epoll,scan"], Sampling(), False, 2, conns="1,4")
    assert [j.variant for j in plan.jobs] == ["", "check=scan"] and plan.npoints == 4


def test_default_suite_leaves_out_what_the_ranks_cannot_run():
    plan = build(None, None, None, None, Sampling(), False, 3)
    assert "message.bibw" not in {j.bench.name for j in plan.jobs}
    assert any("message.bibw" in n and "even" in n for n in plan.notes)
    names = {j.bench.name for j in build(None, None, None, None, Sampling(), False, 2).jobs}
    assert {"message.bibw", "tcp.rr_epoll", "tcp.conns", "message.conns", "tcp.scatter"} <= names
    assert not names & {"message.hotspot", "message.saturation", "message.alltoall"}


# ---- bad input: one line, exit 2, nothing launched

@pytest.mark.parametrize("argv,msg", [
    (["run", "message.saturation", "-n", "3"], "even number of ranks"),
    (["run", "message.hotspot", "-n", "1"], "needs at least 2 ranks"),
    (["run", "deposit.hotspot_get", "-n", "1"], "needs at least 2 ranks"),
    (["run", "message.bibw", "-n", "5"], "even number of ranks"),
    (["run", "memory.copy", "-n", "0"], "0 is not between 1 and"),
    (["run", "tcp.conns", "--conns", "0"], "connections must be"),
    (["run", "tcp.conns", "--conns", "2000"], "connections must be"),
    (["run", "tcp.scatter", "-p", "segments=5000"], "segments must be"),
    (["run", "message.scatter", "-p", "segments=0"], "segments must be"),
    (["run", "tcp.scatter", "-s", "4M"], "segment sizes"),
    (["run", "message.pingpong", "--cache", "lukewarm"], "invalid choice: 'lukewarm'"),
    (["run", "message.hotspot", "-n", "4", "--active", "4"], "outside 1..3"),
    (["run", "message.pingpong", "--conns", "4"], "conns axis"),
    (["run", "message.pingpong", "-p", "completion=maybe"], "completion must be one of"),
])
def test_bad_pattern_input(argv, msg, capsys, fake_core):
    assert main([*argv, "--mpiexec", fake_core["mpiexec"], "--core", fake_core["core"]]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_pattern_fewer_ranks_than_needed():
    from dataclasses import replace
    b = replace(REGISTRY["message.hotspot"], min_ranks=3)
    with pytest.raises(UsageError, match="at least 3 ranks"):
        b.check_ranks(2)


# ---- through the CLI with the fake core, and the schema

def test_hotspot_run_records_ranks(fake_core, tmp_path, capsys):
    out = tmp_path / "h.json"
    assert main(["run", "message.hotspot", "-n", "4", "-s", "8,1K", "--mpiexec", fake_core["mpiexec"],
                 "--core", fake_core["core"], "-q", "-o", str(out), "-L", "1"]) == 0
    doc = docs.read(out)
    assert doc["schema_version"] == schema.SCHEMA_VERSION == 18
    pts = docs.points(doc)
    assert [(p["active"], p["size"]) for p in pts] == [(1, 8), (1, 1024), (2, 8), (2, 1024), (3, 8), (3, 1024)]
    for p in pts:
        assert len(p["ranks"]) == p["active"] + 1 and p["fairness"]["n"] == p["active"]
        assert all(r["bandwidth_Bps"] > 0 and math.isfinite(r["bandwidth_Bps"]) for r in p["ranks"])
        assert p["aggregate_bandwidth_Bps"] == pytest.approx(p["bytes_per_op"] / p["summary"]["median"])
    assert main(["show", str(out), "-f", "csv"]) == 0
    csv_out = capsys.readouterr().out
    assert "fairness_jain" in csv_out.splitlines()[0] and len(csv_out.splitlines()) == 7
    assert main(["show", str(out)]) == 0
    assert "Jain" in capsys.readouterr().out


def test_schema_round_trip_of_pattern_fields(fake_core, tmp_path):
    out = tmp_path / "s.json"
    assert main(["run", "message.saturation", "-n", "4", "-s", "64", "--mpiexec", fake_core["mpiexec"],
                 "--core", fake_core["core"], "-q", "-o", str(out)]) == 0
    doc = docs.read(out)
    again = docs.read(out.with_suffix(".ndjson"))
    assert docs.points(again) == docs.points(doc)
    p = docs.points(doc)[0]
    assert {"roles", "peers", "rank_samples", "rank_sent_bytes", "rank_recv_bytes", "ranks", "fairness",
            "aggregate_bandwidth_Bps", "message_rate_per_s", "variant", "cache", "buffers"} <= set(p)
    broken = copy.deepcopy(doc)
    docs.points(broken)[0]["rank_samples"] = [[1e-6]]
    with pytest.raises(UsageError, match="rank samples"):
        docs.typed(broken)


def test_version_1_documents_still_load_and_compare(fake_core, tmp_path, capsys):
    out = tmp_path / "v.json"
    assert main(["run", "message.pingpong", "-s", "8", "--mpiexec", fake_core["mpiexec"], "--core",
                 fake_core["core"], "-q", "-o", str(out)]) == 0
    doc = docs.read(out)
    old = copy.deepcopy(doc)
    old["schema_version"] = 1
    for p in docs.points(old):
        for k in ("variant", "conns", "cache", "buffers", "concurrent"):
            p.pop(k, None)
    docs.typed(old)
    assert schema.point_key(docs.points(old)[0]) == schema.point_key(docs.points(doc)[0])


def test_strided_copies_are_read_against_the_best_contiguous_copy(fake_core, tmp_path, capsys):
    import csv
    import io
    out = tmp_path / "m.json"
    assert main(["run", "memory.memcpy", "memory.strided_store", "-s", "16K,64K", "--strides", "1,4",
                 "--mpiexec", fake_core["mpiexec"], "--core", fake_core["core"], "-q", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "-f", "csv"]) == 0
    got = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    strided = [r for r in got if r["bench"] == "memory.strided_store"]
    assert len(strided) == 4 and all(float(r["vs_best_copy"]) == pytest.approx(1.0) for r in strided)
    assert all(r["vs_best_copy"] == "" for r in got if r["bench"] == "memory.memcpy")


def test_stored_merged_points_match_a_fresh_merge(fake_core, tmp_path):
    from fabriclab.report.tables import rows
    out = tmp_path / "k.json"
    assert main(["run", "message.pingpong", "message.hotspot", "-n", "4", "-s", "8,1K", "-L", "3",
                 "--seed", "7", "--mpiexec", fake_core["mpiexec"], "--core", fake_core["core"], "-q",
                 "-o", str(out)]) == 0
    doc = docs.read(out)
    assert doc["header"]["plan"]["seed"] == 7 and doc["header"]["plan"]["launches"] == 3
    fresh = docs.typed({k: v for k, v in doc.items() if k != "merged"})
    assert rows(docs.typed(doc)) == rows(fresh)
    m = merge.merged(fresh)
    assert all(len(p.launches) == 3 for p in m) and len(m) == 2 + 3 * 2
    assert "samples" not in doc["merged"][0] and m[0].samples
    again = schema.load(out.with_suffix(".ndjson"))  # a stream has no stored merge: merged when read
    assert rows(again) == rows(docs.typed(doc))


def test_shuffle_is_deterministic_per_seed_and_launch():
    plan = build(["message.pingpong", "message.stream", "tcp.rr_poll"], "0:1M:x4", None, None, Sampling(), False,
                 2, launches=3, seed=5)
    again = build(["message.pingpong", "message.stream", "tcp.rr_poll"], "0:1M:x4", None, None, Sampling(), False,
                  2, launches=3, seed=5)
    orders = [[(j.bench.name, j.sizes) for j in plan.order(k)] for k in range(3)]
    assert orders == [[(j.bench.name, j.sizes) for j in again.order(k)] for k in range(3)]
    assert len({tuple(o) for o in orders}) == 3  # each launch its own order
    for o in orders:  # a permutation of the jobs and of each job's sizes, buffers moved with them
        assert sorted(name for name, _ in o) == sorted(j.bench.name for j in plan.jobs)
        assert all(sorted(sizes) == list(plan.jobs[0].sizes) for _, sizes in o)
    planned = {j.bench.name: dict(zip(j.sizes, j.buffers)) for j in plan.jobs}
    for k in range(3):
        for j in plan.order(k):
            assert dict(zip(j.sizes, j.buffers)) == planned[j.bench.name]
    other = build(["message.pingpong", "message.stream", "tcp.rr_poll"], "0:1M:x4", None, None, Sampling(), False,
                  2, launches=3, seed=6)
    assert [[(j.bench.name, j.sizes) for j in other.order(k)] for k in range(3)] != orders
    one = build(["message.pingpong"], "0:1M:x4", None, None, Sampling(), False, 2, launches=1, seed=5)
    assert one.order(0) == list(one.jobs)  # one launch keeps the registry's order


@pytest.mark.parametrize("argv,msg", [
    (["run", "-L", "0"], "-L/--launches: 0 is not between 1 and 10,000"),
    (["run", "--launches", "x"], "'x' is not a whole number"),
    (["run", "--bind", "sideways"], "invalid choice: 'sideways'"),
    (["run", "--seed", "1.5"], "'1.5' is not a whole number"),
])
def test_bad_launch_input(argv, msg, capsys, fake_core):
    assert main([*argv, "--mpiexec", fake_core["mpiexec"], "--core", fake_core["core"]]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1
