"""How a window's ops share the cache state's buffers (`window_buffers`):
two-sided windows share them as osu_bw, osu_bibw and IMB do (from 64 KiB up
one buffer per side under warm), one-sided windows take a buffer per op as
osu_put_bw does; the other way is a parameter, recorded on every point, and
the footprint follows the kernels' arithmetic either way."""
import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.suite import buffers, footprint as fp
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.measure.plan import Sampling, build

K, M = 1 << 10, 1 << 20
P = 4 * K
ONE_SIDED = {"deposit.put_bw", "deposit.get_bw", "deposit.put_bibw", "deposit.hotspot_put", "deposit.hotspot_get",
             "fabric.put_bw", "fabric.get_bw", "fabric.hotspot_put", "ucx.put_bw", "ucx.get_bw"}
# windows whose ops have no cache state to rotate (congestion victims: their ring's few slots)
UNPLANNED = {"message.victim_bandwidth"}
BANDWIDTH_SIZES = "64K,256K,1M,4M"


def test_each_windowed_benchmark_defaults_to_its_anchors_layout():
    windowed = {n for n, b in REGISTRY.items() if "window" in b.params} - UNPLANNED
    layouts = {n: REGISTRY[n].params["window_buffers"].default for n in windowed}
    assert {n for n, v in layouts.items() if v == "per-op"} == ONE_SIDED
    assert {"message.stream", "message.bibw", "message.postal_full", "message.hotspot", "message.scatter",
            "fabric.stream", "ucx.stream"} <= {n for n, v in layouts.items() if v == "shared"}
    assert all(REGISTRY[n].params["window_buffers"].choices in (("shared", "per-op"), ("per-op", "shared"))
               for n in windowed)


def _buffers(names, params=None, cache="warm") -> dict:
    plan = build(names, BANDWIDTH_SIZES, None, params, Sampling(), False, 2, cache=cache, llc_bytes=32 * M)
    return {(j.bench.name, j.params.get("window_buffers", "")): j.buffers for j in plan.jobs}


def test_warm_two_sided_windows_send_from_one_buffer_into_one():
    got = _buffers(["message.stream", "message.bibw", "deposit.put_bw", "deposit.put_bibw"])
    assert got[("message.stream", "")] == got[("message.bibw", "")] == (1, 1, 1, 1)
    assert got[("deposit.put_bw", "")] == got[("deposit.put_bibw", "")] == (64, 64, 64, 64)
    # below 64 KiB a shared window still rotates through 64 KiB, as every warm transfer does
    small = build(["message.stream"], "8K", None, None, Sampling(), False, 2).jobs[0].buffers
    assert small == (8,)


def test_the_other_layout_is_a_parameter():
    got = _buffers(["message.stream", "deposit.put_bw"], ["window_buffers=shared,per-op"])
    assert got[("message.stream", "per-op")] == got[("deposit.put_bw", "per-op")] == (64, 64, 64, 64)
    assert got[("message.stream", "shared")] == got[("deposit.put_bw", "shared")] == (1, 1, 1, 1)
    # a window's own buffers raise the cold rotation too: 2 x 32 MiB / 4 MiB + 1 = 17 against 64
    cold = _buffers(["message.stream"], ["window_buffers=shared,per-op"], cache="cold")
    assert cold[("message.stream", "shared")][-1] == 17 and cold[("message.stream", "per-op")][-1] == 64


def _run(fake, tmp_path, *argv):
    out = tmp_path / "r.json"
    rc = main(["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(out), "-q", "-L", "1",
               *argv])
    return rc, (docs.read(out) if out.exists() else None)


def test_every_point_records_its_layout(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "message.stream", "deposit.put_bw", "-s", "1M")
    assert rc == 0
    got = {p["bench"]: (p["params"]["window_buffers"], p["buffers"]) for p in docs.points(doc)}
    assert got == {"message.stream": ("shared", 1), "deposit.put_bw": ("per-op", 64)}
    rc, doc = _run(fake_core, tmp_path, "message.bibw", "-s", "1M", "-p", "window_buffers=per-op")
    assert rc == 0
    assert [(p["params"]["window_buffers"], p["buffers"]) for p in docs.points(doc)] == [("per-op", 64)]


def test_an_unknown_layout_is_refused_in_one_line(fake_core, tmp_path, capsys):
    rc, _ = _run(fake_core, tmp_path, "message.stream", "-s", "1M", "-p", "window_buffers=multiple")
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "window_buffers must be one of shared, per-op, not 'multiple'" in err


def _at(bench: str, **kw) -> fp.At:
    kw["params"] = {**REGISTRY[bench].defaults, **kw.get("params", {})}
    return fp.At(**kw)


def test_footprints_follow_the_layout():
    per_op = {"window_buffers": "per-op"}
    # message_patterns.c: three senders share the target's 64 slots: 22 each, or a window's (64) each
    target = lambda **kw: REGISTRY["message.hotspot"].footprint.bytes("t", _at("message.hotspot", **kw))
    assert target(size=K, buffers=64, senders=3, nranks=4) == P + P + page(3 * 22 * K) + P
    assert target(size=K, buffers=64, senders=3, nranks=4, params=per_op) == P + P + 3 * 64 * K + P
    # message_scatter.c: 1 KiB segments, 32 KiB messages: 64 buffers of 1 KiB are 2 messages, or a window's 64
    sender = lambda **kw: REGISTRY["message.scatter"].footprint.bytes("s", _at("message.scatter", **kw))
    assert sender(size=K, buffers=64) == P + 2 * 32 * K + P
    assert sender(size=K, buffers=64, params=per_op) == P + 64 * 32 * K + P
    # the concurrent all-to-all: a window of 8 exchanges shares 2 arrays of 4 blocks, or takes 8
    alltoall = lambda **kw: REGISTRY["message.alltoall"].footprint.allocated("b", _at("message.alltoall", **kw))
    concurrent = {"variant": "concurrent", "window": "8"}
    assert alltoall(size=K, buffers=5, nranks=4, params=concurrent) == P + 2 * page(2 * 4 * K) + page(8 * 2 * 4 * 8)
    assert alltoall(size=K, buffers=5, nranks=4, params={**concurrent, **per_op}) == (
        P + 2 * page(8 * 4 * K) + page(8 * 2 * 4 * 8))


def page(n: int) -> int:
    return fp.page(n)


def test_own_buffers_of_a_window():
    assert buffers.own(64, "per-op") == 64 and buffers.own(64, "shared") == 1
    assert REGISTRY["message.stream"].own_buffers({}) == 1
    assert REGISTRY["message.stream"].own_buffers({"window_buffers": "per-op", "window": "16"}) == 16
    assert REGISTRY["deposit.get_bw"].own_buffers({}) == 64
    assert REGISTRY["message.pingpong"].own_buffers({}) == 1
