"""Kernel counters (docs/core-protocol.md, "counters"): a point's
`rank_counters` hold, per rank, each counter's raw value before the first
sample and after each (n samples, n + 1 values); the core reports only those.
A counter's kind, from the registry (suite/benchmarks.py `counters`), says
what a sample's figure is: "sum", a count kept since setup, gives its growth
over the sample, v[i+1] - v[i]; "level", a current value (a jitter estimate),
gives its value after the sample, v[i+1]. A counter named "base.K" (stream
K) takes the kind of "base". Over a point's launches the per-sample figures
are pooled, in launch order, as the launches' samples are."""

from __future__ import annotations

KINDS = ("sum", "level")


def base_name(name: str) -> str:
    """The counter's name without its ".K" stream suffix ("received.1" -> "received")."""
    head, dot, tail = name.rpartition(".")
    return head if dot and tail.isdigit() else name


def kind_of(name: str, kinds: dict) -> str:
    """The kind of counter `name` in the registry's `kinds`; ValueError if it has none."""
    k = kinds.get(name, kinds.get(base_name(name)))
    if k not in KINDS:
        raise ValueError(f"counter {name!r} has no kind among {KINDS} (registry: {sorted(kinds)})")
    return k


def per_sample(values: list, kind: str) -> list:
    """A counter's figure per sample from its n + 1 raw values."""
    if kind == "sum":
        return [b - a for a, b in zip(values, values[1:])]
    return list(values[1:])


def total(values: list, kind: str):
    """A counter's figure over the whole point: its growth over every sample
    ("sum"), or its value after the last ("level"); None without samples."""
    if len(values) < 2:
        return None
    return values[-1] - values[0] if kind == "sum" else values[-1]


def rank_samples(rank_counters: list | None, kinds: dict) -> list:
    """Per rank, None or {name: [figure per sample]} of one launch's point."""
    return [None if c is None else {name: per_sample(xs, kind_of(name, kinds)) for name, xs in c.items()}
            for c in rank_counters or []]


def rank_totals(rank_counters: list | None, kinds: dict) -> list:
    """Per rank, None or {name: figure over the point} of one launch's point."""
    return [None if c is None else {name: total(xs, kind_of(name, kinds)) for name, xs in c.items()}
            for c in rank_counters or []]


def pooled(points, kinds: dict) -> list:
    """Per rank, None or {name: [figure per sample]} over the launches of one
    point (`points`: its launch records, records.Point), in launch order: "sum"
    figures of all launches' samples, "level" figures likewise (each launch's
    own level after each of its samples)."""
    out: list = []
    for p in points:
        for q, c in enumerate(rank_samples(p.rank_counters, kinds)):
            if q == len(out):
                out.append(None)
            if c is None:
                continue
            have = out[q] if out[q] is not None else {}
            for name, xs in c.items():
                have.setdefault(name, []).extend(xs)
            out[q] = have
    return out


def launch_totals(points, kinds: dict) -> list:
    """Per rank, None or {name: [figure over the point, one per launch]}."""
    out: list = []
    for p in points:
        for q, c in enumerate(rank_totals(p.rank_counters, kinds)):
            if q == len(out):
                out.append(None)
            if c is None:
                continue
            have = out[q] if out[q] is not None else {}
            for name, x in c.items():
                have.setdefault(name, []).append(x)
            out[q] = have
    return out


def by_key(points) -> dict:
    """The launch records that carry counters, grouped by point key (records.Point.key), in order."""
    groups: dict = {}
    for p in points:
        if p.rank_counters:
            groups.setdefault(p.key, []).append(p)
    return groups
