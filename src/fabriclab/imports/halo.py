"""OSU's neighbourhood collectives and IMB-P2P's stencils as fabriclab's
coll.neighbor_* and message.stencil2d/3d (imports/osu.py and imb.py call
these; docs/halo.md).

- osu_neighbor_<op> and osu_ineighbor_<op> (c/mpi/collective/neighborhood/):
  OSU prints `Dimensions size = 4` before its banner for a Cartesian
  neighbourhood (none for a graph file), then `# Size  Avg Latency(us)`
  (-f adds Min, Max and Iterations; the non-blocking tests print Overall,
  Compute ... Pure Comm.). The op's time is Max Latency where printed, else
  the mean over the processes; a non-blocking test's Pure Comm. (post and
  wait, no compute: fabriclab's form=nonblocking). OSU prints neither the
  radius nor the processes: the radius is OSU's default 1, the processes the
  importer's --ranks. A graph neighbourhood's degrees are in no output: its
  rows are skipped with that reason.
- IMB-P2P Stencil2D and Stencil3D (src_c/P2P/imb_p2p_stencil2d.c):
  `#bytes #repetitions t[usec] Mbytes/sec Msg/sec`, where Msg/sec is every
  rank's sends over the slowest rank's time: one op of fabriclab's is N x
  2 dims messages, so its time is those messages over Msg/sec."""

from __future__ import annotations

import re

from ..suite import halo
from .printed import Parsed, Printed, integer, number

OPS = ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw")
OSU_TITLE = re.compile(r"MPI(?:-(?P<accel>[A-Za-z]+))?\s+(?P<nb>Non-?blocking\s+)?Neighbou?rhood\s+"
                       r"(?P<op>Allgatherv?|Alltoall[vw]?)\s+Latency\s+Test", re.I)
DIMS = re.compile(r"Dimensions\s+size\s*=\s*(?P<dims>(?:\d+\s*)+)$", re.I)
IMB_STENCILS = {"Stencil2D": ("message.stencil2d", 2), "Stencil3D": ("message.stencil3d", 3)}
PROGRAMS = [f"osu_{nb}neighbor_{op}" for nb in ("", "i") for op in OPS]
BENCHES = {*(f"coll.neighbor_{op}" for op in OPS), *(b for b, _ in IMB_STENCILS.values())}


def osu_dims(line: str) -> list[int] | None:
    """OSU's `Dimensions size = 2 2` line (printed before the banner), or None."""
    m = DIMS.match(line)
    return [int(x) for x in m["dims"].split()] if m else None


class OsuNeighbor:
    """One osu_[i]neighbor_<op> output: its operation, form and the grid printed before it."""

    def __init__(self, title: str, dims: list[int] | None):
        m = OSU_TITLE.fullmatch(title)
        self.op, self.nonblocking, self.dims = m["op"].lower(), bool(m["nb"]), dims
        self.accel = (m["accel"] or "").lower()
        self.test = (f"osu_{'i' if self.nonblocking else ''}neighbor_{self.op}", f"coll.neighbor_{self.op}", 1, True)

    def variant(self) -> str:
        parts = {"dim": str(len(self.dims))} if self.dims and len(self.dims) != 1 else {}
        if self.nonblocking:
            parts["form"] = "nonblocking"
        if self.accel:
            parts["accel"] = self.accel
        return ",".join(f"{k}={v}" for k, v in sorted(parts.items()))

    def row(self, tok: list, columns: list, out: Parsed) -> None:
        """A printed row; the processes are the importer's --ranks (out.nranks)."""
        row = dict(zip(columns, tok))
        nranks = out.nranks or 2
        size = integer(tok[0]) if tok else None
        pick = next((c for c in ("Max Latency(us)", "Pure Comm.(us)", "Avg Latency(us)") if c in row), None)
        value = number(row[pick]) if pick else None
        if size is None or value is None or value <= 0 or len(tok) < len(columns):
            return  # a line from the library or the shell, not a row
        bench = self.test[1]
        if not self.dims:
            out.skips.append((bench, size, f"{self.test[0]} on a graph file: OSU prints no degrees"))
            return
        degree = len(halo.cart_neighbours(0, nranks, len(self.dims), 1))
        out.figures.append(Printed(self.test[0], bench, self.variant(), size, nranks, value * 1e-6,
                                   nranks * degree * size, 1, True, value, "us", pick,
                                   integer(row.get("Iterations", "")), row, messages=nranks * degree))


def is_osu_neighbor(title: str) -> bool:
    return OSU_TITLE.fullmatch(title) is not None


def imb_row(name: str, nprocs: int, columns: list, tok: list, out: Parsed) -> None:
    """An IMB-P2P stencil row: the op's time from Msg/sec (every rank's sends over the slowest
    rank's time); a row without one is a skip."""
    bench, dims = IMB_STENCILS[name]
    row = dict(zip(columns, tok))
    size = integer(row.get("#bytes", ""))
    if size is None:
        return
    rate = number(row.get("Msg/sec", ""))
    if len(tok) < len(columns) or rate is None or rate <= 0:
        out.skips.append((bench, size, f"IMB-P2P {name}: {' '.join(tok[1:])}"))
        return
    messages = nprocs * 2 * dims
    out.figures.append(Printed(name, bench, "", size, nprocs, messages / rate, messages * size, 1, True, rate,
                               "msg/s", "Msg/sec", integer(row.get("#repetitions", "")), row, messages=messages))


def layout_fields(f: Printed) -> dict:
    """The pattern fields of an imported halo point: every rank in role b, each sending its
    share of the op's bytes and messages (the tools print no ranks' own), no samples."""
    n = f.nprocs
    each = f.messages // n * f.size      # a rank's messages of SIZE
    return dict(roles="b" * n, peers=[-1] * n, rank_sent_bytes=[each] * n, rank_recv_bytes=[each] * n,
                rank_samples=[None] * n, messages_per_op=f.messages)
