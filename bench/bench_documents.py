"""What reading a document costs: the check of its types and ranges at load
(the typed readers of schema/fields.py, which records.py and document.py
read every record with) against the whole of `fabriclab show` of a default
run. Target: the check adds under 10% to `show`.

The check's cost is measured in this process, where it is not lost in the
noise of starting an interpreter: each round reads the document (JSON
parsed beforehand) once as typed and once with every field reader trusting
its input (the value as it is, no test), the order reversed every round,
and the cost is the median over rounds of the difference. It is held
against `fabriclab show RUN.json` as a user runs it, a process, the median
of as many rounds. Two processes per round (show as typed, and trusting)
are also timed, their order reversed every round, for a look at the whole:
the median of the rounds' ratios.

Usage: python bench/bench_documents.py [--run RUN.json] [--runs N]"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

TARGET = 0.10
# The trusting readers: each returns the field as it is (or its default), as
# a reader without any check would; `durations` accepts any list.
TRUSTING = ("from fabriclab.schema import document, fields, records\n"
            "def _take(self, key, default=None, *a, **k):\n"
            "    return self.d.get(key, default)\n"
            "def _take_list(self, key, item, what, default=None, none=False):\n"
            "    return self.d.get(key, default)\n"
            "def _take_counts(self, key, lo, hi, what, default=None, none=False):\n"
            "    return self.d.get(key, default)\n"
            "for name in ('int', 'num', 'str', 'bool', 'obj'):\n"
            "    setattr(fields.Fields, name, _take)\n"
            "fields.Fields.list, fields.Fields.counts = _take_list, _take_counts\n"
            "records.durations = document.durations = fields.durations = lambda x: True\n")
SHOW = ("import sys, io, contextlib\n"
        "if sys.argv[1] == 'off':\n"
        "    exec(sys.argv[3])\n"
        "from fabriclab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    rc = main(['show', sys.argv[2]])\n"
        "sys.exit(rc)\n")


def _show(python: str, mode: str, run: str) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([python, "-c", SHOW, mode, run, TRUSTING], capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise c.BenchError(f"show ({mode}) failed: {p.stderr.strip()[-300:]}")
    return dt


def _in_process(run: str, runs: int) -> tuple[list, list, list]:
    """Per round: (JSON parsing, reading typed and checked, reading typed and trusting), in s."""
    from fabriclab.schema import Document, document, fields, records
    text = Path(run).read_text()
    kept = {name: getattr(fields.Fields, name) for name in ("int", "num", "str", "bool", "obj", "list", "counts")}
    kept_durations = (records.durations, document.durations, fields.durations)

    def read(trusting: bool) -> float:
        doc = json.loads(text)
        if trusting:
            exec(TRUSTING, {})
        try:
            t0 = time.perf_counter()
            Document.from_dict(doc, run)
            return time.perf_counter() - t0
        finally:
            for name, f in kept.items():
                setattr(fields.Fields, name, f)
            records.durations, document.durations, fields.durations = kept_durations
    parse, checked, trusted = [], [], []
    for i in range(runs):
        t0 = time.perf_counter()
        json.loads(text)
        parse.append(time.perf_counter() - t0)
        for trusting in ((False, True) if i % 2 == 0 else (True, False)):
            (trusted if trusting else checked).append(read(trusting))
    return parse, checked, trusted


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", help="an existing result document (default: make a default run first)")
    ap.add_argument("--runs", type=int, default=15, help="rounds (default 15)")
    opts = ap.parse_args()
    exe, python = c.fabriclab_exe(), sys.executable
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        run = opts.run
        if not run:
            run = str(Path(work) / "default.json")
            c.run([exe, "run", "-q", "-o", run], timeout=900)
        doc = c.load_result(run)
        c.header("reading a document: the check at load against `fabriclab show`",
                 commands=[f"fabriclab show {run}"],
                 method=f"{opts.runs} rounds, in this process, of reading the document checking and trusting, "
                        "the order reversed every round: the median difference, against the median of show as a "
                        f"process over {opts.runs} rounds (and show trusting, alternating). The run: {len(doc['records'])} records, {Path(run).stat().st_size / 1e6:.1f} MB")
        on, off = [], []
        for i in range(opts.runs):
            for mode in (("on", "off") if i % 2 == 0 else ("off", "on")):
                (on if mode == "on" else off).append(_show(python, mode, run))
        parse, checked, trusted = _in_process(run, opts.runs)
        cost = c.median([a - b for a, b in zip(checked, trusted)])
        share = cost / c.median(on)
        whole = c.median([a / b - 1 for a, b in zip(on, off)])
        c.verdict(share < TARGET, f"the check adds under {TARGET:.0%} to show",
                  f"the check {cost * 1e3:.1f} ms a read ({share:.1%} of show's {c.median(on):.3f} s); reading "
                  f"typed {c.median(checked) * 1e3:.1f} ms checked, {c.median(trusted) * 1e3:.1f} ms trusting, "
                  f"JSON parsing {c.median(parse) * 1e3:.1f} ms; show as a process, checking against trusting: "
                  f"{whole:+.1%} (median of the rounds' ratios)")

if __name__ == "__main__":
    c.main(body)
