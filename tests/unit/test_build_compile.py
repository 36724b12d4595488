"""How the core's sources are compiled (measure/build.py, _compile), with a stand-in mpicc
that logs each command: one object per source, compiled with -c, then one link of all of
them; the first error in source order; nothing left behind when a build fails."""
import stat
from pathlib import Path

import pytest

from fabriclab.errors import RunError
from fabriclab.measure import build, libraries
from fabriclab.measure.mpi import MPI

pytestmark = pytest.mark.unit

# A compiler that logs its argv, writes its -o output, and fails for a source whose name holds
# "bad" (saying so on stderr, as gcc does) or a link that is told to (FAIL_LINK beside it).
FAKE_CC = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/log"
out=""; prev=""
for a in "$@"; do
  case "$a" in *bad*.c) echo "$a:1:1: error: broken $(basename "$a")" >&2; exit 1;; esac
  [ "$prev" = "-o" ] && out="$a"; prev="$a"
done
case " $* " in *" -c "*) ;; *) [ -e "$(dirname "$0")/FAIL_LINK" ] && { echo "ld: error: no" >&2; exit 1; };; esac
echo obj > "$out"
"""


def _setup(tmp_path: Path, names: list[str]):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    cc = bindir / "mpicc"
    cc.write_text(FAKE_CC)
    cc.chmod(cc.stat().st_mode | stat.S_IEXEC)
    src = tmp_path / "csrc"
    (src / "families").mkdir(parents=True)
    for n in names:
        (src / n).write_text("int x;\n")
    out = tmp_path / "cache" / build.EXE
    (out.parent / "gen").mkdir(parents=True)
    libs = {"blas": libraries.Library("blas", "BLAS", False, "none")}
    return MPI(str(cc), "mpiexec", "mpich", "MPICH 5"), src, out, libs, bindir / "log"


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith("."))


def test_each_source_compiles_to_its_own_object_then_one_link(tmp_path):
    mpi, src, out, libs, log = _setup(tmp_path, ["main.c", "util.c", "families/udp.c", "fl.h"])
    commands, tmp, error = build._compile(mpi, src, out, libs)
    assert error is None and Path(tmp).read_text() == "obj\n"
    lines = log.read_text().splitlines()
    compiles = [ln for ln in lines if " -c " in f" {ln} "]
    links = [ln for ln in lines if ln not in compiles]
    assert sorted(ln.split(" -c ")[1].split(" -o ")[0] for ln in compiles) == sorted(
        str(src / n) for n in ["main.c", "util.c", "families/udp.c"])           # the header is not compiled
    objs = [ln.split(" -o ")[1] for ln in compiles]
    assert len(set(objs)) == 3 and len(links) == 1
    link = links[0].split()
    assert link[link.index("-o") + 1] == tmp and all(o in links[0] for o in objs)
    assert commands.startswith("compile ") and "for each of 3 sources" in commands and "\nlink " in commands
    assert _leftovers(out) == [Path(tmp).name]       # the objects' folder is gone; the binary is the caller's


def test_the_first_error_stops_the_build_and_leaves_nothing(tmp_path):
    later = [f"s{i:02}.c" for i in range(30)]
    mpi, src, out, libs, log = _setup(tmp_path, ["a_bad.c", *later, "z_bad.c"])
    _, tmp, error = build._compile(mpi, src, out, libs)
    assert tmp == "" and error.endswith("error: broken a_bad.c")
    compiled = log.read_text().splitlines()
    assert len(compiled) < 10 and not any("z_bad" in ln for ln in compiled)   # the rest were not started
    assert _leftovers(out) == []


def test_a_failed_link_is_its_error_and_leaves_nothing(tmp_path):
    mpi, src, out, libs, log = _setup(tmp_path, ["a.c", "b.c"])
    (log.parent / "FAIL_LINK").write_text("")
    _, tmp, error = build._compile(mpi, src, out, libs)
    assert tmp == "" and error == "ld: error: no" and _leftovers(out) == []


def test_a_compiler_that_cannot_run_is_a_run_error_and_leaves_nothing(tmp_path):
    mpi, src, out, libs, _ = _setup(tmp_path, ["a.c"])
    gone = MPI(str(tmp_path / "no-such-mpicc"), mpi.mpiexec, mpi.flavour, mpi.header_version)
    with pytest.raises(RunError, match="building the core with .*no-such-mpicc failed"):
        build._compile(gone, src, out, libs)
    assert _leftovers(out) == []
