"""One view of a point measured in several launches.

A run stores one point record per launch (each with its own samples and
summary, streamed as it completes). Readers want one figure per point: its
merged record has the launches' samples pooled, a `launches` block (per
launch: median, n, stop reason), the within- and between-launch spread, and
a median with a 95% interval from the two-level bootstrap of
analysis/launches.py, so that the interval covers launch-to-launch variation
(docs/statistics.md). A point measured once merges to itself, with a
one-entry `launches` block.

An imported point (another tool's figure, no samples) has nothing to
bootstrap: it merges to itself, its spread and interval unknown (None); one
printed twice (outputs concatenated) takes the median of its figures."""

from __future__ import annotations

import statistics

from ..schema import SUMMARY_KEYS, imported, point_key, points
from . import diagnostics, ranks

# Fields that differ from launch to launch; the merged record recomputes them.
PER_LAUNCH = ("samples", "summary", "rank_samples", "launch", "elapsed_s", "stop", "warmup", "batch",
              "validation", "diagnostics", "ranks", "fairness", "aggregate_bandwidth_Bps", "message_rate_per_s",
              "latency_s", "bandwidth_Bps")


def groups(doc: dict) -> dict:
    """Point records by key (benchmark, variant, axes), each in launch order;
    the keys in the order the benchmarks first ran, then by their axes (a
    launch may have run the sizes shuffled)."""
    out: dict = {}
    first: dict = {}
    for p in points(doc):
        key = point_key(p)
        out.setdefault(key, []).append(p)
        first.setdefault(key[:2], len(first))
    for ps in out.values():
        ps.sort(key=lambda p: p.get("launch", 0))
    order = sorted(out, key=lambda k: (first[k[:2]], k[5] is not None, k[5] or 0, k[4], k[3], k[2]))
    return {k: out[k] for k in order}


def _validation(ps: list[dict]):
    vals = [p.get("validation") for p in ps]
    if all(v is None for v in vals):
        return None
    return {"checked_bytes": sum((v or {}).get("checked_bytes", 0) for v in vals),
            "errors": sum((v or {}).get("errors", 0) for v in vals)}


def _rank_samples(ps: list[dict]) -> list:
    """Each rank's samples over all launches (None for a rank that timed nothing)."""
    per = [p["rank_samples"] for p in ps]
    out = []
    for q in range(len(per[0])):
        pooled = [x for launch in per if launch[q] for x in launch[q]]
        out.append(pooled or None)
    return out


def merge_imported(ps: list[dict]) -> dict:
    """The merged record of an imported point: its figure, no interval."""
    m = {k: v for k, v in ps[0].items() if k not in PER_LAUNCH}
    meds = [p["summary"]["median"] for p in ps]
    ns = [p["summary"]["n"] for p in ps]
    med = statistics.median(meds)
    summ = dict.fromkeys(SUMMARY_KEYS)
    summ.update(n=sum(ns) if None not in ns else None, median=med,
                mean=statistics.fmean(p["summary"]["mean"] for p in ps))
    m.update(samples=[], summary=summ, stop="imported", batch=None, validation=None, diagnostics=[],
             launches=[{"launch": p.get("launch", 0), "median": p["summary"]["median"], "n": p["summary"]["n"],
                        "stop": "imported"} for p in ps],
             spread={"within_rel": None, "between_rel": None, "max_min_ratio": None, "launch_medians": None},
             latency_s=med if m.get("concurrent") else med / max(1, m.get("legs_per_op", 1)),
             bandwidth_Bps=m["bytes_per_op"] / med if med > 0 and m["bytes_per_op"] > 0 else None)
    return m


def merge(ps: list[dict], hosts: list | None = None) -> dict:
    """The merged record of one point's launches (ps: its per-launch records)."""
    if any(imported(p) for p in ps):
        return merge_imported(ps)
    from . import launches, stats  # numpy: only when a merge is computed, not read back
    m = {k: v for k, v in ps[0].items() if k not in PER_LAUNCH}
    sets = [p["samples"] for p in ps]
    pooled = [x for s in sets for x in s]
    summ = stats.summarize(pooled).to_dict()
    med, lo, hi = launches.hierarchical_ci(sets)
    summ.update(median=med, ci_low=lo, ci_high=hi, ci_rel=(hi - lo) / 2 / med if med > 0 else None)
    m["samples"] = pooled
    m["summary"] = summ
    m["launches"] = [{"launch": p.get("launch", 0), "median": p["summary"]["median"], "n": p["summary"]["n"],
                      "stop": p.get("stop")} for p in ps]
    m["spread"] = launches.spread(sets)
    m["stop"] = ps[0].get("stop") if len({p.get("stop") for p in ps}) == 1 else "mixed"
    m["batch"] = ps[0].get("batch")
    m["validation"] = _validation(ps)
    legs = max(1, m.get("legs_per_op", 1))
    m["latency_s"] = med if m.get("concurrent") else med / legs
    m["bandwidth_Bps"] = m["bytes_per_op"] / med if med > 0 else None
    if "rank_samples" in ps[0]:
        m["rank_samples"] = _rank_samples(ps)
        ranks.summarize_point(m, hosts)
    diags = {(d["code"], d["message"]): d for p in ps for d in p.get("diagnostics", [])}
    if launches.unstable(sets):
        d = diagnostics.unstable_across_launches(m["spread"], len(sets))
        where = dict(bench=m["bench"], size=m["size"], stride=m["stride"])
        diags[(d.code, d.message)] = {**d.to_dict(), **where}
    m["diagnostics"] = list(diags.values())
    return m


def merged(doc: dict) -> list[dict]:
    """Every point of a run, its launches merged, in the order first measured.

    A finished run stores them in its document (`merged`, see stored()), so
    reading it costs nothing; a stream is merged when read."""
    if isinstance(doc.get("merged"), list):
        return doc["merged"]
    hosts = doc.get("header", {}).get("hosts")
    return [merge(ps, hosts) for ps in groups(doc).values()]


# Bulky fields the stored merged points leave out: the records keep them.
NOT_STORED = ("samples", "rank_samples")


def stored(doc: dict) -> dict:
    """What a run stores beside its records: its merged points, without the
    pooled samples (StreamWriter.close's derive)."""
    return {"merged": [{k: v for k, v in m.items() if k not in NOT_STORED} for m in merged(doc)]}
