"""Parses Intel MPI Benchmarks (IMB-MPI1, IMB-NBC) text output into figures (imports/).

PingPong, PingPing, Sendrecv, Exchange and the collectives, IMB-NBC's
non-blocking ones with their overlap. The format, from
IMB's src_c/IMB_g_info.c and IMB_output.c: a banner `#    Intel(R) MPI
Benchmarks <version>, MPI-1 part` (`Intel (R) MPI Benchmark Suite
V<version>` before 2018), `# Key : value` lines, then per
benchmark and process count a block: `# Benchmarking <Name>`, `# #processes
= N`, maybe `# ( K additional processes waiting in MPI_Barrier)`, a line of
column names each 13 wide (`#bytes #repetitions t[usec] Mbytes/sec` for
PingPong and PingPing; `... t_min[usec] t_max[usec] t_avg[usec] Mbytes/sec`
for Sendrecv and Exchange; the same without Mbytes/sec for collectives),
then one row per size."""

from __future__ import annotations

import re

from ..errors import UsageError
from ..suite.benchmarks import REGISTRY
from . import halo, rate
from .printed import Printed, Parsed, collective, integer, number, overlap_info, printed_times

# IMB name -> (fabriclab benchmark, legs, payload bytes of one op in messages
# of #bytes given the process count N). PingPong's t[usec] is half the round
# trip (IMB_parse_name_mpi1.c: scale_time 0.5), fabriclab's op the whole
# trip. PingPing: both ranks send one message at once. Sendrecv: every rank
# sends one message to its right neighbour and receives one from its left;
# Exchange: every rank sends one to each neighbour (IMB_sendrecv.c,
# IMB_exchange.c). Alltoall: #bytes to every other rank, as fabriclab's
# message.alltoall (IMB_alltoall.c: sendcount = size).
BENCHES = {
    "PingPong": ("message.pingpong", 2, lambda n: 2),
    "PingPing": ("imb.pingping", 1, lambda n: 2),
    "Sendrecv": ("imb.sendrecv", 1, lambda n: n),
    "Exchange": ("imb.exchange", 1, lambda n: 2 * n),
}
# The collectives (IMB-MPI1, and IMB-NBC's I<name>) -> fabriclab's coll.<op>.
# IMB's #bytes is what fabriclab's SIZE is (the IMB user guide: "X bytes"
# is the vector of Allreduce, Reduce, Reduce_scatter and Bcast, each
# process's block of Allgather(v), Gather(v), Scatter(v) and Alltoall(v));
# the Barrier has no #bytes. IMB-NBC's I<name> rows are the overlap
# (t_ovrl, t_pure, t_CPU), its I<name>_pure rows the non-blocking op alone.
COLLECTIVES = {"Allreduce": "allreduce", "Reduce": "reduce", "Reduce_scatter": "reduce_scatter",
               "Reduce_scatter_block": "reduce_scatter_block", "Allgather": "allgather",
               "Allgatherv": "allgatherv", "Gather": "gather", "Gatherv": "gatherv", "Scatter": "scatter",
               "Scatterv": "scatterv", "Alltoall": "alltoall", "Alltoallv": "alltoallv", "Bcast": "bcast",
               "Barrier": "barrier", "Scan": "scan"}
NBC_PURE, NBC_OVERLAP = "form=nonblocking", "form=nonblocking,overlap=on"
# IMB-RMA's atomics (IMB_rma_atomic.c) -> deposit's, with their element: MPI_FLOAT for the reductions
# (IMB_mem_manager.c: red_data_type), MPI_INT for Compare_and_swap. Each block's `MODE: AGGREGATE` is
# n ops then one flush (fabriclab's mode=aggregate), NON-AGGREGATE a flush per op (sync=flush); both
# under one shared lock, and t[usec] is the time of one op (docs/atomics.md).
RMA_ATOMICS = {"Fetch_and_op": ("deposit.fop", "float"), "Compare_and_swap": ("deposit.cas", "int32"),
               "Accumulate": ("deposit.acc", "float"), "Get_accumulate": ("deposit.get_acc", "float")}
MODE = re.compile(r"#\s*MODE:\s*(?P<mode>NON-AGGREGATE|AGGREGATE)\b", re.I)


def collective_of(name: str) -> tuple[str, str] | None:
    """(op, variant) of an IMB collective's name, IMB-NBC's included; None for another."""
    if name in COLLECTIVES:
        return COLLECTIVES[name], ""
    pure = name.endswith("_pure")
    base = name[1:-5] if pure else name[1:]
    lower = {k.lower(): v for k, v in COLLECTIVES.items()}    # IMB-NBC: Iallreduce, Ireduce_scatter
    if name.startswith("I") and base.lower() in lower:
        return lower[base.lower()], NBC_PURE if pure else NBC_OVERLAP
    return None

BANNER = re.compile(r"#\s*Intel\s*\(R\)\s*MPI\s+Benchmark(?:s|\s+Suite)\s+V?(?P<version>[^,]*?)\s*,"
                    r"\s*(?P<part>.*?)\s*$", re.I)
BLOCK = re.compile(r"#\s*Benchmarking\s+(?P<multi>Multi-)?(?P<name>\S+)")
NPROCS = re.compile(r"#\s*#processes\s*=\s*(?P<n>\d+)")
WAITING = re.compile(r"#\s*\(\s*(?P<n>\d+)\s+additional process(?:es)?\s+waiting")
SETTING = re.compile(r"#\s*(?P<key>MPI Version|Date|Machine|System|Release)\s*:\s*(?P<value>.*?)\s*$")

# IMB's Mbytes/sec: since IMB 2018, 10^6 B/s (src_c/IMB_output.c: `static
# double MEGA = 1.0 / 1e6`, throughput = scale_bw * SCALE * MEGA * size /
# t_max); before, 2^20 B/s (IMB 3.x IMB_output.c: `MEGA = 1.0/1048576.0`; the
# user guide of the IMB 4.x releases, which have IMB-RMA: "bandwidth = X /
# 1.048576 / T", X in bytes, T in usec). fabriclab recomputes bandwidth from
# the time and records the unit the file used.
MEGA_SINCE_2018 = 1_000_000
MEGA_BEFORE_2018 = 1_048_576

AVERAGING = ("IMB prints means, not medians: every process times #repetitions operations (after warm-up "
             "ones) and takes its mean time per operation, PingPong's halved (half the round trip); "
             "t_min, t_max and t_avg are the minimum, maximum and mean of those means over the processes, "
             "and t[usec] (PingPong, PingPing) is their maximum; fabriclab takes t[usec] or t_max[usec], "
             "the slowest process, as the time of its own op.")


def mega(version: str | None) -> int:
    """Bytes in IMB's Mbyte for an IMB version string (a year from 2018 on)."""
    m = re.match(r"\s*(\d+)", version or "")
    return MEGA_BEFORE_2018 if m and int(m.group(1)) < 2018 else MEGA_SINCE_2018


class _Block:
    def __init__(self, name: str, multi: bool):
        self.name, self.multi = name, multi
        self.nprocs, self.waiting = None, 0
        self.columns: list[str] = []
        self.mode = ""               # IMB-RMA: AGGREGATE or NON-AGGREGATE

    @property
    def supported(self) -> bool:
        return (self.name in BENCHES or self.name in rate.IMB_BENCHES or self.name in halo.IMB_STENCILS
                or self.name in RMA_ATOMICS or collective_of(self.name) is not None) and not self.multi


def parse(text: str, source: str = "input") -> Parsed:
    """Every row of every supported block in IMB output; UsageError when there is none."""
    out = Parsed(None, AVERAGING, None)
    blk, blocks, part = None, [], None
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if (m := BANNER.match(s)):
            out.tool_version, part = m["version"] or None, m["part"]
        elif (m := BLOCK.match(s)):
            blk = _Block(m["name"], bool(m["multi"]))
            blocks.append(blk)
            label = ("Multi-" if blk.multi else "") + blk.name
            if not blk.supported and label not in out.ignored:
                out.ignored.append(label)
        elif (m := SETTING.match(s)):
            out.settings.setdefault(m["key"], m["value"])
        elif blk is None:
            continue
        elif (m := NPROCS.match(s)) or s.replace(" ", "").startswith("##processes"):
            blk.nprocs = integer(m["n"]) if m else None
            if not blk.nprocs:               # 0, -5, many: the figures' process count would be a guess
                raise UsageError(f"{source}: {s[:60]!r} is not a process count of 1 or more")
        elif (m := WAITING.match(s)):
            blk.waiting = integer(m["n"])
        elif (m := MODE.match(s)):
            blk.mode = m["mode"].upper()
        elif s.startswith("#bytes") or s.startswith("#repetitions") or s.startswith("Group"):
            blk.columns = s.split()
        elif blk.columns and blk.supported and s[0].isdigit():
            _data_row(blk, s, out, source)
    if not blocks:
        hint = " (it looks like OSU output: --from osu)" if re.search(r"^#\s*OSU\s", text, re.M) else ""
        raise UsageError(f"{source} is not IMB output: no '# Benchmarking' block{hint}")
    if not out.figures and not out.skips:
        if not any(b.supported for b in blocks):
            raise UsageError(f"{source} holds IMB {', '.join(out.ignored)}, which fabriclab does not import "
                             f"(it imports {', '.join([*BENCHES, *rate.IMB_BENCHES, *halo.IMB_STENCILS, *COLLECTIVES])} and IMB-NBC's I<name>)")
        raise UsageError(f"{source}: no data rows under the IMB column header")
    sizes = [b.nprocs + b.waiting for b in blocks if b.nprocs]
    out.nranks = max(sizes) if sizes else None
    out.settings["part"] = part
    out.settings["Mbytes/sec"] = f"{mega(out.tool_version)} B/s"
    return out


def _data_row(blk: _Block, s: str, out: Parsed, source: str) -> None:
    """A row of a supported block, read by its kind's reader."""
    if blk.nprocs is None:
        raise UsageError(f"{source}: IMB {blk.name}'s rows have no '# #processes = N' line above them")
    if blk.name in rate.IMB_BENCHES:
        rate.imb_row(blk.name, blk.nprocs, blk.columns, s.split(), out)      # Uniband, Biband
    elif blk.name in halo.IMB_STENCILS:
        halo.imb_row(blk.name, blk.nprocs, blk.columns, s.split(), out)      # IMB-P2P's stencils
    elif blk.name in RMA_ATOMICS:
        _rma_row(blk, s.split(), out)                                        # IMB-RMA's atomics
    else:
        (_row if blk.name in BENCHES else _coll_row)(blk, s.split(), out)


def _row(blk: _Block, tok: list[str], out: Parsed) -> None:
    bench, legs, messages = BENCHES[blk.name]
    column = "t[usec]" if "t[usec]" in blk.columns else "t_max[usec]"
    row = dict(zip(blk.columns, tok))
    size = integer(row.get("#bytes", ""))
    n = blk.nprocs or 2
    if size is None:
        return
    value = number(row.get(column, ""))
    if len(tok) < len(blk.columns) or value is None or column not in blk.columns:
        # a failed sample: "4194304 out-of-mem.; needed X=...", "int-overflow", "time-out."
        out.skips.append((bench, size, f"IMB {blk.name}: {' '.join(tok[1:])}"))
        return
    out.figures.append(Printed(blk.name, bench, "", size, n, value * 1e-6 * legs, messages(n) * size, legs,
                              legs == 1, value, "us", column, integer(row.get("#repetitions", "")), row))


def _coll_row(blk: _Block, tok: list[str], out: Parsed) -> None:
    """A collective's row: t_max, the slowest process, is the op's time (t_min and t_avg
    stay in the printed row); IMB-NBC's t_ovrl, with t_pure and t_CPU as its overlap."""
    op, variant = collective_of(blk.name)
    row = dict(zip(blk.columns, tok))
    size = integer(row["#bytes"]) if "#bytes" in blk.columns else 0
    column = "t_ovrl[usec]" if "t_ovrl[usec]" in row else "t_max[usec]"
    value = number(row.get(column, ""))
    if size is None:
        return
    if len(tok) < len(blk.columns) or value is None:
        out.skips.append((f"coll.{op}", size, f"IMB {blk.name}: {' '.join(tok[1:])}"))
        return
    info = overlap_info(row, "t_pure[usec]", "t_CPU[usec]") if column == "t_ovrl[usec]" else \
        printed_times(row, "t_min[usec]", "t_avg[usec]", "t_max[usec]")
    out.figures.append(collective(blk.name, op, size, blk.nprocs or 2, value * 1e-6, value, column,
                                  integer(row.get("#repetitions", "")), row, variant, info))


def _rma_row(blk: _Block, tok: list[str], out: Parsed) -> None:
    """An IMB-RMA atomic's row: t[usec], the origin's time of one op, in the block's mode."""
    bench, dtype = RMA_ATOMICS[blk.name]
    row = dict(zip(blk.columns, tok))
    size = integer(row.get("#bytes", ""))
    value = number(row.get("t[usec]", ""))
    if size is None:
        return
    if len(tok) < len(blk.columns) or value is None or size == 0:
        why = "no element (fabriclab's atomics move whole elements)" if size == 0 else " ".join(tok[1:])
        out.skips.append((bench, size, f"IMB {blk.name}: {why}"))
        return
    parts = {"type": dtype}
    if REGISTRY[bench].defaults["sync"] != "flush":
        parts["sync"] = "flush"
    if blk.mode == "AGGREGATE":
        parts["mode"] = "aggregate"
    variant = ",".join(f"{k}={v}" for k, v in sorted(parts.items()))
    out.figures.append(Printed(blk.name, bench, variant, size, blk.nprocs or 2, value * 1e-6, size, 1, False,
                              value, "us", "t[usec]", integer(row.get("#repetitions", "")), row))
