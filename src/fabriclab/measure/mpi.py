"""Which MPI fabriclab uses: discovery of mpicc and mpiexec, flavour, version.

Order of precedence (highest first): --mpicc/--mpiexec options, --mpi-home DIR
(DIR/bin/mpicc, DIR/bin/mpiexec), FABRICLAB_MPICC / FABRICLAB_MPIEXEC /
FABRICLAB_MPI_HOME, the MPI installed beside the running Python (the PyPI
`mpich` package puts it in the environment's bin/), then $PATH. See docs/mpi.md."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import UsageError

FLAVOURS = ("mpich", "openmpi", "intel", "unknown")


@dataclass(frozen=True)
class MPI:
    mpicc: str
    mpiexec: str
    flavour: str          # mpich | openmpi | intel | unknown (from `mpiexec --version`)
    header_version: str   # from mpi.h macros, e.g. "MPICH 5.0.2" or "Open MPI 5.0.11"

    def to_dict(self) -> dict:
        return asdict(self)


def _which(name: str, home: str | None) -> str | None:
    if home:
        cand = Path(home) / "bin" / name
        return str(cand) if cand.exists() else None
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    return shutil.which(name)


def _resolve(explicit: str | None, env: str, name: str, home: str | None, home_given: bool) -> str:
    # --mpi-home outranks the FABRICLAB_MPICC/MPIEXEC variables (docs/mpi.md).
    path = explicit or (None if home_given else os.environ.get(env))
    if path:
        found = path if os.sep in path else shutil.which(path)
        if not found or not os.access(found, os.X_OK):
            raise UsageError(f"{name} not found or not executable: {path}")
        return found
    found = _which(name, home)
    if not found:
        where = f"in {home}/bin" if home else "beside Python or on PATH"
        raise UsageError(f"no {name} found {where}; install an MPI (pip install mpich) or pass --{name} PATH")
    return found


def _run(argv: list[str], stdin: str | None = None, timeout: float = 30) -> str:
    try:
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"cannot run {argv[0]}: {e}") from None
    return p.stdout + p.stderr


def flavour_of(mpiexec: str) -> str:
    """Tell the launcher's MPI from its --version text."""
    text = _run([mpiexec, "--version"])
    if "Intel(R) MPI" in text:
        return "intel"
    if "Open MPI" in text or "OpenRTE" in text or "PRRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text:
        return "mpich"
    return "unknown"


def header_version(mpicc: str) -> str:
    """The MPI version as mpi.h states it; part of the core's build-cache key."""
    macros = _run([mpicc, "-dM", "-E", "-x", "c", "-"], stdin="#include <mpi.h>\n")
    defs = dict(re.findall(r"#define\s+(\w+)\s+(.*)", macros))
    if "I_MPI_VERSION" in defs:
        return "Intel MPI " + defs["I_MPI_VERSION"].strip('"')
    if "MPICH_VERSION" in defs:
        return "MPICH " + defs["MPICH_VERSION"].strip('"')
    if "OMPI_MAJOR_VERSION" in defs:
        return "Open MPI " + ".".join(defs.get(k, "?") for k in
                                      ("OMPI_MAJOR_VERSION", "OMPI_MINOR_VERSION", "OMPI_RELEASE_VERSION"))
    if "MPI_VERSION" in defs:
        return f"MPI {defs['MPI_VERSION']}.{defs.get('MPI_SUBVERSION', '0')}"
    raise UsageError(f"{mpicc} cannot compile against mpi.h; is it an MPI compiler wrapper?")


def discover(mpicc: str | None = None, mpiexec: str | None = None, home: str | None = None,
             need_compiler: bool = True) -> MPI:
    """Find the MPI; without need_compiler (a prebuilt core) only the launcher is looked up."""
    home_given = bool(home)
    home = home or os.environ.get("FABRICLAB_MPI_HOME")
    if home and not Path(home, "bin").is_dir():
        raise UsageError(f"MPI home {home} has no bin/ directory")
    exe = _resolve(mpiexec, "FABRICLAB_MPIEXEC", "mpiexec", home, home_given)
    if not need_compiler:
        return MPI("", exe, flavour_of(exe), "")
    cc = _resolve(mpicc, "FABRICLAB_MPICC", "mpicc", home, home_given)
    return MPI(cc, exe, flavour_of(exe), header_version(cc))
