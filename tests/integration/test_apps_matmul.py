"""app.matmul on real ranks: validated products at 1, 2 and 4 active ranks under MPICH and
Open MPI with a side that does not divide evenly, the bytes each rank receives against
suite/apps.py, the phases against the op time, weak scaling's side, the BLAS and the
blocked loop agreeing, a core built without a BLAS, and a problem smaller than its ranks
refused before anything is launched."""
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.suite import apps
from fabriclab.measure import build, mpi as mpis
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
FABRICLAB = str(Path(sys.executable).parent / "fabriclab")


def _run(out: Path, *argv: str, mpi: str = "mpich") -> dict:
    return realrun.run(out, "app.matmul", *argv, mpi=mpi)


def _points(doc: dict) -> list[dict]:
    pts = docs.points(doc)
    assert pts, [r for r in doc["records"] if r["kind"] == "skip"]
    return pts


def _check_point(p: dict, scale: str = "strong") -> None:
    """Validated, its side and bytes as apps.py has them, its phases within the op time."""
    nranks = p["active"]
    n = apps.matmul_side(p["size"], nranks, scale)
    info = p["info"]
    assert info["n"] == n and info["flops"] == apps.flops(n) and info["dist"] == "rows", info
    assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] == n * n * 8, p["validation"]
    rows = apps.blocks(n, nranks)
    idle = len(p["roles"]) - nranks
    assert p["rank_recv_bytes"] == apps.matmul_received(n, nranks) + [0] * idle
    assert p["rank_sent_bytes"] == [h * n * 8 * (nranks - 1) for h in rows] + [0] * idle
    phases = p["phases"]
    assert set(phases) == {"gather", "multiply"}
    sums = [g + m for g, m in zip(phases["gather"], phases["multiply"])]
    assert len(sums) == len(p["samples"]) and all(x > 0 for x in sums)
    # the phases are the mean active rank's split of an op, the sample its slowest rank's time
    # (how much of the op they cover is a timing, left to bench/: ranks on shared cores wait for each other)
    assert all(s <= t * (1 + 1e-9) for s, t in zip(sums, p["samples"])), (sums, p["samples"])
    if nranks == 1:   # a gather of nothing: a call's overhead, well under a millisecond however loaded the machine
        assert statistics.median(phases["gather"]) < 1e-3, phases["gather"]


def test_one_two_and_four_ranks_validate_an_uneven_side(flavour, tmp_path):
    mpi = flavour[0]
    doc = _run(tmp_path / "r.json", "-n", "4", "--active", "1,2,4", "-s", "97,128", mpi=mpi)
    assert doc["header"]["mpi"]["flavour"] == mpi
    pts = _points(doc)
    assert sorted((p["active"], p["size"]) for p in pts) == [(a, s) for a in (1, 2, 4) for s in (97, 128)]
    for p in pts:
        _check_point(p)
        assert p["info"]["local"] == "blas" and p["info"]["blas"].startswith("OpenBLAS"), p["info"]
    blas = doc["header"]["levels"]["blas"]
    assert blas["library"]["name"] == "OpenBLAS" and Path(blas["library"]["path"]).is_dir(), blas


def test_weak_scaling_grows_the_side_by_the_cube_root(tmp_path):
    pts = _points(_run(tmp_path / "r.json", "-n", "4", "--active", "1,2,4", "-s", "40", "-p", "scale=weak"))
    assert {p["active"]: p["info"]["n"] for p in pts} == {1: 40, 2: 50, 4: 63}
    for p in pts:
        _check_point(p, "weak")


def test_the_blas_and_the_blocked_loop_agree(tmp_path):
    pts = _points(_run(tmp_path / "r.json", "-n", "2", "--active", "2", "-s", "131", "-p", "local=blas,loop"))
    by = {p["info"]["local"]: p for p in pts}
    assert set(by) == {"blas", "loop"}
    for p in pts:
        _check_point(p)
    assert by["blas"]["rank_recv_bytes"] == by["loop"]["rank_recv_bytes"]


def test_a_core_without_a_blas_multiplies_by_the_loop_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICLAB_BLAS", str(tmp_path))   # holds no BLAS: the core is built without one
    doc = _run(tmp_path / "r.json", "-n", "2", "--active", "2", "-s", "64", "-p", "local=auto,blas")
    pts = _points(doc)
    assert [p["info"]["local"] for p in pts] == ["loop"] and pts[0]["info"]["blas"] == "none"
    _check_point(pts[0])
    skips = [r for r in doc["records"] if r["kind"] == "skip"]
    assert len(skips) == 1 and "built without a BLAS" in skips[0]["reason"], skips
    blas = doc["header"]["levels"]["blas"]
    assert "FABRICLAB_BLAS" in blas["why"] and "libopenblas-dev" in blas["enable"], blas


def test_a_blas_that_does_not_link_leaves_a_core_without_it(tmp_path, monkeypatch):
    site = tmp_path / "blas"
    (site / "include").mkdir(parents=True)
    (site / "include" / "cblas.h").write_text("void cblas_nothing(void);\n")   # no cblas_dgemm
    (site / "lib").mkdir()
    (site / "lib" / "libopenblas.so").write_bytes(b"not a library")
    monkeypatch.setenv("FABRICLAB_BLAS", str(site))
    monkeypatch.setenv("FABRICLAB_CACHE", str(tmp_path / "cache"))
    core = build.ensure_core(mpis.discover(home=mpi_home("mpich")))
    blas = build.levels(core.path)["blas"]
    assert core.built_now and Path(core.path).exists()
    assert not blas["available"] and blas["reason"].startswith(f"building with OpenBLAS from {site / 'lib'} failed")


def test_a_side_smaller_than_the_ranks_is_refused_before_launching(tmp_path):
    out = tmp_path / "r.json"
    p = subprocess.run([FABRICLAB, "run", "app.matmul", "-n", "4", "--active", "4", "-s", "3", "-o", str(out),
                        *FAST], capture_output=True, text=True, timeout=120)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("fabriclab: error: "), p.stderr
    assert "matrix side n 3 over 4 ranks" in lines[0] and not out.exists()
