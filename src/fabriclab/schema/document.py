"""The run document as every reader takes it: a header, typed records in the
order they were written, a footer, and what is derived from them (each
point's launches merged, the run's findings), kept once known.

A document checks itself once, when it is read: each record is read by its
own type (records.py), which is the one place a field's type and range are
stated; a wrong field is one line naming the record and the field (exit 2),
never a traceback further down. Readers then use the typed objects and
never index the JSON themselves.

Merged points and findings are kept with the document, as pyperf's
Benchmark owns its runs: a finished run stores them (`merged`, `findings`),
so reading them back costs no bootstrap; a stream cut short, or an older
document, has them computed on first use and kept for every later reader of
the same object. The statistics that compute them are analysis's, above the
schema: analysis/merge.py's `analysed` computes them and keeps them here
(`Document.analysed`), so the schema imports nothing of analysis."""

from __future__ import annotations

import gc
import json
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from .. import outputs
from ..errors import UsageError
from ..inputs import read_text
from .fields import MAX_RANKS, Fields, RecordError, durations, is_count, is_text
from .records import MergedPoint, Point, point_key
from .run_records import DiagnosticRecord, LaunchEnd, LaunchRecord, SkipRecord

SCHEMA = "fabriclab.run"
SCHEMA_VERSION = 18
STATUSES = ("complete", "interrupted", "failed", "incomplete")
# The record types by the `kind` each is written with.
RECORD_TYPES = {t.KIND: t for t in (LaunchRecord, Point, SkipRecord, DiagnosticRecord, LaunchEnd)}
RECORD_KINDS = tuple(RECORD_TYPES)
# Fields every point record has: a reader of the schema needs them.
POINT_REQUIRED = ("bench", "size", "stride", "bytes_per_op", "legs_per_op", "samples", "summary")


@dataclass
class Header:
    """What ran, where and how (docs/schema.md): the run's identity, the
    machine, the MPI and launcher, the core, the plan, and, once the first
    launch has said hello, the ranks' hosts, the MPI library and the timer.
    Nested objects stay mappings, each checked for the types readers use."""

    run_id: Optional[str] = None
    fabriclab_version: Optional[str] = None
    argv: Optional[list] = None
    start_time: Optional[str] = None
    host: dict = field(default_factory=dict)
    nranks: Optional[int] = None
    mpi: dict = field(default_factory=dict)
    launcher: dict = field(default_factory=dict)
    core: dict = field(default_factory=dict)
    plan: dict = field(default_factory=dict)
    network: Optional[str] = None
    machine: Optional[dict] = None
    hosts: Optional[list] = None
    timer: Optional[dict] = None
    placement: Optional[dict] = None
    levels: Optional[dict] = None
    imported: Optional[dict] = None
    extra: dict = field(default_factory=dict)

    _OBJECTS = ("host", "mpi", "launcher", "core", "plan")
    _KNOWN = ("run_id", "fabriclab_version", "argv", "start_time", "host", "nranks", "mpi", "launcher", "core",
              "plan", "network", "machine", "hosts", "timer", "placement", "levels", "imported")

    @property
    def caches(self) -> dict:
        """The host's cache sizes in bytes by level ({} when not recorded)."""
        return self.host.get("caches") or {}

    @property
    def mpi_library(self) -> str:
        """The MPI library's own string (MPI_Get_library_version), else ''."""
        return self.mpi.get("library") or ""

    @property
    def launches(self) -> Optional[int]:
        return self.plan.get("launches")

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self._KNOWN if getattr(self, k) is not None}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, h, where: str = "header") -> "Header":
        f = Fields(h, where)
        text = {k: f.str(k, None, none=True) for k in ("run_id", "fabriclab_version", "start_time", "network")}
        objs = {k: dict(f.obj(k, None, none=True) or {}) for k in cls._OBJECTS}
        _host(objs["host"])
        _texts(objs["mpi"], "header mpi", ("library", "mpi_version", "flavour", "header_version"))
        _thread_level(Fields(objs["mpi"], "header mpi").obj("thread_level", None, none=True))
        _texts(objs["launcher"], "header launcher", ("launcher", "binding"))
        plan = Fields(objs["plan"], "header plan")
        plan.obj("cache", None, none=True), plan.list("jobs", lambda x: isinstance(x, dict), "jobs", None, none=True)
        plan.int("launches", None, lo=1, none=True)
        placement = f.obj("placement", None, none=True)
        _placement(placement)
        imported = f.obj("imported", None, none=True)
        _imported(imported)
        return cls(**text, **objs, argv=f.list("argv", is_text, "arguments", None, none=True),
                   nranks=f.int("nranks", None, hi=MAX_RANKS, none=True),
                   machine=f.obj("machine", None, none=True),
                   hosts=f.list("hosts", is_text, "host names", None, none=True),
                   timer=f.obj("timer", None, none=True), placement=placement,
                   levels=f.obj("levels", None, none=True), imported=imported,
                   extra={k: v for k, v in h.items() if k not in cls._KNOWN and k not in ("kind", "schema",
                                                                                          "schema_version")})


def _host(host: dict) -> None:
    f = Fields(host, "header host")
    for key in ("hostname", "cpu_model", "kernel", "os", "python"):
        f.str(key, None, none=True)
    f.int("cpu_count", None, hi=MAX_RANKS, none=True)
    f.num("loadavg_1min", None, hi=1e6, none=True)
    caches = f.obj("caches", None, none=True)
    c = Fields(caches or {}, "header host caches")
    for k in caches or {}:
        c.int(k, none=True)


def _texts(d: dict, where: str, keys: tuple) -> None:
    f = Fields(d, where)
    for key in keys:
        f.str(key, None, none=True)


THREAD_LEVELS = ("SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE")   # MPI_THREAD_*, in order


def _thread_level(d) -> None:
    """header mpi.thread_level: what the core asked MPI_Init_thread for and what MPI granted."""
    if d is None:
        return
    f = Fields(d, "header mpi thread_level")
    for key in ("required", "provided"):
        f.str(key, choices=THREAD_LEVELS)


def _placement(d) -> None:
    if d is None:
        return
    f = Fields(d, "header placement")
    f.bool("oversubscribed", False)
    for name, v in (f.obj("hosts", {}, none=True) or {}).items():
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
    f.list("notes", is_text, "texts", [], none=True)


@dataclass
class Footer:
    """How the run ended: its status, the error that ended it, its duration."""

    status: str = "incomplete"
    error: Optional[str] = None
    duration_s: Optional[float] = None
    points: Optional[int] = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"status": self.status, "error": self.error}
        d.update({k: v for k, v in (("duration_s", self.duration_s), ("points", self.points)) if v is not None})
        return {**d, **self.extra}

    @classmethod
    def from_dict(cls, d, where: str = "footer") -> "Footer":
        f = Fields(d, where)
        return cls(f.str("status", choices=STATUSES), f.str("error", None, none=True),
                   f.num("duration_s", None, hi=math.inf, none=True), f.int("points", None, none=True),
                   {k: v for k, v in d.items() if k not in ("kind", "status", "error", "duration_s", "points")})


class Document:
    """One run: header, records (typed, in the order written), footer, and
    the blocks commands add (a validation, the apps' exchange model).

    `analysed`: the merged points and findings once known, read from what a
    finished run stored or computed once per object by analysis/merge.py
    (`analysed`, `merged`, `run_findings`), and shared by every reader;
    None until then. `stored_merged`: the merged points the document was
    read with (a document of version 9 or older stored no findings beside
    them, so analysis classifies them when first asked)."""

    def __init__(self, header: Header, records: list, footer: Footer, *, merged: Optional[list] = None,
                 findings: Optional[dict] = None, blocks: Optional[dict] = None,
                 schema_version: int = SCHEMA_VERSION):
        self.header, self.records, self.footer = header, records, footer
        self.blocks = dict(blocks or {})
        self.schema_version = schema_version
        self.stored_merged = merged
        self.analysed: Optional[tuple[list, dict]] = None if merged is None or findings is None \
            else (merged, findings)
        self._groups: Optional[dict] = None

    # ---- the records by kind

    def _of(self, kind: str) -> list:
        return [r for r in self.records if r.KIND == kind]

    @property
    def points(self) -> list:
        """Every point record: one per point and launch, in the order measured."""
        return self._of("point")

    @property
    def launches(self) -> list:
        return self._of("launch")

    @property
    def launch_ends(self) -> list:
        return self._of("launch_end")

    @property
    def skips(self) -> list:
        return self._of("skip")

    @property
    def diagnostics(self) -> list:
        """The run-level warnings (diagnostic records); a point's own are on the point."""
        return self._of("diagnostic")

    @property
    def hello(self) -> dict:
        """The first launch's hello (MPI library, hosts, CPUs, timer), {} before any."""
        return next((r.hello for r in self.launches if r.hello), {})

    @property
    def imported(self) -> bool:
        """Another tool's printed figures (`fabriclab import`): points without samples."""
        return self.header.imported is not None

    @property
    def validation(self) -> Optional[dict]:
        return self.blocks.get("validation")

    @property
    def exchange_model(self) -> Optional[dict]:
        return self.blocks.get("exchange_model")

    @property
    def exchange_predictions(self) -> list:
        """The exchange_model block's rows (bench, variant, size, active,
        measured_s, predicted_s, ratio, verdict, bottleneck, schedule), each
        with the block's network and calibration; [] when there are none."""
        block = self.exchange_model or {}
        return [{**row, "network": block.get("network"), "calibration": block.get("calibration")}
                for row in block.get("rows") or []]

    @property
    def coll_predictions(self) -> list:
        """The coll_model block's rows (bench, variant, size, active, algorithm, as,
        measured_s, predicted_s, ratio, verdict, bottleneck, predictions), each with the
        block's network; [] when there are none."""
        block = self.blocks.get("coll_model") or {}
        return [{**row, "network": block.get("network")} for row in block.get("rows") or []]

    # ---- what is derived, once per document

    def groups(self) -> dict:
        """Point records by key (benchmark, variant, axes), each in launch
        order; keys in the order the benchmarks first ran, then by their axes
        (a launch may have run the sizes shuffled)."""
        if self._groups is None:
            out: dict = {}
            first: dict = {}
            for p in self.points:
                out.setdefault(p.key, []).append(p)
                first.setdefault(p.key[:2], len(first))
            for ps in out.values():
                ps.sort(key=lambda p: p.launch or 0)
            order = sorted(out, key=lambda k: (first[k[:2]], k[5] is not None, k[5] or 0, k[4], k[3], k[2]))
            self._groups = {k: out[k] for k in order}
        return self._groups

    def add_block(self, name: str, block: Optional[dict]) -> None:
        """A block a command adds beside the records (validation, exchange_model), checked as at load."""
        if block is not None:
            BLOCKS[name](block)
            self.blocks[name] = block

    # ---- writing

    def to_dict(self, derived: bool = True) -> dict:
        """The JSON document; with `derived`, the merged points (without
        their pooled samples) and findings it holds (`analysed`), so readers
        need not compute them."""
        return {k: list(v) if isinstance(v, Iterator) else v for k, v in self._members(derived)}

    def _members(self, derived: bool):
        """(key, value) of the JSON document in order; records and merged
        points as iterators, made one at a time as they are written."""
        yield from (("schema", SCHEMA), ("schema_version", SCHEMA_VERSION), ("header", self.header.to_dict()),
                    ("records", ({"kind": r.KIND, **r.to_dict()} for r in self.records)),
                    ("footer", self.footer.to_dict()))
        if derived and self.analysed is not None:
            merged, found = self.analysed
            yield from (("merged", (m.to_dict(stored=True) for m in merged)), ("findings", found))
        yield from self.blocks.items()

    def write(self, path, derived: bool = True) -> None:
        """RUN.json, replaced whole (a reader never sees half of it), written
        a record at a time: a document of a hundred thousand points is never
        held as one JSON object or string."""
        write_json(self._members(derived), Path(path))

    def dump(self, f, derived: bool = True) -> None:
        """The document to an open text stream (stdout), as write() lays it out."""
        dump_json(self._members(derived), f)

    # ---- reading

    @classmethod
    def from_dict(cls, doc, path="document") -> "Document":
        """A document from its JSON; UsageError naming the first problem."""
        def bad(msg):
            raise UsageError(f"{path} is not a valid fabriclab result: {msg}")
        if not isinstance(doc, dict):
            bad("not a JSON object")
        if doc.get("schema") != SCHEMA:
            bad("missing schema 'fabriclab.run'")
        v = doc.get("schema_version")
        if not is_count(v) or not 1 <= v <= SCHEMA_VERSION:
            bad(f"schema_version {v!r:.40} is not supported (this fabriclab reads up to {SCHEMA_VERSION})")
        for key in ("header", "footer"):
            if not isinstance(doc.get(key), dict):
                bad(f"no {key}")
        if not isinstance(doc.get("records"), list):
            bad("no records list")
        try:
            return cls._read(doc, v)
        except RecordError as e:
            bad(str(e))

    @classmethod
    def _read(cls, doc: dict, version: int) -> "Document":
        header = Header.from_dict(doc["header"])
        imported = header.imported is not None
        records = [read_record(r, i, imported) for i, r in enumerate(doc["records"])]
        merged = doc.get("merged")
        if merged is not None:
            if not isinstance(merged, list):
                raise RecordError("merged is not a list")
            merged = [MergedPoint.from_dict(m, f"merged point {i}") for i, m in enumerate(merged)]
        findings = doc.get("findings")
        if findings is not None:
            check_findings(findings)
        blocks = {}
        for name, check in BLOCKS.items():
            if doc.get(name) is not None:
                check(doc[name])
                blocks[name] = doc[name]
        # A document of version 9 or older stored merged points that carry every
        # launch's warnings and no findings: they are classified when first read.
        return cls(header, records, Footer.from_dict(doc["footer"]), merged=merged, findings=findings,
                   blocks=blocks, schema_version=version)


def read_record(r, i: int, imported: bool = False):
    """Record i of a document, typed by its kind. Points without samples are
    valid only in an imported document."""
    kind = r.get("kind") if isinstance(r, dict) else None
    if not isinstance(kind, str) or kind not in RECORD_TYPES:
        raise RecordError(f"record {i} has unknown kind {kind!r:.40}")
    if kind != "point":
        return RECORD_TYPES[kind].from_dict(r, f"{kind} record {i}")
    for key in POINT_REQUIRED:
        if key not in r:
            raise RecordError(f"point record {i} lacks {key!r}")
    if not isinstance(r["summary"], dict) or r["summary"].get("median") is None:
        if imported and r.get("samples") == []:
            raise RecordError(f"imported point record {i} {_what(r)} has no time per op")
        raise RecordError(f"point record {i} has a summary without 'median'")
    if r["samples"] == [] and not imported or r["samples"] != [] and not durations(r["samples"]):
        raise RecordError(f"point record {i} {_what(r)} has empty or non-finite samples")
    p = Point.from_dict(r, f"point record {i}")
    if p.is_pattern and p.rank_samples is None:
        raise RecordError(f"point record {i} ({p.bench}) has rank samples that do not match its roles")
    return p


def _what(r: dict) -> str:
    """A point record's benchmark and size, as an error names it (formatted only when one is wrong)."""
    return f"({r['bench']!s:.40} size {r['size']!s:.24})"


# ---- the blocks beside the records -----------------------------------------------------------

def check_findings(v) -> None:
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
        DiagnosticRecord.from_dict(d, f"findings run[{j}]")
    f.int("flagged", 0)


def check_exchange_model(v) -> None:
    """The apps' exchange phases against the network's model (docs/apps.md)."""
    f = Fields(v, "exchange_model")
    f.str("network"), f.str("calibration", None, none=True), f.num("tolerance", hi=1.0)
    for j, row in enumerate(f.list("rows", lambda x: isinstance(x, dict), "rows", [])):
        g = Fields(row, f"exchange_model rows[{j}]")
        g.str("bench"), g.str("variant", ""), g.int("size"), g.int("active", lo=1, hi=MAX_RANKS)
        for key in ("measured_s", "predicted_s", "ratio"):
            g.num(key, hi=math.inf)
        g.str("verdict", choices=("agrees", "slower", "faster")), g.str("bottleneck", "")


def check_rate_model(v) -> None:
    """The message-rate benchmarks' multi-pair bandwidth against the network's model (docs/message-rate.md)."""
    f = Fields(v, "rate_model")
    f.str("network"), f.str("calibration", None, none=True), f.num("tolerance", hi=1.0)
    for j, row in enumerate(f.list("rows", lambda x: isinstance(x, dict), "rows", [])):
        g = Fields(row, f"rate_model rows[{j}]")
        g.str("bench"), g.str("variant", ""), g.int("size"), g.str("rule", choices=("slowest", "senders-mean"))
        for key in ("measured_Bps", "predicted_Bps", "predicted_msgs_per_s", "ratio", "aggregate_Bps"):
            g.num(key, hi=math.inf)
        g.list("rates_Bps", lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0, "rates")
        g.str("verdict", choices=("agrees", "slower", "faster")), g.str("bottleneck", "")


def check_coll_model(v) -> None:
    """The collectives against the network's model (docs/collectives.md)."""
    f = Fields(v, "coll_model")
    f.str("network"), f.str("calibration", None, none=True), f.num("tolerance", hi=1.0)
    f.num("alpha_s", hi=1.0), f.num("gamma_s_per_byte", hi=1.0)
    for j, row in enumerate(f.list("rows", lambda x: isinstance(x, dict), "rows", [])):
        g = Fields(row, f"coll_model rows[{j}]")
        g.str("bench"), g.str("variant", ""), g.int("size"), g.int("active", lo=1, hi=MAX_RANKS)
        g.str("algorithm"), g.str("as", "")
        for key in ("measured_s", "predicted_s", "ratio"):
            g.num(key, hi=math.inf)
        g.str("verdict", choices=("agrees", "slower", "faster")), g.str("bottleneck", "")
        for name, t in g.obj("predictions", {}).items():
            if not isinstance(t, (int, float)) or isinstance(t, bool) or not t >= 0:
                raise RecordError(f"coll_model rows[{j}] predictions {name!r:.40} is not a time in seconds")


def check_validation(v) -> None:
    """The block `testbed validate` adds (docs/testbed.md), as the report reads it."""
    f = Fields(v, "validation")
    f.str("network"), f.str("verdict"), f.str("predicted_bottleneck", "")
    f.str("testbed", None, none=True)
    for key in ("predicted_Bps", "nominal_Bps", "calibrated_rate_Bps"):
        f.num(key, hi=math.inf)
    f.num("tolerance", hi=1.0)
    for j, row in enumerate(f.list("per_size", lambda x: isinstance(x, dict), "rows", [])):
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
    for j, row in enumerate(f.list("collectives", lambda x: isinstance(x, dict), "collectives", [])):
        g = Fields(row, f"validation collectives[{j}]")
        g.str("bench"), g.str("variant", ""), g.int("size"), g.str("verdict", choices=("agrees", "slower", "faster"))
        for key in ("measured_s", "predicted_s", "ratio"):
            g.num(key, hi=math.inf)
        g.str("bottleneck", ""), g.str("busiest_cable", "")


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


BLOCKS = {"validation": check_validation, "exchange_model": check_exchange_model, "coll_model": check_coll_model,
          "halo_model": check_exchange_model, "rate_model": check_rate_model}   # the halo exchanges' rows (verdicts/halo_prediction.py): the same form


# ---- files ---------------------------------------------------------------------------------

def dump_json(members, f) -> None:
    """A JSON object to a text stream, a record (or merged point) to a line, as a stream
    has it: a reader can grep and diff it, and each line is written by json's C encoder,
    which an indented dump does not use. `members`: a dict or (key, value) pairs; a
    value that is an iterator (or a list of objects) is written an element to a line,
    consumed as it is written."""
    # no check for cycles: records come from dataclasses or JSON, which cannot hold one (a
    # cycle would still end in RecursionError), and the check costs a third of the encoding
    line = json.JSONEncoder(allow_nan=False, separators=(",", ":"), check_circular=False).encode
    f.write("{")
    for i, (key, v) in enumerate(members.items() if isinstance(members, dict) else members):
        f.write(f"{',' if i else ''}\n {json.dumps(key)}: ")
        if isinstance(v, Iterator) or (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)):
            n = 0
            for n, x in enumerate(v, 1):
                f.write(("[\n" if n == 1 else ",\n") + line(x))
            f.write("\n ]" if n else "[]")
        else:
            f.write(json.dumps(v, indent=1, allow_nan=False).replace("\n", "\n "))
    f.write("\n}\n")


def write_json(members, path: Path) -> None:
    """dump_json to a file that replaces `path` whole once written (a reader never sees
    half of it)."""
    with outputs.replacing(path) as f:
        dump_json(members, f)


@contextmanager
def collector_paused():
    """Python's cyclic collector paused while a document is parsed and checked.

    A default run's document is about a million objects, all kept; the
    allocations of parsing and checking trigger collections that walk them
    again and again (measured: they cost more than the check itself) and
    can free nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# A run of ten thousand points of three launches, every sample kept, is some hundreds of MiB.
DOCUMENT_LIMIT = 1 << 30


def load(path) -> Document:
    """Read RUN.json or RUN.ndjson into a checked document; UsageError naming the problem."""
    with collector_paused():
        return _load(path)


def _load(path) -> Document:
    text = read_text(path, "the result", DOCUMENT_LIMIT)
    if _first_line_kind(text) == "header":
        return _from_stream(text, path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path} is not a fabriclab result: {e.msg} at line {e.lineno}") from None
    except (ValueError, RecursionError) as e:  # an integer of thousands of digits, nesting too deep
        raise UsageError(f"{path} is not a fabriclab result: {_why(e)}") from None
    return Document.from_dict(doc, path)


def _why(e: Exception) -> str:
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return "an integer of more than 4300 digits" if "digits" in str(e) else str(e).split(":")[0]


def _first_line_kind(text: str):
    head = text[:4096]                      # not the whole text: a document is megabytes
    start = len(head) - len(head.lstrip())
    end = text.find("\n", start)
    try:
        first = json.loads(text[start:end if end >= 0 else len(text)])
    except (ValueError, RecursionError):
        return None
    return first.get("kind") if isinstance(first, dict) else None


def _from_stream(text: str, path) -> Document:
    lines = text.splitlines()
    objs = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break  # a torn last line from a killed writer
            raise UsageError(f"{path}: line {i + 1} is not JSON") from None
        except (ValueError, RecursionError) as e:
            raise UsageError(f"{path}: line {i + 1}: {_why(e)}") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{path}: line {i + 1} is not a JSON object")
        objs.append(obj)
    if not objs or objs[0].get("kind") != "header":
        raise UsageError(f"{path} is not a fabriclab result stream: no header line")
    header, body = objs[0], objs[1:]
    footer = body.pop() if body and body[-1].get("kind") == "footer" else {"kind": "footer", "status": "incomplete"}
    if header.get("schema") != SCHEMA:
        raise UsageError(f"{path} is not a fabriclab result stream")
    doc = {"schema": SCHEMA, "schema_version": header.get("schema_version"), "header": header,
           "records": [r for r in body if r.get("kind") in RECORD_KINDS], "footer": footer}
    return Document.from_dict(doc, path)


class StreamWriter:
    """RUN.ndjson, one JSON object per line, flushed, so a killed run keeps
    every line. The header is written when it is complete: when the first
    launch has said hello (the ranks' hosts, the MPI library, the timer:
    `complete_header`), or at the first sign that none will (a failure, the
    footer). Until then records wait in order, so the stream's header is the
    document's."""

    def __init__(self, path: Path, header: Header):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot write results to {self.path}: {e.strerror}") from None
        self._f = outputs.stream(self.path)
        self.header = header
        self.records: list = []
        self._waiting: Optional[list] = []     # records held until the header is written

    def _write(self, obj: dict) -> None:
        self._f.write(json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n")
        self._f.flush()

    def _line(self, record) -> dict:
        return {"kind": record.KIND, **record.to_dict()}

    def complete_header(self) -> None:
        """Write the header (as it stands now) and every record held for it; once."""
        if self._waiting is None:
            return
        self._write({"kind": "header", "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
                     **self.header.to_dict()})
        for r in self._waiting:
            self._write(self._line(r))
        self._waiting = None

    @property
    def header_written(self) -> bool:
        return self._waiting is None

    def add(self, record) -> None:
        """Streams one typed record (records.py), or holds it until the header is out."""
        if record.KIND not in RECORD_TYPES:
            raise ValueError(f"unknown record kind {record.KIND}")
        self.records.append(record)
        if self._waiting is not None:
            self._waiting.append(record)
        else:
            self._write(self._line(record))

    def close(self, footer: Footer, blocks: Optional[dict] = None) -> Document:
        """The footer line, then RUN.json beside the stream: the same header
        and records, with the merged points, findings and blocks."""
        if footer.status not in STATUSES:
            raise ValueError(f"bad status {footer.status}")
        self.complete_header()
        self._write({"kind": "footer", **footer.to_dict()})
        os.fsync(self._f.fileno())
        self._f.close()
        return Document(self.header, self.records, footer, blocks=blocks)


__all__ = ["SCHEMA", "SCHEMA_VERSION", "STATUSES", "RECORD_KINDS", "Header", "Footer", "Document", "StreamWriter",
           "load", "read_record", "write_json", "point_key"]
