"""A cluster's figures over its runs: each series' steps (analysis/changepoints.py), message.shift's
pairs among them, what a step is attributed to, and the regressions `history check` fails on.

A pair's series is its time per byte (1 / bandwidth), so that a step's ratio reads as a point's
does: above 1, slower. Steps of one cluster within ONE_RUN runs of each other are one event: the
pairs that moved there name its cause, by the first rule that applies:
1. a cable or host that the runs' own pair matrices (verdicts/pair_matrix.py, kept as findings of
   test "pairs") name in most runs after the step and in few before it: the verdict already
   compares each run with the model of its network;
2. a cable that limits most of the moved pairs (the pairs table's `cable`, on a known network);
3. a host that sends or receives in most of the moved pairs.
A point's step (a collective, a ping-pong) in the same event takes the same cause.

A regression is a slower step that is the last of its series: the series still sits at the
slower level in its latest run."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Optional

from ..errors import UsageError
from . import queries

ONE_RUN = 1        # steps this many runs apart are one event (the method places a step within a run)
LAST = 1000        # the runs of a series searched for steps: nearly three years of nightly runs; the
                   # permutation test and the bootstrap cost O(runs) each draw (0.25 s at 1,000 runs,
                   # about 3 s at 10,000 on a 2-core VM), and older steps are the history the page draws
MOST = 0.5         # a cause: named in more than half the runs after the step, or in more than half the moved pairs
FEW = 0.2          # ... and named in at most a fifth of the runs before it


@dataclass(frozen=True)
class Step:
    series: str                 # the series key (ingest.series_key)
    title: str                  # as people read it
    change: "Change"            # analysis/changepoints.py's, loaded with the statistics (numpy) when used
    run_uid: str                # the first run after the step
    started_s: Optional[float]
    runs: int                   # runs in the series
    last: bool                  # the last step of its series: in effect in the latest run
    cause: Optional[str] = None  # the cable or host it is attributed to

    @property
    def slower(self) -> bool:
        return self.change.ratio > 1


def title(series: str) -> str:
    """A series key as people read it: 'coll.allreduce [algorithm=ring] 256K, 4 ranks'."""
    from ..units import fmt_bytes
    parts = series.split("|")
    if parts[0] == "pair" and len(parts) == 3:
        return f"pair {parts[2].replace('>', ' -> ')} at {fmt_bytes(int(parts[1]))}"
    if parts[0] == "impact" and len(parts) == 4:
        return f"impact of {parts[2]} on {parts[1]} at {fmt_bytes(int(parts[3]))}"
    if len(parts) != 7:
        return series
    bench, variant, size, stride, conns, active, params = parts
    out = bench + (f" [{variant}]" if variant else "") + f" {fmt_bytes(int(size))}"
    out += (f", stride {stride}" if stride != "1" else "") + (f", {conns} connections" if conns != "1" else "")
    # the params are left out: the variant names those that differ from the benchmark's defaults
    taking = f", step {active}" if bench == "message.shift" else f", {active} ranks"   # shift's k: r sends to r + k
    out += taking if active else ""
    return out


def _steps(key: str, points: list, factor: float, alpha: float, last: int = LAST) -> list[Step]:
    """The steps of one series among its last `last` runs (0: all), indexed in the whole series."""
    from ..analysis.changepoints import changes
    offset = max(len(points) - last, 0) if last else 0
    window = points[offset:]
    medians = [p.median for p in window]
    if len(medians) < 2 or not all(math.isfinite(m) and m > 0 for m in medians):
        return []
    try:
        found = changes(medians, launch_medians=[list(p.launch_medians) for p in window], factor=factor,
                        alpha=alpha)
    except ValueError as e:
        raise UsageError(f"series {key}: {e}") from None
    found = [replace(c, index=c.index + offset) for c in found]
    return [Step(key, title(key), c, points[c.index].run_uid, points[c.index].started_s, len(points),
                 i == len(found) - 1) for i, c in enumerate(found)]


def point_steps(store, cluster: str, bench: Optional[str] = None, factor: float = 1.05,
                alpha: float = 0.01, last: int = LAST) -> list[Step]:
    """The steps of every point series of the cluster (one benchmark's with bench)."""
    out = []
    for key in queries.series_keys(store, bench=bench, cluster=cluster):
        out += _steps(key, queries.series(store, key, cluster=cluster, last=last), factor, alpha, last)
    return out


def pair_steps(store, cluster: str, factor: float = 1.05, alpha: float = 0.01,
               last: int = LAST) -> tuple[list[Step], dict]:
    """The steps of message.shift's pairs (time per byte), and {series key: the pair's cables}."""
    sizes = [s for (s,) in store.query("SELECT DISTINCT q.size FROM pairs q JOIN runs r ON r.id = q.run_id "
                                       "WHERE r.cluster = ? ORDER BY q.size", (cluster,))]
    out, cables = [], {}
    for size in sizes:
        by_pair: dict = {}
        for row in queries.pairs_series(store, cluster, size):
            if row.bandwidth > 0:
                key = f"pair|{size}|{row.src_host or 'rank %d' % row.src}>{row.dst_host or 'rank %d' % row.dst}"
                by_pair.setdefault(key, []).append(
                    queries.SeriesPoint(row.run_uid, row.started_s, 1.0 / row.bandwidth, None, None, [], "s/B"))
                if row.cable:
                    cables.setdefault(key, set()).update(row.cable.split(","))
        for key, points in by_pair.items():
            out += _steps(key, points, factor, alpha, last)
    return out, cables


def _named(store, cluster: str) -> list[tuple[str, set]]:
    """(run uid, the cables and hosts its pair matrices name) for the cluster's runs with pairs, in time order."""
    rows = store.query(f"SELECT r.uid, {queries.WHEN}, f.cable, f.host FROM runs r LEFT JOIN findings f ON f.run_id = r.id "
                       f"AND f.test = 'pairs' WHERE r.cluster = ? AND EXISTS (SELECT 1 FROM pairs q "
                       f"WHERE q.run_id = r.id) ORDER BY {queries.WHEN}, r.id", (cluster,))
    out: dict = {}
    for uid, when, cable, host in rows:
        names = out.setdefault((uid, when), set())
        if cable:
            names.add(_cable_name(cable))
        if host:
            names.add(f"host {host}")
    return [(uid, when, names) for (uid, when), names in out.items()]


def _cable_name(label: str) -> str:
    """'link trunk (s0→s1)' -> 'link trunk': a cable, either direction."""
    return label.split(" (")[0]


def _cause(at: str, moved: list[Step], named: list, cables: dict) -> Optional[str]:
    """What the pairs that moved at run `at` name (the module's three rules), or None."""
    uids = [u for u, _, _ in named]
    if at in uids:
        k = uids.index(at)
        before, after = named[:k], named[k:]
        counts_after = Counter(n for _, _, names in after for n in names)
        counts_before = Counter(n for _, _, names in before for n in names)
        found = [n for n, c in counts_after.most_common() if c > MOST * len(after)
                 and counts_before[n] <= FEW * max(len(before), 1)]
        if found:
            return ", ".join(sorted(found))
    limiting = Counter(_cable_name(c) for s in moved for c in cables.get(s.series, ()))
    if limiting:
        cable, n = limiting.most_common(1)[0]
        if n > MOST * len(moved):
            return cable
    hosts = Counter(h for s in moved for h in set(s.series.split("|", 2)[2].split(">")))
    if hosts:
        host, n = hosts.most_common(1)[0]
        if n > MOST * len(moved):
            return f"host {host}"
    return None


def steps(store, cluster: str, bench: Optional[str] = None, factor: float = 1.05, alpha: float = 0.01,
          pairs: bool = True, last: int = LAST) -> list[Step]:
    """Every step of the cluster's series (pairs too unless pairs=False), each with its cause where
    the pairs that moved with it name one; in time order, pairs last within an event."""
    points = point_steps(store, cluster, bench, factor, alpha, last)
    moved, cables = pair_steps(store, cluster, factor, alpha, last) if pairs else ([], {})
    named = _named(store, cluster) if moved else []
    order = {uid: i for i, (uid, _, _) in enumerate(named)}
    events: dict = {}
    for s in moved:                            # the pairs' steps grouped by run, a run's neighbours joined
        i = order.get(s.run_uid)
        near = next((j for j in events if i is not None and abs(j - i) <= ONE_RUN), i)
        events.setdefault(near, []).append(s)
    causes = {}
    for i, group in events.items():
        at = Counter(s.run_uid for s in group).most_common(1)[0][0]
        causes[i] = _cause(at, group, named, cables)
    def caused(s: Step) -> Step:
        i = order.get(s.run_uid)
        if i is None:       # a point's run without pairs (a check's other tests): the pairs' run nearest in time
            i = _nearest(s, named)
        j = next((j for j in causes if i is not None and j is not None and abs(j - i) <= ONE_RUN), None)
        return replace(s, cause=causes.get(j)) if j is not None else s

    out = [caused(s) for s in points] + [caused(s) for s in moved]
    return sorted(out, key=lambda s: (s.started_s or 0, s.series.startswith("pair|"), s.series))


def _nearest(s: Step, named: list) -> Optional[int]:
    """The index of the run with pairs started nearest to the step's run (None: no time known)."""
    if s.started_s is None or not named:
        return None
    return min(range(len(named)), key=lambda i: abs((named[i][1] or 0) - s.started_s))


def regressions(found: list[Step], factor: float) -> list[Step]:
    """The slower steps still in effect: the last step of each series, above the factor."""
    return [s for s in found if s.last and s.change.ratio > factor]
