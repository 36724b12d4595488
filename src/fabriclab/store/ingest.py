"""One fabriclab document as the results store's rows (docs/history.md): a run
document (RUN.json, or a RUN.ndjson stream cut short), check.json, tune.json,
or another tool's printed output (OSU, IMB) read as `fabriclab import` reads
it, turned into plain mappings per table (store/rows.py), keyed by the
columns of store/tables.py. No database is involved: add.py inserts them.

A run is read the one way every reader reads it (schema.load, its points
merged by analysis/merge.py); its figures are the merged points' own (the
median and interval of the time per op, each launch's median), the pair
matrices and congestion impacts are verdicts/'s (ingest_verdicts.py), and
`series_key` is the one place a figure's series across runs is named."""

from __future__ import annotations

import hashlib
import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Optional

from ..datafile import MAX_FILE_BYTES
from ..errors import UsageError
from ..inputs import read_bytes, read_text
from ..schema import SCHEMA, load
from ..schema.document import Document
from .rows import Rows

UNIT = "s"                 # a measured point's figure: seconds per op (records.Point.median_s)
HEAD = 4096                # what is read of a file to tell which document it is
# A single-op percentile's name (analysis/tails.py QUANTILES, and "max") as the tails table's pct.
PCT = {"max": 100.0}
# The header's levels below MPI (docs/fabric-levels.md) by the component the versions table names.
LEVELS = {"fabric": "libfabric", "ucx": "ucx", "blas": "blas"}
VERSION = re.compile(r"\d+(?:\.\d+)+")


# ---- series ------------------------------------------------------------------------------

def params_text(params) -> str:
    """A point's params as the points table keeps them: sorted k=v joined by ';' ('' when none)."""
    if isinstance(params, str):
        return params
    return ";".join(f"{k}={v}" for k, v in sorted((params or {}).items()))


def series_key(row: Mapping, table: str = "points") -> str:
    """The one string naming a figure compared over runs (docs/history.md):
    points `bench|variant|size|stride|conns|active|params` (active '' when all
    ranks), pairs `pair|SIZE|SRC_HOST>DST_HOST`, impacts `impact|VICTIM|AGGRESSOR|SIZE`.
    `row`: a row of that table, as `rows` makes it or a query reads it back."""
    if table == "points":
        active = row.get("active")
        return "|".join(str(x) for x in (row["bench"], row.get("variant") or "", row["size"], row.get("stride", 1),
                                         row.get("conns", 1), "" if active is None else active,
                                         params_text(row.get("params"))))
    if table == "pairs":
        src = row.get("src_host") or f"rank {row['src']}"
        dst = row.get("dst_host") or f"rank {row['dst']}"
        return f"pair|{row['size']}|{src}>{dst}"
    if table == "impacts":
        return f"impact|{row['victim']}|{row['aggressor']}|{row['size']}"
    raise ValueError(f"no series in table {table!r}")


# ---- one document --------------------------------------------------------------------------

def rows(path, cluster: Optional[str] = None, samples: bool = False, tool: Optional[str] = None) -> Rows:
    """The rows of the document at `path`: a run document, check.json, tune.json, or an OSU or
    IMB output (`tool` names which, else its banner does). `cluster` overrides the run's own
    (testbed name, else first host); `samples`: every raw sample as a point's child rows.
    UsageError in one line naming the file when it is none of these or fails validation."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"cannot read {path}: {'not a regular file' if p.exists() else 'no such file'}")
    head = _head(p)
    try:
        if tool is not None or not head.lstrip().startswith(b"{"):
            return _imported_text(p, cluster, tool)
        if b'"fabriclab.run"' in head:          # RUN.json and RUN.ndjson name their schema first
            return run_rows(load(p), p, cluster, samples)
        return _other_json(p, cluster, samples)
    except UsageError as e:
        raise UsageError(_one_line(str(e), path)) from None


def _head(p: Path) -> bytes:
    with open(p, "rb") as f:
        return f.read(HEAD)


def _one_line(msg: str, path) -> str:
    msg = " ".join(msg.split())
    return msg if str(path) in msg else f"{path}: {msg}"


def digest(path) -> str:
    """sha256 of the file's bytes: what add.py recognises a stored document by."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def run_rows(doc: Document, path, cluster: Optional[str] = None, samples: bool = False,
             kind: Optional[str] = None, sha: Optional[str] = None) -> Rows:
    """The rows of a loaded run document read from `path` (its bytes give the digest)."""
    from ..analysis import merge
    from ..suite.congestion import BENCHES
    from . import ingest_verdicts
    sha = sha or digest(path)
    merged = merge.merged(doc)
    if kind is None:
        kind = ("import" if doc.imported else
                "congestion" if merged and all(m.bench in BENCHES for m in merged) else "run")
    run = run_row(doc, path, sha, kind, cluster)
    hosts = rank_hosts(doc)
    pairs, named = ingest_verdicts.pair_rows(doc, merged, hosts)
    return Rows(run, versions(doc), point_rows(doc, merged, samples), pairs, ingest_verdicts.impact_rows(doc, hosts),
                findings=named)


def run_row(doc: Optional[Document], path, sha: str, kind: str, cluster: Optional[str],
            uid: Optional[str] = None) -> dict:
    """The runs row of a document (doc None: what the file alone says); a document that
    records no start is dated by the file's modification time."""
    h = doc.header if doc is not None else None
    started, ended = times(doc) if doc is not None else (None, None)
    if started and _epoch(started) is None:      # undated, it would sort as the latest run (added now)
        raise UsageError(f"{path}: its start time {str(started)[:60]!r} is not an ISO-8601 time")
    started = started or _iso(Path(path).stat().st_mtime)
    hosts = rank_hosts(doc) if doc is not None else []
    mpi = _mpi(h) if h is not None else (None, None)
    network, network_sha = _network(h.network if h is not None else None)
    return {"uid": uid or _uid(h) or sha, "digest": sha, "kind": kind,
            "cluster": cluster or (testbed(doc) if doc is not None else None) or (hosts[0] if hosts else "unknown"),
            "started": started, "started_s": _epoch(started), "ended": ended, "ended_s": _epoch(ended),
            "status": doc.footer.status if doc is not None else None,
            "nranks": h.nranks if h is not None else None, "hosts": ",".join(dict.fromkeys(hosts)) or None,
            "mpi": mpi[0], "mpi_version": mpi[1], "fabriclab_version": h.fabriclab_version if h is not None else None,
            "network": network, "network_digest": network_sha, "source": str(Path(path).resolve()),
            "added_s": time.time()}


def _uid(h) -> Optional[str]:
    """A run's name in the store: its run id (the output's stem, so check-1/pairs-1.json and
    check-2/pairs-1.json share it) with its start, which a run's .json and its .ndjson stream
    share and two runs do not."""
    if h is None or not h.run_id:
        return None
    return f"{h.run_id}@{h.start_time}" if h.start_time else h.run_id


def times(doc: Document) -> tuple:
    """(started, ended) as ISO-8601 UTC: the header's start, the footer's end (else the start
    plus the run's duration); None where unknown (a stream cut short has no end)."""
    started, ended = doc.header.start_time, doc.footer.extra.get("end_time")
    if not isinstance(ended, str):
        ended = _iso(_epoch(started) + doc.footer.duration_s) if _epoch(started) is not None and \
            doc.footer.duration_s is not None else None
    return started, ended


def rank_hosts(doc: Document) -> list:
    """Every rank's host in rank order: the header's (version 11 on), else the first hello's."""
    return list(doc.header.hosts or doc.hello.get("hosts") or [])


def testbed(doc: Document) -> Optional[str]:
    """The testbed the run crossed: its watch names it on every launch's end (testbed/site.py),
    a validation names it in its block."""
    for end in doc.launch_ends:
        if isinstance(end.get("testbed"), str):
            return end.get("testbed")
    name = (doc.validation or {}).get("testbed")
    return name if isinstance(name, str) else None


def _mpi(h) -> tuple:
    """(the MPI's name, its version): the flavour the launcher reported (mpich, openmpi,
    intel), else the library's first word; the version from the library's own string
    (MPI_Get_library_version), else mpi.h's."""
    lib = (h.mpi_library or "").strip().splitlines()
    first = lib[0].strip() if lib else ""
    flavour = h.mpi.get("flavour")
    name = flavour if flavour and flavour != "unknown" else (first.split()[0] if first else None)
    for text in (first, h.mpi.get("header_version") or ""):
        m = VERSION.search(text)
        if m:
            return name, m.group(0)
    return name, None


def _network(network: Optional[str]) -> tuple:
    """(the network file as the header names it, sha256 of its bytes, else of the name)."""
    if not network:
        return None, None
    try:
        data = read_bytes(network, "the network file", MAX_FILE_BYTES)
    except UsageError:          # the file is gone or moved: its name is all that is left to compare
        data = network.encode()
    return network, hashlib.sha256(data).hexdigest()


def versions(doc: Document) -> list:
    """[{component, version}] of every component the header records: the MPI (its version,
    library string, standard level, mpi.h), the levels below it, the core, fabriclab, the
    launching host's kernel, OS and Python, an imported tool's."""
    h = doc.header
    lib = (h.mpi_library or "").strip().splitlines()
    found = [("mpi", _mpi(h)[1]), ("mpi_library", lib[0].strip() if lib else None),
             ("mpi_standard", h.mpi.get("mpi_version")), ("mpi_header", h.mpi.get("header_version")),
             ("core", h.core.get("version") or h.core.get("source_hash")), ("fabriclab", h.fabriclab_version),
             ("kernel", h.host.get("kernel")), ("os", h.host.get("os")), ("python", h.host.get("python"))]
    for level, component in LEVELS.items():
        library = ((h.levels or {}).get(level) or {}).get("library") or {}
        text = " ".join(str(library.get(k) or "") for k in (("name", "version") if level == "blas" else ("version",)))
        found.append((component, text.strip()))
    if h.imported:
        found.append((h.imported.get("tool"), h.imported.get("tool_version")))
    return [{"component": c, "version": str(v)} for c, v in found if c and v]


# ---- points ---------------------------------------------------------------------------------

def point_rows(doc: Document, merged: list, samples: bool = False) -> list:
    """One points row per merged point, with its launches, tails and (samples) raw samples."""
    groups = doc.groups()
    tails = _tails(doc)
    tool = (doc.header.imported or {}).get("tool")
    out = []
    for m in merged:
        s = m.summary
        row = {"bench": m.bench, "variant": m.variant or "", "size": m.size, "stride": m.stride, "conns": m.conns,
               "active": m.active, "params": params_text(m.params), "cache": m.cache, "unit": UNIT,
               "median": s.median, "ci_low": s.ci_low, "ci_high": s.ci_high, "launches": len(m.launches),
               "samples": s.n, "bytes_per_op": m.bytes_per_op,
               "imported": f"{tool}:{m.imported.get('benchmark')}" if m.imported is not None else None}
        row["series"] = series_key(row)
        row["children"] = {
            "launches": [{"launch": x.launch, "median": x.median, "n": x.n} for x in m.launches],
            "samples": [{"launch": p.launch or 0, "value": x} for p in groups.get(m.key, []) for x in p.samples]
            if samples else [],
            "tails": tails.get(m.key, [])}
        out.append(row)
    return out


def _tails(doc: Document) -> dict:
    """{point key: [{pct, value}]}: the single-op percentiles analysis/tails.py reports (the
    median over launches), in seconds per op as the point's median (tails are read per
    transfer, records.Point.per_transfer: undone here)."""
    if not any(p.op_histogram for p in doc.points):
        return {}
    from ..analysis.tails import tails
    out = {}
    per = {p.key: p for p in doc.points}
    for t in tails(doc.points):
        one = per[t.key].per_transfer(1.0)
        out[t.key] = [{"pct": PCT.get(name) or float(name[1:]), "value": est[0] / one}
                      for name, est in t.estimates.items()]
    return out


# ---- other documents ------------------------------------------------------------------------

def _imported_text(p: Path, cluster: Optional[str], tool: Optional[str]) -> Rows:
    """OSU or IMB output, read by `fabriclab import`'s own reader (imports/)."""
    from .. import imports
    from ..imports import imb, osu
    if tool is None:
        text = imports.read(p)[1]
        lines = text.splitlines()
        tool = ("osu" if any(osu.BANNER.match(s.strip()) for s in lines) else
                "imb" if any(imb.BANNER.match(s.strip()) or imb.BLOCK.match(s.strip()) for s in lines) else None)
        if tool is None:
            raise UsageError(f"{p} is not a fabriclab document (a run, check.json, tune.json) nor OSU or IMB "
                             "output")
    doc = imports.load(p, tool)
    return run_rows(doc, p, cluster, kind="import", sha=doc.header.imported["sha256"])


def _other_json(p: Path, cluster: Optional[str], samples: bool) -> Rows:
    """check.json (acceptance/check.py to_dict), tune.json (tuning/tuner.py Tuned.to_dict), or a
    run document whose schema is not among its first bytes (its keys laid out by another tool)."""
    from . import ingest_verdicts
    try:
        data = json.loads(read_text(p, "the document", MAX_FILE_BYTES))
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{p} is not a fabriclab document: {str(e).split(':')[0]}") from None
    if isinstance(data, dict) and data.get("schema") == SCHEMA:     # a run document laid out by another tool
        return run_rows(Document.from_dict(data, p), p, cluster, samples)
    what = ingest_verdicts.kind_of(data)
    if what is None:
        raise UsageError(f"{p} is not a fabriclab document (a run, check.json, tune.json) nor OSU or IMB output")
    sha = digest(p)
    try:
        if what == "check":
            checks, findings = ingest_verdicts.check_rows(data)
            runs = ingest_verdicts.check_documents(data, p)
        else:
            checks, findings = [], ingest_verdicts.tune_rows(data)
            runs = ingest_verdicts.tune_documents(data, p)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise UsageError(f"{p} is not a valid {what} document: {e!r:.80}") from None
    docs = [d for d in (_loaded(x) for x in runs) if d is not None]
    first = docs[0] if docs else None
    run = run_row(first, p, sha, what, cluster, uid=f"{what}-{sha[:12]}")
    starts = [s for s in (d.header.start_time for d in docs) if _epoch(s) is not None]
    ends = [e for e in (times(d)[1] for d in docs) if _epoch(e) is not None]
    mtime = _iso(p.stat().st_mtime)
    run.update(started=min(starts, key=_epoch) if starts else mtime, ended=max(ends, key=_epoch) if ends else mtime,
               status=ingest_verdicts.check_status(data) if what == "check" else "complete",
               source=str(p.resolve()))
    run.update(started_s=_epoch(run["started"]), ended_s=_epoch(run["ended"]))
    return Rows(run, versions(first) if first is not None else [], checks=checks, findings=findings)


def _loaded(path) -> Optional[Document]:
    """A run document a check or tuning wrote, when it is still there and reads."""
    try:
        return load(path) if Path(path).is_file() else None
    except UsageError:
        return None


# ---- times ----------------------------------------------------------------------------------

def _epoch(iso: Optional[str]) -> Optional[float]:
    if not iso or not isinstance(iso, str):
        return None
    try:
        t = datetime.fromisoformat(iso[:-1] + "+00:00" if iso.endswith(("Z", "z")) else iso)   # 3.10 takes no Z
        return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
    except (ValueError, OverflowError):           # not ISO-8601, or out of the epoch's range
        return None


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()
