"""An InfiniBand fabric as ibnetdiscover prints it, read into a network file's dict.

Two of ibnetdiscover's outputs are read: its topology (the default, and `-f`,
which adds each port's raw active codes `s= w= v=`) and its ports report (`-p`):

    Switch  36 "S-0002c90300a1b2c0"   # "MF0;leaf07:MQM8700/U1" enhanced port 0 lid 3 lmc 0
    [17]    "H-0002c90300ffee10"[1](2c90300ffee11)   # "node12 mlx5_0" lid 41 4xHDR
    Ca      1 "H-0002c90300ffee10"    # "node12 mlx5_0"
    [1](2c90300ffee11)  "S-0002c90300a1b2c0"[17]   # lid 41 lmc 0 "MF0;leaf07:MQM8700/U1" lid 3 4xHDR

    CA    41  1 0x0002c90300ffee11 4x HDR - SW     3 17 0x0002c90300a1b2c0 ( 'node12 mlx5_0' - 'MF0;leaf07...' )

Every cable is printed from both of its ends; it is kept once, after both ends'
records are found to name each other and to agree on width and speed. Parallel
cables stay separate links. A host is the first word of its adapters'
descriptions (as slurmibtopology names them), so a host's several adapters or
ports are one node with several cables; a switch is named by its description,
the host name of a managed switch's "MF0;NAME:MODEL/U1" where it has one. A
`hosts` mapping (node GUID, port GUID or description -> name) overrides both.

ibnetdiscover prints only each port's *active* width and speed, in every mode
(the supported and enabled ones are in PortInfo, which iblinkinfo reads), so a
cable is flagged degraded from what is printed: when its width or its speed is
below what BOTH its ends run on their other cables (an end with no other cable
is judged by the other devices of its kind: same node type, vendor and device id,
or, in the -p report that prints no ids, the same node type).

Everything a file can hold ends in one UsageError line: lines are at most
MAX_LINE characters, the text MAX_TEXT, counts the model's limits, names 1-200
characters that print (shown escaped otherwise).
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath

from ..datafile import shown
from ..errors import UsageError
from ..model.choices import MAX_NODES
from ..model.limits import MAX_NAME_CHARS
from ..model.topologies.custom import MAX_CABLES, MAX_SWITCHES
from . import ibrates

MAX_TEXT = 64 << 20              # as a network file (docs/model.md, "Limits on network files")
MAX_LINES = 1_500_000           # 100,000 hosts print about a million (seven lines an adapter in the topology)
MAX_LINE = 4096                  # a NodeDescription is 64 bytes (IBTA vol. 1, NodeDescription); lines are short
MAX_PORT = 255                   # port numbers are 8 bits (IBTA vol. 1, PortInfo LocalPortNum)
MAX_HOSTS_MAP = 200_000
KINDS = {"Switch": "SW", "Ca": "CA", "Rt": "RT"}
LETTER = {"S": "SW", "H": "CA", "R": "RT"}
_HEX = r"[0-9a-fA-F]{1,16}"
_HEADER = re.compile(rf'(Switch|Ca|Rt)\s+(\d{{1,9}})\s+"([SHR])-({_HEX})"\s*#\s*"(.*)"(.*)')
_SW_TRAILER = re.compile(r"\s*(?:(?:base|enhanced) port 0 lid \d{1,5} lmc \d{1,3})?\s*")
_PORT = re.compile(rf'\[(\d{{1,9}})\](?:\[ext \d{{1,4}}\])?(?:\(({_HEX})\))?\s+"([SHR])-({_HEX})"'
                   rf'\[(\d{{1,9}})\](?:\[ext \d{{1,4}}\])?(?:\(({_HEX})\))?\s*#(.*)')
_TAIL = re.compile(r" lid \d{1,5} (\d{1,2}x ?[A-Za-z0-9]{1,8})(?: s=\d{1,3} w=\d{1,3} v=\d{1,3})?\s*$")
_ATTR = re.compile(r"(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=(0x[0-9a-fA-F]{1,16})(?:\(\w{1,16}\))?")
_PLINE = re.compile(rf"(SW|CA|RT)\s+(\d{{1,5}})\s+(\d{{1,9}})\s+0x({_HEX})\s+(\d{{1,2}}x)\s+([A-Za-z0-9]{{1,8}})"
                    rf"(?:\s+-\s+(SW|CA|RT)\s+(\d{{1,5}})\s+(\d{{1,9}})\s+0x({_HEX})\s+\( '(.*)' - '(.*)' \)"
                    rf"|\s+'(.*)')\s*")
_MF0 = re.compile(r"MF0;([^:;]{1,64}):")


@dataclass(slots=True)
class Node:
    """A switch, adapter or router: its kind (SW, CA, RT), description and device group."""
    kind: str
    guid: str
    desc: str
    group: tuple
    line: int
    ports: int = MAX_PORT


@dataclass(slots=True)
class End:
    """One port's record of its cable: the far node and port, width and speed as printed."""
    node: str
    port: int
    pguid: str
    rnode: str
    rport: int
    rkind: str
    width: str
    speed: str
    line: int


def guid(text: str) -> str:
    """'2c903...' or '0x2c903...' -> '0x' and 16 lower-case hex digits."""
    return f"0x{int(text, 16):016x}"


def detect(text: str) -> bool:
    """Whether text looks like ibnetdiscover's topology or its -p ports report: its header, or one of
    its lines among the first 200 that are not comments (a file may begin with any number of those)."""
    seen = 0
    for line in io.StringIO(text):                  # lazily: the text may be MAX_TEXT long
        s = line.strip()
        if s.startswith("# Topology file: generated"):
            return True
        if not s or s.startswith("#"):
            continue
        if len(s) > MAX_LINE or seen > 200:
            break
        if _HEADER.match(s) or _PLINE.fullmatch(s):
            return True
        seen += 1
    return False


def read(text: str, where: str, hosts: dict | None = None, actives: list | None = None,
         hosts_where: str | None = None) -> dict:
    """The network file dict of an ibnetdiscover output (see the module's docstring);
    `where` names the file in errors and in `source.read`; `hosts` maps a node GUID, a
    port GUID or a description to a name (its errors name `hosts_where`, else `where`). A list given as `actives` receives, link by
    link, (its active width and speed, what both its ends run where it is degraded, else
    None), as `1X SDR` and `4X HDR`."""
    if len(text) > MAX_TEXT:
        raise UsageError(f"{where}: larger than {MAX_TEXT >> 20} MiB, more than any fabric's ibnetdiscover output")
    names_map = _hosts_map(hosts, hosts_where or where)
    if text.count("\n") > MAX_LINES:
        raise UsageError(f"{where}: more than {MAX_LINES:,} lines, more than any fabric the model takes prints")
    lines = _lines(text, where)
    ports_report = _first_record_is_ports(lines)
    nodes, ends = (_parse_ports if ports_report else _parse_topology)(lines, where)
    if not ends:
        raise UsageError(f"{where}: no cables: not ibnetdiscover output (its topology or its -p ports report)")
    cables = _join(nodes, ends, where)
    return _network(nodes, cables, names_map, where, actives)


def _lines(text: str, where: str) -> list:
    """The lines of text (at most MAX_LINES, so at most about 150 MB of strings), none over MAX_LINE."""
    lines = text.split("\n")
    longest = max(map(len, lines))
    if longest > MAX_LINE:
        n = next(i for i, line in enumerate(lines, 1) if len(line) == longest)
        raise UsageError(f"{where}: line {n} is longer than {MAX_LINE:,} characters ({longest:,}): "
                         "not ibnetdiscover output")
    return lines


def _first_record_is_ports(lines: list) -> bool:
    for line in lines:
        s = line.strip()
        if s and not s.startswith("#"):
            return bool(_PLINE.fullmatch(s))
    return False


def _bad_line(where: str, n: int, line: str, why: str = "") -> UsageError:
    return UsageError(f"{where}: line {n}: {why or 'not ibnetdiscover output'}: {shown(line.strip(), 60)}")


def _number(value: str, what: str, hi: int, where: str, n: int) -> int:
    v = int(value)
    if not 1 <= v <= hi:
        raise UsageError(f"{where}: line {n}: {what} {value} is not from 1 to {hi}")
    return v


# ---- the topology (default and -f) ------------------------------------------------------------
def _parse_topology(lines: list, where: str) -> tuple[dict, dict]:
    nodes, ends, attrs, node = {}, {}, {}, None
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            node = None
            continue
        if s.startswith("#"):
            continue
        if s.startswith("["):
            if node is None:
                raise _bad_line(where, n, raw, "a port outside a Switch, Ca or Rt block")
            _port_line(s, node, ends, where, n)
            continue
        m = _ATTR.fullmatch(s)
        if m:
            attrs[m.group(1)] = m.group(2).lower()
            continue
        node = _header(s, attrs, nodes, where, n)
        attrs = {}
    return nodes, ends


def _header(s: str, attrs: dict, nodes: dict, where: str, n: int) -> Node:
    m = _HEADER.fullmatch(s)
    if not m:
        raise _bad_line(where, n, s)
    kind = KINDS[m.group(1)]
    if LETTER[m.group(3)] != kind:
        raise _bad_line(where, n, s, f"a {m.group(1)} named {m.group(3)}-")
    trailer = m.group(6)
    if (kind == "SW" and not _SW_TRAILER.fullmatch(trailer)) or (kind != "SW" and trailer.strip()):
        raise _bad_line(where, n, s)
    g = guid(m.group(4))
    if g in nodes:
        raise UsageError(f"{where}: line {n}: GUID {g} is described twice (lines {nodes[g].line} and {n})")
    if len(nodes) >= MAX_NODES + MAX_SWITCHES:
        raise UsageError(f"{where}: line {n}: more than {MAX_NODES + MAX_SWITCHES:,} switches and adapters")
    ports = _number(m.group(2), "port count", MAX_PORT, where, n)
    node = Node(kind, g, _desc(m.group(5), where, n), (kind, attrs.get("vendid"), attrs.get("devid")), n, ports)
    nodes[g] = node
    return node


def _port_line(s: str, node: Node, ends: dict, where: str, n: int) -> None:
    m = _PORT.fullmatch(s)
    tail = _TAIL.search(m.group(7)) if m else None
    if not tail:
        raise _bad_line(where, n, s)
    port = _number(m.group(1), "port", node.ports, where, n)
    rport = _number(m.group(5), "port", MAX_PORT, where, n)
    width, speed = _active(tail.group(1), where, n)
    pguid = guid(m.group(2)) if m.group(2) else node.guid
    _add(ends, End(node.guid, port, pguid, guid(m.group(4)), rport, LETTER[m.group(3)], width, speed, n), where)


def _active(token: str, where: str, n: int) -> tuple[str, str]:
    try:
        return ibrates.parse_active(token)
    except UsageError as e:
        raise UsageError(f"{where}: line {n}: {e}") from None


def _add(ends: dict, end: End, where: str) -> None:
    key = (end.node, end.port)
    if key in ends:
        raise UsageError(f"{where}: line {end.line}: port {end.port} of {end.node} is listed twice "
                         f"(lines {ends[key].line} and {end.line})")
    if len(ends) >= 2 * MAX_CABLES:
        raise UsageError(f"{where}: line {end.line}: more than {MAX_CABLES:,} cables (the model's limit)")
    ends[key] = end


def _desc(text: str, where: str, n: int) -> str:
    if len(text) > MAX_NAME_CHARS or not text.isprintable():
        raise UsageError(f"{where}: line {n}: a description of {len(text):,} characters, or holding one that "
                         f"does not print: {shown(text, 60)}")
    return text


# ---- the ports report (-p) --------------------------------------------------------------------
def _parse_ports(lines: list, where: str) -> tuple[dict, dict]:
    """Nodes keyed by the GUID printed (a switch's node GUID, an adapter port's GUID)."""
    nodes, ends = {}, {}
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        m = _PLINE.fullmatch(s)
        if not m:
            raise _bad_line(where, n, raw)
        kind, g = m.group(1), guid(m.group(4))
        _seen(nodes, Node(kind, g, _desc(m.group(11) or m.group(13) or "", where, n), (kind,), n), where)
        if m.group(7) is None:
            continue                             # a port without a cable
        rkind, rg = m.group(7), guid(m.group(10))
        _seen(nodes, Node(rkind, rg, _desc(m.group(12), where, n), (rkind,), n), where)
        width, speed = _active(f"{m.group(5)}{m.group(6)}", where, n)
        port = _number(m.group(3), "port", MAX_PORT, where, n)
        rport = _number(m.group(9), "port", MAX_PORT, where, n)
        _add(ends, End(g, port, g, rg, rport, rkind, width, speed, n), where)
    return nodes, ends


def _seen(nodes: dict, node: Node, where: str) -> None:
    """A node as one more line prints it: the same kind and description every time."""
    old = nodes.get(node.guid)
    if old is None:
        if len(nodes) >= MAX_NODES + MAX_SWITCHES:
            raise UsageError(f"{where}: line {node.line}: more than {MAX_NODES + MAX_SWITCHES:,} switches and "
                             "adapters")
        nodes[node.guid] = node
    elif (old.kind, old.desc) != (node.kind, node.desc):
        raise UsageError(f"{where}: line {node.line}: GUID {node.guid} is {old.kind} {shown(old.desc)} on line "
                         f"{old.line} and {node.kind} {shown(node.desc)} here")


# ---- cables -----------------------------------------------------------------------------------
def _join(nodes: dict, ends: dict, where: str) -> list:
    """Each cable once, as (end, far end), after both ends' records are checked against each other."""
    cables = []
    for key, end in ends.items():
        far = ends.get((end.rnode, end.rport))
        here = f"{end.node} [{end.port}]"
        there = f"{end.rnode} [{end.rport}]"
        if end.rnode not in nodes:
            raise UsageError(f"{where}: line {end.line}: {here} leads to {end.rnode}, which the file does not "
                             "describe (is it cut short?)")
        if nodes[end.rnode].kind != end.rkind:
            raise UsageError(f"{where}: line {end.line}: {here} leads to {there} as a {end.rkind}, but "
                             f"{end.rnode} is a {nodes[end.rnode].kind} (line {nodes[end.rnode].line})")
        if far is None:
            raise UsageError(f"{where}: line {end.line}: {here} leads to {there}, which records no cable "
                             "(is the file cut short?)")
        if (far.rnode, far.rport) != key:
            raise UsageError(f"{where}: line {end.line}: {here} leads to {there}, but {there} leads to "
                             f"{far.rnode} [{far.rport}] (line {far.line})")
        if (far.width, far.speed) != (end.width, end.speed):
            raise UsageError(f"{where}: line {end.line}: {here} runs {end.width} {end.speed} but its far end "
                             f"{there} runs {far.width} {far.speed} (line {far.line})")
        if key < (end.rnode, end.rport):
            cables.append((end, far))
    return cables


def _degraded(cables: list, nodes: dict) -> dict:
    """Cable index -> (why it is degraded, what both ends run): its width or speed below what
    both ends run on their other cables (an end without another cable: what the other
    devices of its group run)."""
    lanes = [ibrates.WIDTHS[a.width] for a, _ in cables]
    lane = [ibrates.lane_Gbps(a.speed) for a, _ in cables]
    own, group = {}, {}
    for i, (a, b) in enumerate(cables):
        for e in (a, b):
            own.setdefault(e.node, {})[i] = None
            group.setdefault(nodes[e.node].group, {})[i] = None
    tops = {g: (_top2(ix, lanes), _top2(ix, lane)) for g, ix in group.items()}
    own_tops = {g: (_top2(ix, lanes), _top2(ix, lane)) for g, ix in own.items()}

    def best(i: int, node: str):
        w, s = own_tops[node] if len(own[node]) > 1 else tops[nodes[node].group]
        return _other(w, i), _other(s, i)

    out = {}
    for i, (a, b) in enumerate(cables):
        (wa, sa), (wb, sb) = best(i, a.node), best(i, b.node)
        slow, width, speed = [], a.width, a.speed
        if None not in (wa, wb) and lanes[i] < min(wa, wb):
            width = f"{min(wa, wb)}X"
            slow.append(f"width {a.width}, where both ends run {width} on other cables")
        if None not in (sa, sb) and lane[i] < min(sa, sb):
            speed = next(s for s, v in ibrates.SPEEDS.items() if v[1] == min(sa, sb))
            slow.append(f"speed {a.speed}, where both ends run {speed} on other cables")
        if slow:
            out[i] = ("; ".join(slow), f"{width} {speed}")
    return out


def _top2(indices, values: list) -> list:
    """The two largest (value, cable index) of a group's cables."""
    top = []
    for j in indices:
        top = sorted(top + [(values[j], j)], reverse=True)[:2]
    return top


def _other(top: list, i: int):
    """The largest value among a group's cables other than cable i, or None."""
    rest = [v for v, j in top if j != i]
    return rest[0] if rest else None


# ---- names and the network file ---------------------------------------------------------------
def _hosts_map(hosts, where: str) -> dict:
    """{GUID as 0x + 16 hex digits, or a description: name}; YAML reads 0x... keys as integers."""
    if hosts is None:
        return {}
    if not isinstance(hosts, dict):
        raise UsageError(f"{where}: hosts: a mapping of GUID or description to name, got {shown(hosts)}")
    if len(hosts) > MAX_HOSTS_MAP:
        raise UsageError(f"{where}: hosts: at most {MAX_HOSTS_MAP:,} entries, got {len(hosts):,}")
    out = {}
    for k, v in hosts.items():
        if isinstance(k, int) and not isinstance(k, bool) and 0 <= k < 1 << 64:
            key = f"0x{k:016x}"
        elif isinstance(k, str) and re.fullmatch(r"0x[0-9a-fA-F]{1,16}", k):
            key = guid(k)
        elif isinstance(k, str) and k[:2].lower() == "0x":      # a GUID mistyped, not a description
            raise UsageError(f"{where}: hosts: {shown(k)} begins as a GUID but is not one (0x and 1 to 16 hex digits)")
        elif isinstance(k, str) and k and k.isprintable() and len(k) <= MAX_NAME_CHARS:
            key = k
        else:
            raise UsageError(f"{where}: hosts: a key must be a GUID or a description, got {shown(k)}")
        out[key] = _name(v, f"hosts[{key if isinstance(k, int) else shown(k)}]", where)   # YAML's 0x.. key as hex
    return out


def _name(value, what: str, where: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS or not value.isprintable():
        raise UsageError(f"{where}: {what}: a name is 1 to {MAX_NAME_CHARS} characters that print, "
                         f"got {shown(value)}")
    return value


def _node_names(nodes: dict, port_guids: dict, names_map: dict, where: str) -> dict:
    """Node GUID -> name: the hosts map's (by node GUID, a port's GUID, or description), else a
    host's first word, a managed switch's own name, or a switch's description."""
    out, switch_guids = {}, {}
    for g, node in nodes.items():
        mapped = [names_map[k] for k in (g, *port_guids.get(g, ()), node.desc) if k in names_map]
        if mapped:
            out[g] = mapped[0]
        elif node.kind == "CA":
            if not node.desc.split():
                raise UsageError(f"{where}: line {node.line}: adapter {g} has an empty description; "
                                 "name it in a hosts map")
            out[g] = node.desc.split()[0]
        else:
            m = _MF0.match(node.desc)
            out[g] = m.group(1) if m else (node.desc.strip() or g)
            switch_guids.setdefault(out[g], []).append(g)
    for name, gs in switch_guids.items():     # switches of one description are told apart by GUID
        if len(gs) > 1:
            out.update({g: f"{name} {g}"[:MAX_NAME_CHARS] for g in gs})
    return out


def _natural(name: str) -> tuple:
    """'leaf10' after 'leaf9': digits compare as numbers."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name) if t)


def _network(nodes: dict, cables: list, names_map: dict, where: str, actives: list | None = None) -> dict:
    port_guids = {}
    for a, b in cables:
        for e in (a, b):
            port_guids.setdefault(e.node, set()).add(e.pguid)
    used = {e.node for c in cables for e in c}
    named = _node_names({g: nodes[g] for g in used}, port_guids, names_map, where)
    hosts = {named[g] for g in used if nodes[g].kind == "CA"}
    switches = {named[g] for g in used if nodes[g].kind != "CA"}
    clash = hosts & switches
    if clash:
        raise UsageError(f"{where}: {shown(min(clash))} names both an adapter and a switch; tell them apart "
                         "in a hosts map")
    hosts, switches = sorted(hosts, key=_natural), sorted(switches, key=_natural)
    if len(hosts) > MAX_NODES:
        raise UsageError(f"{where}: {len(hosts):,} hosts, more than the model's {MAX_NODES:,}")
    if len(switches) > MAX_SWITCHES:
        raise UsageError(f"{where}: {len(switches):,} switches, more than the model's {MAX_SWITCHES:,}")
    index = {nm: i for i, nm in enumerate(hosts + switches)}
    links = _links(cables, nodes, named, index, actives)
    read_as = _file_name(where)
    return {"name": f"InfiniBand fabric of {read_as}", "source": {"format": "ibnetdiscover", "read": read_as},
            "routing": "d-mod-k", "nodes": hosts, "switches": switches, "links": links}


def _links(cables: list, nodes: dict, named: dict, index: dict, actives: list | None = None) -> list:
    """The links in order of their ends (hosts, then switches, each in natural order). An end
    on a host of several adapters is labelled by the adapter's description, and a port number
    that two of a name's cables share (two adapters' port 1) is left out (null): the GUIDs
    still tell those ports apart."""
    flags = _degraded(cables, nodes)
    descs: dict = {}
    for g in {e.node for c in cables for e in c}:
        descs.setdefault(named[g], set()).add(nodes[g].desc)
    label = {g: nodes[g].desc if nodes[g].kind == "CA" and len(descs[named[g]]) > 1 else named[g]
             for g in {e.node for c in cables for e in c}}
    out = []                                     # (link, (active, what both ends run))
    for i, (a, b) in enumerate(cables):
        if named[a.node] == named[b.node]:
            continue                             # a loop back into the same switch or host carries nothing
        if index[named[b.node]] < index[named[a.node]]:
            a, b = b, a
        why, runs = flags.get(i, (None, None))
        out.append((_link(a, b, named, label, why), (f"{a.width} {a.speed}", runs)))
    used = Counter((ln[end], p) for ln, _ in out for end, p in zip("ab", ln["ports"]))
    for ln, _ in out:
        ln["ports"] = [p if used[ln[end], p] == 1 else None for end, p in zip("ab", ln["ports"])]
    out.sort(key=lambda x: (index[x[0]["a"]], index[x[0]["b"]], _natural(x[0]["name"])))
    if actives is not None:
        actives.extend(act for _, act in out)
    return [ln for ln, _ in out]


def _link(a: End, b: End, named: dict, label: dict, degraded: str | None) -> dict:
    la, lb = label[a.node], label[b.node]
    text = f"{la} [{a.port}] -- {lb} [{b.port}]"
    if len(text) > MAX_NAME_CHARS:
        text = f"{la[:90]}... [{a.port}] -- {lb[:90]}... [{b.port}]"
    ln = {"a": named[a.node], "b": named[b.node], "rate_MBps": ibrates.rate_MBps(a.width, a.speed), "name": text,
          "ports": [a.port, b.port], "guids": [a.pguid, b.pguid]}
    if degraded:
        ln["degraded"] = degraded
    return ln


def _file_name(where: str) -> str:
    name = PurePath(str(where)).name or str(where)
    if not name.isprintable() or len(name) > 150:
        name = shown(name, 150).strip("'")
    return name if name.isprintable() else "ibnetdiscover output"
