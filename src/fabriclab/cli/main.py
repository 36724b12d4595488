"""fabriclab's command line: `main(argv) -> int` wires the parts together.

Exit codes: 0 ok, 1 a failed run, 2 bad input (one line, never a traceback),
130 interrupted (Ctrl-C), 143 terminated (SIGTERM)."""

from __future__ import annotations

import argparse
import errno
import signal
import sys

from .. import __version__
from ..errors import FabriclabError, Terminated, UsageError, catch_sigterm
from ..report.escape import terminal
from . import (calibrate, check, congestion, doctor, history, imports, model, report, results, run, study,
               testbed, topology, tune)
from . import storing
from .letters import adder
from .options import Parser


# Subcommands in the order `fabriclab --help` lists them. Registering one
# imports nothing heavy: each command loads its libraries when it runs.
REGISTRARS = (("run", run.register), ("list", results.register_list), ("show", results.register_show),
              ("compare", results.register_compare), ("import", imports.register),
              ("report", report.register_report), ("plot", report.register_plot), ("doctor", doctor.register),
              ("testbed", testbed.register), ("topology", topology.register), ("calibrate", calibrate.register),
              ("model", model.register_model),
              ("reproduce", model.register_reproduce), ("study", study.register),
              ("tune", tune.register), ("congestion", congestion.register), ("check", check.register),
              ("history", history.register))
COMMANDS = frozenset(name for name, _ in REGISTRARS)
# Options on one command line at most: argparse looks for the next option among all of them at
# each one, so parsing grows as their square (20,000 `--flow` took 21 s on a 2-core VM; 4,096, 1 s).
MAX_OPTIONS = 4096
# OSErrors that a path given by the user causes: bad input (exit 2), not a failed run
BAD_PATH = frozenset({errno.ENAMETOOLONG, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ELOOP, errno.EINVAL})


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with `command` only that subcommand's: a command line
    that names its subcommand parses the same, without building a dozen others'
    options first (7 ms for the whole parser against under 1 ms for one
    subcommand's on a 2-core VM: what a caller of main() in a loop pays)."""
    p = Parser(
        prog="fabriclab",
        description="Measure, model and compare the communication fabrics of computer clusters.")
    adder(p, "fabriclab")("--version", action="version", version=f"fabriclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, register in REGISTRARS:
        if command in (None, name):
            register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser(argv[0] if argv and argv[0] in COMMANDS else None)
    previous = catch_sigterm()        # SIGTERM before or between runs ends in a line too, as Ctrl-C does
    try:
        options = sum(1 for a in argv[:argv.index("--") if "--" in argv else len(argv)] if a.startswith("-"))
        if options > MAX_OPTIONS:
            raise UsageError(f"{options:,} options on one command line: at most {MAX_OPTIONS:,}")
        args = p.parse_args(argv)
        if not getattr(args, "func", None):
            p.print_help()
            return 2
        args.argv = storing.shown_argv(argv)       # what documents record: no store password
        return args.func(args)
    except SystemExit as e:  # --help and --version
        return 0 if e.code in (0, None) else 2
    except FabriclabError as e:
        print(f"fabriclab: error: {terminal(e)}", file=sys.stderr)   # one line, whatever the input held
        return e.exit_code
    except OSError as e:     # a path no check caught (too long a name, a loop of links): still one line
        where = f": {terminal(e.filename)[:200]}" if e.filename else ""
        print(f"fabriclab: error: {e.strerror or e}{where}", file=sys.stderr)
        return 2 if e.errno in BAD_PATH else 1
    except Terminated:
        print("fabriclab: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("fabriclab: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def main_entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    main_entry()
