"""The memory a run needs, estimated before launching: each family's footprint
against what its kernel allocates (read off csrc/families), the points a
kernel skips, the ranks per host, and the refusal through main()."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.measure import capacity as resources
from fabriclab.suite import footprint as fp
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.measure.launch import LaunchSpec, make_spec
from fabriclab.measure.plan import Sampling, build

K, M = 1 << 10, 1 << 20


def at(bench: str, **kw) -> fp.At:
    kw["params"] = {**REGISTRY[bench].defaults, **kw.get("params", {})}
    return fp.At(**kw)


# (benchmark, point, role, bytes the point holds), each written out from the C:
# every fl_alloc and MPI window in whole pages (P), a kernel's state a page.
P = 4 * K
KERNELS = [
    # memory.c: src and dst regions of `buffers` slots, each slot a whole number of 64-byte lines
    ("memory.memcpy", dict(size=100, buffers=100), "s", 2 * 16 * K + P),
    ("memory.strided_load", dict(size=64 * K, buffers=1, stride=8), "s", 2 * 64 * K + P),
    ("memory.copy", dict(size=100, buffers=3), "i", P),
    # deposit.c: a window of size x buffers on ranks 0 and 1, in whole pages, and the library's one-sided state
    ("deposit.put_bw", dict(size=5000, buffers=3), "s", 16 * K + 8 * M),
    ("deposit.get_lat", dict(size=5000, buffers=3), "r", 16 * K + 8 * M),
    ("deposit.put_lat", dict(size=8, buffers=1), "i", 0),
    # strided: 512 words at stride 8 span (511 x 8 + 1) words at the target; verify adds `size`
    ("deposit.strided_direct", dict(size=4 * K, stride=8), "s", 4 * K),
    ("deposit.strided_direct", dict(size=4 * K, stride=8), "r", 32 * K + 4 * K),
    ("deposit.strided_packed", dict(size=4 * K, stride=8), "r", 4 * K + 32 * K + 4 * K),
    ("deposit.strided_shm", dict(size=4 * K, stride=8), "s", 4 * K + 4 * K),
    # deposit_patterns.c: bipairs land and source in one window; a put target holds a region per sender
    ("deposit.put_bibw", dict(size=1000, buffers=2), "b", 4 * K),
    ("deposit.put_bibw", dict(size=1000, buffers=2), "i", 4 * K),
    ("deposit.hotspot_put", dict(size=4 * K, buffers=2, senders=3), "t", 3 * 2 * 4 * K),
    ("deposit.hotspot_get", dict(size=4 * K, buffers=2, senders=3), "t", 2 * 4 * K),
    # message.c: a round trip's sbuf and rbuf on ranks 0 and 1, state, a request
    ("message.pingpong", dict(size=1000, buffers=7), "s", 2 * 8 * K + P + P),
    # a window (64) goes one way: the receiver's region of 64 slots, state, 64 requests
    ("message.stream", dict(size=1000, buffers=64), "r", 64 * K + P + P),
    ("message.stream", dict(size=1000, buffers=64), "i", P),
    # full postal semantics: a window of unexpected messages up to the eager limit
    ("message.postal_full", dict(size=1 * M, buffers=64), "r", 64 * M + 2 * P + 64 * 64 * K),
    ("message.postal_full", dict(size=1 * K, buffers=64), "r", 64 * K + 2 * P + 64 * K),
    # message_patterns.c: state, regions by role, a request per message of a window each way
    ("message.bibw", dict(size=1000, buffers=64), "b", P + 2 * 64 * K + P),
    ("message.saturation", dict(size=1000, buffers=64), "s", P + 64 * K + P),
    ("message.saturation", dict(size=1000, buffers=64), "i", P),
    # three senders share the target's 64 slots, but under per-op each keeps a window's: 64 each
    ("message.hotspot", dict(size=1 * K, buffers=64, senders=3, nranks=4, params={"window_buffers": "per-op"}), "t",
     P + P + 3 * 64 * K + P),
    # arrays of 4 blocks: ceil(5 / 4) = 2 of them; the collective adds a scratch array
    ("message.alltoall", dict(size=10, buffers=5, nranks=4), "b", P + 2 * P + P + 4 * 10),
    ("message.alltoall", dict(size=1 * M, buffers=1, nranks=4), "b", P + 2 * 4 * M + P + 4 * 64 * K),
    ("message.alltoall", dict(size=10, buffers=5, nranks=4, params={"variant": "pairwise"}), "b", 4 * P),
    # concurrent: a window of 8 arrays, 2(N-1)W requests, and a window of (N-1)W messages a rank
    # ahead may leave unexpected
    ("message.alltoall", dict(size=10, buffers=5, nranks=4, params={"variant": "concurrent", "window": "8"}), "b",
     4 * P + 2 * 3 * 8 * 2 * K + 3 * 8 * 10),
    ("message.alltoall", dict(size=1 * M, buffers=1, nranks=4, params={"variant": "concurrent"}), "b",
     P + 2 * 4 * M + P + 2 * 3 * 2 * K + 3 * 64 * K),
    # fill=100 bytes per flow of 10-byte blocks: a window of 10 exchanges (more than window=8)
    ("message.alltoall", dict(size=10, buffers=5, nranks=4, params={"variant": "concurrent", "window": "8",
                                                                    "fill": "100"}), "b",
     4 * P + 2 * 3 * 10 * 2 * K + 3 * 10 * 10),
    ("message.bisection", dict(size=1000, buffers=64), "b", P + 2 * 64 * K + P),
    # message_conns.c: the pair's regions, a request and an op per connection
    ("message.conns", dict(size=4 * K, buffers=16, conns=64), "s", 2 * 64 * K + P + 2 * P),
    # message_scatter.c: slots of 32-segment messages, under per-op at least a window (64) of them
    ("message.scatter", dict(size=8, buffers=8192), "s", P + 64 * K + P),
    ("message.scatter", dict(size=8, buffers=8192), "r", P + 2 * 64 * K + P),
    ("message.scatter", dict(size=8, buffers=8192, params={"mode": "copy"}), "r", P + 3 * 64 * K + P),
    ("message.scatter", dict(size=1 * K, buffers=64, params={"window_buffers": "per-op"}), "s", P + 64 * 32 * K + P),
]


@pytest.mark.parametrize("bench,point,role,expected", KERNELS,
                         ids=[f"{b}-{r}-{i}" for i, (b, _, r, _) in enumerate(KERNELS)])
def test_footprint_is_what_the_kernel_allocates(bench, point, role, expected):
    assert REGISTRY[bench].footprint.bytes(role, at(bench, **point)) == expected


def test_tcp_footprints_add_what_the_sockets_may_queue():
    # tcp.c: request/response slots both ways (a 0-byte message is a 1-byte token)
    quiet = dict(sample_time=0.0, sock_send=4 * M, sock_recv=6 * M)
    assert REGISTRY["tcp.rr_poll"].footprint.bytes("s", at("tcp.rr_poll", size=0, buffers=4, **quiet)) == 8 * K + 2
    assert REGISTRY["tcp.rr_poll"].footprint.allocated("s", at("tcp.rr_poll", size=0, buffers=4, **quiet)) == 8 * K
    # the stream receiver reads into at least 4 MiB; a burst of 32 MiB stays in flight at most
    stream = REGISTRY["tcp.stream"].footprint.bytes("r", at("tcp.stream", size=1 * M, buffers=1, **quiet))
    assert stream == 1 * M + 4 * M + 10 * M
    # 128 connections could queue 10 MiB each; one ack's worth of ops (128 x 4 KiB) is the bound
    conns = REGISTRY["tcp.conns"].footprint.bytes("s", at("tcp.conns", size=4 * K, buffers=16, conns=128, **quiet))
    assert conns == 64 * K + 2 * 128 * 4 * K
    # with the default sample time, 2 us at 100 GB/s more may be in flight
    assert REGISTRY["tcp.conns"].footprint.bytes("s", at("tcp.conns", size=4 * K, buffers=16, conns=128)) == (
        64 * K + 2 * (128 * 4 * K + 2_000_000))
    scatter = at("tcp.scatter", size=8, buffers=64, params={"mode": "copy"}, **quiet)
    assert REGISTRY["tcp.scatter"].footprint.bytes("r", scatter) == 4 * K + 4 * K + 2 * 128 * 256


def test_socket_limits_follow_the_parameters(monkeypatch, tmp_path):
    for name, line in (("tcp_wmem", "4096 16384 4194304"), ("tcp_rmem", "4096 131072 33554432")):
        (tmp_path / name).write_text(line + "\n")
    monkeypatch.setattr(resources, "SYSCTL", tmp_path)
    assert resources.sock_limits({"sndbuf": "0", "rcvbuf": "0"}) == (4 * M, 32 * M)
    assert resources.sock_limits({"sndbuf": "256K", "rcvbuf": "0"}) == (512 * K, 32 * M)   # the kernel doubles it


def test_every_benchmark_declares_a_footprint():
    assert [b.name for b in REGISTRY.values() if not isinstance(b.footprint, fp.Footprint)] == []


LIMITS = [
    ("message.pingpong", dict(size=(1 << 31) - 1), None),
    ("message.pingpong", dict(size=1 << 31), "size above INT_MAX bytes (MPI int count)"),
    ("message.alltoall", dict(size=1 << 31, nranks=4), "size above INT_MAX bytes (MPI int count)"),
    ("deposit.put_bw", dict(size=16 << 30), "size x stride exceeds an MPI int count"),
    ("deposit.strided_direct", dict(size=12), "strided sizes are whole 8-byte words and strides >= 1"),
    ("deposit.strided_direct", dict(size=64 * M, stride=64), "size x stride exceeds an MPI int count"),
    ("deposit.strided_direct", dict(size=32 * M, stride=64), None),
    ("deposit.hotspot_put", dict(size=1 << 31, buffers=1), f"size {1 << 31} x 1 buffers does not fit an MPI window"),
    ("message.scatter", dict(size=0), "no payload to scatter"),
    ("message.scatter", dict(size=1 * M, params={"segments": "1024"}), "message above INT_MAX/2 bytes (MPI int count)"),
    ("tcp.scatter", dict(size=1 * M, params={"segments": "1023"}), None),
    ("tcp.stream", dict(size=0), "no payload to stream"),
    ("tcp.rr_poll", dict(size=16 << 30), None),
    ("memory.memcpy", dict(size=16 << 30), None),
]


@pytest.mark.parametrize("bench,point,reason", LIMITS)
def test_limits_give_the_cores_reason(bench, point, reason):
    assert REGISTRY[bench].footprint.limit(at(bench, **point)) == reason


def spec(n=2, **kw) -> LaunchSpec:
    return make_spec("mpiexec", "/x/mpiexec", "mpich", n, **kw)


def _ranks(place) -> tuple:
    """Each host's ranks, in order (a placement keeps them as ranges)."""
    return tuple(tuple(sorted(r for rg in g for r in rg)) for g in place.groups)


def test_placement_follows_the_launch_options():
    assert _ranks(resources.placement(spec(4))) == ((0, 1, 2, 3),)
    # -hosts a:2,b:1 fills a, then b, then wraps round
    p = resources.placement(spec(5, hosts="a,b,a"))
    assert _ranks(p) == ((0, 1, 3, 4), (2,)) and p.per_host == 4
    assert _ranks(resources.placement(spec(2, hosts="a,b,c"))) == ((0,), (1,))   # a slot without a rank
    p = resources.placement(spec(8, hostfile="/etc/hostname", ppn=3))
    assert (p.groups, p.per_host, p.local) == (None, 3, False)
    assert resources.placement(spec(8, hostfile="/etc/hostname")).per_host == 8
    from dataclasses import replace
    testbed = replace(spec(2, hosts="h0,h4"), agent="/x/agent")   # emulated hosts share this one
    assert resources.placement(testbed).local


def plan(names, sizes, n=2, cache="warm", params=None, **kw):
    return build(names, sizes, None, params, Sampling(), False, n, cache=cache, llc_bytes=32 * M, **kw)


def test_estimate_sums_the_ranks_of_the_fullest_host():
    base = resources.RANK_BASE + resources.RANK_PER_PEER * 4
    rank0 = Sampling().max_samples * (resources.SAMPLE_BYTES + resources.RANK_SAMPLE_BYTES * 4)
    est = resources.estimate(plan(["message.alltoall"], "1M", n=4), spec(4))
    # every rank: its state, send and receive arrays of 4 blocks, requests and the collective's scratch array
    rank = 8 * M + 8 * K + 4 * 64 * K + base
    assert est.peak.host_bytes == 4 * rank + rank0 and est.peak.host_ranks == 4
    two_hosts = resources.estimate(plan(["message.alltoall"], "1M", n=4), spec(4, hosts="a,b"))
    assert two_hosts.peak.host_ranks == 2 and two_hosts.peak.host_bytes == 2 * rank + rank0
    # hotspot: every sender's one buffer (a window shares it) and the target's one per sender, on one host
    est = resources.estimate(plan(["message.hotspot"], "1M", n=4, active="3"), spec(4))
    assert est.peak.where == "1M active 3"
    assert est.peak.host_bytes - rank0 == 3 * (1 * M + 8 * K) + (3 * 1 * M + 12 * K) + 4 * base
    # window_buffers=per-op: every sender's window of 64 slots and the target's window per sender
    est = resources.estimate(plan(["message.hotspot"], "1M", n=4, active="3", params=["window_buffers=per-op"]),
                             spec(4))
    assert est.peak.host_bytes - rank0 == 3 * (64 * M + 8 * K) + (3 * 64 * M + 12 * K) + 4 * base


def test_cold_cache_counts_its_rotation():
    warm = resources.estimate(plan(["message.stream"], "1M"), spec()).peak.host_bytes
    cold = resources.estimate(plan(["message.stream"], "1M", cache="cold"), spec()).peak.host_bytes
    # 2 x 32 MiB / 1 MiB + 1 = 65 buffers on each rank's side, instead of warm's one (a window shares it)
    assert cold - warm == 2 * 64 * M
    small = lambda cache: resources.estimate(plan(["message.stream"], "64K", cache=cache), spec()).peak.host_bytes
    # 2 x 32 MiB / 64 KiB + 1 = 1025 buffers instead of 1: 1024 more on each rank
    assert small("cold") - small("warm") == 2 * 1024 * 64 * K


def test_skips_are_left_out_of_the_estimate_and_named():
    est = resources.estimate(plan(["message.pingpong", "memory.memcpy"], "1K,16G"), spec())
    assert resources.skip_notes(est) == ["message.pingpong skips 16G: size above INT_MAX bytes (MPI int count)"]
    assert est.peak.bench == "memory.memcpy" and est.points == 3


def meminfo(tmp_path, monkeypatch, available: int):
    f = tmp_path / "meminfo"
    f.write_text(f"MemTotal:       {available // 512} kB\nMemAvailable:   {available // 1024} kB\n")
    monkeypatch.setattr(resources, "MEMINFO", f)


@pytest.fixture
def untouchable_core(tmp_path, fake_core):
    """A core that leaves a mark if it is ever launched, and the fake launcher."""
    mark = tmp_path / "launched"
    exe = tmp_path / "core"
    exe.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    exe.chmod(0o755)
    return ["--core", str(exe), "--mpiexec", fake_core["mpiexec"]], mark


def test_memory_refused_before_anything_is_launched(tmp_path, monkeypatch, capsys, untouchable_core):
    meminfo(tmp_path, monkeypatch, 8 << 30)
    core, mark = untouchable_core
    out = tmp_path / "r.json"
    rc = main(["run", "memory.memcpy", "-s", "16G", "-L", "1", *core, "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert ("memory.memcpy at 16G needs about 32.1 GiB of memory on this host" in err
            and "more than the 8 GiB available here (MemAvailable)" in err and "--force" in err), err
    assert len(err.strip().splitlines()) == 1
    assert not mark.exists() and not out.exists() and not out.with_suffix(".ndjson").exists()


def test_force_runs_what_the_estimate_refuses(fake_core, tmp_path, monkeypatch, capsys):
    meminfo(tmp_path, monkeypatch, 1 << 30)
    argv = ["run", "message.stream", "-s", "256M", "-p", "window_buffers=per-op", "-L", "1", "--core", fake_core["core"],
            "--mpiexec", fake_core["mpiexec"], "-o", str(tmp_path / "r.json"), "-q"]
    assert main(argv) == 2
    assert "needs about 32.1 GiB" in capsys.readouterr().err   # a window of 64 buffers of 256 MiB per rank
    assert main([*argv, "--force"]) == 0
    assert "needs about" in capsys.readouterr().err      # still said
    assert len(docs.points(docs.read(tmp_path / "r.json"))) == 1


def test_nothing_to_measure_is_refused(tmp_path, capsys, untouchable_core):
    core, mark = untouchable_core
    rc = main(["run", "message.pingpong", "-s", "16G", "-L", "1", *core, "-o", str(tmp_path / "r.json")])
    assert rc == 2 and not mark.exists()
    assert "nothing to measure: message.pingpong skips 16G: size above INT_MAX bytes" in capsys.readouterr().err


def test_several_hosts_are_assumed_like_this_one(tmp_path, monkeypatch, capsys):
    meminfo(tmp_path, monkeypatch, 4 << 30)
    p = plan(["message.alltoall"], "64M", n=8)
    with pytest.raises(Exception) as e:
        resources.check(p, spec(8, hostfile="/etc/hostname"))
    text = str(e.value)
    assert "on one host (8 ranks" in text and "assuming every host has as much memory available as this one" in text
    assert "up to 8 of them counted on one host" in text
    assert resources.check(p, spec(8, hostfile="/etc/hostname", ppn=1)) == []


def test_skipped_points_are_counted_in_summary_show_and_report(fake_core, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["run", "message.pingpong", "-s", "1K,16G", "-L", "2", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-o", str(out)]) == 0
    got = capsys.readouterr()
    line = "skipped: message.pingpong at 16G (1 point): size above INT_MAX bytes (MPI int count)"
    assert "message.pingpong skips 16G: size above INT_MAX bytes" in got.err     # said before launching
    assert got.out.count(line) == 1                                               # the summary, once for 2 launches
    from fabriclab.report.escape import markdown
    for fmt, shown in (("table", line), ("md", markdown(line))):
        assert main(["show", str(out), "-f", fmt]) == 0
        assert shown in capsys.readouterr().out
    assert main(["show", str(out), "-f", "json"]) == 0
    import json
    assert json.loads(capsys.readouterr().out)["skipped"] == [
        {"bench": "message.pingpong", "reason": "size above INT_MAX bytes (MPI int count)", "where": ["16G"]}]
    assert main(["report", str(out), "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert 'id="skipped"' in html and "<td>16G</td>" in html and "size above INT_MAX bytes" in html


def test_quiet_run_says_what_it_skipped(fake_core, tmp_path, capsys):
    assert main(["run", "message.pingpong", "-s", "1K,16G", "-L", "1", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-o", str(tmp_path / "r.json"), "-q"]) == 0
    assert "fabriclab: skipped: message.pingpong at 16G (1 point)" in capsys.readouterr().err
