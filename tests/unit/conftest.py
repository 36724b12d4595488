"""The unit tests' runs: every fake core that fakebuild makes runs in this
process (support/fakeexec.py), unless a test asks for one as a process
(`fake_core_process`), a run's machine check does not wait, and `doctor
--machine` measures no noise (a real launch). Runs that
several test files read are made once per process (`default_suite`), and
those files go to one worker of `make unit` (pytest_xdist_make_scheduler)."""
import contextlib
import io
from pathlib import Path

import pytest

import fakebuild  # noqa: E402  (tests/support)
import fakeexec  # noqa: E402  (tests/support)


@pytest.fixture(scope="session", autouse=True)
def _runs_in_process():
    """Every fake launch and probe in this process; and the machine check at the start of
    each run (host/machine.py) without its quarter of a second of watching the machine:
    the unit tests' runs read no timing, and the check with its window is an integration
    test's (test_doctor_machine.py)."""
    from fabriclab.cli import doctor_noise
    from fabriclab.host import machine
    with pytest.MonkeyPatch.context() as mp:
        fakeexec.install(mp)
        mp.setattr(machine, "RUN_WINDOW_S", 0.0)
        # doctor --machine's noise run is a real MPI launch: test_noise_real.py's
        mp.setattr(doctor_noise, "measured", lambda args: ["noise: not measured in the unit tests"])
        yield


@pytest.fixture(scope="session", autouse=True)
def _shipped_catalog_read_once():
    """The catalog fabriclab ships (model/data: technologies, systems, prices) read and
    checked once in this process, not at every lookup of a system or a price: a copy of
    what the reader returned the first time, while the file is unchanged. Every other
    file (network files, the tests' own catalogs and price lists) is read as it is."""
    import pickle
    from fabriclab.model import catalog
    read, kept = catalog.read_data_file, {}

    def read_once(path, what, *args, **kw):
        p = Path(path)
        if p.parent != catalog.DATA or args or kw:
            return read(path, what, *args, **kw)
        st = p.stat()
        key = (str(p), what, st.st_mtime_ns, st.st_size)
        if key not in kept:           # a copy each time, as a fresh read is: pickled once, loaded anew
            kept[key] = pickle.dumps(read(path, what), pickle.HIGHEST_PROTOCOL)
        return pickle.loads(kept[key])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(catalog, "read_data_file", read_once)
        yield


@pytest.fixture(scope="session")
def seed_model_once():
    """Seed 001's model curves (studies/millich_george_oral/model_curves.py's compute(), a
    few seconds of max-min solving) computed once in this process for the tests that draw
    them (each study run computes them anew). A price list other than the shipped one is
    computed as asked."""
    from fabriclab.model.cost import price_list
    from fabriclab.studies.millich_george_oral import model_curves
    full, kept, shipped = model_curves.compute, {}, price_list()

    def compute(prices=None):
        if prices is not None and prices != shipped:
            return full(prices)
        if "study" not in kept:
            kept["study"] = full()
        return kept["study"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model_curves, "compute", compute)
        yield


@pytest.fixture(scope="session")
def default_suite(tmp_path_factory):
    """`fabriclab run` of the default suite on the fake core, two launches a point:
    {"path": RUN.json, "printed": what the run printed (its one-screen summary)}."""
    from fabriclab.cli import main
    d = tmp_path_factory.mktemp("suite")
    fake = fakebuild.fake_core(d)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        rc = main(["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(d / "suite.json"),
                   "-L", "2"])
    assert rc == 0
    return {"path": d / "suite.json", "printed": printed.getvalue()}


# Files whose tests read one session fixture run in one worker of `make unit`
# (pytest-xdist --dist loadfile), which then makes it once; every other file is
# a unit of its own, as --dist loadfile has it.
TOGETHER = {"test_report.py": "default-suite", "test_cli.py": "default-suite",
            "test_studies.py": "seed-model",
            "test_study_millich_george_oral.py": "seed-model"}
# The units that take longest, handed out first so that no worker is left with
# one of them at the end (the rest follow in collection order).
LONGEST = ("test_report.py", "test_cli.py", "test_architecture.py", "test_studies.py",
           "test_study_millich_george_oral.py", "test_launch_stats.py", "test_hostile_files.py",
           "test_every_benchmark.py", "test_documents.py", "test_app_report.py", "test_reproduce_alias.py",
           "test_cli_model.py", "test_findings.py", "test_cli_history.py")
UNIT = Path(__file__).parent


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, with the files of TOGETHER sent to a worker as one unit, and the
    units in collection order (pytest_collection_modifyitems puts the LONGEST first)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling
    config.option.loadscopereorder = False

    class Together(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return TOGETHER.get(path.rsplit("/", 1)[-1], path)
    return Together(config, log)


def pytest_collection_modifyitems(items):
    """The LONGEST unit files first among the unit tests; anything else (the integration
    tests of a whole-suite run) keeps its place before them, so that the patches of this
    conftest's session fixtures never reach a test outside tests/unit."""
    def rank(item):
        if UNIT not in item.path.parents:
            return -1
        name = item.path.name
        return LONGEST.index(name) if name in LONGEST else len(LONGEST)
    items.sort(key=rank)                 # stable: each file's tests stay together and in order
