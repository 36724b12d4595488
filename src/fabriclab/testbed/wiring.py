"""From a network file to what the kernel must hold: one namespace per host
and switch, one veth pair per cable (every cable of a `count`), addresses,
and the routes that make packets take exactly the model's paths.

Pure data, no root needed: `netns.py` applies a plan. Addressing:
- host i owns 10.77.x.y/32 on each of its cables (eth0, eth1, ...);
- switch j answers as 10.76.x.y/32 (its "router" address) on every port
  facing a host, so a host's next hop is the same on every switch;
- a cable between two switches is a /31 of 10.78.0.0/16.
Routing: for every pair of hosts the model's D-mod-K route (model/routing.py
GraphRouter.route) is installed hop by hop. Since a switch may forward the
same destination differently depending on where the packet came from (the
D-mod-K key depends on the path so far), each switch looks routes up in a
table per source host (`ip rule from SRC lookup T`); with ECMP routing, each
hop gets a multipath route over the equal-cost cables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import UsageError
from ..model.resources import MB

PREFIX = "fltb"                       # namespaces are PREFIX-NAME-VERTEX
# Whole-string patterns (fullmatch: `$` under re.match also accepts a trailing
# newline, which would split a line of `ip -batch` input in two).
NAME = re.compile(r"[a-z0-9]{1,12}")
VERTEX = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,30}")   # a UTS host name: no '_', no '.'
TABLE0 = 1000                         # routing table of source host i: TABLE0 + i
MAX_HOSTS = 64


def host_addr(i: int) -> str:
    return f"10.77.{i // 250}.{i % 250 + 1}"


def router_addr(j: int) -> str:
    return f"10.76.{j // 250}.{j % 250 + 1}"


def trunk_addrs(k: int) -> tuple[str, str]:
    base = f"10.78.{k // 128}.{(k % 128) * 2}"
    return base, f"10.78.{k // 128}.{(k % 128) * 2 + 1}"


@dataclass(frozen=True)
class Cable:
    """One veth pair: end a in vertex a's namespace, end b in b's."""
    link: int            # index in the file's links
    index: int           # which cable of the link's count
    a: str
    b: str
    a_if: str
    b_if: str
    a_addr: str | None   # address with prefix length on that end
    b_addr: str | None
    rate_Bps: float      # each direction, after the link's efficiency
    label: str = ""      # the model's name of the link ("link trunk", "link trunk, cable 2 of 2")

    def end(self, vertex: str) -> tuple[str, str | None]:
        """(interface, address) of this cable in `vertex`."""
        return (self.a_if, self.a_addr) if vertex == self.a else (self.b_if, self.b_addr)

    def peer_addr(self, vertex: str) -> str | None:
        """The address on the far end from `vertex`, without prefix length."""
        addr = self.b_addr if vertex == self.a else self.a_addr
        return addr.split("/")[0] if addr else None


@dataclass
class Plan:
    name: str
    hosts: list
    switches: list
    cables: list
    routes: dict = field(default_factory=dict)   # vertex -> ["ip route" argument strings]
    rules: dict = field(default_factory=dict)    # vertex -> ["ip rule" argument strings]
    source: str = ""                             # the network file
    crossing: dict = field(default_factory=dict)  # src host -> {dst host: indices of the cables its routes cross}
    ids: dict = field(default_factory=dict)       # switch -> its namespace's name where its own cannot be one

    def namespace(self, vertex: str) -> str:
        return f"{PREFIX}-{self.name}-{self.ids.get(vertex, vertex)}"

    @property
    def addresses(self) -> dict:
        return {h: host_addr(i) for i, h in enumerate(self.hosts)}

    def interfaces(self, vertex: str) -> list[str]:
        return [c.end(vertex)[0] for c in self.cables if vertex in (c.a, c.b)]

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "hosts": self.hosts, "switches": self.switches,
                "addresses": self.addresses,
                "cables": [{"link": c.link, "index": c.index, "a": c.a, "b": c.b, "a_if": c.a_if, "b_if": c.b_if,
                            "rate_MBps": c.rate_Bps / MB, "label": c.label} for c in self.cables],
                "crossing": self.crossing}

    def check(self) -> None:
        """Every name that becomes part of a namespace, a command or the agent script
        matches its whole pattern (netns.up asks again, whoever built the plan)."""
        check_name(self.name)
        for v in self.hosts:
            check_vertex(v, self.source)
        for v in self.switches:
            check_vertex(self.ids.get(v, v), self.source)


def check_name(name) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise UsageError(f"testbed name {name!r}: use 1-12 lower-case letters and digits")
    return name


def check_vertex(name, source: str = "") -> str:
    if not isinstance(name, str) or not VERTEX.fullmatch(name):
        raise UsageError(f"{source or 'network'}: name {name!r} cannot be a host name "
                         "(1-31 ASCII letters, digits and '-', not first)")
    return name


def make(net, name: str, source: str = "") -> Plan:
    """The plan of a model network (topologies.custom.CustomNetwork)."""
    check_name(name)
    hosts, switches = list(net.node_names), list(net.switch_names)
    if len(hosts) > MAX_HOSTS:
        raise UsageError(f"a testbed emulates at most {MAX_HOSTS} hosts on one machine, the file has {len(hosts)}")
    for v in hosts:
        check_vertex(v, source)
    if getattr(net.router, "transit", None) is not None and net.router.transit[: len(hosts)].any():
        raise UsageError(f"{source}: a testbed cannot emulate hosts that forward (transit_nodes: true)")
    plan = Plan(name, hosts, switches, _cables(net, hosts, switches, source), source=source,
                ids=switch_ids(hosts, switches))
    _routes(plan, net)
    return plan


def switch_ids(hosts: list, switches: list) -> dict:
    """{switch: a name for its namespace} for the switches whose own names cannot be one (a
    site's switch descriptions, 'MF0;leaf07:SX6036/U1'): its letters and digits joined by '-',
    at most 24, numbered where that is taken. Only the namespace takes it: the plan, the state
    and every verdict keep the file's name."""
    taken = {v for v in hosts + switches if VERTEX.fullmatch(v)}
    out = {}
    for s in switches:
        if s in taken:
            continue
        base = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-")[:24].rstrip("-") or "switch"
        given, k = base, 0
        while given in taken:
            k += 1
            given = f"{base}-{k}"
        taken.add(given)
        out[s] = given
    return out


def _cables(net, hosts: list, switches: list, source: str) -> list[Cable]:
    """One Cable per cable of every link (each of its `count`), interfaces
    numbered per vertex in file order, addressed as the module says."""
    is_host = set(hosts)
    count: dict = {}
    cables, trunks = [], 0
    names = getattr(net, "link_names", None)
    for i, ln in enumerate(net.links):
        ln = {"a": ln[0], "b": ln[1]} if isinstance(ln, list) else ln
        a, b = str(ln["a"]), str(ln["b"])
        if a in is_host and b in is_host:
            raise UsageError(f"{source}: links[{i}] joins two hosts; a testbed needs a switch between hosts")
        if ln.get("duplex", "full") != "full":
            raise UsageError(f"{source}: links[{i}] is half-duplex; tc shapes each direction on its own, so a "
                             "testbed emulates full-duplex cables only")
        rate = ln["rate_MBps"] if "rate_MBps" in ln else net_default_rate(net, source, i)
        rate = float(rate) * MB * float(ln.get("efficiency", 1.0))
        n = int(ln.get("count", 1))
        for c in range(n):
            ifs = []
            for v in (a, b):
                k = count.get(v, 0)
                count[v] = k + 1
                ifs.append(f"eth{k}" if v in is_host else f"p{k}")
            if a in is_host or b in is_host:
                host, sw = (a, b) if a in is_host else (b, a)
                addrs = {host: host_addr(hosts.index(host)) + "/32", sw: router_addr(switches.index(sw)) + "/32"}
            else:
                lo, hi = trunk_addrs(trunks)
                trunks += 1
                addrs = {a: lo + "/31", b: hi + "/31"}
            label = f"link {names[i] if names else f'{a}-{b}'}" + (f", cable {c + 1} of {n}" if n > 1 else "")
            cables.append(Cable(i, c, a, b, ifs[0], ifs[1], addrs[a], addrs[b], rate, label))
    return cables


def net_default_rate(net, source: str, i: int) -> float:
    rate = getattr(net, "default_rate_MBps", None)
    if rate is None:
        raise UsageError(f"{source}: links[{i}] has no rate_MBps")
    return rate


def _routes(plan: Plan, net) -> None:
    """Install every host pair's route, hop by hop, from the model's router,
    and record the cables each pair's routes cross (a cut cable's victims)."""
    router = net.router
    names = plan.hosts + plan.switches
    by_cable = {(c.link, c.index): k for k, c in enumerate(plan.cables)}
    addr = plan.addresses
    routes = {v: {} for v in names}                  # vertex -> {(table, dst): set of (via, dev)}
    ecmp = net.routing == "ecmp"
    for s, src in enumerate(plan.hosts):
        for d, dst in enumerate(plan.hosts):
            if s == d:
                continue
            crossed = set()
            for v, chans in _hops(router, s, d, ecmp):
                vertex = names[v]
                table = None if v < len(plan.hosts) else TABLE0 + s
                hops = routes[vertex].setdefault((table, dst), set())
                for c in chans:
                    k = by_cable[net.channel_cable[c]]
                    cab = plan.cables[k]
                    crossed.add(k)
                    nxt = names[int(router.dst[c])]
                    via = None if nxt == dst else (router_addr(plan.switches.index(nxt)) if nxt in plan.switches
                                                   and vertex in addr else cab.peer_addr(vertex))
                    hops.add((via, cab.end(vertex)[0]))
            plan.crossing.setdefault(src, {})[dst] = sorted(crossed)
    for vertex, entries in routes.items():
        plan.routes[vertex] = _route_lines(entries, addr)
        if vertex in plan.switches:
            plan.rules[vertex] = [f"from {addr[h]}/32 lookup {TABLE0 + i} pref {TABLE0 + i}"
                                  for i, h in enumerate(plan.hosts)]


def _route_lines(entries: dict, addr: dict) -> list[str]:
    """`ip route` arguments of one vertex: {(table, dst): {(via, dev)}} -> one
    route per destination and table, multipath where there are several hops."""
    lines = []
    for (table, dst), hops in sorted(entries.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        target = f"{addr[dst]}/32"
        nh = [f"via {via} dev {dev} onlink" if via else f"dev {dev}" for via, dev in sorted(hops, key=str)]
        tail = f" table {table}" if table else ""
        if len(nh) == 1:
            lines.append(f"{target} {nh[0]}{tail}")
        else:
            lines.append(f"{target}{tail} " + " ".join(f"nexthop {h}" for h in nh))
    return lines


def _hops(router, s: int, d: int, ecmp: bool):
    """(vertex, channels it forwards on) along the route from s to d: D-mod-K's
    one channel per hop, or ECMP's every equal-cost channel at every vertex reached."""
    if not ecmp:
        for c in router.route(s, d):
            yield int(router.src[c]), [c]
        return
    frontier, seen = {s}, set()
    while frontier:
        nxt = set()
        for v in sorted(frontier):
            if v == d or v in seen:
                continue
            seen.add(v)
            chans = router.choices(d, v)
            yield v, chans
            nxt |= {int(router.dst[c]) for c in chans}
        frontier = nxt
