"""The example networks (examples/testbeds): each is a model input whose
per-node all-to-all figure matches a count of routes made here from the
file's links alone, and whose bottleneck is a cable between switches, as
`testbed validate` needs."""
import json
from collections import deque
from pathlib import Path

import pytest
import yaml

from fabriclab.cli.main import main
from fabriclab.model.topologies.custom import load_network_file
from fabriclab.model import validate

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "testbeds").glob("*.yaml"))
MB = 1e6

# Worked out by hand in each file's header: routes across the busiest cable
# between switches, and per-node all-to-all MB/s = (N - 1) x its rate / routes.
BY_HAND = {
    "two-switches": (16, 7 * 20 / 16),
    "linear-array": (16, 7 * 20 / 16),
    "ring": (8, 7 * 10 / 8),
    "fat-tree": (6, 7 * 8 / 6),
    "fat-tree-16": (12, 15 * 2 / 12),
    "three-level": (32, 15 * 4 / 32),
    "dragonfly": (16, 11 * 3 / 16),
    "uneven-line": (12, 7 * 10 / 12),
}


class Recount:
    """Channels and D-mod-K routes of a network file, from its links only:
    two channels per cable (a to b, then b to a), cables in file order; a
    breadth-first search back from each destination gives every vertex's
    distance; a packet at v takes, among its channels one hop closer (in
    channel order), number key mod count and goes on with key // count,
    starting from key = the destination's index. Hosts do not forward."""

    def __init__(self, data: dict):
        self.hosts = list(data["nodes"])
        self.switches = list(data.get("switches", []))
        self.routing = data.get("routing", "d-mod-k")
        self.channels = []                    # (from, to, rate in bytes/s, link index)
        for i, ln in enumerate(data["links"]):
            ln = {"a": ln[0], "b": ln[1]} if isinstance(ln, list) else ln
            rate = ln.get("rate_MBps", data.get("default_rate_MBps")) * ln.get("efficiency", 1.0) * MB
            for _ in range(ln.get("count", 1)):
                self.channels += [(ln["a"], ln["b"], rate, i), (ln["b"], ln["a"], rate, i)]

    def route(self, s: str, d: str) -> list[int]:
        dist = {d: 0}
        todo = deque([d])
        while todo:
            x = todo.popleft()
            if x != d and x in self.hosts:
                continue                      # a host is an end, never a way through
            for a, b, _, _ in self.channels:
                if b == x and a not in dist:
                    dist[a] = dist[x] + 1
                    todo.append(a)
        out, v, key = [], s, self.hosts.index(d)
        while v != d:
            opts = [c for c, (a, b, _, _) in enumerate(self.channels)
                    if a == v and dist.get(b) == dist[v] - 1 and (b == d or b not in self.hosts)]
            c = opts[key % len(opts)]
            key //= len(opts)
            out.append(c)
            v = self.channels[c][1]
        return out

    def routes(self) -> dict:
        return {(s, d): self.route(s, d) for s in self.hosts for d in self.hosts if s != d}

    def loads(self) -> list[int]:
        """All-to-all routes across every channel."""
        n = [0] * len(self.channels)
        for chans in self.routes().values():
            for c in chans:
                n[c] += 1
        return n

    def between_switches(self, c: int) -> bool:
        return self.channels[c][0] in self.switches and self.channels[c][1] in self.switches


def _model(path: Path, capsys) -> dict:
    """What `fabriclab model --topology-file FILE -f json` prints for the file."""
    assert main(["model", "--topology-file", str(path), "-f", "json", "--no-plot"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["systems"][0]["points"]
    return point


def test_every_example_is_worked_out_by_hand():
    assert {p.stem for p in EXAMPLES} == set(BY_HAND)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_models_figure_is_the_busiest_cables_count(path, capsys):
    data = yaml.safe_load(path.read_text())
    net = Recount(data)
    assert net.routing == "d-mod-k"           # the rule Recount follows
    loads = net.loads()
    n = len(net.hosts)
    bound = {c: (n - 1) * net.channels[c][2] / k for c, k in enumerate(loads) if k}
    per_node = min(bound.values())
    busiest = [c for c in bound if bound[c] <= per_node * (1 + 1e-12)]
    # the bottleneck lies between switches only (validate calibrates such a cable)
    assert all(net.between_switches(c) for c in busiest)
    routes, mbps = BY_HAND[path.stem]
    assert max(loads[c] for c in busiest) == routes
    assert per_node / MB == pytest.approx(mbps)
    point = _model(path, capsys)
    assert point["per_node_bytes_per_s"] == pytest.approx(per_node, rel=1e-9)
    assert point["bottleneck_kind"] == "link"
    # the model names a cable of the busiest class; validate saturates it
    b = validate.bottleneck(load_network_file(str(path)))
    assert b.load == routes and b.link in {net.channels[c][3] for c in busiest}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_model_routes_as_counted(path):
    """The model's router (whose routes the testbed installs, test_testbed_plan.py)
    takes the channels counted here."""
    net = load_network_file(str(path))
    recount = Recount(yaml.safe_load(path.read_text()))
    names = list(net.node_names)
    for (s, d), chans in recount.routes().items():
        assert net.router.route(names.index(s), names.index(d)) == chans, (s, d)


def test_the_dragonfly_routes_minimally():
    """Local, global, local: a route between groups crosses the one global cable
    joining them, and at most one local cable in each; within a group, one local."""
    path = next(p for p in EXAMPLES if p.stem == "dragonfly")
    net = Recount(yaml.safe_load(path.read_text()))
    group = lambda v: v.split("s")[0]                       # switch gGsK is in group gG
    switch_of = {a: b for a, b, _, _ in net.channels if a in net.hosts}
    seen_global = set()
    for (s, d), chans in net.routes().items():
        hops = [(net.channels[c][0], net.channels[c][1]) for c in chans if net.between_switches(c)]
        kinds = "".join("G" if group(a) != group(b) else "L" for a, b in hops)
        gs, gd = group(switch_of[s]), group(switch_of[d])
        if gs == gd:
            assert kinds == ("L" if switch_of[s] != switch_of[d] else ""), (s, d, hops)
        else:
            assert kinds in ("G", "LG", "GL", "LGL"), (s, d, hops)
            a, b = hops[kinds.index("G")]
            assert {group(a), group(b)} == {gs, gd}
            assert all(group(x) == gs for x, _ in hops[:kinds.index("G")])
            assert all(group(y) == gd for _, y in hops[kinds.index("G"):])
            seen_global.add((a, b))
    assert len(seen_global) == 6                            # 3 global cables, both ways
