"""The quick check of point records: the same rules as the typed readers
(records.py), column by column over all the records of a document, without
building objects.

A document holds thousands of point records; checking each field through
Fields costs as much as parsing the JSON, and even a function call per
record and field costs a tenth of `fabriclab show`. quick_points() gathers
each field over all records and tests it with a few whole-list operations
(the types present, min, max, a sum for finiteness), and answers True only
where Point.from_dict would accept every record; on False, check.py goes
record by record and from_dict names the problem (it may accept what the
quick check is too strict for). tests/unit/test_documents.py checks that the
quick check is never looser."""

from __future__ import annotations

import math

from .fields import MAX_BYTES, MAX_COUNT, MAX_ITEMS, MAX_RANKS, MAX_SECONDS, durations
from .records import ROLE_NAMES

_INF = math.inf
_NONE = type(None)
_INT, _NUMS, _STR, _BOOL, _DICT, _LIST = {int}, {int, float}, {str}, {bool}, {dict}, {list}
_TEXT_OR_NONE, _OBJ_OR_NONE = {str, _NONE}, {dict, _NONE}
_ROLE_LETTERS = set(ROLE_NAMES)
_ROLE_WORDS = set(ROLE_NAMES.values())
# Fields every point record has (a reader of the schema needs them), and the
# counts checked together (each within 0..MAX_BYTES: stricter than from_dict for the last four).
REQUIRED = ("bench", "size", "stride", "bytes_per_op", "legs_per_op", "samples", "summary")
_COUNTS = ("size", "bytes_per_op", "buffers", "launch", "warmup", "batch")
# The summary's times, median first.
_SUMMARY_TIMES = ("median", "ci_low", "ci_high", "p5", "p25", "p75", "p95", "p99", "min", "max", "mean", "stdev",
                  "mad")


def _types(vals: list, allowed: set) -> bool:
    return set(map(type, vals)) <= allowed


def _ints(vals: list, lo, hi) -> bool:
    """Every value an int in lo..hi (bool is a type of its own and fails)."""
    return not vals or _types(vals, _INT) and min(vals) >= lo and max(vals) <= hi


def _nums(vals: list, lo, hi) -> bool:
    """Every value a finite number in lo..hi: NaN can slip past min and max, not past the sum."""
    return not vals or _types(vals, _NUMS) and min(vals) >= lo and max(vals) <= hi and math.isfinite(sum(vals))


def _given(vals: list) -> list:
    return [v for v in vals if v is not None]


def _summaries(sums: list) -> bool:
    if not _types(sums, _DICT) or None in [s.get("median") for s in sums]:
        return False
    return (_nums(_given([v for s in sums for v in map(s.get, _SUMMARY_TIMES)]), 0, MAX_SECONDS)
            and _ints(_given([s.get(k) for s in sums for k in ("n", "outliers")]), 0, MAX_COUNT)
            and _nums(_given([s.get("ci_rel") for s in sums]), 0, _INF)
            and _nums(_given([s.get("confidence") for s in sums]), 0, 1.0))


def _samples(lists: list) -> bool:
    """Sample lists: each empty (an imported point: check.py decides) or durations."""
    if not _types(lists, _LIST) or max(map(len, lists)) > MAX_ITEMS:
        return False
    return _nums([v for x in lists for v in x], 0, MAX_SECONDS)


def _validations(vals: list) -> bool:
    vs = _given(vals)
    return _types(vs, _DICT) and _ints([v.get(k, 0) for v in vs for k in ("checked_bytes", "errors")], 0, MAX_COUNT)


def _diagnostics(lists: list) -> bool:
    if not _types(lists, _LIST):
        return False
    ds = [d for x in lists for d in x]
    return _types(ds, _DICT) and _types([d.get(k) for d in ds for k in ("code", "message")], _STR)


def _pattern(r: dict, roles) -> bool:
    if type(roles) is not str or not 0 < len(roles) <= MAX_RANKS or not set(roles) <= _ROLE_LETTERS:
        return False
    n, g = len(roles), r.get
    peers, rs, sent, recv = g("peers"), g("rank_samples"), g("rank_sent_bytes"), g("rank_recv_bytes")
    if not all(type(x) is list and len(x) == n for x in (peers, sent, recv)):
        return False
    if rs is not None and not (type(rs) is list and len(rs) == n and all(x is None or durations(x) for x in rs)):
        return False   # a stored merged point has none; a record must (check.py)
    if not (_ints(peers, -1, n - 1) and _ints(sent + recv, 0, MAX_BYTES)):
        return False
    ranks, fair = g("ranks"), g("fairness")
    return (_ints(_given([g("messages_per_op")]), 0, MAX_COUNT)
            and (ranks is None or type(ranks) is list and _ranks(ranks))
            and (fair is None or type(fair) is dict and _ints([fair.get("n")], 0, MAX_RANKS)
                 and _nums([fair.get("min_max_ratio"), fair.get("jain")], 0, 1.0)))


def _ranks(ranks: list) -> bool:
    if not _types(ranks, _DICT):
        return False
    roles = [x.get("role") for x in ranks]
    return (_ints([x.get("rank") for x in ranks], 0, MAX_RANKS) and _types(roles, _STR) and set(roles) <= _ROLE_WORDS
            and _types([x.get("host") for x in ranks], _TEXT_OR_NONE)
            and _nums(_given([x.get("median_s") for x in ranks]), 0, MAX_SECONDS)
            and _nums(_given([x.get("bandwidth_Bps") for x in ranks]), 0, _INF))


def quick_points(ps: list) -> bool:
    """True when every point record (or stored merged point) of ps passes every rule of from_dict."""
    if type(ps) is not list or not _types(ps, _DICT):
        return False
    if not ps:
        return True

    def col(key, default=None) -> list:
        return [r.get(key, default) for r in ps]
    return (None not in col("size") and None not in col("bytes_per_op")
            and _types(col("bench") + col("variant", ""), _STR)
            and _ints(_given([v for k in _COUNTS for v in col(k)]), 0, MAX_BYTES)
            and _ints(col("stride", 1), 1, MAX_BYTES) and _ints(col("conns", 1), 1, MAX_RANKS)
            and _ints(_given(col("active")), 0, MAX_RANKS) and _ints(col("legs_per_op", 1), 1, 1024)
            and _types(col("concurrent", False), _BOOL) and _types(col("params", {}), _DICT)
            and _types(col("cache") + col("stop"), _TEXT_OR_NONE)
            and _types(col("info") + col("imported"), _OBJ_OR_NONE)
            and _nums(_given(col("elapsed_s")), 0, MAX_SECONDS)
            and _summaries(col("summary")) and _samples(col("samples", [])) and _validations(col("validation"))
            and _diagnostics(col("diagnostics", []))
            and all(_pattern(r, r["roles"]) for r in ps if r.get("roles") is not None))


def quick_point(r) -> bool:
    return quick_points([r])


def quick_merged(ms: list) -> bool:
    """quick_points, and the launches and spread of a list of stored merged points."""
    if not quick_points(ms):
        return False
    launches = [m.get("launches") for m in ms]
    if not _types(launches, _LIST):
        return False
    ls = [x for lst in launches for x in lst]
    spreads = _given([m.get("spread") for m in ms])
    if not (_types(ls, _DICT) and _types(spreads, _DICT)):
        return False
    medians = [s.get("launch_medians") for s in spreads]
    return (_ints([x.get("launch", 0) for x in ls], 0, MAX_COUNT)
            and _nums([x.get("median") for x in ls], 0, MAX_SECONDS)
            and _ints(_given([x.get("n") for x in ls]), 0, MAX_COUNT)
            and _types([x.get("stop") for x in ls], _TEXT_OR_NONE)
            and _nums(_given([s.get(k) for s in spreads for k in ("within_rel", "between_rel", "max_min_ratio")]),
                      0, _INF)
            and all(map(durations, _given(medians))))
