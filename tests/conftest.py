"""Shared fixtures. Tests live in two folders: unit/ (no MPI, no root, no
browser, no waiting on a process: `make unit`) and integration/ (real MPI
ranks, root, Chromium, SimGrid, Slurm, and fabriclab or the fake core waited on
as processes: signals, hangs, whole-process bounds; marked `integration` here
by their folder). Helper modules
for both (a browser driver, an HTML checker, a two-node Slurm) are in
support/, fixtures' executables in fakes/, recorded outputs in data/."""
import gc
import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS / "support"))
import fakebuild  # noqa: E402  (support/ is on the path from here)


def pytest_collection_modifyitems(config, items):
    for item in items:
        where = "integration" if (TESTS / "integration") in Path(str(item.fspath)).parents else "unit"
        item.add_marker(getattr(pytest.mark, where))


@pytest.fixture
def fake_core(tmp_path):
    """An executable fake core (runs with this Python) and the fake launcher; the
    unit tests launch it in their own process (unit/conftest.py)."""
    return fakebuild.fake_core(tmp_path)


@pytest.fixture
def fake_core_process(tmp_path):
    """The fake core launched as a process every time: for signals, a killed
    rank's report on the launcher's stdout or stderr, and a real hang."""
    return fakebuild.fake_core(tmp_path, process=True)


@pytest.fixture(scope="module")
def fake_core_module(tmp_path_factory):
    """The fake core, once for a module's tests."""
    return fakebuild.fake_core(tmp_path_factory.mktemp("fake"))


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Keep each session's core builds in one shared temporary cache (set once: a
    test's own monkeypatch of it is undone back to this)."""
    if "FABRICLAB_CACHE" in os.environ:
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FABRICLAB_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
        yield


def pytest_collection_finish(session):
    """What is alive once the tests are collected (every imported module, every test
    item) lives to the end: gc.freeze() keeps the cyclic collector from scanning it
    again at each collection, and a larger first generation makes collections rarer.
    Together they take 1-2 s off `make unit` on a 2-core VM (16 s against 18 s,
    alternated); no test reads the collector's thresholds."""
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def pytest_terminal_summary(terminalreporter):
    if "browser" in sys.modules:  # the browser tests ran: say where their screenshots are
        terminalreporter.write_line(f"browser screenshots: {sys.modules['browser'].output_dir()}")
