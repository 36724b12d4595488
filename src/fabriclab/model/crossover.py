"""Crossover points: which system is best at which size, said in words.

Families exist at different sizes (an r-ary f-cube only at N = r^f, a switched
network at any N). Between two sizes at which a family can be built its value
is interpolated linearly, as a reader of the seed's figures does; every
statement says whether it rests on such interpolation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


TIE = 1e-3      # values within 0.1% count as equal


@dataclass
class Segment:
    label: str
    first: int
    last: int
    interpolated: bool      # the leader or a rival was interpolated somewhere in the segment


def values_on(curve, ns, attr: str = "per_node", lower_better: bool = False) -> tuple:
    """(values, exact mask) of a curve on the sizes ns; NaN outside its range."""
    xs = np.array([p.n for p in curve.points], float)
    ys = np.array([getattr(p, attr) if getattr(p, attr) is not None else np.nan for p in curve.points], float)
    ns = np.asarray(ns, float)
    out = np.full(len(ns), np.nan)
    exact = np.zeros(len(ns), bool)
    ok = np.isfinite(ys)
    xs, ys = xs[ok], ys[ok]
    if not len(xs):
        return out, exact
    inside = (ns >= xs.min()) & (ns <= xs.max())
    out[inside] = np.interp(ns[inside], xs, ys)
    exact = np.isin(ns, xs)
    return out, exact


def segments(curves, attr: str = "per_node", lower_better: bool = False,
             ns: Optional[list] = None) -> list:
    """Maximal runs of sizes with the same best curve."""
    if ns is None:
        ns = sorted({p.n for c in curves for p in c.points})
    if not ns:
        return []
    vals, exact = zip(*(values_on(c, ns, attr) for c in curves))
    V = np.array(vals)
    E = np.array(exact)
    if lower_better:
        V = -V
    out = []
    for i, n in enumerate(ns):
        col = V[:, i]
        if np.all(np.isnan(col)):
            continue
        top = np.nanmax(col)
        lead = [k for k in range(len(curves)) if np.isfinite(col[k]) and col[k] >= top - abs(top) * TIE]
        contenders = np.isfinite(col)
        interp = not bool(np.all(E[contenders, i]))
        label = " = ".join(curves[k].label for k in lead) + (" (equal)" if len(lead) > 1 else "")
        if out and out[-1].label == label and out[-1].last == ns[i - 1]:
            out[-1].last = n
            out[-1].interpolated |= interp
        else:
            out.append(Segment(label, n, n, interp))
    return out


def sentence(segs: list, unit_noun: str = "nodes") -> str:
    """'A best up to 4 nodes, then B up to 9 nodes, then C (to 128 nodes).'"""
    if not segs:
        return "no system has a configuration in this range"
    if len(segs) == 1:
        s = segs[0]
        if s.first == s.last:
            return f"{s.label} best at {s.first} {unit_noun}"
        return f"{s.label} best at every size from {s.first} to {s.last} {unit_noun}"
    parts = [f"{segs[0].label} best up to {segs[0].last} {unit_noun}"]
    for s in segs[1:-1]:
        parts.append(f"then {s.label} up to {s.last} {unit_noun}")
    last = segs[-1]
    parts.append(f"then {last.label} (from {last.first} to {last.last} {unit_noun})")
    text = ", ".join(parts)
    if any(s.interpolated for s in segs):
        text += "; between the sizes at which a family can be built its curve is interpolated"
    return text


@dataclass
class Switch:
    n: int              # first size at which `winner` leads
    winner: str
    loser: str
    winner_value: float
    loser_value: float
    interpolated: bool


def pairwise(a, b, attr: str = "per_node", lower_better: bool = False) -> list:
    """Sizes at which the lead passes between curves a and b (on their common range)."""
    ns = sorted({p.n for p in a.points} | {p.n for p in b.points})
    va, ea = values_on(a, ns, attr)
    vb, eb = values_on(b, ns, attr)
    out, lead = [], None
    for i, n in enumerate(ns):
        if not (np.isfinite(va[i]) and np.isfinite(vb[i])):
            continue
        x, y = (va[i], vb[i]) if not lower_better else (-va[i], -vb[i])
        if abs(x - y) <= abs(max(x, y)) * TIE:
            continue
        now = "a" if x > y else "b"
        if lead is not None and now != lead:
            w, l = (a, b) if now == "a" else (b, a)
            wv, lv = (va[i], vb[i]) if now == "a" else (vb[i], va[i])
            out.append(Switch(n, w.label, l.label, wv, lv, not (ea[i] and eb[i])))
        lead = now
    return out
