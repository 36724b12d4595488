"""Run documents for the store's tests, written as a run writes them (support/docs.py): a header
of a four-rank Open MPI run on hosts n2, n1, n3, point records derived from the samples given
(measure/runner.derive), each launch its own records; and a run's stream (.ndjson)."""
import json
from pathlib import Path

import numpy as np

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.measure.runner import derive

UID = "run-a@2026-11-02T10:00:00+00:00"     # the run id with its start: two checks' pairs-1.json differ
HEADER = {"run_id": "run-a", "fabriclab_version": "0.3.0", "start_time": "2026-11-02T10:00:00+00:00",
          "nranks": 4, "hosts": ["n2", "n2", "n1", "n3"],
          "mpi": {"flavour": "openmpi", "library": "Open MPI v5.0.3, package: Open MPI\nmore", "mpi_version": "3.1",
                  "header_version": "Open MPI 5.0.3"},
          "core": {"version": "abc123"}, "host": {"kernel": "6.1.0", "python": "3.11.7"},
          "levels": {"fabric": {"library": {"name": "libfabric", "version": "1.21.0", "path": "/x"}, "jobs": []},
                     "ucx": {"library": {"name": "ucx", "version": "1.16.0", "path": "/y"}, "jobs": []}}}
FOOTER = {"end_time": "2026-11-02T10:05:00+00:00"}


def rec(bench, size, samples, launch=0, **kw) -> dict:
    """A core's point line for one launch (what derive takes)."""
    return {"bench": bench, "size": size, "stride": 1, "bytes_per_op": size, "legs_per_op": 1,
            "samples": list(samples), "launch": launch, **kw}


def write(path: Path, records: list, header: dict = HEADER, status: str = "complete", footer=FOOTER) -> Path:
    """The run document of `records` at `path`."""
    doc = docs.of(records, header, status)
    doc.footer.extra.update(footer or {})
    doc.write(path)
    return path


def ping(rng, variant="", params=None, launches=3, median=2e-6) -> list:
    """message.pingpong at 8 bytes, `launches` launches of 30 samples scattered by 2% around `median`."""
    return [derive(rec("message.pingpong", 8, median * np.exp(rng.normal(0, 0.02, 30)), k, variant=variant,
                       params=params or {}, cache="warm")) for k in range(launches)]


def launched(bench: str, launch_medians, size: int = 8, variant: str = "", samples: int = 5) -> list:
    """One point record per launch whose samples all equal that launch's median: the launch
    medians a store keeps are exactly those given."""
    return [derive(rec(bench, size, [m] * samples, k, variant=variant, params={}, cache="warm"))
            for k, m in enumerate(launch_medians)]


def stream(path: Path, run_id: str, start: str, records: list) -> Path:
    """A run's stream (.ndjson) as a run writes it while it goes: a header line, a line per point."""
    lines = [json.dumps({"kind": "header", "schema": schema.SCHEMA, "schema_version": schema.SCHEMA_VERSION,
                         **HEADER, "run_id": run_id, "start_time": start})]
    lines += [json.dumps({"kind": "point", **p.to_dict()}) for p in records]
    path.write_text("\n".join(lines) + "\n")
    return path
