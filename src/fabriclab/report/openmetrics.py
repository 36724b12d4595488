"""`fabriclab history export`: the latest figures and verdicts of a cluster in the
OpenMetrics 1.0 text format, for Prometheus (as a scraped file) or the node
exporter's textfile collector (whose parser reads `# UNIT` and `# EOF` as comments).

From plain data (the inputs below; the store's command fills them). Every family is
a gauge, written once, its samples in a fixed order, no timestamps (the textfile
collector refuses them: a run's time is a metric of its own). Label values are
escaped as the format says (OpenMetrics 1.0, ABNF `escaped-string`: backslash,
double quote and line feed as \\\\, \\" and \\n); a value that is missing or not a
number is left out, never written NaN."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

PREFIX = "fabriclab_"


@dataclass(frozen=True)
class Key:
    """A point series' labels: the fields of the store's series key."""
    bench: str
    variant: str = ""
    size: int = 0
    stride: int = 1
    conns: int = 1
    active: Optional[int] = None         # None: all ranks (label value "")
    params: str = ""                     # sorted k=v;k=v


@dataclass(frozen=True)
class Latest:
    """A series' most recent point: seconds per op with its 95% interval."""
    key: Key
    median: float
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    started_s: Optional[float] = None    # its run's start, epoch seconds
    kind: str = "run"                    # its run's kind: run, congestion, tune, import
    unit: str = "s"                      # only seconds per op are exported


@dataclass(frozen=True)
class CheckResult:
    """One test of the latest `fabriclab check` run."""
    test: str
    passed: bool
    started_s: Optional[float] = None    # the check run's start


@dataclass(frozen=True)
class Regression:
    """A failing item of `fabriclab history check`, with the change it found."""
    item: str                            # what failed, as the check names it (a series key, a pair)
    key: Optional[Key] = None            # the point series, when the item is one
    ratio: Optional[float] = None        # after/before medians; None: no change to give
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    run: str = ""                        # the first run after the step


# Each family: (name without the prefix, unit, help). Units are the format's base units,
# and a family with a unit ends in it (OpenMetrics 1.0, "Unit").
FAMILIES = (
    ("point_seconds", "seconds", "Time per operation of the latest run of each series: its median and the ends "
                                 "of its 95% interval (stat)."),
    ("run_timestamp_seconds", "seconds", "Start of the latest run of each kind exported, Unix epoch seconds."),
    ("check_passed", "", "1 if the test passed in the latest check run, else 0."),
    ("change_ratio", "ratio", "A regression the history check found: median after over median before the "
                              "step, with the ends of its 95% interval (stat)."),
    ("regression", "", "1 for each item the history check fails."),
)


def escape_label(value) -> str:
    """A label value as the format writes it; text that is no valid UTF-8 (a lone surrogate
    a JSON document may carry) becomes '?'."""
    s = str(value).encode("utf-8", "replace").decode("utf-8")
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(v: float) -> str:
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if isinstance(v, float) else str(int(v))


def _ok(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _labels(pairs) -> str:
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in pairs) + "}"


def _key_labels(key: Key) -> list:
    return [("bench", key.bench), ("variant", key.variant), ("size", key.size), ("stride", key.stride),
            ("conns", key.conns), ("active", "" if key.active is None else key.active), ("params", key.params)]


def _points(latest, cluster: str) -> tuple[dict, dict]:
    """(samples, latest start per kind): three samples a series (stat), the latest point of
    each series where one is given twice."""
    newest: dict = {}
    for p in latest:
        if p.unit == "s" and (p.key not in newest or (p.started_s or 0) >= (newest[p.key].started_s or 0)):
            newest[p.key] = p
    samples, starts = {}, {}
    for key, p in newest.items():
        for stat in ("median", "ci_low", "ci_high"):
            v = getattr(p, stat)
            if _ok(v):
                samples[tuple([("cluster", cluster)] + _key_labels(key) + [("stat", stat)])] = v
        if _ok(p.started_s):
            starts[p.kind] = max(starts.get(p.kind, p.started_s), p.started_s)
    return samples, starts


def _verdicts(verdicts, cluster: str) -> tuple[dict, dict, dict, float | None]:
    """(check samples, change samples, regression samples, latest check start)."""
    checks, changes, regressions, started, newest = {}, {}, {}, None, {}
    for v in verdicts:
        if isinstance(v, CheckResult):
            if v.test not in newest or (v.started_s or 0) >= (newest[v.test].started_s or 0):
                newest[v.test] = v
        elif isinstance(v, Regression):
            where = [("cluster", cluster), ("item", v.item)] + (_key_labels(v.key) if v.key else [])
            regressions[tuple(where)] = 1
            for stat, x in (("ratio", v.ratio), ("ci_low", v.ci_low), ("ci_high", v.ci_high)):
                if _ok(v.ratio) and _ok(x):
                    changes[tuple(where + [("run", v.run), ("stat", stat)])] = x
        else:
            raise TypeError(f"not a verdict: {type(v).__name__}")
    for test, v in newest.items():
        checks[(("cluster", cluster), ("test", test))] = 1 if v.passed else 0
        started = v.started_s if _ok(v.started_s) and (started is None or v.started_s > started) else started
    return checks, changes, regressions, started


def exposition(latest, verdicts, cluster: str) -> str:
    """The text to serve or to leave in the textfile collector's directory. latest: Latest
    points; verdicts: CheckResult and Regression items; cluster: the `cluster` label of all."""
    points, starts = _points(latest, cluster)
    checks, changes, regressions, check_start = _verdicts(verdicts, cluster)
    if check_start is not None:
        starts["check"] = max(starts.get("check", check_start), check_start)
    runs = {(("cluster", cluster), ("kind", kind)): t for kind, t in starts.items()}
    out = []
    for (name, unit, text), samples in zip(FAMILIES, (points, runs, checks, changes, regressions)):
        if not samples:
            continue
        full = PREFIX + name
        out += [f"# TYPE {full} gauge"] + ([f"# UNIT {full} {unit}"] if unit else [])
        out.append(f"# HELP {full} {escape_label(text)}")
        out += [f"{full}{_labels(labels)} {_number(v)}" for labels, v in sorted(samples.items(), key=_order)]
    return "\n".join(out + ["# EOF"]) + "\n"


def _order(item) -> tuple:
    """Samples of one series together (the format's grouping), series sorted by their labels."""
    return tuple((k, str(v)) for k, v in item[0])
