"""What the parsers of other tools' output return: printed figures as fabriclab ops.

Each figure is already converted to fabriclab's op of the same benchmark:
one time per op and the bytes the op moves."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Printed:
    """One printed row of one benchmark."""
    benchmark: str          # the tool's name for it: osu_latency, PingPong
    bench: str              # fabriclab's benchmark with the same semantics, else imb.<name>
    variant: str            # settings that differ from fabriclab's defaults ("" for none)
    size: int               # payload bytes of one message, as the tool prints it
    nprocs: int             # processes taking part
    median_s: float         # the tool's figure as the time of one fabriclab op
    bytes_per_op: int
    legs: int
    concurrent: bool
    value: float            # the figure as printed
    unit: str               # "us" or "MB/s"
    column: str             # the column it was printed in
    n: int | None           # repetitions, where the tool prints them
    row: dict               # the whole printed row, column -> text


@dataclass
class Parsed:
    tool_version: str | None
    averaging: str          # how the tool averages, one sentence
    nranks: int | None      # processes of the job
    figures: list = field(default_factory=list)
    skips: list = field(default_factory=list)     # (bench, size, reason): rows without a time
    ignored: list = field(default_factory=list)   # benchmarks read but without a counterpart
    settings: dict = field(default_factory=dict)  # what the tool says of its setup

    @property
    def benchmarks(self) -> list[str]:
        """The tool's names of the benchmarks imported, in file order."""
        return list(dict.fromkeys(f.benchmark for f in self.figures))


def number(text: str) -> float | None:
    """A printed decimal, or None (a word such as Pass, or inf/nan)."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if v == v and abs(v) != float("inf") else None


def integer(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\d+", text) else None
