"""What a registry entry says (benchmarks.py assembles the entries): `Param`,
one parameter's default and the values it accepts, and `Bench`, one
benchmark's facts; `entry` builds a Bench as the family modules
(entries_*.py) write them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..errors import UsageError
from ..units import parse_size
from . import apps, buffers, footprint as fp
from .collectives import Collective


@dataclass(frozen=True)
class Param:
    """One parameter of a benchmark: its default and the values it accepts.

    Three kinds: listed `choices` (the first is the default); an integer in
    lo..hi, typed in units.py's grammar (window=4K); or free text. `canonical`
    turns what a user typed into the one form the core receives: the choice
    itself, a plain decimal integer, or the text. `only` = (key, value): a
    value other than the default means something only while parameter key
    has that value (Bench.idle). The core checks the same rules, generated
    from these (build.py), and accepts nothing else."""
    default: str                # as written here, shown by `fabriclab list` ("32M")
    choices: tuple = ()
    lo: int | None = None       # an integer parameter's range, inclusive
    hi: int | None = None
    only: tuple = ()            # ("variant", "concurrent"), or () for always
    # a text parameter's own rule: check(value, what) raises UsageError in one line (noise.threshold)
    check: Callable | None = None

    @property
    def integer(self) -> bool:
        return self.lo is not None

    @property
    def core_default(self) -> str:
        return self.canonical(self.default, "default")

    def __str__(self) -> str:
        """The listing's form: "a|b" for choices, else the default."""
        return "|".join(self.choices) if self.choices else self.default

    def canonical(self, value: str, what: str) -> str:
        """`value` in the core's form; UsageError naming `what` if it is not accepted."""
        if self.choices:
            if value not in self.choices:
                raise UsageError(f"{what} must be one of {', '.join(self.choices)}, not {value!r}")
            return value
        if not self.integer:
            if self.check:
                self.check(value, what)
            return value
        try:
            n = parse_size(value)
        except UsageError as e:  # keep units.py's reason, after its "malformed size '...': "
            raise UsageError(f"{what} takes an integer {self.lo}..{self.hi}, not {value!r}: "
                             f"{str(e).split(': ', 1)[-1]}") from None
        if not self.lo <= n <= self.hi:
            raise UsageError(f"{what} must be {self.lo}..{self.hi}, not {value}"
                             + (f" (= {n})" if str(n) != value else ""))
        return str(n)


def choice(*values: str) -> Param:
    return Param(values[0], tuple(values))


def integer(default, lo: int, hi: int, only: tuple = ()) -> Param:
    return Param(str(default), lo=lo, hi=hi, only=only)


def text(default: str = "", check: Callable | None = None) -> Param:
    return Param(default, check=check)


# Message-size sweep shared by the transfer levels: 0 B .. 4 MiB by x2.
TRANSFER_SIZES = "0:4M:x2"


@dataclass(frozen=True)
class Bench:
    name: str
    summary: str
    metric: str                 # "latency" or "bandwidth": the figure that leads its table
    sizes: str = TRANSFER_SIZES
    axes: tuple = ("size",)
    params: dict = field(default_factory=dict)   # name -> Param
    min_ranks: int = 2
    legs: int = 1               # one-way transfers per op, in a row (sequential benchmarks)
    concurrent: bool = False    # the op's transfers overlap: its time is the figure
    # How a sample reduces over the ranks that time (the core's runner): the slowest rank's time,
    # or "senders-mean", the senders' mean (osu_mbw_mr; the kernel's shape sets mean_timed)
    reduce: str = "slowest"
    pattern: str | None = None  # rank layout of a traffic pattern, None: ranks 0 and 1 (or 0 alone)
    strides: str = "1"
    conns: str = "1"
    # In the default suite with these overrides of the sweeps (and "params":
    # parameter values, "a,b" for a variant each); None: run only when named.
    suite: dict | None = field(default_factory=dict)
    # The report's views across benchmarks that show it (report/figures.py VIEWS).
    views: tuple = ()
    # A memory copy: "contiguous" (the bound of strided copies) or "strided" (read against it).
    copy: str | None = None
    # What SIZE is, as the x axis of its figures says, and in what unit.
    size_label: str = "message size"
    size_unit: str = "bytes"
    # What its kernel allocates per point and rank, and the points it skips
    # (footprint.py); resources.py checks a run's memory with it before launching.
    footprint: fp.Footprint | None = None
    # fabric level: the fi_getinfo capabilities its kernel asks for ("msg", "rma");
    # the provider chosen must offer them (fabrics.py).
    caps: tuple = ()
    # An application: its problem, work, rate and exchange phase (apps.py);
    # None for the transfer benchmarks.
    app: apps.App | None = None
    # A collective operation: what SIZE is, its bytes and bus bandwidth (collectives.py).
    coll: Collective | None = None
    # A check of its points before launch beyond each parameter's own (halo.py's grids and
    # neighbourhoods): rules(name, sizes, params, nranks) raises UsageError in one line.
    rules: Callable | None = None
    # A floor on the seconds a launch of it takes before its first sample of SIZE can be written, where
    # its parameters alone set one (a paced kernel's ops, a noise record): first_sample(params, size)
    # -> (seconds, what takes them) or None. A floor past --timeout is refused before launch
    # (measure/session.py), where the silent launch would otherwise be killed as hung.
    first_sample: Callable | None = None
    # Several threads per rank make MPI calls at once: the core asks MPI for
    # MPI_THREAD_MULTIPLE for it alone (csrc/main.c; the rest keep MPI_Init's level).
    threads: bool = False
    # Its kernel's counters (the point's rank_counters, analysis/counters.py): each
    # counter's name, without a ".K" stream suffix, to its kind: "sum" (a count kept
    # since setup: a sample's figure is its growth over the sample) or "level" (a
    # current value: a sample's figure is its value after the sample).
    counters: dict = field(default_factory=dict)

    def for_suite(self) -> "Bench":
        """This benchmark with the default suite's (shorter) sweeps."""
        sweeps = {k: v for k, v in (self.suite or {}).items() if k != "params"}
        return replace(self, **sweeps) if sweeps else self

    @property
    def suite_params(self) -> dict:
        return dict((self.suite or {}).get("params", {}))

    @property
    def level(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def defaults(self) -> dict:
        """Parameter defaults in the core's form (burst=32M: "33554432")."""
        return {k: p.core_default for k, p in self.params.items()}

    @property
    def has_stride(self) -> bool:
        return "stride" in self.axes

    @property
    def even_ranks(self) -> bool:
        """Pair patterns split the ranks into two halves."""
        return self.pattern in ("pairs", "bipairs", "bisection")

    @property
    def params_spec(self) -> str:
        """The core's listing: space-separated key=default, a|b listing choices."""
        return " ".join(f"{k}={'|'.join(p.choices) or p.core_default}" for k, p in self.params.items())

    def own_buffers(self, params: dict) -> int:
        """Ops in flight between two completions that each take a buffer of
        their own (buffers.py): the `window` under window_buffers=per-op, else 1;
        a window on each of `endpoints` endpoints (*.msg_rate) is endpoints x window ops."""
        have = {**self.defaults, **params}
        ops = int(have.get("window", 1)) * int(have.get("endpoints", 1))
        return buffers.own(ops, have.get("window_buffers", buffers.LAYOUTS[0]))

    def canonical(self, key: str, value: str) -> str:
        """A value of parameter `key` as the core receives it; UsageError if refused."""
        return self.params[key].canonical(value, f"{self.name}: parameter {key}")

    def idle(self, params: dict) -> dict:
        """The parameters of one variant (canonical values) that mean nothing
        beside the others: away from their default while the parameter their
        `only` names has another value; each with why, in one line."""
        have = {**self.defaults, **params}
        return {k: f"{self.name}: parameter {k}={have[k]} applies only with {p.only[0]}={p.only[1]}, "
                   f"not {p.only[0]}={have[p.only[0]]}"
                for k, p in self.params.items()
                if p.only and have[k] != p.core_default and have[p.only[0]] != p.only[1]}

    def check_ranks(self, nranks: int) -> None:
        if nranks < self.min_ranks:
            raise UsageError(f"{self.name} needs at least {self.min_ranks} ranks; this run has {nranks}")
        if self.even_ranks and nranks % 2:
            raise UsageError(f"{self.name} pairs rank i with rank i + N/2 and needs an even number of "
                             f"ranks; this run has {nranks}")


# The socket levels: every benchmark of theirs shows its CPU per byte or per
# transaction (netperf's service demand; view "cpu", report/cpu_views.py).
SOCKET_LEVELS = ("tcp", "udp")


def entry(name, summary, metric, **kw) -> Bench:
    """A registry entry: a socket level's shows its CPU (view "cpu")."""
    params = kw.pop("params", {})
    if name.split(".", 1)[0] in SOCKET_LEVELS:
        kw["views"] = (*kw.get("views", ()), "cpu")
    return Bench(name, summary, metric, params=dict(params), **kw)
