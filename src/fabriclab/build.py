"""Build the measurement core with the chosen MPI's mpicc, on first use.

The binary is cached under a key of (mpicc path, MPI version from mpi.h, core
source hash), so switching MPI or editing csrc/ rebuilds and nothing else does.
One build system for the core: this module (STYLE: "several build systems for
one core" is a trap)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .errors import RunError, UsageError
from .mpi import MPI

CFLAGS = ["-O3", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra"]
EXE = "fabriclab-core"


@dataclass(frozen=True)
class Core:
    path: str
    source_hash: str
    cache_key: str
    built_now: bool


def source_dir() -> Path:
    """csrc/ of a source checkout, or the copy shipped inside the wheel."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_csrc", here.parents[1] / "csrc"):
        if (cand / "fl.h").exists():
            return cand
    raise RunError("the core's C sources (csrc/) are missing from this installation")


def sources(src: Path) -> list[Path]:
    return sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h"))


def source_hash(src: Path) -> str:
    h = hashlib.sha256()
    for p in sources(src):
        h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def cache_root() -> Path:
    base = os.environ.get("FABRICLAB_CACHE") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fabriclab" / "core"


def planned(mpi: MPI) -> Core:
    """Where the core for this MPI and these sources lives (built or not)."""
    shash = source_hash(source_dir())
    key = hashlib.sha256("\0".join([os.path.realpath(mpi.mpicc), mpi.header_version, shash,
                                    " ".join(CFLAGS)]).encode()).hexdigest()[:20]
    return Core(str(cache_root() / key / EXE), shash, key, False)


def ensure_core(mpi: MPI, rebuild: bool = False) -> Core:
    src = source_dir()
    plan = planned(mpi)
    shash, key, out = plan.source_hash, plan.cache_key, Path(plan.path)
    if out.exists() and not rebuild:
        return plan
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create the core cache {out.parent}: {e.strerror}; set FABRICLAB_CACHE") from None
    cfiles = [str(p) for p in sources(src) if p.suffix == ".c"]
    # Build to a temporary name and rename, so concurrent builds never see a half-written binary.
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".build-")
    os.close(fd)
    argv = [mpi.mpicc, *CFLAGS, "-I", str(src), "-o", tmp, *cfiles, "-lm"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        Path(tmp).unlink(missing_ok=True)
        raise RunError(f"building the core with {mpi.mpicc} failed: {e}") from None
    if p.returncode != 0:
        Path(tmp).unlink(missing_ok=True)  # the compiler may already have removed it
        first = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip()[:300])
        raise RunError(f"building the core with {mpi.mpicc} failed: {first}")
    os.replace(tmp, out)
    (out.parent / "build.txt").write_text(
        f"fabriclab {__version__}\nmpicc {mpi.mpicc}\nmpi {mpi.header_version}\nsource {shash}\n"
        f"command {' '.join(argv)}\n")
    return Core(str(out), shash, key, True)
