"""The message-rate tests of OSU and IMB as fabriclab's message.mbw_mr,
message.uniband and message.biband (imports/osu.py and imb.py call these).

fabriclab's op of these benchmarks is one message from every sending rank
(docs/message-rate.md): P messages for osu_mbw_mr and Uniband, 2P for
Biband, P = processes / 2 pairs. The tools print a message rate, the
messages of every pair over the time of a window divided by the window, so
the time of one op is those messages over the printed rate, and the
bandwidth (every pair's bytes over that time) is the tool's MB/s again:

- osu_mbw_mr (c/mpi/pt2pt/standard/osu_mbw_mr.c): `# [ pairs: P ] [ window
  size: W ]`, then rows `Size  MB/s  Messages/s` with Messages/s = 10^6 x
  MB/s / Size; with -V (`window size: varied`) a table of MB/s and one of
  messages/s, a column per window of OSU's WINDOW_SIZES (1 .. 128), each a
  variant `window=W` (64, OSU's default and fabriclab's, is none);
- IMB-MPI1 Uniband and Biband (src_c/IMB_output.c, ParallelTransferMsgRate):
  `#bytes #repetitions Mbytes/sec Msg/sec`, Msg/sec = scale_bw x W x P /
  t_max (scale_bw 1 and 2), of the window IMB ran (256 unless -window_size)."""

from __future__ import annotations

import re

from .printed import Parsed, Printed, integer, number

OSU_BENCH = ("osu_mbw_mr", "message.mbw_mr")
OSU_WINDOW = 64
# IMB name -> (fabriclab benchmark, messages per op per pair)
IMB_BENCHES = {"Uniband": ("message.uniband", 1), "Biband": ("message.biband", 2)}

OSU_TITLE = re.compile(r"MPI(?:-(?P<accel>[A-Za-z]+))?\s+Multiple\s+Bandwidth\s*/\s*Message\s+Rate\s+Test", re.I)
OSU_SETUP = re.compile(r"#\s*\[\s*pairs:\s*(?P<pairs>\d+)\s*\]\s*\[\s*window size:\s*(?P<window>\d+|varied)\s*\]",
                       re.I)
OSU_WINDOWS = re.compile(r"#(?:\s+\d+)+\s*$")


def is_osu_rate(title: str) -> bool:
    return OSU_TITLE.fullmatch(title) is not None


class OsuRate:
    """One osu_mbw_mr output: its pairs and window, and the table being read."""

    def __init__(self):
        self.pairs, self.window = 1, OSU_WINDOW
        self.varied = False
        self.windows: list[int] = []     # -V: the window of each column
        self.table = None                # "MB/s" or "Messages/s": the columns being read
        self.rows: dict = {}             # -V: (size, window) -> {"MB/s": text, "Messages/s": text}

    def comment(self, s: str) -> bool:
        """Reads a comment line that belongs to this test's layout; False for another."""
        if (m := OSU_SETUP.match(s)):
            self.pairs = int(m["pairs"])
            self.varied = m["window"].lower() == "varied"
            self.window = OSU_WINDOW if self.varied else int(m["window"])
            return True
        if self.varied and "Bandwidth" in s:
            self.table = "MB/s"
            return True
        if self.varied and "Message Rate" in s:
            self.table = "Messages/s"
            return True
        if self.varied and OSU_WINDOWS.match(s):
            self.windows = [int(x) for x in s.lstrip("#").split()]
            return True
        return False

    def row(self, tok: list, columns: list, out: Parsed) -> None:
        """A printed row: `Size MB/s [Messages/s]`, or under -V a size and a figure per window."""
        size = integer(tok[0]) if tok else None
        if size is None:
            return
        if self.varied:
            for w, text in zip(self.windows, tok[1:]):
                self.rows.setdefault((size, w), {})[self.table or "MB/s"] = text
            return
        self._figure(size, self.window, dict(zip(columns, tok)), out)

    def finish(self, out: Parsed) -> None:
        """-V: each (size, window) once both tables are read."""
        for (size, w), row in self.rows.items():
            self._figure(size, w, {"Size": str(size), **row}, out)
        self.rows = {}

    def _figure(self, size: int, window: int, row: dict, out: Parsed) -> None:
        figure = _osu_time(self.pairs, size, row)
        if figure is None:
            return
        median, value, column = figure
        variant = "" if window == OSU_WINDOW else f"window={window}"
        out.figures.append(Printed(OSU_BENCH[0], OSU_BENCH[1], variant, size, 2 * self.pairs, median,
                                   self.pairs * size, 1, True, value, "msg/s" if column == "Messages/s" else "MB/s",
                                   column, None, row, messages=self.pairs))


def _osu_time(pairs: int, size: int, row: dict):
    """(seconds per op, the figure read, its column): from Messages/s where printed (the
    exact one at small sizes: MB/s has two decimals), else from MB/s = 10^6 B/s."""
    rate = number(row.get("Messages/s", ""))
    if rate and rate > 0:
        return pairs / rate, rate, "Messages/s"
    mbps = number(row.get("MB/s", ""))
    if mbps and mbps > 0 and size > 0:
        return pairs * size / (mbps * 1e6), mbps, "MB/s"
    return None


def imb_row(name: str, nprocs: int, columns: list, tok: list, out: Parsed) -> None:
    """An IMB Uniband or Biband row; a failed sample ("time-out.", "out-of-mem.") is a skip."""
    bench, per_pair = IMB_BENCHES[name]
    row = dict(zip(columns, tok))
    size = integer(row.get("#bytes", ""))
    if size is None:
        return
    pairs = max(nprocs // 2, 1)
    rate = number(row.get("Msg/sec", ""))
    if len(tok) < len(columns) or rate is None or rate <= 0:
        out.skips.append((bench, size, f"IMB {name}: {' '.join(tok[1:])}"))
        return
    messages = per_pair * pairs
    out.figures.append(Printed(name, bench, "", size, nprocs, messages / rate, messages * size, 1, True, rate,
                               "msg/s", "Msg/sec", integer(row.get("#repetitions", "")), row, messages=messages))


def layout_fields(f: Printed) -> dict:
    """The pattern fields of an imported message-rate point: its pairs' layout (as fabriclab's own
    run of the benchmark lays them out), each rank's bytes and the messages per op, no samples,
    so that its message rate is derived as for a measured point (schema/records.py)."""
    from ..suite.benchmarks import REGISTRY
    from ..suite.patterns import layout, max_active
    pattern = REGISTRY[f.bench].pattern
    lay = layout(pattern, f.nprocs, max_active(pattern, f.nprocs))
    sent = [f.size if r in "sb" else 0 for r in lay.roles]
    recv = [f.size if r in "rb" else 0 for r in lay.roles]
    return dict(roles=lay.roles, peers=list(lay.peers), rank_sent_bytes=sent, rank_recv_bytes=recv,
                rank_samples=[None] * f.nprocs, messages_per_op=f.messages)
