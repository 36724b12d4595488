"""Reads other tools' results into run documents.

The text output of OSU Micro-Benchmarks and Intel MPI Benchmarks becomes a
fabriclab document marked as imported (docs/schema.md, version 4).

The tools print summary figures, not samples, so an imported point holds
the tool's figure converted to the time of one fabriclab op (its summary's
median and mean), the figure as printed, and no samples; the header says
which tool, which file and how the tool averages.

An import holds at most MAX_ROWS printed rows (points and skipped rows), a
limit set by what `fabriclab report` draws of it in seconds, not by the
parsing: every row is a point of the report's tables and curves, and the
report of 20,000 rows takes 2 s of CPU (one curve) to 5 s (a variant, and
its own figures, for every two rows), within 10 s with room to spare on a
loaded 2-core machine (bench/bench_report.py). A tool's real output is
hundreds to a few thousand rows; more is refused in one line before any
point is built."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..errors import UsageError
from ..inputs import read_bytes
from ..schema import Document, Footer, Header
from ..schema.records import Point
from ..schema.run_records import SkipRecord
from ..schema.summaries import Summary
from ..suite.benchmarks import REGISTRY
from ..suite.patterns import max_active
from . import halo, hpcc, imb, iperf3, osu, rate, sockperf
from .printed import Parsed, Printed, check_physical
from ..schema.fields import MAX_RANKS

IMPORTERS = {"osu": osu.parse, "imb": imb.parse, "hpcc": hpcc.parse, "iperf3": iperf3.parse, "sockperf": sockperf.parse}
TOOLS = {"osu": "OSU Micro-Benchmarks", "imb": "Intel MPI Benchmarks", "hpcc": "HPC Challenge", "iperf3": "iperf3", "sockperf": "sockperf"}


# A tool's output of every benchmark at every size of many runs is thousands of lines:
# 100,000 rows with their banners and headers is far beyond it (each row becomes a point
# with its own records, some 2 KB in memory), and more is no such output.
IMPORT_LIMIT = 16 << 20
MAX_LINES = 101_000
MAX_ROWS = 20_000       # what a report draws within seconds (above)


def read(path: str | Path) -> tuple[bytes, str]:
    """The file's bytes and text; UsageError for what cannot be a tool's output (no regular
    file, larger than IMPORT_LIMIT, more than MAX_LINES lines), before any parsing."""
    data = read_bytes(path, "the tool's output", IMPORT_LIMIT)
    if data.count(b"\n") > MAX_LINES:
        raise UsageError(f"{path} has more than {MAX_LINES:,} lines, more than a benchmark tool's output")
    if not data.strip():
        raise UsageError(f"{path} is empty")
    if b"\0" in data:
        raise UsageError(f"{path} is a binary file, not a benchmark's text output")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # a banner or host name in a legacy encoding
    if text.lstrip().startswith("{") and '"fabriclab.run"' in text[:4096]:
        raise UsageError(f"{path} is a fabriclab result already: `fabriclab show {path}` reads it")
    return data, text


def active(f: Printed) -> int | None:
    """The point's active count as fabriclab's own run of the benchmark records it
    (patterns: their layout's; two-rank benchmarks: none), so that points match."""
    b = REGISTRY.get(f.bench)
    if b is not None and b.pattern:
        return max_active(b.pattern, f.nprocs)
    return None if f.nprocs == 2 else f.nprocs


def point(f: Printed, launch: int = 0) -> Point:
    """The point record of one imported figure: the tool's figure as the time
    of one op, no samples; its latency and bandwidth follow as for any point."""
    b = REGISTRY.get(f.bench)
    info = dict(f.info or {})
    if b is not None and b.coll is not None:    # its bus bandwidth, as a run records it (measure/runner.py)
        info["bus_factor"] = b.coll.bus_factor(f.nprocs)
    return Point(bench=f.bench, variant=f.variant, size=f.size, active=active(f), launch=launch, info=info,
                 bytes_per_op=f.bytes_per_op, legs_per_op=f.legs, concurrent=f.concurrent, samples=[],
                 stop="imported", summary=Summary(median=f.median_s, n=f.n, mean=f.median_s, confidence=None),
                 imported={"benchmark": f.benchmark, "value": f.value, "unit": f.unit, "column": f.column,
                           "row": f.row}, **(halo.layout_fields(f) if f.bench in halo.BENCHES
                                             else rate.layout_fields(f) if f.messages else {}))


def build(parsed: Parsed, tool: str, source: str, data: bytes, mtime: float, argv: list | None = None) -> Document:
    """The run document of a parsed file. A point printed twice (outputs
    concatenated) becomes two launches of one point."""
    sha = hashlib.sha256(data).hexdigest()
    seen: dict = {}
    records: list = []
    for f in parsed.figures:
        p = point(f)
        p.launch = seen[p.key] = seen.get(p.key, -1) + 1
        records.append(p)
    records += [SkipRecord(bench, size, reason) for bench, size, reason in parsed.skips]
    header = Header(
        run_id=f"imported-{tool}-{sha[:12]}", fabriclab_version=__version__,
        argv=argv or ["fabriclab", "import", source, "--from", tool],
        start_time=datetime.fromtimestamp(mtime, timezone.utc).isoformat(), nranks=parsed.nranks,
        imported={"tool": tool, "tool_version": parsed.tool_version, "source": source, "sha256": sha,
                  "averaging": parsed.averaging, "benchmarks": parsed.benchmarks,
                  "ignored": parsed.ignored, "settings": parsed.settings,
                  **({"notes": parsed.notes} if parsed.notes else {})})
    return Document(header, records, Footer("complete", None, None, len(parsed.figures)))


def load(path: str | Path, tool: str, argv: list | None = None, nranks: int | None = None) -> Document:
    """Read FILE as `tool`'s output into a run document. `nranks`: the job's
    processes, for OSU's collectives (OSU does not print them; IMB does)."""
    if tool not in IMPORTERS:
        raise UsageError(f"unknown tool {tool!r}: fabriclab imports {', '.join(IMPORTERS)}")
    if nranks is not None and (tool != "osu" or not 1 <= nranks <= MAX_RANKS):
        raise UsageError("--ranks is OSU's process count, 1.." + str(MAX_RANKS) if tool == "osu" else
                         f"--ranks is for OSU output, which does not print its process count; {tool} output "
                         f"{'prints its own' if tool in ('imb', 'hpcc') else 'is of two ranks'}")
    data, text = read(path)
    try:
        parsed = IMPORTERS[tool](text, str(path), **({"nranks": nranks} if nranks else {}))
    except UsageError as e:  # say which file, where the parser could not
        raise (e if str(e).startswith(str(path)) else UsageError(f"{path}: {e}")) from None
    rows = len(parsed.figures) + len(parsed.skips)
    if rows > MAX_ROWS:
        raise UsageError(f"{path} holds {rows:,} rows, more than the {MAX_ROWS:,} one import takes (a report "
                         f"draws every row): split it and import each part")
    for f in parsed.figures:
        check_physical(f, str(path))
    if parsed.nranks is not None and parsed.nranks > MAX_RANKS:
        raise UsageError(f"{path}: {parsed.nranks} processes is beyond any job (at most {MAX_RANKS})")
    return build(parsed, tool, str(path), data, Path(path).stat().st_mtime, argv)
