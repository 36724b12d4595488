"""One validation of a run document's types and ranges, at load, for every
reader (`show`, `compare`, `report`, `plot`, `calibrate`): a wrong type, an
impossible value or an oversized integer is one line naming the record and
the field, never a traceback further down."""

from __future__ import annotations

import math

from ..errors import UsageError
from .fields import MAX_RANKS, Fields, RecordError, durations, is_count, is_text
from .quick import REQUIRED, quick_merged, quick_points
from .records import LaunchRecord, MergedPoint, Point, SkipRecord, check_diagnostic, check_launch_end

RECORD_KINDS = ("launch", "point", "skip", "diagnostic", "launch_end")
STATUSES = ("complete", "interrupted", "failed", "incomplete")


def header(h) -> None:
    """The header fields readers use, each of its type (all optional but their types)."""
    f = Fields(h, "header")
    for key in ("run_id", "fabriclab_version", "start_time", "network"):
        f.str(key, None, none=True)
    f.list("argv", is_text, "arguments", None, none=True)
    f.int("nranks", None, hi=MAX_RANKS, none=True)
    f.list("hosts", is_text, "host names", None, none=True)
    for key in ("host", "mpi", "launcher", "core", "timer", "plan", "placement", "imported", "machine"):
        f.obj(key, None, none=True)
    _host(h.get("host"))
    _named(h.get("mpi"), "header mpi", ("library", "mpi_version", "flavour", "header_version"))
    _named(h.get("launcher"), "header launcher", ("launcher", "binding"))
    _placement(h.get("placement"))
    _imported(h.get("imported"))
    if h.get("plan") is not None:
        p = Fields(h["plan"], "header plan")
        p.obj("cache", None, none=True)
        p.list("jobs", lambda x: isinstance(x, dict), "jobs", None, none=True)


def _host(host) -> None:
    if host is None:
        return
    f = Fields(host, "header host")
    for key in ("hostname", "cpu_model", "kernel", "os", "python"):
        f.str(key, None, none=True)
    f.int("cpu_count", None, hi=MAX_RANKS, none=True)
    f.num("loadavg_1min", None, hi=1e6, none=True)
    caches = f.obj("caches", None, none=True)
    if caches:
        c = Fields(caches, "header host caches")
        for k in caches:
            c.int(k, none=True)


def _named(d, where: str, texts: tuple) -> None:
    if d is None:
        return
    f = Fields(d, where)
    for key in texts:
        f.str(key, None, none=True)


def _placement(d) -> None:
    if d is None:
        return
    f = Fields(d, "header placement")
    f.bool("oversubscribed", False)
    hosts = f.obj("hosts", {}, none=True) or {}
    for name, v in hosts.items():
        p = Fields(v, f"header placement of host {name!r:.40}")
        p.int("ranks", 0, hi=MAX_RANKS), p.int("cpus", None, hi=MAX_RANKS, none=True)


def _imported(d) -> None:
    if d is None:
        return
    f = Fields(d, "header imported")
    for key in ("tool", "tool_version", "source", "sha256", "averaging"):
        f.str(key, None, none=True)
    f.list("benchmarks", is_text, "names", [], none=True)
    f.list("ignored", is_text, "names", [], none=True)


def footer(foot) -> None:
    f = Fields(foot, "footer")
    f.str("status", choices=STATUSES)
    f.str("error", None, none=True)
    f.num("duration_s", None, hi=math.inf, none=True)
    f.int("points", None, none=True)


def record(r, i: int, from_tool: bool) -> None:
    """One record of its kind; points also by whether the document is imported."""
    where = f"record {i}"
    kind = r.get("kind") if isinstance(r, dict) else None
    if kind not in RECORD_KINDS:
        raise RecordError(f"{where} has unknown kind {kind!r:.40}")
    if kind == "point":
        _point(r, i, from_tool)
    elif kind == "launch":
        LaunchRecord.from_dict(r, f"launch {where}")
    elif kind == "skip":
        SkipRecord.from_dict(r, f"skip {where}")
    elif kind == "launch_end":
        check_launch_end(r, f"launch_end {where}")
        launch_spans(r, f"launch_end {where}")
    else:
        check_diagnostic(r, f"diagnostic {where}")


def points(numbered: list, from_tool: bool) -> None:
    """Every point record, as (index, record): the quick check over all of
    them for the common case; on a problem, record by record, where the
    checks below and the typed reader name it."""
    ps = [r for _, r in numbered]
    if (quick_points(ps) and all(k in r for r in ps for k in REQUIRED)
            and (from_tool or all(r["samples"] for r in ps))
            and all(r.get("rank_samples") is not None for r in ps if r.get("roles") is not None)):
        return
    for i, r in numbered:
        _point(r, i, from_tool)


def _point(r: dict, i: int, from_tool: bool) -> None:
    """One point record. Points without samples are valid only in an imported document."""
    for key in REQUIRED:
        if key not in r:
            raise RecordError(f"point record {i} lacks {key!r}")
    what = f"({r['bench']!s:.40} size {r['size']!s:.24})"
    if not isinstance(r["summary"], dict) or r["summary"].get("median") is None:
        if from_tool and r.get("samples") == []:
            raise RecordError(f"imported point record {i} {what} has no time per op")
        raise RecordError(f"point record {i} has a summary without 'median'")
    if r["samples"] == [] and not from_tool or r["samples"] != [] and not durations(r["samples"]):
        raise RecordError(f"point record {i} {what} has empty or non-finite samples")
    p = Point.from_dict(r, f"point record {i}")
    if p.is_pattern and p.rank_samples is None:
        raise RecordError(f"point record {i} ({p.bench}) has rank samples that do not match its roles")


def merged(ms) -> None:
    if not isinstance(ms, list):
        raise RecordError("merged is not a list")
    if quick_merged(ms):
        return
    for i, m in enumerate(ms):
        MergedPoint.from_dict(m, f"merged point {i}")


def findings(v) -> None:
    """The run's findings (analysis/findings.py), as the summary and report read them."""
    f = Fields(v, "findings")
    noise = Fields(f.obj("noise"), "findings noise")
    noise.int("points", 0), noise.int("launches", 0), noise.int("steal_launches", 0)
    for key in ("launch_ratio_median", "launch_ratio_p90", "outlier_share"):
        noise.num(key, None, hi=math.inf, none=True)
    noise.num("steal_max", 0.0, hi=1.0)
    for code, pair in f.obj("conditions", {}).items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(is_count(x) for x in pair)):
            raise RecordError(f"findings conditions {code!r:.40} is not [points, of]")
    for j, d in enumerate(f.list("run", lambda x: isinstance(x, dict), "findings", [])):
        check_diagnostic(d, f"findings run[{j}]")
    f.int("flagged", 0)


def exchange_model(v) -> None:
    """The apps' exchange phases against the network's model (docs/apps.md)."""
    f = Fields(v, "exchange_model")
    f.str("network"), f.str("calibration", None, none=True), f.num("tolerance", hi=1.0)
    for j, row in enumerate(f.list("rows", lambda x: isinstance(x, dict), "rows", [])):
        g = Fields(row, f"exchange_model rows[{j}]")
        g.str("bench"), g.str("variant", ""), g.int("size"), g.int("active", lo=1, hi=MAX_RANKS)
        for key in ("measured_s", "predicted_s", "ratio"):
            g.num(key, hi=math.inf)
        g.str("verdict", choices=("agrees", "slower", "faster")), g.str("bottleneck", "")


def validation(v) -> None:
    """The block `testbed validate` adds (docs/testbed.md), as the report reads it."""
    f = Fields(v, "validation")
    f.str("network"), f.str("verdict"), f.str("predicted_bottleneck", "")
    f.str("testbed", None, none=True)
    for key in ("predicted_Bps", "nominal_Bps", "calibrated_rate_Bps"):
        f.num(key, hi=math.inf)
    f.num("tolerance", hi=1.0)
    rows = f.list("per_size", lambda x: isinstance(x, dict), "rows", [])
    for j, row in enumerate(rows):
        g = Fields(row, f"validation per_size[{j}]")
        g.int("size"), g.num("measured_Bps", hi=math.inf), g.num("ratio", hi=math.inf)
    f.str("explanation", None, none=True)
    emu = f.obj("emulation", None, none=True)
    if emu is not None:
        g = Fields(emu, "validation emulation")
        g.bool("faithful"), g.list("reasons", lambda x: isinstance(x, str), "sentences", [])
        g.num("softirq_wait", 0.0, hi=math.inf)
    for j, size in enumerate(f.list("cables", lambda x: isinstance(x, dict), "sizes", [])):
        g = Fields(size, f"validation cables[{j}]")
        g.int("size")
        for k, row in enumerate(g.list("cables", lambda x: isinstance(x, dict), "cable directions")):
            cable_row(Fields(row, f"validation cables[{j}].cables[{k}]"))
    for j, row in enumerate(f.list("interfaces", lambda x: isinstance(x, dict), "link directions", [])):
        interface_row(Fields(row, f"validation interfaces[{j}]"))


def interface_row(g: Fields) -> None:
    """One link direction named by its host's interface (real hosts, testbed/cablecheck.py)."""
    g.str("from"), g.str("to"), g.str("host"), g.str("iface"), g.num("flows", hi=math.inf)
    g.int("bytes", None, hi=1 << 62, none=True), g.num("ratio", None, hi=math.inf, none=True)
    g.num("util", None, hi=math.inf, none=True)


def cable_row(g: Fields) -> None:
    """One cable direction of a validation (testbed/cablecheck.py), as the report reads it."""
    g.str("from"), g.str("to"), g.str("label", "")
    for key in ("flows", "predicted_util", "measured_util", "p90_util"):
        g.num(key, hi=math.inf)
    g.num("ratio", None, hi=math.inf, none=True), g.int("drops", 0)


def launch_spans(d, where: str) -> None:
    """A testbed launch's per-point spans and shaper counters (testbed/cables.py)."""
    f = Fields(d, where)
    for j, span in enumerate(f.list("spans", lambda x: isinstance(x, dict), "spans", [])):
        g = Fields(span, f"{where} spans[{j}]")
        g.int("size"), g.num("seconds"), g.obj("cpu")
        g.list("cables", lambda x: isinstance(x, dict), "cable directions")
    f.list("shapers", lambda x: isinstance(x, dict), "shaper counters", [])


def document(doc, path) -> None:
    """Raises UsageError naming the first problem of the document."""
    def bad(msg):
        raise UsageError(f"{path} is not a valid fabriclab result: {msg}")
    if not isinstance(doc, dict):
        bad("not a JSON object")
    from . import SCHEMA, SCHEMA_VERSION
    if doc.get("schema") != SCHEMA:
        bad("missing schema 'fabriclab.run'")
    v = doc.get("schema_version")
    if not is_count(v) or v > SCHEMA_VERSION:
        bad(f"schema_version {v!r:.40} is not supported (this fabriclab reads up to {SCHEMA_VERSION})")
    for key in ("header", "footer"):
        if not isinstance(doc.get(key), dict):
            bad(f"no {key}")
    if not isinstance(doc.get("records"), list):
        bad("no records list")
    try:
        header(doc["header"])
        footer(doc["footer"])
        from_tool = doc["header"].get("imported") is not None  # fabriclab import: figures, no samples
        numbered = []
        for i, r in enumerate(doc["records"]):
            if isinstance(r, dict) and r.get("kind") == "point":
                numbered.append((i, r))
            else:
                record(r, i, from_tool)
        points(numbered, from_tool)
        if "merged" in doc:
            merged(doc["merged"])
        if "findings" in doc:
            findings(doc["findings"])
        if doc.get("validation") is not None:
            validation(doc["validation"])
        if doc.get("exchange_model") is not None:
            exchange_model(doc["exchange_model"])
    except RecordError as e:
        bad(str(e))
