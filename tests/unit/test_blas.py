"""The BLAS app.matmul links (measure/libraries.py, find_blas), without building: the search
order, what a found BLAS adds to the build, why none was found, the core's cache key, and what
the run header and `fabriclab doctor` say of it."""
from pathlib import Path

import pytest

from fabriclab.measure import build, fabrics, libraries
from fabriclab.measure.mpi import MPI
from fabriclab.measure.plan import Sampling, build as build_plan


def _site(root: Path, lib: str = "libopenblas.so") -> Path:
    (root / "include").mkdir(parents=True)
    (root / "include" / "cblas.h").write_text("/* cblas */\n")
    (root / "include" / "openblas_config.h").write_text('#define OPENBLAS_VERSION " OpenBLAS 9.8.7 "\n')
    (root / "lib").mkdir()
    (root / "lib" / lib).write_bytes(b"")
    return root


def test_a_sites_blas_given_by_directory_comes_first(tmp_path, monkeypatch):
    site = _site(tmp_path / "blas")
    monkeypatch.setenv("FABRICLAB_BLAS", str(site))
    lib = libraries.find_blas()
    assert lib.available and lib.source == "env" and lib.name == "OpenBLAS" and lib.header_version == "9.8.7"
    assert lib.cflags == (f"-I{site / 'include'}", "-DFL_HAVE_BLAS=1")
    assert lib.ldflags == (f"-L{site / 'lib'}", "-l:libopenblas.so", f"-Wl,-rpath,{site / 'lib'}")


def test_another_cblas_is_named_by_its_library(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICLAB_BLAS", str(_site(tmp_path / "blis", "libblis.so")))
    lib = libraries.find_blas()
    assert lib.available and lib.name == "BLIS" and "-l:libblis.so" in lib.ldflags


def test_a_directory_without_a_blas_says_so_and_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICLAB_BLAS", str(tmp_path))
    lib = libraries.find_blas()
    assert not lib.available and f"FABRICLAB_BLAS={tmp_path} holds no cblas.h" in lib.reason
    assert "apt-get install libopenblas-dev" in lib.enable and not lib.cflags and not lib.ldflags


def test_debians_openblas_is_found_by_pkg_config(monkeypatch):
    monkeypatch.delenv("FABRICLAB_BLAS", raising=False)
    lib = libraries.find_blas()
    if not lib.available:
        pytest.fail(f"libopenblas-dev is not installed ({lib.reason}); `make test` installs it")
    assert lib.name == "OpenBLAS" and lib.source == "pkg-config" and Path(lib.libdir, "libopenblas.so").exists()
    assert "-DFL_HAVE_BLAS=1" in lib.cflags and f"-Wl,-rpath,{lib.libdir}" in lib.ldflags


def test_the_blas_is_part_of_the_cores_cache_key(tmp_path, monkeypatch):
    mpi = MPI("/usr/bin/true", "/usr/bin/true", "mpich", "MPICH 5.0.2")
    libs = {**libraries.find_all(None), "blas": libraries.find_blas()}
    monkeypatch.setenv("FABRICLAB_BLAS", str(tmp_path))
    without = {**libs, "blas": libraries.find_blas()}
    assert build.planned(mpi, libs).cache_key != build.planned(mpi, without).cache_key
    assert set(build.linked(None)) == {"fabric", "ucx", "blas"}


def test_a_link_failure_keeps_the_core_and_records_why():
    libs = build.linked(None)
    if not libs["blas"].available:
        pytest.fail("libopenblas-dev is not installed; `make test` installs it")
    out = build._without_blas(libs, "undefined reference to `cblas_dgemm'")
    assert not out["blas"].available and "cblas_dgemm" in out["blas"].reason and not out["blas"].ldflags
    assert out["fabric"] == libs["fabric"]


def _plan(names):
    return build_plan(names, None, None, [], Sampling(), False, nranks=2)


def test_the_run_header_records_the_blas_of_a_plan_with_matmul():
    found = {"blas": {"available": True, "name": "OpenBLAS", "header_version": "0.3.21", "libdir": "/x",
                      "source": "pkg-config"}}
    plan, rec, notes = fabrics.settle(_plan(["app.matmul"]), "core", found, True, named=True)
    assert rec == {"blas": {"library": {"name": "OpenBLAS", "version": "0.3.21", "path": "/x"},
                            "source": "pkg-config", "jobs": []}} and not notes
    none = {"blas": {"available": False, "reason": "no CBLAS found", "enable": "apt-get install libopenblas-dev"}}
    rec = fabrics.settle(_plan(["app.matmul"]), "core", none, True, named=True)[1]["blas"]
    assert rec["library"]["name"].startswith("none") and rec["why"] == "no CBLAS found"
    assert fabrics.settle(_plan(["message.pingpong"]), "core", found, True, named=True)[1] == {}


def test_doctor_names_the_blas_or_the_loop(capsys):
    from fabriclab.cli import doctor
    doctor._blas({"available": True, "name": "OpenBLAS", "header_version": "0.3.21", "libdir": "/x",
                  "source": "pkg-config"})
    doctor._blas({"available": False, "reason": "no CBLAS found", "enable": "apt-get install libopenblas-dev"})
    ok, missing = capsys.readouterr().out.splitlines()
    assert ok.startswith("ok    blas") and "OpenBLAS 0.3.21 from /x, found by pkg-config" in ok
    assert missing.startswith("--    blas") and "blocked loop" in missing and "libopenblas-dev" in missing
