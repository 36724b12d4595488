"""Slurm's network topology as a fabriclab network file, and back (docs/topology.md, "Slurm").

Read: topology.conf for topology/tree (`SwitchName=`, `Switches=`, `Nodes=`;
`LinkSpeed=` is read and unused, as Slurm leaves it: "currently not used")
and topology/block (`BlockName=`, `Nodes=`, `BlockSizes=`),
https://slurm.schedmd.com/topology.conf.html; and topology.yaml (Slurm 25.05+:
a list of topologies, each `topology: NAME`, `cluster_default`, and one of
`tree: {switches: [{switch, children, nodes}]}`, `block: {block_sizes, blocks:
[{block, nodes}]}` or `flat`), https://slurm.schedmd.com/topology.yaml.html.
A block is a leaf switch under one top switch, BLOCK_TOP: Slurm says only that
a block's nodes are close, not how blocks are wired. Slurm keeps no rates: the
caller gives them, and `source.given` says so.

Slurm's own checks (src/plugins/topology/tree/switch_record.c) decide what is
refused: a switch defined twice, a child switch that is not defined, a switch
with both child switches and nodes, a cycle (Slurm: "not a tree"). Slurm keeps
one parent per switch, so a switch under two parents is refused too, as is a
forest (Slurm warns "no switch can reach all nodes"; the model needs every
node to reach every other). A node on several leaf switches is kept: Slurm
warns ("Multiple leaf switches contain nodes") and the model routes a host with
several cables.

Hostlists (`node[001-128,130]`, `rack[1-2]n[01-04]`) are expanded by
ClusterShell's NodeSet, after a scan that counts what they stand for and refuses
more than the model's limits (NodeSet builds every name of a range as it parses
it, so a count from NodeSet itself would already be the expansion).

Export writes a topology/tree topology.conf. A network that is not a tree (a
fat tree with several spines) is written as its spanning tree: each switch
under its first switch one level up, levels counted from the switches with
hosts; the cables and switches left out are listed in a comment. A network
with hosts on more than one top switch (rings, dragonflies, switch arrays) or
a cable between hosts has no Slurm tree and is refused."""

from __future__ import annotations

import re
from pathlib import Path

from .. import hostlists
from ..datafile import parse, shown
from ..errors import UsageError
from ..model.choices import MAX_NODES
from ..model.limits import MAX_NAME_CHARS, RATE_MBPS
from ..model.topologies import checks

MAX_SWITCHES = 100_000           # as the model's network files (topologies/custom.py)
MAX_SLURM_NAME = 64              # "cannot be longer than 64 characters" (topology.conf(5))
MAX_RATES = 32
FULL = {"node": MAX_NODES, "switch": MAX_SWITCHES}   # names a file's hostlists may stand for
BLOCK_TOP = "blocks-top"         # the one switch above a topology/block's blocks
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")   # tab, newline and CR pass
_CONF_FIRST = re.compile(r"\s*(switchname|blockname|blocksizes)\s*=", re.I)
_YAML_FIRST = re.compile(r"-\s+topology\s*:")


def detect(text: str) -> bool:
    """Is this a Slurm topology.conf or topology.yaml."""
    return _kind(text) is not None


def _kind(text: str) -> str | None:
    """"conf" or "yaml" by the first line that is not a comment: a switch or block (conf), a
    topology (yaml: `topology` is "the first attribute", topology.yaml(5))."""
    for line in text.split("\n", 10_000)[:10_000]:
        line = line.split("#", 1)[0].strip()
        if line and line != "---":
            return "conf" if _CONF_FIRST.match(line) else "yaml" if _YAML_FIRST.match(line) else None
    return None


def read(text: str, where: str, *, rates_MBps: list[float], cables: int = 1) -> dict:
    """The network file (a dict the model reads) of a topology.conf or topology.yaml."""
    rates = _rates(rates_MBps, where)
    cables = checks.positive_int(cables, "cables", where)
    bad = _CONTROL.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise UsageError(f"{where}: line {line}: a control character ({shown(bad.group())}) in a Slurm topology")
    kind = _kind(text)
    if kind is None:
        raise UsageError(f"{where}: not a Slurm topology.conf (SwitchName= or BlockName= lines) "
                         "or topology.yaml (a list of '- topology: NAME')")
    entries, source = _yaml(text, where) if kind == "yaml" else _conf(text, where)
    name = source.pop("name", None) or Path(where).name
    net = _network(entries, where, rates, cables)
    given = {"rates_MBps": rates, "cables": cables}
    return {"name": name, **net, "routing": "d-mod-k",
            "source": {"format": "slurm", "read": Path(where).name, **source, "given": given}}


def _rates(rates, where: str) -> list[float]:
    if not isinstance(rates, (list, tuple)) or not 1 <= len(rates) <= MAX_RATES:
        raise UsageError(f"{where}: rates_MBps must be 1 to {MAX_RATES} rates (host cables, then each level "
                         f"of switches up), got {shown(rates)}")
    return [checks.number(r, "rate_MBps", where, RATE_MBPS) for r in rates]


# ---- hostlists --------------------------------------------------------------------------------

class _Budget:
    """What the hostlists of one file may stand for, counted before each is expanded."""

    def __init__(self):
        self.left = dict(FULL)

    def expand(self, expr, what: str, w: str) -> list[str]:
        if not isinstance(expr, str) or not expr:
            raise UsageError(f"{w}: a {what} hostlist must be non-empty text, got {shown(expr)}")
        limit, full = self.left[what], FULL[what]
        room = (f"{limit:,} {what} names, the model's limit" if limit == full else
                f"the {limit:,} {what} names left of the model's limit of {full:,}")
        names = hostlists.expand(expr, limit, w, room)
        self.left[what] -= len(names)
        for nm in names:
            checks.name(nm, f"{what} name", w)
        return names


# ---- topology.conf ---------------------------------------------------------------------------

def _conf(text: str, where: str) -> tuple[list, dict]:
    """Switches (or blocks) as (name, child switches, nodes, where) from topology.conf's lines."""
    budget, entries, blocks, sizes, plugin = _Budget(), [], [], None, None
    for n, line in _lines(text):
        w = f"{where}: line {n}"
        pairs = _pairs(line, w)
        if not pairs:
            continue
        key = pairs[0][0]
        kind = {"switchname": "topology/tree", "blockname": "topology/block", "blocksizes": "topology/block"}.get(key)
        if kind is None:
            raise UsageError(f"{w}: {shown(pairs[0][2])} is not a topology/tree or topology/block line "
                             "(SwitchName=, BlockName=, BlockSizes=)")
        if plugin and kind != plugin:
            raise UsageError(f"{w}: a {kind} line in a {plugin} file")
        plugin = kind
        if key == "blocksizes":
            if len(pairs) > 1 or sizes is not None:
                raise UsageError(f"{w}: BlockSizes= stands on one line of its own, once")
            sizes = _sizes(pairs[0][1].split(","), w)
            continue
        if len(entries) + len(blocks) >= MAX_SWITCHES:
            raise UsageError(f"{w}: more than {MAX_SWITCHES:,} switches (the model's limit)")
        (entries if key == "switchname" else blocks).append(_conf_entry(pairs, budget, w))
    if not entries and not blocks:
        raise UsageError(f"{where}: no SwitchName= or BlockName= line")
    if blocks:
        return _blocks(blocks, where), {"plugin": plugin, **({"block_sizes": sizes} if sizes else {})}
    return entries, {"plugin": plugin}


def _lines(text: str) -> list[tuple[int, str]]:
    """(number, text) of each line: `#` to the end of the line a comment, a line ending in a
    backslash continued on the next (Slurm's s_p_parse_file)."""
    lines, held, start = [], "", 0
    for i, raw in enumerate(text.split("\n"), 1):
        part = raw.rstrip("\r").split("#", 1)[0]
        start = start or i
        if part.rstrip().endswith("\\"):
            held += part.rstrip()[:-1] + " "
            continue
        lines.append((start, held + part))
        held, start = "", 0
    return lines


def _conf_entry(pairs: list, budget: _Budget, w: str) -> tuple:
    """(name, child switches, nodes, w) of a SwitchName= or BlockName= line."""
    key = pairs[0][0]
    known = {"nodes", "switches", "linkspeed"} if key == "switchname" else {"nodes"}
    opts = {}
    for k, v, shown_key in pairs[1:]:
        if k not in known or k in opts:
            raise UsageError(f"{w}: {shown(shown_key)} is unknown or given twice on a "
                             f"{pairs[0][2]} line (known: {', '.join(sorted(known))})")
        opts[k] = v
    name = _switch_name(pairs[0][1], w)
    nodes = budget.expand(opts["nodes"], "node", w) if "nodes" in opts else []
    kids = budget.expand(opts["switches"], "switch", w) if "switches" in opts else []
    if "linkspeed" in opts and not opts["linkspeed"].isdigit():        # read, never used (as by Slurm)
        raise UsageError(f"{w}: LinkSpeed must be a whole number, got {shown(opts['linkspeed'])}")
    return name, kids, nodes, w


def _pairs(line: str, w: str) -> list[tuple[str, str, str]]:
    """(key in lower case, value, key as written) of each Key=Value of a line."""
    out = []
    for tok in line.split():
        key, eq, value = tok.partition("=")
        if not eq or not key or not value:
            raise UsageError(f"{w}: {shown(tok)} is not Key=Value")
        if len(value) > 1 and value[0] == value[-1] == '"':
            value = value[1:-1]
        out.append((key.lower(), value, key))
    return out


def _sizes(values: list, w: str) -> list[int]:
    """BlockSizes: the planning base block size, then larger ones (kept in `source`)."""
    if not 1 <= len(values) <= 64 or not all(isinstance(v, int) and not isinstance(v, bool) or
                                             isinstance(v, str) and v.isdigit() and len(v) <= 9 for v in values):
        raise UsageError(f"{w}: BlockSizes must be 1 to 64 positive whole numbers, got {shown(values)}")
    sizes = [int(v) for v in values]
    if min(sizes) < 1 or max(sizes) > 10 ** 9:
        raise UsageError(f"{w}: BlockSizes must be 1 to 64 positive whole numbers, got {shown(values)}")
    return sizes


def _switch_name(value, w: str) -> str:
    if not isinstance(value, str) or not hostlists.NAME.fullmatch(value) or len(value) > MAX_SLURM_NAME:
        raise UsageError(f"{w}: a switch or block name is 1 to {MAX_SLURM_NAME} letters, digits and ._- "
                         f"(topology.conf(5)), got {shown(value)}")
    return value


def _blocks(blocks: list, where: str) -> list:
    """Blocks as leaf switches under BLOCK_TOP; a node in two blocks is refused."""
    seen = {}
    for name, _, nodes, w in blocks:
        for nd in nodes:
            if seen.setdefault(nd, name) != name:
                raise UsageError(f"{w}: node {nd!r} is in blocks {seen[nd]!r} and {name!r}")
    if any(b[0] == BLOCK_TOP for b in blocks):
        raise UsageError(f"{where}: a block named {BLOCK_TOP!r}, the name of the switch above the blocks")
    return [*blocks, (BLOCK_TOP, [b[0] for b in blocks], [], f"{where}: the switch above the blocks")]


# ---- topology.yaml ---------------------------------------------------------------------------

def _yaml(text: str, where: str) -> tuple[list, dict]:
    """The first tree or block with `cluster_default: true` (Slurm's default), else the first
    tree or block listed."""
    data = parse(text, where, "YAML")
    if not isinstance(data, list) or not data or not all(isinstance(t, dict) for t in data):
        raise UsageError(f"{where}: topology.yaml is a list of topologies (mappings), got {shown(data)}")
    switched = [i for i, t in enumerate(data) if "tree" in t or "block" in t]
    i = next((i for i in switched if data[i].get("cluster_default") is True), switched[0] if switched else 0)
    topo, w = data[i], f"{where}: [{i}]"
    _keys(topo, {"topology", "cluster_default", "tree", "block", "flat"}, w)
    name = _switch_name(topo.get("topology"), f"{w}: topology")
    kinds = [k for k in ("tree", "block", "flat") if k in topo]
    if kinds != ["tree"] and kinds != ["block"]:
        raise UsageError(f"{w}: topology {name!r} has {' and '.join(kinds) or 'no type'}: fabriclab reads "
                         "one tree or one block")
    budget, body = _Budget(), topo[kinds[0]]
    if not isinstance(body, dict):
        raise UsageError(f"{w}: {kinds[0]} must be a mapping, got {shown(body)}")
    items = body.get("switches" if kinds == ["tree"] else "blocks")
    if not isinstance(items, list) or not items or len(items) > MAX_SWITCHES:
        raise UsageError(f"{w}: {kinds[0]} needs a list of 1 to {MAX_SWITCHES:,} "
                         f"{'switches' if kinds == ['tree'] else 'blocks'}, got {shown(items)}")
    source = {"name": name, "topology": name, "plugin": f"topology/{kinds[0]}"}
    if kinds == ["tree"]:
        _keys(body, {"switches"}, f"{w}: tree")
        entries = [_yaml_item(s, j, "switch", {"children", "nodes"}, budget, f"{w}: tree: switches")
                   for j, s in enumerate(items)]
        return entries, source
    _keys(body, {"blocks", "block_sizes"}, f"{w}: block")
    blocks = [_yaml_item(b, j, "block", {"nodes"}, budget, f"{w}: block: blocks") for j, b in enumerate(items)]
    if "block_sizes" in body:
        sizes = body["block_sizes"]
        source["block_sizes"] = _sizes(sizes if isinstance(sizes, list) else [sizes], f"{w}: block_sizes")
    return _blocks(blocks, where), source


def _yaml_item(item, j: int, key: str, known: set, budget: _Budget, w: str) -> tuple:
    w = f"{w}[{j}]"
    if not isinstance(item, dict):
        raise UsageError(f"{w}: a mapping with {key!r}, got {shown(item)}")
    _keys(item, {key} | known, w)
    name = _switch_name(item.get(key), f"{w}: {key}")
    if "children" in item and "nodes" in item:
        raise UsageError(f"{w}: switch {name!r} has both children and nodes")
    kids = budget.expand(item["children"], "switch", w) if "children" in item else []
    nodes = budget.expand(item["nodes"], "node", w) if "nodes" in item else []
    return name, kids, nodes, w


def _keys(d: dict, known: set, w: str) -> None:
    unknown = [k for k in d if k not in known]
    if unknown:
        raise UsageError(f"{w}: unknown key {shown(min(unknown, key=repr))} (known: {', '.join(sorted(known))})")


# ---- the network -----------------------------------------------------------------------------

def _network(entries: list, where: str, rates: list, cables: int) -> dict:
    """nodes, switches and links of a tree of switches (name, child switches, nodes, where),
    checked as Slurm checks it (module docstring)."""
    defined, parent = _parents(entries)
    kids_of = {e[0]: e[1] for e in entries}
    order = _rooted(entries, parent, kids_of, where)
    level = {}
    for s in reversed(order):
        level[s] = 1 + max((level[k] for k in kids_of[s]), default=-1)
    names, links, seen = [], [], set()
    rate = lambda k: rates[min(k, len(rates) - 1)]
    for name, kids, nodes, _ in entries:
        for nd in nodes:
            if nd in defined:
                raise UsageError(f"{where}: {nd!r} is the name of a node and of a switch")
            if nd not in seen:
                seen.add(nd)
                names.append(nd)
            links.append({"a": nd, "b": name, "rate_MBps": rate(0), "name": f"{nd} -- {name}"})
        links += [{"a": k, "b": name, "count": cables, "rate_MBps": rate(level[name]), "name": f"{k} -- {name}"}
                  for k in kids]
    return {"nodes": names, "switches": list(defined), "links": links}


def _parents(entries: list) -> tuple[dict, dict]:
    """Each switch's where, and each child switch's one parent."""
    defined = {}
    for name, kids, nodes, w in entries:
        if name in defined:
            raise UsageError(f"{w}: switch {name!r} is defined twice (first {defined[name].rsplit(': ', 1)[-1]})")
        if kids and nodes:
            raise UsageError(f"{w}: switch {name!r} has both child switches and nodes (Slurm refuses it)")
        defined[name] = w
    parent = {}
    for name, kids, _, w in entries:
        for k in kids:
            if k not in defined:
                raise UsageError(f"{w}: switch {name!r} lists {k!r}, which no line defines as a switch")
            if k == name:
                raise UsageError(f"{w}: switch {name!r} lists itself: a cycle")
            if k in parent:
                raise UsageError(f"{w}: switch {k!r} is under {parent[k]!r} and {name!r}: Slurm's tree keeps one "
                                 "parent per switch")
            parent[k] = name
    return defined, parent


def _rooted(entries: list, parent: dict, kids_of: dict, where: str) -> list:
    """The switches from the one root down; a cycle or several roots refused."""
    roots = [e[0] for e in entries if e[0] not in parent]
    order = _below(roots, kids_of)
    if len(order) < len(entries):
        reached = set(order)
        ring = [next(e[0] for e in entries if e[0] not in reached)]
        seen = set(ring)
        while parent[ring[-1]] not in seen:
            ring.append(parent[ring[-1]])
            seen.add(ring[-1])
        ring = ring[ring.index(parent[ring[-1]]):][::-1]          # parent before child, as the file lists them
        order_of = {e[0]: i for i, e in enumerate(entries)}
        first = min(range(len(ring)), key=lambda i: order_of[ring[i]])
        ring = ring[first:] + ring[:first]
        shown = ring + ring[:1] if len(ring) <= 6 else ring[:3] + ["..."] + ring[-2:] + ring[:1]
        raise UsageError(f"{where}: switches {' -> '.join(s if s == '...' else repr(s) for s in shown)} form a cycle"
                         f"{f' of {len(ring):,}' if len(ring) > 6 else ''} (Slurm: not a tree)")
    if len(roots) > 1:
        raise UsageError(f"{where}: no root: {len(roots)} switches have no switch above them "
                         f"({', '.join(map(repr, roots[:4]))}{', ...' if len(roots) > 4 else ''}); "
                         "every node must reach every other through one top switch")
    return order


def _below(roots: list, kids_of: dict) -> list:
    """Every switch reached from roots, each after its parent."""
    order, i = list(roots), 0
    while i < len(order):
        order += kids_of[order[i]]
        i += 1
    return order


# ---- export ----------------------------------------------------------------------------------

MAX_ROOT_STEPS = 20_000_000      # switches and cables visited looking for the root (a few seconds)


def export(data: dict) -> str:
    """A topology/tree topology.conf of a network file's dict (read as the model reads it)."""
    from ..model.topologies.custom import CustomNetwork
    where = "network file"
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "source"}     # what a reader recorded, not the network
    net = CustomNetwork.from_dict(data, where=where)
    nodes, switches = set(net.node_names), list(net.switch_names)
    hosts = {s: [] for s in switches}
    adj = {s: [] for s in switches}
    for ln in net.links:
        a, b = (str(ln[0]), str(ln[1])) if isinstance(ln, list) else (str(ln["a"]), str(ln["b"]))
        if a in nodes and b in nodes:
            raise UsageError(f"{where}: cable {a} -- {b} joins two hosts: Slurm's topology/tree has hosts "
                             "on switches only")
        if a in nodes or b in nodes:
            host, sw = (a, b) if a in nodes else (b, a)
            if host not in hosts[sw]:
                hosts[sw].append(host)
        elif b not in adj[a]:
            adj[a].append(b)
            adj[b].append(a)
    for nm in switches:
        _slurm_name(nm, "switch", MAX_SLURM_NAME)
    for nm in net.node_names:
        _slurm_name(nm, "node", MAX_NAME_CHARS)
    parent = _spanning(switches, hosts, adj, where + (f" {net.name!r}" if "name" in data else ""))
    return _conf_text(net.name, switches, hosts, adj, parent)


def _slurm_name(name: str, what: str, limit: int) -> None:
    if not hostlists.NAME.fullmatch(name) or len(name) > limit:
        raise UsageError(f"network file: {what} name {shown(name)} cannot stand in a Slurm hostlist "
                         f"(1 to {limit} letters, digits and ._-)")


def _spanning(switches: list, hosts: dict, adj: dict, w: str) -> dict:
    """Each kept switch's parent (the root's is None): a tree from the root down, through
    switches without hosts only (Slurm's switches have child switches or nodes, not both),
    keeping the switches with hosts below them. The root is the switch without hosts that
    reaches every switch with hosts in the fewest hops to the farthest (the last listed
    among equals, as topology.conf lists its root last); tried among those farthest from
    any host first. A single switch with hosts and nothing above it is its own root."""
    leaves = [s for s in switches if hosts[s]]
    rank = {s: i for i, s in enumerate(switches)}
    for s in switches:
        adj[s].sort(key=rank.__getitem__)
    low = _hops(leaves, adj, hosts, through_hosts=True)           # hops to the nearest switch with hosts
    best, steps = None, 0
    for r in sorted((s for s in switches if not hosts[s] and s in low), key=lambda s: (-low[s], -rank[s])):
        up = _hops([r], adj, hosts)
        steps += len(up) + sum(len(adj[s]) for s in up)
        if all(s in up for s in leaves):
            far = max(up[s][0] for s in leaves)
            if best is None or far < best[0]:
                best = (far, up)
            if far == low[r]:                                          # no root can do better
                break
        if steps > MAX_ROOT_STEPS:
            break
    if best is None:
        if len(leaves) == 1:
            return {leaves[0]: None}
        raise UsageError(f"{w}: hosts hang from {len(leaves)} switches that no switch joins from above "
                         f"({', '.join(map(repr, leaves[:4]))}{', ...' if len(leaves) > 4 else ''}): not a tree, "
                         "and Slurm's topology/tree describes trees only")
    up = best[1]
    below = {s for s in leaves}
    for s in sorted(up, key=lambda s: -up[s][0]):                    # deepest first: each marks its parent
        if s in below and up[s][1] is not None:
            below.add(up[s][1])
    return {s: up[s][1] for s in switches if s in below}


def _hops(start: list, adj: dict, hosts: dict, through_hosts: bool = False) -> dict:
    """Breadth-first from start: each switch reached -> (hops, the switch it was reached from);
    switches with hosts are reached but not passed through unless through_hosts."""
    seen = {s: (0, None) for s in start}
    front = list(start)
    while front:
        nxt = []
        for s in front:
            if hosts[s] and not through_hosts and seen[s][0] > 0:
                continue
            for t in adj[s]:
                if t not in seen:
                    seen[t] = (seen[s][0] + 1, s)
                    nxt.append(t)
        front = nxt
    return seen if not through_hosts else {s: h for s, (h, _) in seen.items()}


def _conf_text(name: str, switches: list, hosts: dict, adj: dict, parent: dict) -> str:
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet
    children = {s: [] for s in parent}
    for c, p in parent.items():
        if p is not None:
            children[p].append(c)
    height = {}
    for s in sorted(parent, key=lambda s: -_depth(s, parent)):
        height[s] = 1 + max((height[c] for c in children[s]), default=-1)
    left_sw = [s for s in switches if s not in parent]
    left = [f"{a} -- {b}" for a in switches for b in adj[a]
            if a < b and parent.get(a) != b and parent.get(b) != a]
    out = [f"# Slurm topology/tree of the fabriclab network {name} "
           "(https://slurm.schedmd.com/topology.conf.html)"]
    if left or left_sw:
        out.append(f"# Slurm's tree keeps one parent per switch: {len(left)} cables"
                   + (f" and the switch{'es' * (len(left_sw) > 1)} {', '.join(left_sw)}" if left_sw else "")
                   + " are left out:")
        out += [f"#   {c}" for c in left]

    def fold(names: list) -> str:
        text = str(NodeSet.fromlist(names, resolver=RESOLVER_NOGROUP))
        if sorted(NodeSet(text, resolver=RESOLVER_NOGROUP)) != sorted(set(names)):
            raise UsageError(f"network file: the names {shown(text)} do not read back as the same hostlist")
        return text

    # leaves first, then each level up (Slurm resolves a switch once the switches below it are)
    rank = {s: i for i, s in enumerate(switches)}
    for s in sorted(parent, key=lambda s: (height[s], rank[s])):
        out.append(f"SwitchName={s} Nodes={fold(hosts[s])}" if hosts[s] else
                   f"SwitchName={s} Switches={fold(children[s])}")
    return "\n".join(out) + "\n"


def _depth(s: str, parent: dict) -> int:
    d = 0
    while parent[s] is not None:
        s, d = parent[s], d + 1
    return d
