"""What the integration tests share: the MPI fixture (each test that takes
`flavour` runs under MPICH and under Open MPI) and the real runs that several
tests read (`level_runs`: one run per level and MPI, made the first time a
test asks for it). The sampling options and the run helper are in
support/realrun.py."""
import pytest

from fabriclab.host import machine
from fabriclab.measure import mpi
from mpihome import mpi_home  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from realrun import MPIS, level_argv  # noqa: E402  (tests/support)


@pytest.fixture(scope="session", autouse=True)
def _no_machine_window():
    """Runs made in this process start without the machine check's quarter of a second of
    watching the machine (host/machine.py, RUN_WINDOW_S): some 330 runs here paid it, well over
    a minute of the suite. The check with its window is test_doctor_machine.py's, whose runs
    are processes of their own and keep it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(machine, "RUN_WINDOW_S", 0.0)
        yield


@pytest.fixture(scope="module", params=MPIS)
def flavour(request):
    """(name, installation prefix) of each MPI in turn."""
    home = mpi_home(request.param)
    assert mpi.discover(home=home).flavour == request.param
    return request.param, home


@pytest.fixture(scope="session")
def level_runs(tmp_path_factory):
    """level_runs(mpi, level): the document of that level's run under that MPI (realrun.level_argv),
    made once for every test that reads it."""
    done: dict = {}

    def get(name: str, level: str) -> dict:
        if (name, level) not in done:
            argv = level_argv(name, level)
            out = tmp_path_factory.mktemp(f"{name}-{level}") / f"{level}.json"
            done[name, level] = realrun.run(out, level, *argv, mpi=name)
        return done[name, level]
    return get
