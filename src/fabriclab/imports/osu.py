"""Parses OSU Micro-Benchmarks text output into figures (imports/).

The point-to-point, one-sided and collective tests that fabriclab has
counterparts of (a collective's process count is not in OSU's output: the
importer's --ranks gives it).
The format, from OMB's c/util/osu_util_mpi.c (print_preamble,
print_only_header, print_header_one_sided) and the tests' main loops: a
banner `# OSU MPI[_Put|_Get][-CUDA...] <Name> Test v<version>`, then comment
lines (`# Datatype: MPI_CHAR.`, and for one-sided tests `# Window creation:`
and `# Synchronization:`), a column header starting `# Size` whose columns
are at least two spaces apart (`Latency (us)` before 7.x, `Avg Latency(us)`
from 7.x, `Bandwidth (MB/s)`; -f adds `Min Latency(us)`, `Max Latency(us)`,
`Iterations`), then one row per size: the size, the figure, extra columns.
Several outputs concatenated into one file are read one after the other."""

from __future__ import annotations

import re

from ..errors import UsageError
from ..suite.benchmarks import REGISTRY
from . import halo, rate
from .printed import Printed, Parsed, collective, integer, number, overlap_info, printed_times

# (rma op, test name) in the banner -> (OSU program, fabriclab benchmark, legs, both ways).
# osu_latency prints half a round trip: fabriclab's ping-pong op is the whole
# trip (2 legs). The bi-directional tests count both directions' bytes
# (osu_bibw.c, osu_put_bibw.c: size / 1e6 * iterations * window * 2 / t).
TESTS = {
    ("", "latency"): ("osu_latency", "message.pingpong", 2, False),
    ("", "bandwidth"): ("osu_bw", "message.stream", 1, False),
    ("", "bi-directional bandwidth"): ("osu_bibw", "message.bibw", 1, True),
    ("put", "latency"): ("osu_put_latency", "deposit.put_lat", 1, False),
    ("get", "latency"): ("osu_get_latency", "deposit.get_lat", 1, False),
    ("put", "bandwidth"): ("osu_put_bw", "deposit.put_bw", 1, False),
    ("get", "bandwidth"): ("osu_get_bw", "deposit.get_bw", 1, False),
    ("put", "bi-directional bandwidth"): ("osu_put_bibw", "deposit.put_bibw", 1, True),
}
# The collective tests (osu_allreduce ... osu_barrier, and the non-blocking
# osu_i<name>), by their banner's name with spaces, '-' and '_' dropped ->
# fabriclab's coll.<op>. OSU's size is fabriclab's SIZE (the vector of
# allreduce, reduce, reduce_scatter and bcast; each process's block of
# allgather(v), gather(v), scatter(v), alltoall(v)); osu_barrier has none.
COLL_TESTS = {"allreduce": "allreduce", "reduce": "reduce", "bcast": "bcast", "broadcast": "bcast",
              "allgather": "allgather", "allgatherv": "allgatherv", "gather": "gather", "gatherv": "gatherv",
              "scatter": "scatter", "scatterv": "scatterv", "alltoall": "alltoall", "alltoallv": "alltoallv",
              "alltoallpersonalizedexchange": "alltoall", "alltoallvpersonalizedexchange": "alltoallv",
              "reducescatter": "reduce_scatter", "reducescatterblock": "reduce_scatter_block",
              "barrier": "barrier", "scan": "scan"}
# The atomics (osu_fop_latency.c ...), by the call in their banner -> (program, benchmark). OSU prints
# one op's time in every sync mode (x0.5 for fence and pscw, whose round is an op each way).
ATOMIC_TESTS = {"fetch_and_op": ("osu_fop_latency", "deposit.fop"),
                "compare_and_swap": ("osu_cas_latency", "deposit.cas"),
                "accumulate": ("osu_acc_latency", "deposit.acc"),
                "get_accumulate": ("osu_get_acc_latency", "deposit.get_acc")}
ATOMIC_TITLE = re.compile(r"MPI_(?P<call>Fetch_and_op|Compare_and_swap|Accumulate|Get_accumulate)"
                          r"(?:-(?P<accel>[A-Za-z]+))?\s+latency\s+Test", re.I)
# OSU's -T datatypes (osu_util.c) as the atomics' element types; osu_get_acc_latency prints none: MPI_CHAR.
ATOMIC_TYPES = {"MPI_CHAR": "int8", "MPI_INT": "int32", "MPI_FLOAT": "float"}
PROGRAMS = sorted({t[0] for t in TESTS.values()} | {f"osu_{op}" for op in set(COLL_TESTS.values())} | {rate.OSU_BENCH[0]}
                  | {t[0] for t in ATOMIC_TESTS.values()} | set(halo.PROGRAMS))
COLL_TITLE = re.compile(r"MPI(?:-(?P<accel>[A-Za-z]+))?\s+(?P<nb>Non-?blocking\s+)?(?P<name>.+?)\s+Latency\s+Test",
                        re.I)

BANNER = re.compile(r"#\s*OSU\s+(?P<title>.*?\bTest)\b(?:\s+v(?P<version>\S+))?\s*$", re.I)
TITLE = re.compile(r"MPI(?:_(?P<rma>Put|Get))?(?:-(?P<accel>[A-Za-z]+))?\s+"
                   r"(?P<test>(?:Bi-Directional\s+)?(?:Latency|Bandwidth))\s+Test", re.I)
SETTING = re.compile(r"#\s*(?P<key>[A-Za-z][\w ]*?)\s*:\s*(?P<value>.*?)\.?\s*$")

# `# Synchronization:` texts (osu_util_mpi.c sync_info) -> OSU's -s names.
SYNC = {"MPI_Win_lock/unlock": "lock", "MPI_Win_post/start/complete/wait": "pscw", "MPI_Win_fence": "fence",
        "MPI_Win_flush": "flush", "MPI_Win_flush_local": "flush_local",
        "MPI_Win_lock_all/unlock_all": "lock_all"}
# `# Window creation:` texts -> OSU's -w names; fabriclab's windows come from MPI_Win_allocate.
WINDOWS = {"MPI_Win_create": "create", "MPI_Win_allocate": "allocate", "MPI_Win_create_dynamic": "dynamic"}

AVERAGING = ("OSU prints means, not medians: each test times `iterations` operations after `skip` untimed "
             "ones and prints the total time over the operations (osu_latency: halved, half the round "
             "trip; one-sided latency: one put or get with its synchronization) or, for bandwidth, the "
             "bytes of every window of messages over the total time in MB/s = 10^6 B/s (bi-directional "
             "tests count both directions); fabriclab turns each into the time of its own op.")


class _Section:
    """One test's output: its banner, settings and column header."""

    def __init__(self, title: str, version: str | None, dims: list | None = None):
        self.title, self.version = title, version
        self.settings: dict = {}
        self.columns: list[str] = []
        self.test = None
        self._variant = None
        self.coll = None            # (op, non-blocking) of a collective test
        self.rate = rate.OsuRate() if rate.is_osu_rate(title) else None   # osu_mbw_mr (imports/rate.py)
        if self.rate:
            self.test, self.accel = (*rate.OSU_BENCH, 1, True), ""
        # osu_[i]neighbor_* (imports/halo.py), with the grid OSU printed before the banner
        self.halo = halo.OsuNeighbor(title, dims) if halo.is_osu_neighbor(title) else None
        if self.halo:
            self.test, self.accel = self.halo.test, self.halo.accel
        m = TITLE.fullmatch(title)
        if m:
            key = ((m["rma"] or "").lower(), " ".join(m["test"].lower().split()))
            self.test = TESTS.get(key)
            self.accel = (m["accel"] or "").strip().lower().replace(" ", "_")
        a = ATOMIC_TITLE.fullmatch(title) if self.test is None else None
        if a:
            self.test = (*ATOMIC_TESTS[a["call"].lower()], 1, False)
            self.accel = (a["accel"] or "").strip().lower()
        c = COLL_TITLE.fullmatch(title) if self.test is None else None
        if c and re.sub(r"[\s_-]", "", c["name"].lower()) in COLL_TESTS:
            op = COLL_TESTS[re.sub(r"[\s_-]", "", c["name"].lower())]
            self.coll = (op, bool(c["nb"]))
            self.test = (f"osu_{'i' if c['nb'] else ''}{op}", f"coll.{op}", 1, True)
            self.accel = (c["accel"] or "").strip().lower().replace(" ", "_")

    def variant(self) -> str:
        """Settings that make these points differ from fabriclab's own, as k=v
        (worked out once per section's settings, not once per row)."""
        key = tuple(self.settings.items())
        if self._variant is None or self._variant[0] != key:
            self._variant = (key, self._work_variant())
        return self._variant[1]

    def _work_variant(self) -> str:
        bench = REGISTRY[self.test[1]]
        parts = {}
        if self.coll:
            parts = {"accel": self.accel} if self.accel else {}
            if self.coll[1]:
                parts["form"] = "nonblocking"
                if any(c.startswith("Overall") for c in self.columns):
                    parts["overlap"] = "on"
            return ",".join(f"{k}={v}" for k, v in sorted(parts.items()))
        if "sync" in bench.params and self.settings.get("Synchronization"):
            sync = SYNC.get(self.settings["Synchronization"], self.settings["Synchronization"])
            if sync != bench.defaults["sync"]:
                parts["sync"] = sync
        win = WINDOWS.get(self.settings.get("Window creation", ""), "allocate")
        if win != "allocate":
            parts["win"] = win
        dtype = self.settings.get("Datatype", "MPI_CHAR")
        atomic = self.test in {(*t, 1, False) for t in ATOMIC_TESTS.values()}
        if atomic and ATOMIC_TYPES.get(dtype, dtype) != bench.defaults["type"]:
            parts["type"] = ATOMIC_TYPES.get(dtype, dtype)   # an atomic's element (8 bytes in fabriclab's)
        elif dtype != "MPI_CHAR" and not atomic:
            parts["datatype"] = dtype
        if self.accel:
            parts["accel"] = self.accel
        return ",".join(f"{k}={v}" for k, v in sorted(parts.items()))


def parse(text: str, source: str = "input", nranks: int = 2) -> Parsed:
    """Every row of every supported test in OSU output; UsageError when there is none.
    `nranks`: the processes of the job, which OSU does not print (its collectives' N)."""
    out = Parsed(None, AVERAGING, nranks)
    sec, dims = None, None
    banners = []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        dims = halo.osu_dims(s) or dims   # a neighbourhood test's grid, before its banner (no row of a table)
        m = BANNER.match(s)
        if m:
            sec, dims = _Section(m["title"], m["version"], dims), None
            banners.append(sec)
            out.tool_version = out.tool_version or sec.version
            if sec.test is None and m["title"] not in out.ignored:
                out.ignored.append(m["title"])
            continue
        if sec is None or sec.test is None:
            continue
        if sec.rate and (s.startswith("#") and sec.rate.comment(s) or sec.rate.windows and s[0].isdigit()):
            if not s.startswith("#"):
                sec.rate.row(s.split(), sec.columns, out)
            continue
        if s.startswith("#"):
            if re.match(r"#\s*Size\b", s) or (sec.coll and re.match(r"#\s*Avg Latency", s)):
                sec.columns = re.split(r"\s{2,}", s.lstrip("#").strip())
            elif (kv := SETTING.match(s)):
                sec.settings[kv["key"]] = kv["value"]
            continue
        if sec.columns:
            if sec.rate or sec.halo:    # osu_mbw_mr (imports/rate.py), osu_[i]neighbor_* (imports/halo.py)
                (sec.rate or sec.halo).row(s.split(), sec.columns, out)
                continue
            (_coll_row if sec.coll else _row)(sec, s.split(), out, nranks)
    for sec in banners:
        if sec.rate:
            sec.rate.finish(out)
    if not banners:
        hint = " (it looks like IMB output: --from imb)" if "# Benchmarking " in text else ""
        raise UsageError(f"{source} is not OSU Micro-Benchmarks output: no '# OSU MPI ... Test' banner{hint}")
    if not out.figures and not out.skips:
        supported = [b for b in banners if b.test]
        if not supported:
            raise UsageError(f"{source} holds OSU {', '.join(out.ignored)}, which fabriclab does not import "
                             f"(it imports {', '.join(PROGRAMS)})")
        raise UsageError(f"{source}: no data rows under the OSU '# Size' header")
    out.settings = {b.test[0]: b.settings for b in banners if b.test and b.settings}
    return out


def _row(sec: _Section, tok: list[str], out: Parsed, nranks: int = 2) -> None:
    """One printed row: the size, then the figure in the column after it."""
    size = integer(tok[0]) if tok else None
    value = number(tok[1]) if len(tok) > 1 else None
    program, bench, legs, both = sec.test
    if size is not None and (value is None or value < 0) and _numeric(tok[1] if len(tok) > 1 else ""):
        out.skips.append((bench, size, f"{program} printed {tok[1][:20]}: no time"))    # nan, inf, a negative
        return
    if size is None or value is None:
        return  # not a row of the table (a line from the MPI library, a warning)
    column = sec.columns[1] if len(sec.columns) > 1 else ""
    unit = "MB/s" if "MB/s" in column else "us"
    if (unit == "us") != ("latency" in program):
        raise UsageError(f"OSU {program} with a column {column!r}: expected "
                         f"{'microseconds' if 'latency' in program else 'MB/s'}")
    row = dict(zip(sec.columns, tok))
    iters = integer(row["Iterations"]) if "Iterations" in row else None
    nbytes = size * (2 if legs == 2 or both else 1)
    if unit == "us":
        median = value * 1e-6 * legs  # osu_latency: half a round trip -> the trip
    elif value > 0:
        median = nbytes / (value * 1e6)  # OSU MB/s are 10^6 B/s (osu_bw.c: size / 1e6 ... / t)
    else:
        out.skips.append((bench, size, f"{program} printed {tok[1]} MB/s: no time per operation"))
        return
    out.figures.append(Printed(program, bench, sec.variant(), size, 2, median, nbytes, legs, both, value, unit,
                              column, iters, row))


def _numeric(text: str) -> bool:
    """Whether a printed word reads as a float at all (nan, inf and negatives included)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _coll_row(sec: _Section, tok: list[str], out: Parsed, nranks: int) -> None:
    """A collective's row: Max Latency, the slowest process's mean, where -f printed it, else the
    mean over the processes; a non-blocking test's Overall with its Pure Comm. and Compute as the
    overlap's calibration. osu_barrier's rows have no size."""
    sized = sec.columns[0].startswith("Size")
    row = dict(zip(sec.columns, tok))
    size = integer(tok[0]) if sized and tok else 0
    pick = next((c for c in ("Max Latency(us)", "Overall(us)", "Avg Latency(us)", "Latency(us)") if c in row), None)
    value = number(row[pick]) if pick else None
    if size is None or value is None or value < 0 or len(tok) < len(sec.columns):
        return  # a line from the library or the shell, not a row
    info = overlap_info(row, "Pure Comm.(us)", "Compute(us)") if pick == "Overall(us)" else \
        printed_times(row, "Min Latency(us)", "Avg Latency(us)", "Max Latency(us)")
    iters = integer(row["Iterations"]) if "Iterations" in row else None
    out.figures.append(collective(sec.test[0], sec.coll[0], size, nranks, value * 1e-6, value, pick, iters, row,
                                  sec.variant(), info))
