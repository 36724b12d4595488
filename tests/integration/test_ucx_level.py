"""The ucx level on real ranks: every UCP kernel from 0 bytes to 1 MiB with
--validate, over shared memory and over TCP, under MPICH and Open MPI; the
lanes each point records name the transports the `tls` param asked for.
The pair kernels are read from each MPI's run of the level (conftest.py's
level_runs: both transports under MPICH, TCP under Open MPI).

A missing MPI or UCX is a failure here, never a skip: `make test` installs both."""
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.measure import libraries, mpi
from fabriclab.units import parse_size
from mpihome import mpi_home  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from realrun import UCX_SIZES, SHM_TLS as SHM, TCP_TLS as TCP  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
PAIR = ["ucx.pingpong", "ucx.stream", "ucx.put_bw", "ucx.get_bw", "ucx.mr_reg"]
SIZES = ["-s", "0,1,4K,1M"]
# The transports of lanes that each tls may put on a pair's endpoint.
ALLOWED = {SHM: ("posix/", "cma/", "self/"), TCP: ("tcp/",)}


def _home(flavour: str) -> str:
    home = mpi_home(flavour)
    found = libraries.find_all(mpi.discover(home=home).mpicc)["ucx"]
    assert found.available, found.reason
    return home


def _run(flavour: str, out: Path, *argv: str) -> dict:
    _home(flavour)
    return realrun.run(out, *argv, mpi=flavour)


def _lanes(p: dict) -> list[tuple[str, str]]:
    """"am:posix/memory rma_bw:cma/memory" as (use, transport/device) pairs."""
    return [tuple(item.split(":", 1)) for item in p["info"]["lanes"].split()]


def _check(doc: dict, benches: list[str], tls: tuple[str, ...], sizes: str = SIZES[1]) -> None:
    """Every size of `sizes` of each of `benches` on each of `tls`, checked."""
    points = [p for p in docs.points(doc) if p["bench"] in benches]
    assert {(p["bench"], p["params"]["tls"], p["size"]) for p in points} == {
        (b, t, parse_size(s, "size")) for b in benches for t in tls for s in sizes.split(",")}
    for p in points:
        info, size, v = p["info"], p["size"], p["validation"]
        assert info["library"].startswith("UCX 1.") and info["tls"] == p["params"]["tls"]
        assert v["errors"] == 0, p
        if p["bench"] == "ucx.mr_reg":  # registration must leave the buffer's data as it was
            assert v["checked_bytes"] == size and "lanes" not in info
            continue
        assert v["checked_bytes"] >= size > 0 or size == 0, p
        lanes = _lanes(p)
        uses = {use for use, _ in lanes}
        assert "am" in uses and "rma_bw" in uses, info["lanes"]
        assert all(where.startswith(ALLOWED[info["tls"]]) for _, where in lanes), info["lanes"]


def test_every_pair_kernel_over_shared_memory_and_tcp_under_mpich(level_runs):
    _home("mpich")
    doc = level_runs("mpich", "ucx")
    _check(doc, PAIR, (SHM, TCP), UCX_SIZES)
    tcp = [p for p in docs.points(doc) if p["params"]["tls"] == TCP and p["bench"] != "ucx.mr_reg"]
    assert tcp and all(where.startswith("tcp/") for p in tcp for _, where in _lanes(p))


def test_tagged_and_rma_kernels_under_open_mpi(level_runs):
    _home("openmpi")
    doc = level_runs("openmpi", "ucx")
    _check(doc, ["ucx.pingpong", "ucx.put_bw", "ucx.get_bw"], (TCP,), UCX_SIZES)


def test_bibw_on_two_pairs(flavour, tmp_path):
    doc = _run(flavour[0], tmp_path / "r.json", "ucx.bibw", "-n", "4", *SIZES, "-p", f"tls={SHM}")
    _check(doc, ["ucx.bibw"], (SHM,))
    for p in docs.points(doc):
        assert [r["role"] for r in p["ranks"]] == ["both"] * 4 and p["info"]["window"] == 64


def test_a_transport_ucx_cannot_use_here_skips_every_point_with_its_name(tmp_path):
    """`rc` is a UCX name (no InfiniBand here): the kernel records UCX's refusal per point."""
    doc = _run("mpich", tmp_path / "r.json", "ucx.pingpong", "-s", "0,8", "-p", "tls=rc")
    skips = [r for r in doc["records"] if r["kind"] == "skip"]
    assert not docs.points(doc) and [r["size"] for r in skips] == [0, 8]
    assert all("UCX_TLS=rc" in r["reason"] for r in skips)
