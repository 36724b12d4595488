"""How a point record's fields are read and checked, group by group (its key,
its op, its sampling, a pattern's per-rank fields, and the optional phases,
histogram, CPU, counters and noise), joined by point_kwargs for records.py's points."""

from __future__ import annotations

import math
from typing import Any, Optional

from .fields import MAX_BYTES, MAX_RANKS, MAX_SECONDS, Fields, RecordError, durations, is_count, is_text
from .summaries import ROLE_NAMES, Fairness, RankFigures, Summary


def point_kwargs(d, where: str, known: frozenset) -> dict:
    """The constructor arguments of a Point from its mapping, checked; the
    fields not in `known` are kept as they are (`extra`)."""
    Fields(d, where)     # not a mapping: said before any field is read
    f = Fields(d, lambda: f"{where} ({d.get('bench')!s:.40} size {d.get('size')!s:.24})")
    kw: dict[str, Any] = _key_fields(f)
    kw.update(_op_fields(f))
    kw.update(_sampling_fields(f, d))
    kw.update(_pattern_fields(f, d, kw["bytes_per_op"]))
    kw["phases"] = _phases(f)
    kw["op_histogram"] = _histogram(f)
    kw["rank_cpu"] = _rank_cpu(f)
    kw["rank_counters"] = _counters(f, len(kw["samples"]))
    kw["noise"] = _noise(f)
    kw["extra"] = {k: v for k, v in d.items() if k not in known}
    return kw


def _key_fields(f: Fields) -> dict:
    return dict(bench=f.str("bench"), variant=f.str("variant", ""), size=f.int("size", hi=MAX_BYTES),
                stride=f.int("stride", 1, lo=1, hi=MAX_BYTES), conns=f.int("conns", 1, lo=1, hi=MAX_RANKS),
                active=f.int("active", None, hi=MAX_RANKS, none=True))


def _op_fields(f: Fields) -> dict:
    return dict(bytes_per_op=f.int("bytes_per_op", hi=MAX_BYTES), legs_per_op=f.int("legs_per_op", 1, lo=1, hi=1024),
                concurrent=f.bool("concurrent", False), params=f.obj("params", {}),
                cache=f.str("cache", None, none=True), buffers=f.int("buffers", None, hi=MAX_BYTES, none=True),
                working_set_bytes=f.int("working_set_bytes", None, hi=MAX_BYTES, none=True),
                rank_alloc_bytes=f.counts("rank_alloc_bytes", 0, MAX_BYTES, "byte counts", None, none=True),
                info=f.obj("info", {}, none=True) or {}, imported=f.obj("imported", None, none=True))


def _sampling_fields(f: Fields, d) -> dict:
    samples = f.list("samples", None, "durations", [])
    if samples and not durations(samples):
        f.bad("samples", f"must be durations in seconds, finite, 0 to {MAX_SECONDS:g}")
    validation = f.obj("validation", None, none=True)
    if validation is not None:
        v = Fields(validation, lambda: f"{f.where} validation")
        v.int("checked_bytes", 0), v.int("errors", 0)
    diags = f.list("diagnostics", lambda x: isinstance(x, dict) and is_text(x.get("code"))
                   and is_text(x.get("message")), "warnings with a code and a message", [])
    return dict(summary=Summary.from_dict(f.obj("summary"), lambda: f"{f.where} summary"), samples=samples,
                launch=f.int("launch", 0, none=True), warmup=f.int("warmup", None, none=True),
                batch=f.int("batch", None, none=True), stop=f.str("stop", None, none=True),
                elapsed_s=f.num("elapsed_s", None, none=True), validation=validation, diagnostics=diags)


def _phases(f: Fields) -> Optional[dict]:
    phases = f.obj("phases", None, none=True)
    if phases is None:
        return None
    for name, xs in phases.items():
        if not is_text(name) or not isinstance(xs, list) or (xs and not durations(xs)):
            f.bad("phases", "must map phase names to lists of durations in seconds")
    return dict(phases)


def _counters(f: Fields, n: int) -> Optional[list]:
    """The point's rank_counters: per rank null or {name: [n + 1 finite numbers]}."""
    rc = f.list("rank_counters", None, "per-rank counters", None, none=True)
    if rc is None:
        return None
    for q, c in enumerate(rc):
        if c is None:
            continue
        if not isinstance(c, dict):
            f.bad("rank_counters", f"rank {q} must be null or an object of counters")
        for name, xs in c.items():
            if not is_text(name) or not isinstance(xs, list) or len(xs) != n + 1 or not all(
                    type(x) in (int, float) and math.isfinite(x) for x in xs):
                f.bad("rank_counters", f"rank {q} counter {name!s:.40} must hold {n + 1} finite numbers "
                                       "(before the first sample and after each)")
    return list(rc)


def _rank_cpu(f: Fields) -> Optional[list]:
    """The point's rank_cpu: per rank {user_s, sys_s, wall_s}, seconds, each checked."""
    rc = f.list("rank_cpu", lambda x: isinstance(x, dict), "per-rank CPU use ({user_s, sys_s, wall_s})",
                None, none=True)
    for q, x in enumerate(rc or []):
        g = Fields(x, lambda: f"{f.where} rank_cpu[{q}]")
        g.num("user_s"), g.num("sys_s"), g.num("wall_s")
    return None if rc is None else [{k: x[k] for k in ("user_s", "sys_s", "wall_s")} for x in rc]


NOISE_METHODS = ("fwq", "detour")
MAX_NS = 10 ** 15            # 11.6 days in nanoseconds


def _noise(f: Fields) -> Optional[dict]:
    """A noise point's record (csrc/families/noise.c, docs/noise.md), checked whole: per
    rank its CPU and raw integer nanoseconds, every quantum (fwq) or every detour kept,
    its start and length (detour)."""
    n = f.obj("noise", None, none=True)
    if n is None:
        return None
    g = Fields(n, lambda: f"{f.where} noise")
    method = g.str("method", choices=NOISE_METHODS)
    if method == "fwq":
        g.int("work", lo=1, hi=1 << 40)
    elif not 1 <= g.num("threshold") <= 1e6:
        g.bad("threshold", "must be from 1 to 1e6")
    for r in g.list("ranks", lambda x: isinstance(x, dict), "rank records", []):
        q = Fields(r, lambda: f"{f.where} noise rank")
        q.int("rank", hi=MAX_RANKS), q.int("cpu", lo=-1, hi=MAX_RANKS)
        if method == "fwq":
            q.counts("quanta_ns", 0, MAX_NS, "nanoseconds", [])
            continue
        q.int("gap_min_ns", lo=1, hi=MAX_NS), q.int("loops", hi=1 << 62), q.int("span_ns", hi=MAX_NS)
        detours = q.int("detours", hi=1 << 62)
        starts = q.counts("start_ns", 0, MAX_NS, "nanoseconds", [])
        lengths = q.counts("length_ns", 0, MAX_NS, "nanoseconds", [])
        if len(starts) != len(lengths) or len(starts) > detours:
            q.bad("start_ns", "and length_ns must hold one entry per detour kept")
    return dict(n)


MAX_BUCKETS = 100_000


def _histogram(f: Fields) -> Optional[dict]:
    """The point's op_histogram (docs/schema.md), checked whole: its buckets' geometry,
    the timer's cost, and per rank a count, the extremes and sparse [bucket, count] pairs."""
    h = f.obj("op_histogram", None, none=True)
    if h is None:
        return None
    g = Fields(h, lambda: f"{f.where} op_histogram")
    base, err, nb = g.num("base_s"), g.num("error"), g.int("buckets", lo=1, hi=MAX_BUCKETS)
    g.num("timer_cost_s", None, none=True), g.int("ops_per_timing", 1, lo=1, hi=1 << 40)
    if not (0 < base < 1 and 0 < err < 1):
        g.bad("base_s", "and error must be fractions above 0")
    for r in g.list("ranks", lambda x: isinstance(x, dict), "rank histograms", []):
        q = Fields(r, lambda: f"{f.where} op_histogram rank")
        q.int("rank", hi=MAX_RANKS), q.int("n"), q.num("min_s"), q.num("max_s")
        pairs = q.list("buckets", lambda x: isinstance(x, list) and len(x) == 2 and all(is_count(v) for v in x)
                       and x[0] < nb, f"[bucket, count] pairs, buckets below {nb}", [])
        if len(pairs) > nb:
            q.bad("buckets", f"must hold at most {nb} pairs")
    return dict(h)


def _pattern_fields(f: Fields, d, bytes_per_op: int) -> dict:
    if d.get("roles") is None:
        return {}
    roles = f.str("roles")
    if not roles or len(roles) > MAX_RANKS or set(roles) - set(ROLE_NAMES):
        f.bad("roles", f"must be role letters ({''.join(ROLE_NAMES)}), one per rank")
    n = len(roles)

    def per_rank(key, lo, hi, what, none=False):
        """Integers lo..hi per rank, or (lo None) each rank's samples or null."""
        default = None if none else [0] * n
        v = (f.counts(key, lo, hi, what, default, none) if lo is not None else
             f.list(key, lambda x: x is None or durations(x), what, default, none))
        if v is not None and len(v) != n:
            raise RecordError(f"{f.where}: {key.replace('_', ' ')} do not match its roles ({len(v)} entries for "
                              f"{n} ranks)")
        return v

    ranks = f.list("ranks", lambda x: isinstance(x, dict), "rank figures", None, none=True)
    fair = f.obj("fairness", None, none=True)
    return dict(roles=roles, peers=per_rank("peers", -1, n - 1, "rank numbers"),
                rank_samples=per_rank("rank_samples", None, None, "lists of durations or null", none=True),
                rank_sent_bytes=per_rank("rank_sent_bytes", 0, MAX_BYTES, "byte counts"),
                rank_recv_bytes=per_rank("rank_recv_bytes", 0, MAX_BYTES, "byte counts"),
                messages_per_op=f.int("messages_per_op", None, none=True),
                ranks=None if ranks is None else [RankFigures.from_dict(r, lambda: f"{f.where} rank") for r in ranks],
                fairness=None if fair is None else Fairness.from_dict(fair, lambda: f"{f.where} fairness"))

