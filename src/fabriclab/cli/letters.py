"""The short options of every subcommand, in one table: a letter means the
same long option wherever it is accepted, as git and cargo keep theirs.

Register functions take their letters from here: with
`add = letters.adder(p, "run")`, `add("--sizes", metavar=..., help=...)` adds
`-s, --sizes`; a long option the table does not list gets no letter. Where a
letter meant something else in one subcommand, the measuring tool's meaning
kept it (what users type most: run's sizes, ranks, param, output, timeout)
and the other option lost it; the old spelling stays accepted for one release
and says so in one line on stderr."""

from __future__ import annotations

import argparse
import sys

# letter -> the long option it stands for, in every subcommand that has that option
LETTERS = {
    "-s": "--sizes", "-n": "--ranks", "-p": "--param", "-o": "--output", "-t": "--timeout",
    "-f": "--format", "-L": "--launches", "-q": "--quiet", "-a": "--alpha", "-V": "--version",
    "-T": "--traffic", "-c": "--calibrate", "-C": "--calibration-file", "-P": "--published",
    "-M": "--maxmin", "-m": "--method", "-l": "--list",
}
SHORT = {long: letter for letter, long in LETTERS.items()}

# (subcommand, long option) -> the letter it had before this table: accepted for one
# more release with a deprecation line. model's --output names a directory of plots,
# not the file -o names everywhere else; reproduce's is the study's folder, as
# `study run -o` takes it, so it keeps -o. model's -s for --system, deprecated in
# 0.2.0, is gone in 0.3.0: -s is --sizes there too (the collectives' sizes).
RETIRED = {
    ("model", "--nodes"): "-n", ("model", "--prices"): "-p",
    ("model", "--topology-file"): "-t", ("model", "--output"): "-o",
    ("reproduce", "--prices"): "-p",
}


def adder(p, command: str):
    """add(long, **add_argument keywords) for parser or group p of `command`: the
    option with the table's letter, or with its retired letter as a hidden alias."""
    def add(long: str, **kw) -> argparse.Action:
        retired = RETIRED.get((command, long))
        letter = None if retired else SHORT.get(long)
        action = p.add_argument(*([letter] if letter else []), long, **kw)
        if retired:
            _alias(p, retired, action, kw)
        return action
    return add


def _alias(p, letter: str, action: argparse.Action, kw: dict) -> None:
    """`letter` as a hidden spelling of action's option that says it is deprecated, once."""
    long = action.option_strings[-1]

    class Retired(type(action)):
        def __call__(self, parser, namespace, values, option_string=None):
            if not getattr(self, "warned", False):
                print(f"fabriclab: {letter} for {long} is deprecated; use {long}", file=sys.stderr)
                self.warned = True
            super().__call__(parser, namespace, values, option_string)

    same = {k: v for k, v in kw.items() if k in ("nargs", "const", "type", "choices", "metavar")}
    p.add_argument(letter, dest=action.dest, action=Retired, default=argparse.SUPPRESS, help=argparse.SUPPRESS,
                   **same)
