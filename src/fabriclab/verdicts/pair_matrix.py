"""The N x N pair matrix (mpiGraph, Moody at LLNL; nccl-tests #172 found
the one faulty node of a thousand this way): message.shift at every step k =
1 .. N-1 gives each ordered pair (r, r + k) the bandwidth rank r sends at
while every rank sends to its own + k at once. A run's matrices, per size,
are read from its merged points: pair (r, r + k) takes rank r's median
bandwidth at step k.

What is low, by a rule stated here and in docs/acceptance.md: each pair's
figure is its bandwidth over what it should get. On a known network (the
run's `--testbed` or `--network` file) that is the model's max-min rate of
its flow among the step's N flows (model/schedule_time.py Network.rates), so
a pair that shares a cable by design is not called low; elsewhere, the
median pair. A pair is low when its figure is below (1 - DROP) times the
typical figure: the 90th percentile of the pairs' figures on a known network
(where up to nine pairs in ten may be slowed by one bad cable), the median
elsewhere. Then, on a known network, the cables are named greedily from
the pairs each limits (where max-min fills the cable and no flow across it
runs faster: the flow's bottleneck): of the cable directions more than three
quarters of whose limited pairs are low, the one that limits the most low
pairs left explains every pair crossing it; repeat. A host is named when
most of its row (what it sends) or its column (what it receives) is low and
no named cable explains those pairs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

BENCH = "message.shift"
DROP = 0.25          # a pair below 75% of the typical pair's figure is low
TYPICAL_PCT = 90     # on a known network, the typical pair's figure: the 90th percentile
MOST = 0.5           # a host's row or column: more than half of it low
CABLE_MOST = 0.75    # a cable: more than three quarters of the pairs it limits low (a bad cable
                     # slows all of them)


@dataclass
class PairMatrix:
    size: int
    hosts: list                    # per rank
    bandwidth: np.ndarray          # N x N, bytes/s, rank r sending to rank c; NaN where not measured
    predicted: Optional[np.ndarray] = None   # the model's rate per pair, on a known network
    figure: Optional[np.ndarray] = None      # bandwidth over predicted (or over the median pair)
    low: list = field(default_factory=list)  # [(r, c)]
    cables: list = field(default_factory=list)   # [(label, low pairs it explains, pairs crossing it)]
    hosts_named: list = field(default_factory=list)  # [(host, "sends" | "receives", low, of)]
    limits: dict = field(default_factory=dict)   # {(r, c): labels of the cables limiting the pair}, known network

    @property
    def named(self) -> list[str]:
        return [c[0] for c in self.cables] + [f"host {h} ({way})" for h, way, _, _ in self.hosts_named]


def measured(points, nranks: int) -> dict:
    """{size: N x N bandwidths} from message.shift's merged points."""
    out: dict = {}
    for p in points:
        if p.bench != BENCH or not p.ranks or not p.active:
            continue
        m = out.setdefault(p.size, np.full((nranks, nranks), np.nan))
        for r in p.ranks:
            if r.bandwidth_Bps and r.rank < nranks:
                m[r.rank, (r.rank + p.active) % nranks] = r.bandwidth_Bps
    return out


def _predicted(net, where: np.ndarray, n: int) -> tuple[np.ndarray, dict, dict]:
    """(the model's rate per pair, {pair: the cable labels its flow crosses}, {pair: the
    labels of the cables that limit it}). A cable limits a flow where max-min saturates it
    and no flow across it runs faster (the flow's bottleneck; ties name every such cable)."""
    pred, crosses, limits = np.full((n, n), np.nan), {}, {}
    for k in range(1, n):
        src, dst = where, where[(np.arange(n) + k) % n]
        remote = np.nonzero(src != dst)[0]
        if not len(remote):
            continue
        rates, _ = net.rates(src[remote], dst[remote])
        paths = net.topo.paths(src[remote], dst[remote])
        res = [paths.res[paths.indptr[j]:paths.indptr[j + 1]] for j in range(len(remote))]
        load, top = np.zeros(len(net.cap)), np.zeros(len(net.cap))
        for j, rs in enumerate(res):
            load[rs] += rates[j]
            top[rs] = np.maximum(top[rs], rates[j])
        tight = load >= net.cap * (1 - 1e-6)
        for j, r in enumerate(remote):
            c = (int(r), int((r + k) % n))
            pred[c] = rates[j]
            crosses[c] = {net.labels[int(net.cls[x])] for x in res[j]}
            limits[c] = {net.labels[int(net.cls[x])] for x in res[j] if tight[x] and rates[j] >= top[x] * (1 - 1e-6)}
    return pred, crosses, limits


def _cables(low: list, limits: dict) -> list:
    """Greedy: of the cables most of whose limited pairs are low, the one that limits the most
    unexplained low pairs, until none is left (a pair limited elsewhere cannot tell a slow
    cable from a healthy one)."""
    left, out = set(low), []
    lowset = set(low)
    while left:
        count: dict = {}
        for c in left:
            for lab in limits.get(c, ()):
                count[lab] = count.get(lab, 0) + 1
        named = None
        for lab in sorted(count, key=lambda x: (-count[x], x)):
            on = [c for c, labs in limits.items() if lab in labs]
            bad = sum(c in lowset for c in on)
            if bad > CABLE_MOST * len(on):
                named = (lab, bad, on)
                break
        if named is None:
            break
        out.append((named[0], named[1], len(named[2])))
        left -= set(named[2])
    return out


def _hosts(low: list, explained: set, hosts: list, n: int) -> list:
    out = []
    for h in dict.fromkeys(hosts):
        mine = [r for r in range(n) if hosts[r] == h]
        for way, pairs in (("sends", [(r, c) for r in mine for c in range(n) if hosts[c] != h]),
                           ("receives", [(c, r) for r in mine for c in range(n) if hosts[c] != h])):
            bad = [p for p in pairs if p in low and p not in explained]
            if pairs and len(bad) > MOST * len(pairs):
                out.append((h, way, len(bad), len(pairs)))
    return out


def matrices(points, hosts: list, network: Optional[str] = None, calibration: Optional[str] = None,
             drop: float = DROP) -> list[PairMatrix]:
    """The run's matrices, one per size, each with its low pairs and what they name."""
    from .coll_prediction import placed
    n = len(hosts)
    net, where = placed(network, hosts, calibration)
    out = []
    for size, bw in sorted(measured(points, n).items()):
        m = PairMatrix(size, list(hosts), bw)
        crosses: dict = {}
        limits: dict = {}
        if net is not None:
            m.predicted, crosses, limits = _predicted(net, where, n)
            m.figure = bw / m.predicted
        else:
            m.figure = bw / np.nanmedian(bw)
        # against the model most pairs may be low (a bad trunk slows half the pairs of two
        # switches): the typical pair is then a healthy one, the 90th percentile
        typical = np.nanpercentile(m.figure, TYPICAL_PCT) if net is not None else np.nanmedian(m.figure)
        m.low = [(int(r), int(c)) for r, c in zip(*np.nonzero(m.figure < (1 - drop) * typical))]
        m.limits = limits
        m.cables = _cables(m.low, limits)
        explained = {c for c, labs in crosses.items() if any(lab in labs for lab, _, _ in m.cables)}
        m.hosts_named = _hosts(m.low, explained, hosts, n)
        out.append(m)
    return out


def lines(ms: list[PairMatrix]) -> list[str]:
    """Each matrix as text (MB/s, rows send, columns receive) and what it names."""
    from ..units import fmt_bytes
    out = []
    for m in ms:
        n = len(m.hosts)
        basis = "the model's rate on the run's network" if m.predicted is not None else "the median pair"
        out.append(f"pairs at {fmt_bytes(m.size)}: MB/s, the row's rank sending to the column's (*: low, "
                   f"below {1 - DROP:.0%} of the typical pair against {basis})")
        out.append(f"{'':>12}" + "".join(f"{'r%d' % c:>8}" for c in range(n)))
        for r in range(n):
            cells = ["       -" if r == c or math.isnan(m.bandwidth[r, c])
                     else f"{m.bandwidth[r, c] / 1e6:7.1f}{'*' if (r, c) in m.low else ' '}" for c in range(n)]
            out.append(f"{'r%d %s' % (r, m.hosts[r][:8]):>12}" + "".join(cells))
        named = m.named
        out.append(f"pairs at {fmt_bytes(m.size)}: {len(m.low)} of {n * (n - 1)} low; "
                   + (f"named: {'; '.join(named)}" if named else "nothing named"))
        out += [f"  cable {lab}: {b} of its {k} pairs low" for lab, b, k in m.cables]
    return out
