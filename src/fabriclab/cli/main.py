"""fabriclab's command line: `main(argv) -> int` wires the parts together.

Exit codes: 0 ok, 1 a failed run, 2 bad input (one line, never a traceback),
130 interrupted (Ctrl-C), 143 terminated (SIGTERM, `run` only)."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import FabriclabError
from ..report.escape import terminal
from . import calibrate, doctor, imports, model, report, results, run, study, testbed
from .letters import adder
from .options import Parser


# Subcommands in the order `fabriclab --help` lists them. Registering one
# imports nothing heavy: each command loads its libraries when it runs.
REGISTRARS = (run.register, results.register_list, results.register_show, results.register_compare,
              imports.register, report.register_report, report.register_plot, doctor.register,
              testbed.register, calibrate.register, model.register_model, model.register_reproduce,
              study.register)


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="fabriclab",
        description="Measure, model and compare the communication fabrics of computer clusters.")
    adder(p, "fabriclab")("--version", action="version", version=f"fabriclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for register in REGISTRARS:
        register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = p.parse_args(argv)
        if not getattr(args, "func", None):
            p.print_help()
            return 2
        args.argv = argv
        return args.func(args)
    except SystemExit as e:  # --help and --version
        return 0 if e.code in (0, None) else 2
    except FabriclabError as e:
        print(f"fabriclab: error: {terminal(e)}", file=sys.stderr)   # one line, whatever the input held
        return e.exit_code
    except KeyboardInterrupt:
        print("fabriclab: interrupted", file=sys.stderr)
        return 130


def main_entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    main_entry()
