"""One view of a point measured in several launches.

A run stores one point record per launch (each with its own samples and
summary, streamed as it completes). Readers want one figure per point: its
merged record (schema.records.MergedPoint) has the launches' samples pooled,
what each launch gave (median, n, stop reason), the within- and
between-launch spread, and a median with a 95% interval from the two-level
bootstrap of analysis/launches.py, so that the interval covers
launch-to-launch variation (docs/statistics.md). A point measured once
merges to itself, with one launch.

An imported point (another tool's figure, no samples) has nothing to
bootstrap: it merges to itself, its spread and interval unknown (None); one
printed twice (outputs concatenated) takes the median of its figures.

A merged point's warnings are judged against the whole run
(analysis/findings.py): what most points share becomes one finding of the
run (`findings`), and a point keeps what is particular to it."""

from __future__ import annotations

import statistics
from dataclasses import fields

from ..schema.records import MergedPoint, Point
from ..schema.summaries import LaunchSummary, Spread, Summary
from . import cpu, diagnostics, findings, ranks

# What a merged point takes from its first launch's record as it is; the
# rest differs from launch to launch and is recomputed.
SHARED = ("bench", "variant", "size", "stride", "conns", "active", "bytes_per_op", "legs_per_op", "concurrent",
          "params", "cache", "buffers", "working_set_bytes", "rank_alloc_bytes", "info", "imported", "roles",
          "peers", "rank_sent_bytes", "rank_recv_bytes", "messages_per_op", "extra")
assert set(SHARED) <= {f.name for f in fields(Point)}


def _shared(p: Point) -> dict:
    return {k: getattr(p, k) for k in SHARED}


def _validation(ps: list[Point]):
    vals = [p.validation for p in ps]
    if all(v is None for v in vals):
        return None
    return {"checked_bytes": sum((v or {}).get("checked_bytes", 0) for v in vals),
            "errors": sum((v or {}).get("errors", 0) for v in vals)}


def _rank_samples(ps: list[Point]) -> list:
    """Each rank's samples over all launches (None for a rank that timed nothing)."""
    per = [p.rank_samples for p in ps]
    out = []
    for q in range(len(per[0])):
        pooled = [x for launch in per if launch[q] for x in launch[q]]
        out.append(pooled or None)
    return out


def _launches(ps: list[Point], stop: str | None = None) -> list[LaunchSummary]:
    return [LaunchSummary(p.launch or 0, p.summary.median, p.summary.n, stop or p.stop) for p in ps]


def merge_imported(ps: list[Point]) -> MergedPoint:
    """The merged record of an imported point: its figure, no interval."""
    med = statistics.median(p.summary.median for p in ps)
    ns = [p.summary.n for p in ps]
    means = [p.summary.mean for p in ps]
    summ = Summary(median=med, n=sum(ns) if None not in ns else None, confidence=None,
                   mean=statistics.fmean(means) if None not in means else None)
    return MergedPoint(**_shared(ps[0]), summary=summ, launch=None, stop="imported", launches=_launches(ps, "imported"),
                       spread=Spread())


def merge(ps: list[Point], hosts: list | None = None) -> MergedPoint:
    """The merged record of one point's launches (ps: its per-launch records)."""
    if any(p.is_imported for p in ps):
        return merge_imported(ps)
    from . import launches, stats  # numpy: only when a merge is computed, not read back
    sets = [p.samples for p in ps]
    pooled = [x for s in sets for x in s]
    med, lo, hi = launches.hierarchical_ci(sets)
    summ = stats.summarize(pooled).replace(median=med, ci_low=lo, ci_high=hi,
                                           ci_rel=(hi - lo) / 2 / med if med > 0 else None)
    m = MergedPoint(**_shared(ps[0]), summary=summ, launch=None, samples=pooled, launches=_launches(ps),
                    spread=Spread(**launches.spread(sets)), batch=ps[0].batch, validation=_validation(ps),
                    stop=ps[0].stop if len({p.stop for p in ps}) == 1 else "mixed")
    if any(p.phases for p in ps):
        m.phases = {k: [x for p in ps for x in (p.phases or {}).get(k, [])] for k in ps[0].phases or {}}
    m.rank_cpu = cpu.merged(ps)
    if ps[0].is_pattern:
        m.rank_samples = _rank_samples(ps)
        ranks.summarize_point(m, hosts)
    # Every launch's warnings, one entry per launch: findings.classify counts them.
    m.diagnostics = [d for p in ps for d in p.diagnostics]
    if launches.unstable(sets):
        d = diagnostics.unstable_across_launches(m.spread.to_dict(), len(sets))
        m.diagnostics.append({**d.to_dict(), "bench": m.bench, "size": m.size, "stride": m.stride})
    return m


def analyse(doc, stored: list | None = None) -> tuple[list[MergedPoint], dict]:
    """(every point of a document, its launches merged, in the order first
    measured; the run's findings, findings.classify), which `analysed` keeps
    on the document (schema/document.py).

    `stored`: the merged points a finished run stored, read back instead of
    merged again; a document of schema version 9 or older stored them with
    every launch's warnings, so they are classified here all the same."""
    hosts = doc.header.hosts
    pts = stored if stored is not None else [merge(ps, hosts) for ps in doc.groups().values()]
    target = (doc.header.plan.get("sampling") or {}).get("target_ci")
    return pts, findings.classify(pts, _outlier_share(doc), _steal(doc),
                                  target if isinstance(target, (int, float)) and target > 0 else findings.TARGET_CI)


def analysed(doc) -> tuple[list[MergedPoint], dict]:
    """A document's merged points and findings (`analyse`), computed once and
    kept on it (`doc.analysed`) for every later reader; what a finished run
    stored is read back."""
    if doc.analysed is None:
        doc.analysed = analyse(doc, doc.stored_merged)
    return doc.analysed


def merged(doc) -> list[MergedPoint]:
    """Every point of a document with its launches merged, in the order first measured."""
    return analysed(doc)[0]


def run_findings(doc) -> dict:
    """The run's findings (findings.py): what most points share, said once."""
    return analysed(doc)[1]


def write(doc, path) -> None:
    """RUN.json with its merged points and findings, so readers need not compute
    them; with the records alone where they cannot be merged (the records are
    what counts: readers derive again, and say what is wrong)."""
    try:
        analysed(doc)
    except (ValueError, KeyError, TypeError):
        pass
    doc.write(path)


def _outlier_share(doc):
    """Outlier samples over all samples of the run's launches (each launch's own summary)."""
    n = out = 0
    for p in doc.points:
        if p.summary.n is not None and p.summary.outliers is not None:
            n, out = n + p.summary.n, out + p.summary.outliers
    return out / n if n else None


def _steal(doc) -> list:
    """The steal fraction of every launch that recorded one (launch_end noise)."""
    return [e.steal_fraction for e in doc.launch_ends if e.steal_fraction is not None]
