"""What the parsers of other tools' output return: printed figures as fabriclab ops.

Each figure is already converted to fabriclab's op of the same benchmark:
one time per op and the bytes the op moves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import UsageError
from ..schema.fields import MAX_BYTES, MAX_COUNT, MAX_RANKS, MAX_SECONDS

MIN_TIME_S = 1e-12  # one op in under a picosecond: a misprint, not a measurement


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
    info: dict | None = None  # what the point's info holds: a non-blocking collective's overlap calibration
    messages: int | None = None  # a message-rate test's messages per op (imports/rate.py): the point takes its layout


@dataclass
class Parsed:
    tool_version: str | None
    averaging: str          # how the tool averages, one sentence
    nranks: int | None      # processes of the job
    figures: list = field(default_factory=list)
    skips: list = field(default_factory=list)     # (bench, size, reason): rows without a time
    ignored: list = field(default_factory=list)   # benchmarks read but without a counterpart
    settings: dict = field(default_factory=dict)  # what the tool says of its setup
    notes: list = field(default_factory=list)     # what the import took without the file saying it

    @property
    def benchmarks(self) -> list[str]:
        """The tool's names of the benchmarks imported, in file order."""
        return list(dict.fromkeys(f.benchmark for f in self.figures))

    def read_each(self, tests: list, one: Callable) -> "Parsed":
        """Every test of a file read into these figures by one(test, self); a refusal names its
        test ("test 2: ...") where the file holds several."""
        for i, t in enumerate(tests):
            try:
                one(t, self)
            except UsageError as e:
                raise UsageError(f"test {i + 1}: {e}" if len(tests) > 1 else str(e)) from None
        return self


def number(text: str) -> float | None:
    """A printed decimal, or None (a word such as Pass, or inf/nan)."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if v == v and abs(v) != float("inf") else None


def integer(text: str) -> int | None:
    """A printed count, or None for a word; UsageError for more digits than
    any count a benchmark prints (int() refuses 4,300 and more)."""
    if not (text.isascii() and text.isdigit()):     # ASCII digits only, as the tools print
        return None
    if len(text) > 40:
        raise UsageError(f"a printed number of {len(text)} digits ({text[:12]}...) is beyond any size or count")
    return int(text)


def check_physical(f: Printed, where: str) -> None:
    """UsageError for a figure no machine can print: sizes and process counts
    beyond the schema's bounds (schema/fields.py), or a time per op below a
    picosecond or above the bound (a zero or denormal time becomes no figure)."""
    what = f"{where}: {f.benchmark} at size {f.size}"
    if f.size > MAX_BYTES or f.bytes_per_op > MAX_BYTES:
        raise UsageError(f"{what}: {f.bytes_per_op} bytes per operation is beyond any transfer (at most 2^50)")
    if not 1 <= f.nprocs <= MAX_RANKS:
        raise UsageError(f"{what}: {f.nprocs} processes is beyond any job (at most {MAX_RANKS})")
    if not MIN_TIME_S <= f.median_s <= MAX_SECONDS:
        raise UsageError(f"{what}: the printed {f.value:g} {f.unit} is {f.median_s:.3g} s per operation, outside "
                         f"what a machine measures ({MIN_TIME_S:g} to {MAX_SECONDS:g} s)")
    if f.n is not None and f.n > MAX_COUNT:
        raise UsageError(f"{what}: {f.n} repetitions is beyond any run")


def collective(benchmark: str, op: str, size: int, nprocs: int, seconds: float, value: float, column: str,
               n: int | None, row: dict, variant: str = "", info: dict | None = None) -> Printed:
    """A collective's printed time as the op of fabriclab's coll.OP: SIZE as both
    tools give it (the vector, or the block of the block operations: coll
    level's convention, suite/collectives.py) and the bytes the op is about."""
    from ..suite.collectives import COLLECTIVES
    return Printed(benchmark, f"coll.{op}", variant, size, nprocs, seconds,
                   COLLECTIVES[op].bytes_per_op(size, nprocs), 1, True, value, "us", column, n, row, info)


def printed_times(row: dict, lo: str, mean: str, hi: str) -> dict | None:
    """A collective's fastest, mean and slowest process times as the tool printed them
    (info.printed_times, in seconds: the table's t_min, t_avg, t_max), or None."""
    xs = [number(row.get(c, "")) for c in (lo, mean, hi)]
    return {"printed_times": [x * 1e-6 for x in xs]} if all(x is not None for x in xs) else None


def overlap_info(row: dict, pure: str, cpu: str) -> dict | None:
    """A non-blocking collective's overlap calibration as the tool printed it (info.overlap,
    in seconds: Point.overlap reads it with the op's time), or None."""
    tp, tc = number(row.get(pure, "")), number(row.get(cpu, ""))
    return {"overlap": {"t_pure_s": tp * 1e-6, "t_cpu_s": tc * 1e-6}} if tp and tc else None
