"""The model checked against measurement (seed 001's method, §3.2 and §5):
find the cable the model names as the bottleneck, choose sender/receiver
pairs whose routes all cross it (the seed's Fig. 11 test), turn their
measured saturation throughput into the cable class's rate, predict per-node
all-to-all bandwidth with it, and set the prediction beside the measured
all-to-all. This module holds the reasoning; testbed/validation.py the
procedure that measures (`fabriclab run` across the testbed) and its typed result."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError
from .calibration import Calibration
from .evaluate import evaluate
from .netfile import NetworkFile
from .loads import solve
from .topologies.custom import CustomNetwork

TOLERANCE = 0.10          # the target: measured within 10% of the calibrated prediction
_KEY = re.compile(r"^links\[(\d+)\]\.(ab|ba)$")


@dataclass
class Bottleneck:
    link: int             # index in the file's links
    forward: bool         # direction a -> b
    channel: int          # the most loaded cable of the link in that direction
    label: str
    load: float           # all-to-all routes crossing that cable
    rate_Bps: float       # nominal


def _link(links: list, i: int) -> dict:
    """Link i of a file's links, the short form [a, b] as a mapping."""
    ln = links[i]
    return {"a": ln[0], "b": ln[1]} if isinstance(ln, list) else ln


def _trunk(net: CustomNetwork, i: int) -> bool:
    ln = _link(net.links, i)
    hosts = set(net.node_names)
    return str(ln["a"]) not in hosts and str(ln["b"]) not in hosts


def trunks(net: CustomNetwork) -> list[int]:
    """Indices of the links that join two switches."""
    return [i for i in range(len(net.links)) if _trunk(net, i)]


def routes(net: CustomNetwork) -> dict:
    """(source, destination) host index -> the channels of its D-mod-K route."""
    n = net.n_nodes
    return {(s, d): net.router.route(s, d) for s in range(n) for d in range(n) if s != d}


def bottleneck(net: CustomNetwork, result=None) -> Bottleneck:
    """The cable the model names: its class from the solver, the busiest
    cable of that class (most all-to-all routes crossing it) from the routes."""
    if not trunks(net):
        raise UsageError(f"{net.name}: no cable joins two switches, so there is no shared cable to saturate and "
                         "calibrate (validate needs a network with switch-to-switch cables)")
    res = result or solve(net, None)
    m = _KEY.match(res.bottleneck.key)
    if not m or not _trunk(net, int(m.group(1))):
        raise UsageError(f"{net.name}: the model's bottleneck is {res.bottleneck.label}, not a cable between "
                         "switches; validate calibrates switch-to-switch cables")
    i, forward = int(m.group(1)), m.group(2) == "ab"
    counts: dict = {}
    for chans in routes(net).values():
        for c in chans:
            if net.channel_cable[c][0] == i and _forward(net, c, i) == forward:
                counts[c] = counts.get(c, 0) + 1
    c = max(counts, key=lambda k: (counts[k], -k))
    return Bottleneck(i, forward, c, res.bottleneck.label, counts[c], res.bottleneck.rate)


def _forward(net: CustomNetwork, c: int, i: int) -> bool:
    """Whether channel c goes from the link's endpoint a to b."""
    ln = _link(net.links, i)
    names = list(net.node_names) + list(net.switch_names)
    return names[int(net.router.src[c])] == str(ln["a"])


def reverse(net: CustomNetwork, channel: int) -> int:
    """The channel of the same cable in the other direction."""
    cable = net.channel_cable[channel]
    return next(c for c, cab in enumerate(net.channel_cable) if cab == cable and c != channel)


def saturation_pairs(net: CustomNetwork, channel: int, both: bool = False) -> list[tuple[str, str]]:
    """As many (sender, receiver) host pairs as possible, each host in one pair
    only, whose routes all cross `channel`: the senders on one side of the
    cable, the receivers on the other (seed 001 Fig. 11). With `both`, only
    pairs whose reverse route also crosses the cable, back the other way, so
    that a bidirectional test loads both directions of that one cable."""
    rts = routes(net)
    back = reverse(net, channel)
    used, pairs = set(), []
    for (s, d), chans in sorted(rts.items()):
        if channel in chans and s not in used and d not in used and (not both or back in rts[(d, s)]):
            used |= {s, d}
            pairs.append((net.node_names[s], net.node_names[d]))
    if not pairs and not both:
        raise UsageError(f"{net.name}: no pair of hosts routes across the bottleneck cable")
    return pairs


def link_rate_MBps(net: CustomNetwork, i: int) -> float:
    """Link i's nominal rate per cable and direction: its rate times its efficiency."""
    ln = _link(net.links, i)
    return float(ln.get("rate_MBps", net.default_rate_MBps or 0)) * float(ln.get("efficiency", 1.0))


def cable_class(net: CustomNetwork, i: int) -> list[int]:
    """Links of the same class as link i: between switches, at the same rate."""
    rate = link_rate_MBps(net, i)
    return [j for j in trunks(net) if abs(link_rate_MBps(net, j) - rate) <= 1e-9 * max(rate, 1)]


def predict(net: CustomNetwork, where: str, links: list[int] = (), rate_Bps: float | None = None) -> tuple[float, str]:
    """Per-node all-to-all bandwidth (bytes/s) and the bottleneck's label, as
    `fabriclab model --topology-file` computes them: nominal, or with these
    links calibrated at a measured rate (`-c 'links[I]=MBPS'`, seed 001 §5).
    A rate measured across the cable outranks the file's rate, even above it."""
    cal = None
    if rate_Bps is not None:
        cal = Calibration(common={f"links[{i}]": rate_Bps for i in links}, capped=False)
    p = evaluate(NetworkFile(where, topo=net), net.n_nodes, cal, with_cost=False)
    return p.per_node, p.result.bottleneck.label


def verdict(predicted: float, measured: float) -> str:
    r = measured / predicted
    return "agrees" if abs(r - 1) <= TOLERANCE else ("slower" if r < 1 else "faster")


def plateau_rate(points: list) -> tuple[float, float, float, int]:
    """(rate, low, high, active) of the saturation curve: the highest aggregate
    throughput with its interval, from the merged points of message.saturation."""
    pts = [p for p in points if p.bench == "message.saturation" and p.aggregate_bandwidth_Bps]
    if not pts:
        raise UsageError("the saturation run has no message.saturation points")
    size = max(p.size for p in pts)
    best = max((p for p in pts if p.size == size), key=lambda p: p.aggregate_bandwidth_Bps)
    v = best.aggregate_bandwidth_Bps
    return (v, *best.interval(v), best.active)


def bidirectional_rate(points: list) -> tuple[float, float, float]:
    """(rate, low, high) per direction of a cable loaded both ways by
    message.bibw pairs across it: half of all payload over the op's time."""
    pts = [p for p in points if p.bench == "message.bibw" and p.bandwidth_Bps]
    if not pts:
        raise UsageError("the bidirectional saturation run has no message.bibw points")
    best = max(pts, key=lambda p: p.bandwidth_Bps)
    v = best.bandwidth_Bps / 2
    return (v, *best.interval(v))


def per_node(points: list, nranks: int) -> dict:
    """Measured per-node all-to-all bandwidth by size: all payload over the op's time, per rank."""
    return {p.size: p.bandwidth_Bps / nranks for p in points
            if p.bench == "message.alltoall" and p.bandwidth_Bps and p.size > 0}
