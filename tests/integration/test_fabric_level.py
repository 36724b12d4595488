"""The fabric level (libfabric below MPI) on real ranks: every benchmark at
2 ranks with --validate on the shm and tcp providers, 0- and 1-byte
transfers, the patterns at 4 ranks, under MPICH and (a few) Open MPI, and
the points a provider cannot carry recorded as skips with their reason.

The two-rank checks read MPICH's run of the fabric level (conftest.py's
level_runs: every benchmark on both providers, 1 byte to 1 MiB) and one run
of the benchmarks that move 0 bytes, on both providers.

A missing MPI or libfabric is a failure here, never a skip."""
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
from fabriclab.units import parse_size
from realrun import FABRIC_SIZES  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration


def _run(out: Path, bench: str, *argv: str, mpi: str = "mpich") -> dict:
    return realrun.run(out, bench, *argv, mpi=mpi)


def _skips(doc: dict) -> list[dict]:
    return [r for r in doc["records"] if r.get("kind") == "skip"]


def _validated(doc: dict, bench: str, provider: str) -> list[dict]:
    """Every point of `bench` ran on the provider it asked for and recorded it; those on
    `provider` (there are some) checked their bytes."""
    every = [p for p in docs.points(doc) if p["bench"] == bench]
    assert all(p["info"]["provider"] == p["params"]["provider"] for p in every)
    pts = [p for p in every if p["params"]["provider"] == provider]
    assert pts, (bench, _skips(doc))
    for p in pts:
        info = p["info"]
        assert info["provider"] == provider and info["library"].startswith("libfabric "), info
        for key in ("fabric", "domain", "ep", "caps", "inject_size", "iov_limit", "mr_mode", "buffers"):
            assert key in info, (key, info)
        assert p["validation"]["errors"] == 0, p
        assert p["size"] == 0 or p["validation"]["checked_bytes"] > 0, p
        assert all(0 < s < 10 for s in p["samples"]), p
    return pts


TWO_RANK = ["fabric.pingpong", "fabric.stream", "fabric.put_lat", "fabric.put_bw", "fabric.get_bw", "fabric.mr_reg",
            "fabric.conns", "fabric.scatter"]
ZERO = ["fabric.pingpong", "fabric.stream", "fabric.put_lat", "fabric.put_bw", "fabric.get_bw"]


@pytest.fixture(scope="module")
def zero_bytes(tmp_path_factory):
    """The benchmarks that carry 0 bytes, at 0 bytes on both providers: one run."""
    return _run(tmp_path_factory.mktemp("zero") / "z.json", *ZERO, "-s", "0", "-p", "provider=shm,tcp")


@pytest.mark.parametrize("provider", ["shm", "tcp"])
@pytest.mark.parametrize("bench", TWO_RANK)
def test_two_ranks_validate(bench, provider, level_runs, zero_bytes):
    """Every size of the level's sweep measured and validated, but for the sizes the benchmark's
    footprint says it cannot carry, skipped with that reason; and 0 bytes where a benchmark moves them."""
    doc = level_runs("mpich", "fabric")
    pts = _validated(doc, bench, provider)
    b = REGISTRY[bench]
    params = {**b.defaults, "provider": provider, **({"segments": "4"} if "segments" in b.defaults else {})}
    limits = {s: b.footprint.limit(At(s, params=params)) for s in (parse_size(x, "size") for x in FABRIC_SIZES.split(","))}
    skips = [(r["size"], r["reason"]) for r in _skips(doc) if r["bench"] == bench
             and f"provider={provider}" in r.get("variant", "")]
    assert sorted(set(skips)) == sorted((s, why) for s, why in limits.items() if why)
    assert {p["size"] for p in pts} == {s for s, why in limits.items() if not why}
    if bench in ZERO:
        assert not _skips(zero_bytes)
        pts += _validated(zero_bytes, bench, provider)
        assert {p["size"] for p in pts} >= {0, 1}
    if bench in ("fabric.pingpong", "fabric.stream"):
        paths = {p["size"]: p["info"]["path"] for p in pts}
        inject = pts[0]["info"]["inject_size"]
        assert all(paths[s] == ("inject" if s <= inject else "send") for s in paths), paths
        assert min(paths) <= inject < max(paths)                     # both paths taken


def test_completion_modes_and_paths(tmp_path):
    """Blocking completion waits on the queue's wait object; path=send never
    injects; path=inject skips what is above the inject size, with the reason."""
    doc = _run(tmp_path / "b.json", "fabric.pingpong", "-s", "0,8", "-p", "provider=tcp", "-p", "completion=block")
    assert {p["info"]["completion"] for p in _validated(doc, "fabric.pingpong", "tcp")} == {"block"}
    doc = _run(tmp_path / "s.json", "fabric.stream", "-s", "8", "-p", "provider=shm", "-p", "path=send")
    assert {p["info"]["path"] for p in _validated(doc, "fabric.stream", "shm")} == {"send"}
    doc = _run(tmp_path / "i.json", "fabric.pingpong", "-s", "8,1M", "-p", "provider=shm", "-p", "path=inject")
    assert [p["size"] for p in _validated(doc, "fabric.pingpong", "shm")] == [8]
    assert "inject size" in _skips(doc)[0]["reason"]


def test_rma_completion_semantics_recorded(tmp_path):
    doc = _run(tmp_path / "t.json", "fabric.put_bw", "-s", "1,64K", "-p", "provider=tcp", "-p", "complete=transmit")
    assert {p["info"]["complete"] for p in _validated(doc, "fabric.put_bw", "tcp")} == {"transmit"}


def test_msg_endpoints_on_tcp(tmp_path):
    """Connected endpoints (passive endpoint, fi_connect/fi_accept between the pair)."""
    for bench, sweep in (("fabric.pingpong", ["-s", "0,1,64K"]), ("fabric.put_bw", ["-s", "0,1,64K"]),
                         ("fabric.conns", ["-s", "4K", "--conns", "2"])):
        doc = _run(tmp_path / f"{bench}.json", bench, *sweep, "-p", "provider=tcp", "-p", "ep=msg")
        assert {p["info"]["ep"] for p in _validated(doc, bench, "tcp")} == {"msg"}


def test_what_a_provider_cannot_carry_is_skipped_with_its_reason(tmp_path):
    doc = _run(tmp_path / "m.json", "fabric.pingpong", "-s", "8", "-p", "provider=shm", "-p", "ep=msg")
    assert not docs.points(doc)
    assert [s["reason"] for s in _skips(doc)] == ["provider shm offers no msg endpoints"]
    doc = _run(tmp_path / "v.json", "fabric.scatter", "-s", "8", "-p", "provider=tcp")
    reason = _skips(doc)[0]["reason"]
    assert reason.startswith("provider tcp receives into at most ") and reason.endswith("iovec entries; 32 asked")
    doc = _run(tmp_path / "c.json", "fabric.scatter", "-s", "8", "-p", "provider=tcp", "-p", "mode=copy")
    assert _validated(doc, "fabric.scatter", "tcp")[0]["info"]["mode"] == "copy"
    # udp offers datagram endpoints only: fi_getinfo answers its name for reliable ones with the
    # utility provider layered over it (udp;ofi_rxd), which was not asked for
    doc = _run(tmp_path / "u.json", "fabric.pingpong", "-s", "8", "-p", "provider=udp")
    assert not docs.points(doc)
    assert [s["reason"] for s in _skips(doc)] == ["provider udp offers no rdm endpoints"]


@pytest.fixture(scope="module")
def four_ranks(tmp_path_factory):
    """The patterns at 4 ranks on both providers: one run."""
    return _run(tmp_path_factory.mktemp("p4") / "p.json", "fabric.bibw", "fabric.saturation", "fabric.hotspot_put",
                "-n", "4", "-s", "0,1,64K", "-p", "provider=shm,tcp")


@pytest.mark.parametrize("provider", ["shm", "tcp"])
@pytest.mark.parametrize("bench", ["fabric.bibw", "fabric.saturation", "fabric.hotspot_put"])
def test_patterns_at_four_ranks(bench, provider, four_ranks):
    pts = _validated(four_ranks, bench, provider)
    if bench != "fabric.bibw":  # hotspot: 1..3 senders, saturation: 1..2 pairs
        assert len({p["active"] for p in pts}) >= 2, pts


@pytest.mark.parametrize("bench,args", [("fabric.pingpong", ["-s", "0,1,4K"]),
                                        ("fabric.put_bw", ["-s", "1,64K"]),
                                        ("fabric.hotspot_put", ["-n", "4", "-s", "1,4K"])])
def test_under_open_mpi(bench, args, tmp_path):
    doc = _run(tmp_path / "o.json", bench, *args, "-p", "provider=tcp", mpi="openmpi")
    assert "Open MPI" in doc["header"]["mpi"]["library"]
    _validated(doc, bench, "tcp")


def test_probe_lists_the_library_and_its_providers(tmp_path):
    """fabriclab-core --probe fabric: the library line, then a provider line per fi_getinfo answer."""
    import json
    import subprocess
    from fabriclab.measure import build, mpi
    from mpihome import mpi_home
    core = build.ensure_core(mpi.discover(home=mpi_home("mpich")))
    p = subprocess.run([core.path, "--probe", "fabric"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout
    lines = [json.loads(ln) for ln in p.stdout.splitlines()]
    assert lines[0]["type"] == "library" and lines[0]["name"] == "libfabric"
    assert Path(lines[0]["path"]).name.startswith("libfabric.so")
    provs = {(ln["provider"], ln["ep"]) for ln in lines[1:]}
    assert ("shm", "rdm") in provs and ("tcp", "msg") in provs
    shm = next(ln for ln in lines[1:] if ln["provider"] == "shm")
    assert {"msg", "tagged", "rma"} <= set(shm["caps"]) and shm["iov_limit"] >= 1
    assert set(shm) >= {"fabric", "domain", "inject_size", "tx_iov_limit", "mr_mode", "max_msg_size"}
