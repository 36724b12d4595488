"""The multi-pair bandwidth of the message-rate benchmarks against the model
of the network the run crossed (docs/message-rate.md, "The model").

A pattern benchmark's facts say who sends to whom (its `pattern`: every
rank in role `s` or `b` sends to its peer, suite/patterns.py) and how a
sample reduces over the ranks (`reduce`, suite/benchmarks.py). With a
network file (a testbed's own, or `--network FILE`), each rank is placed on
the file's node of its host name (placement.py), each sender's flow to its
peer is routed and given its max-min share of the cables
(model/schedule_time.py Network.rates), and the benchmark's own rule turns
the flows' steady rates r_1 .. r_F into its figure:

- `slowest` (IMB Uniband, Biband): every flow's window ends when the slowest
  one's does, so F flows of SIZE bytes take SIZE / min(r): F x min(r);
- `senders-mean` (osu_mbw_mr): each sender times its own flow, SIZE / r_i,
  and OSU divides the bytes of all F flows by the senders' mean time:
  F / mean(1 / r_i), F times the harmonic mean of the rates.

Both are the same F x r where every flow gets the same share; where the
shares differ the slowest rule reads below the mean rule, and both below
the sum of the rates the fabric carries at once. The message rate is the
bandwidth over SIZE (the network's bound: a message costs its bytes and
nothing else). A flow between two ranks of one host crosses no cable, and a
point with one is not predicted."""

from __future__ import annotations

import numpy as np

from ..analysis import merge
from ..suite.benchmarks import REGISTRY, in_view
from .exchange_prediction import read_network
from .placement import nodes_of

TOLERANCE = 0.15          # measured within 15% of the prediction: "agrees"
RULES = ("slowest", "senders-mean")


def modelled(bench: str) -> bool:
    """A benchmark whose figure the model predicts here: the message-rate view's."""
    b = REGISTRY.get(bench)
    return b is not None and bench in in_view("message-rate") and b.reduce in RULES


def flows(roles: str, peers: list) -> list[tuple[int, int]]:
    """(sender, peer) of every rank that sends in the layout."""
    return [(r, peers[r]) for r, role in enumerate(roles) if role in "sb" and peers[r] >= 0]


def figure(rates, rule: str) -> float:
    """The bandwidth (bytes/s) a benchmark of `rule` reads from flows at these steady rates."""
    r = np.asarray(rates, dtype=float)
    if rule == "senders-mean":      # F / mean(1 / r_i): the bytes of all F flows over the senders' mean time
        return float(len(r) / np.mean(1.0 / r))
    return float(len(r) * r.min())


def predict(net, where: list, roles: str, peers: list, rule: str) -> dict | None:
    """{"bandwidth_Bps", "aggregate_Bps", "rates_Bps", "bottleneck"} of a layout on a
    placed network (`where`: each rank's node); None when a flow stays on one node."""
    pairs = flows(roles, peers)
    if not pairs or any(where[s] is None or where[d] is None or where[s] == where[d] for s, d in pairs):
        return None
    src = np.array([where[s] for s, _ in pairs], dtype=np.int64)
    dst = np.array([where[d] for _, d in pairs], dtype=np.int64)
    rates, bott = net.rates(src, dst)
    worst = int(np.argmin(rates))
    b = int(bott[worst])
    return {"bandwidth_Bps": figure(rates, rule), "aggregate_Bps": float(np.sum(rates)),
            "rates_Bps": [float(x) for x in rates],
            "bottleneck": net.labels[int(net.cls[b])] if b >= 0 else ""}


def rows(points: list, hosts: list, sys, calibration=None) -> list[dict]:
    """One row per point of a modelled benchmark with a payload whose flows all cross the network."""
    from ..model.schedule_time import Network
    on = nodes_of(hosts, sys.topo.node_names)
    net = None
    out = []
    for p in points:
        if not modelled(p.bench) or not p.roles or p.size <= 0 or not p.bandwidth_Bps:
            continue
        net = net or Network(sys, calibration=calibration)
        rule = REGISTRY[p.bench].reduce
        where = [on[r] if r < len(on) else None for r in range(len(p.roles))]
        pred = predict(net, where, p.roles, list(p.peers or []), rule)
        if pred is None:
            continue
        ratio = p.bandwidth_Bps / pred["bandwidth_Bps"]
        out.append({"bench": p.bench, "variant": p.variant or "", "size": p.size, "active": p.active, "rule": rule,
                    "measured_Bps": p.bandwidth_Bps, "predicted_Bps": pred["bandwidth_Bps"],
                    "predicted_msgs_per_s": pred["bandwidth_Bps"] / p.size, "ratio": ratio,
                    "verdict": "agrees" if abs(ratio - 1) <= TOLERANCE else ("slower" if ratio < 1 else "faster"),
                    **{k: pred[k] for k in ("aggregate_Bps", "rates_Bps", "bottleneck")}})
    return out



def predictor(network: str, calibration: str | None = None):
    """doc -> the document's `rate_model` block ({} when no message-rate point crossed the
    network); the files are read now, so a bad one ends a run before anything is launched."""
    system, cal = read_network(network, calibration)

    def block(doc) -> dict:
        found = rows(merge.merged(doc), doc.header.hosts or [], system, cal)
        if not found:
            return {}
        return {"rate_model": {"network": str(network), "calibration": calibration, "tolerance": TOLERANCE,
                               "rows": found}}
    return block
