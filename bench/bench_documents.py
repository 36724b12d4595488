"""What reading a document costs: the check of its types and ranges at load
(the typed readers of schema/fields.py, which records.py and document.py
read every record with) against the whole of `fabriclab show` of a default
run. Target: the check adds under 10% to `show`.

Two processes per round, alternating: `fabriclab show RUN.json` as typed,
and the same with every field reader trusting its input (the value as it
is, no test); the share is the difference of their medians over the
trusting one. In-process, the median time of reading the document (JSON
parsed: every record typed and checked) and of parsing the JSON, for scale.

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


def _in_process(run: str, runs: int) -> tuple[list, list]:
    from fabriclab.schema import Document
    text = Path(run).read_text()
    parse, valid = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        doc = json.loads(text)
        t1 = time.perf_counter()
        Document.from_dict(doc, run)
        valid.append(time.perf_counter() - t1)
        parse.append(t1 - t0)
    return parse, valid


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", help="an existing result document (default: make a default run first)")
    ap.add_argument("--runs", type=int, default=9, help="rounds (default 9)")
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
                 method=f"{opts.runs} rounds of two processes (readers checking, trusting), alternating; medians. "
                        f"The run: {len(doc['records'])} records, {Path(run).stat().st_size / 1e6:.1f} MB")
        on, off = [], []
        for _ in range(opts.runs):
            on.append(_show(python, "on", run))
            off.append(_show(python, "off", run))
        parse, valid = _in_process(run, opts.runs)
        share = (c.median(on) - c.median(off)) / c.median(off)
        c.verdict(share < TARGET, f"the check adds under {TARGET:.0%} to show",
                  f"show {c.median(on):.3f} s checking, {c.median(off):.3f} s trusting ({share:+.1%}); in-process "
                  f"reading (typed and checked) {c.median(valid) * 1e3:.1f} ms, JSON parsing "
                  f"{c.median(parse) * 1e3:.1f} ms")


if __name__ == "__main__":
    c.main(body)
