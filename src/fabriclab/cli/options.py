"""Options and helpers shared by several subcommands: which MPI and how to
launch (run, doctor) as the run entry point takes them, and writing output
to a path."""

from __future__ import annotations

import argparse
import os
import re
import sys

from .. import outputs
from ..errors import UsageError
from ..measure.launch import BINDINGS, LAUNCHERS
from ..schema.fields import MAX_RANKS
from ..units import in_range
from .letters import adder


class Parser(argparse.ArgumentParser):
    """Bad options become one line and exit code 2, like every other bad input."""

    def error(self, message):
        raise UsageError(message if self.prog == "fabriclab" else f"{self.prog}: {message}")


def integer(lo: int, hi: int):
    """An argparse type: a whole number from lo to hi, refused in one line otherwise
    (a number of ranks or samples sizes lists and C ints: an unbounded one would end
    in a MemoryError or an OverflowError far from the option that caused it)."""
    def parse(text: str) -> int:
        t = text.strip()
        # ASCII digits only: int() also takes 1_000 and other scripts' digits, which no other number
        # fabriclab reads does (units.py)
        if not re.fullmatch(r"[+-]?[0-9]{1,4000}", t, re.ASCII):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number")
        v = int(t, 10)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v if len(str(v)) < 20 else str(v)[:17] + '...'} is not "
                                             f"between {lo:,} and {hi:,}")
        return v
    parse.__name__ = "integer"
    return parse


def number(lo: float, hi: float):
    """An argparse type: a finite number from lo to hi, refused in one line otherwise: the
    type of every number option, so that nan, inf or 1e300 seconds are refused as they are
    typed, not after a launch (units.in_range; the ranges are the library's own)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
        if not in_range(v, lo, hi):    # NaN and infinity too: no comparison holds
            why = "a finite number" if v - v != 0 else f"between {lo:g} and {hi:g}"
            raise argparse.ArgumentTypeError(f"{text[:40]} is not {why}")
        return v
    parse.__name__ = "number"
    return parse


def testbed_name(text: str) -> str:
    """A testbed's name as given, checked whole (testbed/wiring.py): '' or a newline is refused."""
    from ..testbed.wiring import check_name  # only when the option is given
    return check_name(text)


def add_mpi_options(p: argparse.ArgumentParser, command: str, ranks: int | None = 2, default: str = "") -> None:
    """The MPI and launch options, with the command's default number of ranks (the fewest its runs
    take); None leaves it to the command, whose `default` says what it is."""
    g = p.add_argument_group("MPI and launch")
    adder(g, command)("--ranks", type=integer(1, MAX_RANKS), default=ranks, metavar="N",
                      help=f"Number of MPI ranks to launch. Default: {default or ranks}.")
    g.add_argument("--hosts", metavar="H1,H2,...",
                   help="Comma-separated hosts for the launcher; repeat a host for more ranks on it. "
                        "Default: this machine only.")
    g.add_argument("--hostfile", metavar="FILE", help="A hostfile in the launcher's own format. Default: none.")
    g.add_argument("--ppn", type=integer(1, MAX_RANKS), metavar="N",
                   help="Ranks per node. Default: the launcher decides.")
    g.add_argument("--testbed", metavar="NAME", type=testbed_name,
                   help="Run across an emulated testbed (`fabriclab testbed up`): --hosts names its hosts "
                        "(default: the first N, one rank each); MPI is forced onto TCP over the emulated "
                        "cables. Default: none.")
    g.add_argument("--launcher", choices=LAUNCHERS, default="auto", metavar="NAME",
                   help="mpiexec, srun, or auto (srun inside a Slurm allocation, else mpiexec). Default: auto.")
    g.add_argument("--bind", choices=BINDINGS, default="core", metavar="HOW",
                   help="core: bind each rank to its own core (MPICH -bind-to core, Open MPI --bind-to core, "
                        "srun --cpu-bind=cores), unless a host would run more ranks than it has cores; none: "
                        "let the scheduler place them. Default: core.")
    g.add_argument("--srun-mpi", metavar="PLUGIN",
                   help="srun's --mpi plugin (srun --mpi=list shows the site's); unused when auto picks "
                        "mpiexec. Default: pmi2 for MPICH and Intel MPI, pmix for Open MPI, Slurm's MpiDefault "
                        "for another MPI (docs/mpi.md).")
    g.add_argument("--launcher-arg", action="append", default=[], metavar="ARG",
                   help="Extra argument passed verbatim to the launcher; repeatable. Default: none.")
    g.add_argument("--mpicc", metavar="PATH",
                   help="MPI C compiler wrapper that builds the core. Default: --mpi-home's, then "
                        "$FABRICLAB_MPICC, $FABRICLAB_MPI_HOME's, the mpicc beside Python (PyPI mpich), $PATH.")
    g.add_argument("--mpiexec", metavar="PATH",
                   help="MPI launcher. Default: --mpi-home's, then $FABRICLAB_MPIEXEC, $FABRICLAB_MPI_HOME's, "
                        "the mpiexec beside Python, $PATH.")
    g.add_argument("--mpi-home", metavar="DIR",
                   help="An MPI installation prefix holding bin/mpicc and bin/mpiexec (for example a "
                        "system Open MPI). Default: $FABRICLAB_MPI_HOME, else unset.")
    g.add_argument("--rebuild", action="store_true", help="Rebuild the core even if a cached build exists. Default: off.")
    g.add_argument("--core", metavar="PATH",
                   help="Use this prebuilt fabriclab-core instead of building one (for example on a cluster "
                        "whose compute nodes lack a compiler). Default: build and cache one per MPI.")


def launch_options(args):
    """The MPI and launch options (add_mpi_options) as the run entry point takes them."""
    from ..measure.session import Launch
    return Launch(ranks=args.ranks, hosts=args.hosts, hostfile=args.hostfile, ppn=args.ppn, launcher=args.launcher,
                  bind=args.bind, srun_mpi=args.srun_mpi, launcher_args=tuple(args.launcher_arg), mpicc=args.mpicc,
                  mpiexec=args.mpiexec, mpi_home=args.mpi_home, rebuild=args.rebuild, core=args.core)


def site(args):
    """Where the ranks go: a testbed (--testbed), else this machine or the named hosts."""
    if getattr(args, "testbed", None):
        from ..testbed.site import TestbedSite
        return TestbedSite(args.testbed)
    from ..measure.session import Site
    return Site()


def not_stdout(what: str):
    """An argparse type for an -o that names a file or folder written whole (a run's document and
    its stream, a folder of runs): '-', stdout elsewhere, is refused in one line, not made a file
    named '-.json' or a folder named '-'."""
    def parse(text: str) -> str:
        if text == "-":
            raise argparse.ArgumentTypeError(f"{what} cannot go to stdout ('-'): name a path")
        if not text.strip():
            raise argparse.ArgumentTypeError(f"an empty path for {what}")
        return text
    parse.__name__ = "path"
    return parse


def checked_output(path: str | None, inputs=()) -> None:
    """An -o PATH of text output checked before any work (outputs.py), never one of the command's
    `inputs`; None or '-' is stdout."""
    if path and path != "-":
        outputs.file(path, stream=True, inputs=inputs)


def write_out(text: str, path: str | None) -> None:
    """Text to PATH, or to stdout when PATH is None or '-'."""
    if not path or path == "-":
        sys.stdout.write(text)
        return
    try:
        outputs.write(path, text, stream=True)     # never through a link (outputs.py)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
