"""Congestion impact judged (GPCNeT: Chunduri et al., SC'19; who is a victim, who an
aggressor and the victims' ring are suite/congestion.py's).

- The impact factor is congested over isolated time per op (GPCNeT's
  congestion impact factor; above 1: the victims are slower), for the
  median and the 99th percentile of the samples (the slowest victim's
  time per op, per sample), each with compare's two-level bootstrap
  interval over every launch of every draw (analysis/launches.py
  ratio_ci); the draws' own median ratios give their spread.
- On a known network (the run's testbed or `--network`) the model routes
  the victims' flows alone and beside the aggressors' and gives each its
  max-min share (model/schedule_time.py Network.rates): the predicted
  bandwidth impact factor is the slowest victim flow's rate alone over its
  rate beside them (a victim's op ends with its slowest flow), and the
  cables that its flows share with aggressor flows are named."""

from __future__ import annotations

# numpy is imported where it is used

import math
from dataclasses import dataclass, field
from typing import Optional

from ..suite.congestion import BENCHES, P_TAIL, test_name


def flows(roles: str, peers: list, aggressor: str) -> tuple[list, list]:
    """([(src, dst)] of the victims: each to its successor and its
    predecessor; [(src, dst)] of the aggressors' load)."""
    vic = [r for r, x in enumerate(roles) if x == "v"]
    pred = {peers[r]: r for r in vic}
    victim = [(r, peers[r]) for r in vic] + [(r, pred[r]) for r in vic]
    agg = [r for r, x in enumerate(roles) if x not in "vi"]
    hot = next((r for r in agg if peers[r] < 0), None)
    if aggressor == "alltoall":
        load = [(a, b) for a in agg for b in agg if a != b]
    elif aggressor == "get_bcast":
        load = [(hot, a) for a in agg if a != hot]
    elif aggressor == "put_incast":
        load = [(a, hot) for a in agg if a != hot]
    else:                     # a pattern's: each sender (s, b) to its peer
        load = [(r, peers[r]) for r in agg if roles[r] in "sb"]
    return victim, load


@dataclass
class Prediction:
    isolated_Bps: float          # the slowest victim flow alone
    congested_Bps: float         # ... beside the aggressors' flows
    bottleneck: str              # the cable that limits it beside them
    shared: list                 # cables its victims' flows share with aggressor flows

    @property
    def impact(self) -> float:
        return self.isolated_Bps / self.congested_Bps if self.congested_Bps > 0 else math.inf

    def to_dict(self) -> dict:
        return {"isolated_Bps": self.isolated_Bps, "congested_Bps": self.congested_Bps,
                "impact": self.impact, "bottleneck": self.bottleneck, "shared": self.shared}


def predict(net, where, roles: str, peers: list, aggressor: str) -> Optional[Prediction]:
    """The model's bandwidth impact of the congested layout (roles, peers);
    None when no victim flow leaves its host. A flow is an ordered pair of
    ranks, one connection: where a victim's successor is also its
    predecessor (two victims), its two windows to it are one flow, for a
    fabric arbitrates between connections (queue pairs; on the testbed a
    queue per pair of hosts, docs/testbed.md) and not between the messages
    queued on one; a victim's op ends with its slowest flow."""
    import numpy as np
    victim, load = flows(roles, peers, aggressor)
    victim = list(dict.fromkeys((s, d) for s, d in victim if where[s] != where[d]))
    load = list(dict.fromkeys((s, d) for s, d in load if where[s] != where[d]))
    if not victim:
        return None
    pairs = victim + load
    src = np.array([where[s] for s, _ in pairs], dtype=np.int64)
    dst = np.array([where[d] for _, d in pairs], dtype=np.int64)
    nv = len(victim)
    alone, _ = net.rates(src[:nv], dst[:nv])
    rates, bott = net.rates(src, dst)
    worst = int(np.argmin(rates[:nv]))
    paths = net.topo.paths(src, dst)

    def labels(j):
        return {net.labels[int(net.cls[x])] for x in paths.res[paths.indptr[j]:paths.indptr[j + 1]]}
    mine = set().union(*(labels(j) for j in range(nv)))
    theirs = set().union(*(labels(j) for j in range(nv, len(pairs)))) if load else set()
    b = int(bott[worst])
    return Prediction(float(alone.min()), float(rates[worst]), net.labels[int(net.cls[b])] if b >= 0 else "",
                      sorted(mine & theirs))


# ---- what a run measured ----

@dataclass
class Impact:
    """One victim test at one size under one aggressor, over every draw."""
    bench: str
    test: str                    # its name (test_name): latency, ..., or the benchmark message.victim ran
    size: int
    aggressor: str
    victims: int
    aggressors: int
    isolated_s: float            # median of the isolated launches' medians, s per op
    congested_s: float
    median: tuple                # (impact, lo, hi): congested / isolated time per op
    tail: tuple                  # the same of the 99th percentiles
    draws: list = field(default_factory=list)        # each draw's median impact
    predicted: Optional[Prediction] = None
    tail_of: str = "samples"     # the p99 of single ops ("ops": --per-op) or of the batched samples

    def to_dict(self) -> dict:
        return {"bench": self.bench, "test": self.test, "size": self.size, "aggressor": self.aggressor,
                "victims": self.victims, "aggressors": self.aggressors, "isolated_s": self.isolated_s, "congested_s": self.congested_s,
                "median": list(self.median), "p99": list(self.tail), "p99_of": self.tail_of, "draws": self.draws,
                "predicted": self.predicted.to_dict() if self.predicted else None}


def _groups(points) -> dict:
    """{(bench, size, params but the ring's seed): {seed: ([isolated launches], [congested], [layout],
    ([isolated launches' single-op histograms], [congested]))}}."""
    out: dict = {}
    for p in points:
        if p.bench not in BENCHES or p.active is None or not p.samples:
            continue
        params = dict(p.params or {})
        seed = params.pop("seed", "1")
        key = (p.bench, p.size, tuple(sorted(params.items())))
        iso, cong, lay, hists = out.setdefault(key, {}).setdefault(seed, ([], [], [None], ([], [])))
        (cong if p.active else iso).append(p.samples)
        hists[bool(p.active)].append(p.op_histogram)
        if p.active and p.roles:
            lay[0] = (p.roles, list(p.peers or []))
    return out


def impacts(points, hosts: Optional[list] = None, network: Optional[str] = None,
            calibration: Optional[str] = None) -> list[Impact]:
    """The impact factors of a run's points (every launch, not merged)."""
    import numpy as np
    from ..analysis.launches import ratio_ci
    from .coll_prediction import placed
    net, where = placed(network, hosts or [], calibration)
    out = []
    for (bench, size, params), draws in sorted(_groups(points).items()):
        iso = [x for d in draws.values() for x in d[0]]
        cong = [x for d in draws.values() for x in d[1]]
        if not iso or not cong:
            continue
        per = [float(np.median([np.median(x) for x in c]) / np.median([np.median(x) for x in i]))
               for i, c, _, _ in draws.values() if i and c]
        tail, tail_of = _tail(iso, cong, [h for d in draws.values() for h in d[3][0]],
                              [h for d in draws.values() for h in d[3][1]])
        lay = next((d[2][0] for d in draws.values() if d[2][0]), None)
        agg = dict(params).get("aggressor", "alltoall")
        pred = None
        if net is not None and lay and bench == "message.victim_bandwidth":
            pred = predict(net, where, lay[0], lay[1], agg)
        out.append(Impact(bench, test_name(bench, dict(params)), size, agg, lay[0].count("v") if lay else 0,
                          sum(x not in "vi" for x in lay[0]) if lay else 0,
                          float(np.median([np.median(x) for x in iso])),
                          float(np.median([np.median(x) for x in cong])),
                          ratio_ci(iso, cong), tail, per, pred, tail_of))
    return out


def _tail(iso: list, cong: list, iso_ops: list, cong_ops: list) -> tuple:
    """(the p99's impact (ratio, lo, hi), what it is of): of single ops where every launch of
    both sides timed them (--per-op: each launch's p99, resampled over launches as compare's
    tails are), else of the launches' samples (their order statistic, launches.ratio_ci q)."""
    from ..analysis.launches import ratio_ci
    from ..analysis.tails import quantiles
    name = f"p{P_TAIL * 100:g}"
    x = [quantiles(h).get(name) for h in iso_ops if h]
    y = [quantiles(h).get(name) for h in cong_ops if h]
    if x and y and len(x) == len(iso) and len(y) == len(cong) and None not in x + y:
        return ratio_ci([[v] for v in x], [[v] for v in y]), "ops"
    return ratio_ci(iso, cong, q=P_TAIL), "samples"


def lines(found: list[Impact]) -> list[str]:
    """The impact factors as `show` and `fabriclab congestion` print them."""
    from ..units import fmt_bytes, fmt_time
    if not found:
        return []
    out = ["congestion impact: congested / isolated time per op of the slowest victim (above 1: slower), "
           "95% CI over launches and draws",
           f"{'victim test':<26}{'size':>7} {'aggressor':<11}{'V/A':>6} {'isolated':>10} {'congested':>10}  "
           f"{'median (95% CI)':<24}{'p99 (95% CI)':<24}{'p99 of':<9}{'draws':<14}model"]

    def ci(t):
        r, lo, hi = t
        return f"{r:.2f} [{lo:.2f}, {hi:.2f}]" if all(map(math.isfinite, (r, lo, hi))) else f"{r:.2f}"
    for m in found:
        spread = f"{min(m.draws):.2f}-{max(m.draws):.2f}" if len(m.draws) > 1 else "one"
        model = (f"{m.predicted.impact:.2f} ({m.predicted.bottleneck})" if m.predicted else "-")
        out.append(f"{m.test:<26}{fmt_bytes(m.size):>7} {m.aggressor:<11}"
                   f"{m.victims:>3}/{m.aggressors:<2} {fmt_time(m.isolated_s):>10} {fmt_time(m.congested_s):>10}  "
                   f"{ci(m.median):<24}{ci(m.tail):<24}{m.tail_of:<9}{spread:<14}{model}")
        if m.predicted and m.predicted.shared:
            out.append(f"  shared with the aggressors: {', '.join(m.predicted.shared)}")
    return out
