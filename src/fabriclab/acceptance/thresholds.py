"""The check's thresholds: the defaults here, a file over them (YAML or
JSON, the same keys), flags over both; checked whole, before anything runs.

    attempts: 3                   # a test passes when any attempt passes (Azure's health checks
                                  # repeat a test, since a healthy node fluctuates)
    tests: [cabling, pairs, congestion, collectives]
    pairs: {size: 256K, window: 4, drop: 0.25}
    congestion: {victim: bandwidth, aggressor: alltoall, tolerance: 0.5, max_impact: null}
    collectives: {ops: [allreduce], size: 1M, tolerance: 0.25}

- cabling: the fabric read now (`--fabric`) against the reference network
  (`--network`); no keys of its own (cabling.py). Left out of the default
  tests when no --fabric is given.
- pairs: message.shift at `size` with `window` messages a flow; a pair is
  low below (1 - drop) of the typical pair (verdicts/pair_matrix.py); the
  test fails for every cable and host the low pairs name.
- congestion: a victim test (latency, bandwidth, allreduce, or a benchmark's
  full name) under an aggressor (suite/congestion.py);
  on a known network it fails where the measured impact factor exceeds the
  model's by more than `tolerance` (times 1 + tolerance); elsewhere where
  it exceeds `max_impact`, and with no max_impact it is only reported.
- collectives: each op at `size` on every rank; it fails where its time is
  more than 1 + tolerance times the model's (on a known network) or the
  baseline's (`--baseline`), by compare's interval."""

from __future__ import annotations

import copy
import json

from ..datafile import read_data_file
from ..errors import UsageError
from ..suite import congestion
from ..units import parse_size

TESTS = ("cabling", "pairs", "congestion", "collectives")
COLL_OPS = ("allreduce", "bcast", "reduce", "allgather", "reduce_scatter", "alltoall", "gather", "scatter")
MAX_FILE = 64 << 10
MAX_ATTEMPTS = 20

DEFAULTS = {
    "attempts": 3,
    "tests": list(TESTS),
    "pairs": {"size": "256K", "window": 4, "drop": 0.25},
    "congestion": {"victim": "bandwidth", "aggressor": "alltoall", "tolerance": 0.5, "max_impact": None},
    "collectives": {"ops": ["allreduce"], "size": "1M", "tolerance": 0.25},
}


def _bad(where: str, what: str) -> UsageError:
    return UsageError(f"thresholds: {where}: {what}")


def _number(v, where: str, lo: float, hi: float, integer: bool = False):
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok or not lo <= v <= hi:
        raise _bad(where, f"must be {'an integer' if integer else 'a number'} in {lo:g}..{hi:g}, not {v!r}")
    return v


def _size(v, where: str) -> int:
    try:
        n = parse_size(str(v), where)
    except UsageError:
        raise _bad(where, f"must be a size in bytes (256K, 1M), not {v!r}") from None
    if not 1 <= n <= 1 << 30:
        raise _bad(where, f"must be 1 B..1 GiB, not {v!r}")
    return n


def _choice(v, where: str, choices: tuple) -> str:
    if v not in choices:
        raise _bad(where, f"must be one of {', '.join(choices)}, not {v!r}")
    return v


def _victim(v) -> None:
    """A victim test's name (congestion.victim_test); a benchmark's is checked with the run's plan."""
    try:
        congestion.victim_test(v if isinstance(v, str) else repr(v))
    except UsageError as e:
        raise _bad("congestion.victim", str(e)) from None


def _section(t: dict, name: str) -> dict:
    sec = t[name]
    if not isinstance(sec, dict):
        raise _bad(name, "must be a mapping")
    unknown = set(sec) - set(DEFAULTS[name])
    if unknown:
        raise _bad(name, f"unknown key {sorted(unknown)[0]!r} (keys: {', '.join(DEFAULTS[name])})")
    return sec


def check(t: dict) -> dict:
    """The thresholds, every value checked; sizes as byte counts."""
    out = copy.deepcopy(t)
    _number(t["attempts"], "attempts", 1, MAX_ATTEMPTS, integer=True)
    if not isinstance(t["tests"], list) or not t["tests"] or len(set(t["tests"])) != len(t["tests"]):
        raise _bad("tests", f"must be a list of distinct tests from {', '.join(TESTS)}")
    for name in t["tests"]:
        _choice(name, "tests", TESTS)
    p, c, k = (_section(t, n) for n in ("pairs", "congestion", "collectives"))
    out["pairs"]["size"] = _size(p["size"], "pairs.size")
    _number(p["window"], "pairs.window", 1, 1024, integer=True)
    _number(p["drop"], "pairs.drop", 0.01, 0.99)
    _victim(c["victim"])
    _choice(c["aggressor"], "congestion.aggressor", congestion.AGGRESSORS)
    _number(c["tolerance"], "congestion.tolerance", 0, 100)
    if c["max_impact"] is not None:
        _number(c["max_impact"], "congestion.max_impact", 1, 1e6)
    if not isinstance(k["ops"], list) or not k["ops"]:
        raise _bad("collectives.ops", f"must be a list of operations from {', '.join(COLL_OPS)}")
    for op in k["ops"]:
        _choice(op, "collectives.ops", COLL_OPS)
    out["collectives"]["size"] = _size(k["size"], "collectives.size")
    _number(k["tolerance"], "collectives.tolerance", 0, 100)
    return out


def merged(over: dict, base: dict | None = None) -> dict:
    """`over` laid on `base` (the defaults), section by section; unknown top-level keys refused."""
    out = copy.deepcopy(base or DEFAULTS)
    if not isinstance(over, dict):
        raise _bad("the file", "must be a mapping of attempts, tests, pairs, congestion, collectives")
    for key, value in over.items():
        if key not in DEFAULTS:
            raise _bad(key, f"unknown key (keys: {', '.join(DEFAULTS)})")
        out[key] = {**out[key], **value} if isinstance(DEFAULTS[key], dict) and isinstance(value, dict) else value
    return out


def load(path: str) -> dict:
    """A thresholds file (YAML, of which JSON is a part) over the defaults, checked;
    read as every data file is (datafile.py: bounded, no aliases)."""
    data = read_data_file(path, "the thresholds file", kind="YAML", limit=MAX_FILE)
    return check(merged(data if data is not None else {}))


def dumps(t: dict) -> str:
    return json.dumps(t, sort_keys=True)
