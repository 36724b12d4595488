"""The versioned result document (docs/schema.md) and its NDJSON stream.

A run writes RUN.ndjson line by line while it goes (header, then one line per
launch, point, skip or diagnostic, then a footer) and, at the end, RUN.json:
the same content as one document. A stream cut short (Ctrl-C, a dead rank, a
timeout, a power cut) is still a valid run: `load` reads it and marks it
"incomplete"; a torn last line is dropped.

History of SCHEMA_VERSION:
  1 (fabriclab 0.1.0): first version.
  2 (fabriclab 0.2.0): points say where they are on every axis (conns,
    active), which job variant and cache state they belong to (variant,
    cache, buffers) and how their time becomes figures (concurrent); pattern
    points carry every rank's samples, roles, peers and bytes, and the
    derived ranks, aggregate_bandwidth_Bps, fairness and message_rate_per_s;
    the header records the placement of ranks on hosts and the cache state.
    Version 1 documents still load (their points read as conns 1, no
    variant).
  3 (fabriclab 0.2.0): several launches per point: points carry `launch`,
    `launch_end` records hold where the ranks ended and the machine's noise
    around each launch, the hello holds every rank's affinity and CPU, the
    plan its launches and shuffle seed, the launcher its binding. Older
    documents load as one launch.
  4 (fabriclab 0.2.0): imported documents: header.imported, points without
    samples. `fabriclab import` reads another tool's printed figures (OSU,
    IMB) into a document whose header says so; its points carry the tool's
    figure converted to the time of one op, and no samples. Points without
    samples are valid only in such documents.
  5 (fabriclab 0.2.0): runs across several hosts: the launcher records how it
    reached them (srun's `mpi_plugin`; a testbed's `agent`, `prefix`, `iface`
    and the `transport` forced), `launch_end` records on a testbed carry the
    cables' `counters` per host and `wire_bytes`; a validation document
    (`fabriclab testbed validate`) is an all-to-all run with a `validation`
    block. Older documents load unchanged: every new field is optional.
  6 (fabriclab 0.2.0): a point's `bandwidth_Bps` is null when its op moves no
    payload (size 0), as an imported point's always was; `params` are
    recorded in canonical form (window "1024" for `-p window=1K`); every
    point carries `active` (null outside patterns); skip records carry the
    point's `variant`, `conns` and `active`; a SIGTERM ends a run as
    `interrupted`. Every document is checked for types and ranges when read
    (check.py). Older documents load unchanged.
  7 (fabriclab 0.2.0): the levels below MPI: the header's `levels` records,
    per level (fabric, ucx), the library loaded (name, version, path) and per
    job the provider chosen and why, or UCX_TLS; their points' `info` says
    what the kernel opened (provider, fabric, domain, endpoint type,
    capabilities, inject size, iov limit, MR mode; UCX's lanes). Older
    documents load unchanged.
  8 (fabriclab 0.2.0): the app level: point `phases`, app `info`, header
    `levels.blas`. Older documents load unchanged.
  9 (fabriclab 0.2.0): per-cable truth on a testbed: `launch_end` records
    carry `spans` (per point: every cable direction's bytes, utilization and
    busiest windows, the CPU's idle, softirq and softirq-wait shares) and
    `shapers` (each shaper's bytes, packets, drops, overlimits over the
    launch); a validation block carries `cables` (per size, every cable
    direction predicted against measured), `emulation` and `explanation`.
    Older documents load unchanged.
  10 (fabriclab 0.2.0): warnings at the level they belong to: the document
    carries `findings` (the run's measured noise, how many points had each
    per-launch condition, and the run-level findings), and a merged point's
    `diagnostics` hold only its own warnings (`not-converged`,
    `wide-interval`, `off-trend`, `validation-failed`, a timer bias of every
    one of its launches), each once with `launches`, how many launches had it.
    Version 9 documents load: their merged points are classified when read."""

from __future__ import annotations

import gc
import json
import os
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from . import check
from .check import RECORD_KINDS, STATUSES
from .records import AXES, KEY_FIELDS, SUMMARY_KEYS, Point, point_key

__all__ = ["SCHEMA", "SCHEMA_VERSION", "RECORD_KINDS", "STATUSES", "AXES", "KEY_FIELDS", "SUMMARY_KEYS", "Point",
           "StreamWriter", "document", "write_document", "load", "validate", "points", "point_key"]

SCHEMA = "fabriclab.run"
SCHEMA_VERSION = 10


class StreamWriter:
    """Appends one JSON object per line and flushes, so a killed run keeps every line."""

    def __init__(self, path: Path, header: dict):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = open(self.path, "w", encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write results to {self.path}: {e.strerror}") from None
        self.header = {"kind": "header", "schema": SCHEMA, "schema_version": SCHEMA_VERSION, **header}
        self.records: list[dict] = []
        self._write(self.header)

    def _write(self, obj: dict) -> None:
        self._f.write(json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n")
        self._f.flush()

    def add(self, kind: str, record) -> None:
        """Streams one record (a mapping, or a typed record that writes itself)."""
        if kind not in RECORD_KINDS:
            raise ValueError(f"unknown record kind {kind}")
        rec = {"kind": kind, **(record.to_dict() if hasattr(record, "to_dict") else record)}
        self.records.append(rec)
        self._write(rec)

    def close(self, footer: dict, derive=None) -> dict:
        """Write the footer line, then the whole document next to the stream.

        derive(doc) may return fields to store with the document beside the
        records (the merged points, a cache of what readers would compute)."""
        if footer.get("status") not in STATUSES:
            raise ValueError(f"bad status {footer.get('status')}")
        foot = {"kind": "footer", **footer}
        self._write(foot)
        os.fsync(self._f.fileno())
        self._f.close()
        doc = document(self.header, self.records, foot)
        if derive:
            try:
                doc.update(derive(doc))
            except (ValueError, KeyError, TypeError):
                pass  # the records are what counts: readers derive again, and say what is wrong
        write_document(doc, self.path.with_suffix(".json"))
        return doc


def document(header: dict, records: list[dict], footer: dict) -> dict:
    head = {k: v for k, v in header.items() if k not in ("kind", "schema", "schema_version")}
    foot = {k: v for k, v in footer.items() if k != "kind"}
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "header": head,
            "records": records, "footer": foot}


def write_document(doc: dict, path: Path) -> None:
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@contextmanager
def _collector_paused():
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


def load(path: str | Path) -> dict:
    """Read RUN.json or RUN.ndjson into a validated document."""
    with _collector_paused():
        return _load(path)


def _load(path: str | Path) -> dict:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    if _first_line_kind(text) == "header":
        doc = _from_stream(text, path)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"{path} is not a fabriclab result: {e.msg} at line {e.lineno}") from None
        except (ValueError, RecursionError) as e:  # an integer of thousands of digits, nesting too deep
            raise UsageError(f"{path} is not a fabriclab result: {_why(e)}") from None
    validate(doc, path)
    return doc


def _why(e: Exception) -> str:
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return "an integer of more than 4300 digits" if "digits" in str(e) else str(e).split(":")[0]


def _first_line_kind(text: str):
    try:
        first = json.loads(text.lstrip().split("\n", 1)[0])
    except (ValueError, RecursionError):
        return None
    return first.get("kind") if isinstance(first, dict) else None


def _from_stream(text: str, path) -> dict:
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
    doc = document(header, [r for r in body if r.get("kind") in RECORD_KINDS], footer)
    doc["schema_version"] = header.get("schema_version")
    return doc


def validate(doc: dict, path="document") -> None:
    """Types and ranges of every field readers use (check.py); raises
    UsageError naming the first problem."""
    check.document(doc, path)


def points(doc: dict) -> list[dict]:
    """The point records of a document, as stored (Point.from_dict types them)."""
    return [r for r in doc["records"] if r.get("kind") == "point"]
