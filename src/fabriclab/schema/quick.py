"""The quick check of point records: the same rules as the typed readers
(records.py), in one pass and without building objects.

A document holds thousands of point records; checking each field through
Fields costs as much as parsing the JSON. quick_point() tests the common
case inline and answers True only where Point.from_dict would accept; on
False, from_dict finds and names the problem (it may still accept what the
quick check is too strict for). tests/unit/test_documents.py checks that the
quick check is never looser."""

from __future__ import annotations

import math

from .fields import MAX_BYTES, MAX_COUNT, MAX_RANKS, MAX_SECONDS, durations
from .records import ROLE_NAMES

_INF = math.inf


def _int(v, lo, hi) -> bool:
    return type(v) is int and lo <= v <= hi


def _num(v, lo, hi) -> bool:
    return (type(v) is float or type(v) is int) and lo <= v <= hi and v < _INF


def _opt_int(v, lo, hi) -> bool:
    return v is None or _int(v, lo, hi)


def _opt_num(v, lo, hi) -> bool:
    return v is None or _num(v, lo, hi)


# The summary's times, median first; checked as one list by durations().
_SUMMARY_TIMES = ("median", "ci_low", "ci_high", "p5", "p25", "p75", "p95", "p99", "min", "max", "mean", "stdev",
                  "mad")


def quick_summary(s) -> bool:
    if type(s) is not dict or s.get("median") is None:
        return False
    g = s.get
    times = [v for v in map(g, _SUMMARY_TIMES) if v is not None]
    return (durations(times) and _opt_int(g("n"), 0, MAX_COUNT) and _opt_num(g("ci_rel"), 0, _INF)
            and _opt_int(g("outliers"), 0, MAX_COUNT) and _opt_num(g("confidence"), 0, 1.0))


def _quick_pattern(r, roles) -> bool:
    if type(roles) is not str or not 0 < len(roles) <= MAX_RANKS or not set(roles) <= _ROLE_LETTERS:
        return False
    n, g = len(roles), r.get
    peers, rs, sent, recv = g("peers"), g("rank_samples"), g("rank_sent_bytes"), g("rank_recv_bytes")
    if not (type(peers) is list and len(peers) == n and all(_int(x, -1, n - 1) for x in peers)):
        return False
    if not (type(rs) is list and len(rs) == n and all(x is None or durations(x) for x in rs)):
        return False
    if not all(type(b) is list and len(b) == n and all(_int(x, 0, MAX_BYTES) for x in b) for b in (sent, recv)):
        return False
    ranks, fair = g("ranks"), g("fairness")
    return (_opt_int(g("messages_per_op"), 0, MAX_COUNT)
            and (ranks is None or type(ranks) is list and all(_quick_rank(x) for x in ranks))
            and (fair is None or type(fair) is dict and _int(fair.get("n"), 0, MAX_RANKS)
                 and _num(fair.get("min_max_ratio"), 0, 1.0) and _num(fair.get("jain"), 0, 1.0)))


_ROLE_LETTERS = set(ROLE_NAMES)
_ROLE_WORDS = set(ROLE_NAMES.values())


def _quick_rank(x) -> bool:
    g = x.get if type(x) is dict else None
    return (g is not None and _int(g("rank"), 0, MAX_RANKS) and g("role") in _ROLE_WORDS
            and (g("host") is None or type(g("host")) is str) and _opt_num(g("median_s"), 0, MAX_SECONDS)
            and _opt_num(g("bandwidth_Bps"), 0, _INF))


def _quick_diag(x) -> bool:
    return type(x) is dict and type(x.get("code")) is str and type(x.get("message")) is str


# Counts checked together (each within 0..MAX_BYTES, stricter than from_dict for the last four).
_COUNTS = ("size", "bytes_per_op", "buffers", "launch", "warmup", "batch")
_INT = {int}
_TEXT_OR_NONE = {str, type(None)}
_OBJ_OR_NONE = {dict, type(None)}


def _counts(r) -> bool:
    vals = [v for v in map(r.get, _COUNTS) if v is not None]
    return set(map(type, vals)) <= _INT and min(vals) >= 0 and max(vals) <= MAX_BYTES


def quick_point(r) -> bool:
    """True when a point record (or a stored merged point) passes every rule of from_dict."""
    if type(r) is not dict or "size" not in r or "bytes_per_op" not in r:
        return False
    g = r.get
    samples, val, diags = g("samples", []), g("validation"), g("diagnostics", [])
    ok = (type(g("bench")) is str and type(g("variant", "")) is str and _counts(r)
          and _int(g("stride", 1), 1, MAX_BYTES) and _int(g("conns", 1), 1, MAX_RANKS)
          and _opt_int(g("active"), 0, MAX_RANKS) and _int(g("legs_per_op", 1), 1, 1024)
          and type(g("concurrent", False)) is bool and type(g("params", {})) is dict
          and {type(g("cache")), type(g("stop"))} <= _TEXT_OR_NONE
          and {type(g("info")), type(g("imported"))} <= _OBJ_OR_NONE and quick_summary(g("summary"))
          and (samples == [] or durations(samples)) and _opt_num(g("elapsed_s"), 0, MAX_SECONDS)
          and (val is None or type(val) is dict and _int(val.get("checked_bytes", 0), 0, MAX_COUNT)
               and _int(val.get("errors", 0), 0, MAX_COUNT))
          and type(diags) is list and all(map(_quick_diag, diags)))
    return ok and (g("roles") is None or _quick_pattern(r, g("roles")))


def quick_merged(m) -> bool:
    """quick_point, and the launches and spread of a stored merged point."""
    if not quick_point(m):
        return False
    launches, spread = m.get("launches"), m.get("spread")
    return (type(launches) is list and all(type(x) is dict and _int(x.get("launch", 0), 0, MAX_COUNT)
                                           and _num(x.get("median"), 0, MAX_SECONDS)
                                           and _opt_int(x.get("n"), 0, MAX_COUNT)
                                           and (x.get("stop") is None or type(x.get("stop")) is str)
                                           for x in launches)
            and (spread is None or type(spread) is dict and all(_opt_num(spread.get(k), 0, _INF) for k in
                                                                ("within_rel", "between_rel", "max_min_ratio"))
                 and (spread.get("launch_medians") is None or durations(spread["launch_medians"]))))
