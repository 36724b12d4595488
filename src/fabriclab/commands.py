"""The subcommands: each a `register(subparsers)` that sets `func(args) -> int`.

The measurement commands live here; the model commands register from
fabriclab.model.cli. Options shared by run and doctor (which MPI, how to
launch) are defined once in `add_mpi_options`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import build, mpi, report, schema
from .errors import UsageError
from .benchmarks import LEVELS, REGISTRY
from .launch import LAUNCHERS, make_spec


def add_mpi_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("MPI and launch")
    g.add_argument("-n", "--ranks", type=int, default=2, metavar="N",
                   help="Number of MPI ranks to launch. Default: 2.")
    g.add_argument("--hosts", metavar="H1,H2,...",
                   help="Comma-separated hosts for the launcher; repeat a host for more ranks on it. "
                        "Default: this machine only.")
    g.add_argument("--hostfile", metavar="FILE", help="A hostfile in the launcher's own format. Default: none.")
    g.add_argument("--ppn", type=int, metavar="N", help="Ranks per node. Default: the launcher decides.")
    g.add_argument("--launcher", choices=LAUNCHERS, default="auto", metavar="NAME",
                   help="mpiexec, srun, or auto (srun inside a Slurm allocation, else mpiexec). Default: auto.")
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


def resolve_launch(args):
    """(MPI, LaunchSpec) from the options; raises UsageError for bad ones."""
    m = mpi.discover(args.mpicc, args.mpiexec, args.mpi_home, need_compiler=not args.core)
    spec = make_spec(args.launcher, m.mpiexec, m.flavour, args.ranks, args.hosts, args.hostfile,
                     args.ppn, args.launcher_arg)
    return m, spec


def core_for(args, m) -> build.Core:
    """The core a command will launch: --core as given, else the cached build."""
    if args.core:
        if not os.access(args.core, os.X_OK):
            raise UsageError(f"--core {args.core} is not an executable file")
        return build.Core(os.path.abspath(args.core), "", "prebuilt", False)
    return build.ensure_core(m, args.rebuild)


def cmd_list(args) -> int:
    width = max(len(n) for n in REGISTRY)
    for level, text in LEVELS.items():
        print(f"{level:<{width}}  level      {text}")
    for b in REGISTRY.values():
        extra = " ".join(f"{k}={v}" for k, v in b.params.items())  # a|b: choices, default first
        axes = "size,stride" if b.has_stride else "size"
        print(f"{b.name:<{width}}  {b.metric:<9}  {b.summary} [axes {axes}]" + (f" [params {extra}]" if extra else ""))
    return 0


def write_out(text: str, path: str | None) -> None:
    """Text to PATH, or to stdout when PATH is None or '-'."""
    if not path or path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def cmd_show(args) -> int:
    doc = schema.load(args.file)
    write_out(report.format_doc(doc, args.format), args.output)
    return 0


def register_list(sub) -> None:
    p = sub.add_parser("list", help="List levels and benchmarks, one line each.")
    p.set_defaults(func=cmd_list)


def register_show(sub) -> None:
    p = sub.add_parser("show", help="Show a result file (RUN.json or RUN.ndjson) as tables.")
    p.add_argument("file", metavar="RUN.json", help="A result document or its NDJSON stream.")
    p.add_argument("-f", "--format", choices=report.FORMATS, default="table", metavar="FORMAT",
                   help="Output format: table, json, csv or md. Default: table.")
    p.add_argument("-o", "--output", metavar="PATH", help="Write to PATH instead of stdout ('-' = stdout). Default: stdout.")
    p.set_defaults(func=cmd_show)


def cmd_compare(args) -> int:
    from .compare import compare, format_changes
    base, new = schema.load(args.base), schema.load(args.new)
    changes = compare(base, new, args.alpha, args.threshold)
    write_out(format_changes(changes, args.format, args.base, args.new), args.output)
    return 1 if args.fail_on_slower and any(c.verdict == "slower" for c in changes) else 0


def register_compare(sub) -> None:
    p = sub.add_parser("compare", help="Compare two runs point by point, with significance.")
    p.add_argument("base", metavar="BASE.json", help="The reference run (RUN.json or RUN.ndjson).")
    p.add_argument("new", metavar="NEW.json", help="The run to judge against it.")
    p.add_argument("-a", "--alpha", type=float, default=0.05, metavar="P",
                   help="Significance level of the Mann-Whitney U test. Default: 0.05.")
    p.add_argument("--threshold", type=float, default=0.02, metavar="FRACTION",
                   help="Smallest change of the median worth a verdict. Default: 0.02 (2%%).")
    p.add_argument("-f", "--format", choices=("table", "json", "csv", "md"), default="table", metavar="FORMAT",
                   help="Output format: table, json, csv or md. Default: table.")
    p.add_argument("-o", "--output", metavar="PATH", help="Write to PATH instead of stdout. Default: stdout.")
    p.add_argument("--fail-on-slower", action="store_true",
                   help="Exit with code 1 when any point got significantly slower (for CI). Default: off.")
    p.set_defaults(func=cmd_compare)


def cmd_doctor(args) -> int:
    from .doctor import doctor
    return doctor(args)


def register_doctor(sub) -> None:
    p = sub.add_parser("doctor", help="Check which MPI, launcher and core build fabriclab will use, and that they work.")
    add_mpi_options(p)
    p.add_argument("-t", "--timeout", type=float, default=60, metavar="SECONDS",
                   help="Give up on the test launch after this many seconds. Default: 60.")
    p.set_defaults(func=cmd_doctor)


def register_run(sub) -> None:
    from .runcmd import register
    register(sub)


def register_model(sub) -> None:
    try:
        from .model.cli import register
    except ImportError:  # the model package is optional in stripped installs
        return
    register(sub)


REGISTRARS = [register_run, register_list, register_show, register_compare, register_doctor, register_model]
