"""Runs across a testbed: the site a run's ranks go to (its launch spec,
which reaches the hosts through the agent; its network file), and the watch
that reads the cables' counters around every launch, names the cut cable and
the ranks whose routes cross it when a launch goes silent, and leaves no
process behind."""

from __future__ import annotations

import time
from dataclasses import replace

from ..errors import UsageError
from ..measure.launch import make_spec
from ..measure.runner import Watch, ranks_on
from ..measure.session import Launch, Site
from . import cables, netns

IFACE = "eth0"        # every host's first cable (plan.py names host ends eth0, eth1, ...)


class TestbedSite(Site):
    """A run across testbed NAME (`fabriclab run --testbed NAME`): one rank
    per named host (default: the first N hosts), reached by IP (the machine's
    resolver does not know the emulated names) through the testbed's agent,
    with MPI forced onto TCP over the hosts' first cables; its cables are
    watched around every launch."""

    def __init__(self, name: str):
        self.testbed = name

    def spec(self, launch: Launch, m):
        netns.require_root()
        state = netns.load(self.testbed)
        if launch.hostfile:
            raise UsageError("--testbed takes --hosts (its host names), not --hostfile")
        if launch.launcher == "srun":
            raise UsageError("--testbed launches with mpiexec through the testbed's agent, not srun")
        names = self.names(launch, state)
        ips = ",".join(state["addresses"][h] for h in names)
        spec = make_spec("mpiexec", m.mpiexec, m.flavour, launch.ranks, ips, None, launch.ppn,
                         list(launch.launcher_args), "none")
        return replace(spec, agent=state["agent"], prefix=tuple(netns.exec_argv(state, names[0], [])), iface=IFACE)

    def names(self, launch: Launch, state: dict | None = None) -> list[str]:
        """The testbed's hosts the ranks go to, in order: --hosts, else one rank on each of
        the first N (cycling where N exceeds the hosts)."""
        state = state or netns.load(self.testbed)
        names = [h for h in (launch.hosts or "").split(",") if h] or state["hosts"][:launch.ranks]
        unknown = [h for h in names if h not in state["addresses"]]
        if unknown:
            raise UsageError(f"testbed {state['name']} has no host {unknown[0]!r} "
                             f"(hosts: {', '.join(state['hosts'])})")
        if not launch.hosts and launch.ranks > len(state["hosts"]):
            names = [state["hosts"][i % len(state["hosts"])] for i in range(launch.ranks)]
        return names

    def host_names(self, launch: Launch) -> list[str]:
        return list(dict.fromkeys(self.names(launch)))

    def rank_hosts(self, launch: Launch) -> list[str] | None:
        names = self.names(launch)
        return names if len(names) == launch.ranks else None

    def watch(self, spec, counters: bool):
        return TestbedWatch(self.testbed)

    def network(self) -> str | None:
        """The network file the testbed was made from, while it is still there."""
        from pathlib import Path
        source = netns.load(self.testbed).get("source") or ""
        return str(Path(source).resolve()) if source and Path(source).is_file() else None


class TestbedWatch(Watch):
    """Counters of every host's cables before and after a launch: the bytes
    that really crossed the emulated fabric, against the payload the points
    moved (fewer means a path around it, such as shared memory); and every
    cable's own figures over each point's span (cables.py)."""

    def __init__(self, name: str):
        self.state = netns.load(name)
        self.sampler = None
        self.spans: list = []

    def before(self):
        hosts = netns.counters(self.state)
        t0 = time.monotonic()
        token = (hosts, cables.qdisc(self.state), t0)
        self.read_s = time.monotonic() - t0
        self.spans = []
        self.sampler = cables.Sampler(self.state)
        self.sampler.start()
        return token

    def span(self, key: dict, t0: float, t1: float) -> None:
        self.spans.append((key, t0, t1))

    def after(self, token) -> dict:
        self.sampler.stop()
        hosts, shapers, _ = token
        now = netns.counters(self.state)
        t0 = time.monotonic()
        shaped = cables.qdisc(self.state)
        self.read_s += time.monotonic() - t0
        delta = {h: {k: now[h][k] - hosts[h][k] for k in now[h]} for h in now}
        dirs = cables.directions(self.state)
        spans = [{**key, **cables.span_cables(dirs, self.sampler.samples, t0, t1)} for key, t0, t1 in self.spans]
        out = {"testbed": self.state["name"], "counters": delta,
               "wire_bytes": sum(d["tx_bytes"] for d in delta.values()),
               "fabric": f"testbed {self.state['name']}'s cables",
               "shapers": cables.qdisc_delta(dirs, shapers, shaped),
               "spans": [s for s in spans if "cables" in s],
               # what the per-cable records cost: the sampler's CPU and the shapers' reads
               "watch_cost_s": round(self.sampler.cpu_s + self.read_s, 4)}
        if self.sampler.error:
            out["sampler_error"] = self.sampler.error
        return out

    def stopped(self, rank_hosts: list[str]) -> str:
        """Every cable of the network checked, hosts' and switches' alike."""
        try:
            down = netns.cables_down(self.state)
        except UsageError as e:
            return f"The testbed's cables could not be checked ({e})"
        return cut_cables(self.state, down, rank_hosts)

    def cleanup(self) -> None:
        netns.kill_processes(self.state["name"], netns.LAUNCHED)


def cut_cables(state: dict, down: list[int], rank_hosts: list[str]) -> str:
    """A sentence per cut cable (indices in state["cables"]): a host's own cable
    names the ranks on that host; a cable between switches names the ranks
    whose routes (the model's, recorded by the plan) cross it."""
    if not down:
        return f"Every cable of testbed {state['name']} is up"
    return "; ".join(_cut(state, k, rank_hosts) for k in down)


def _cut(state: dict, k: int, rank_hosts: list[str]) -> str:
    c = state["cables"][k]
    ends = f"{c['a']}:{c['a_if']} <-> {c['b']}:{c['b_if']}" + (f" ({c['label']})" if c.get("label") else "")
    known = "crossing" in state           # a state written before the plan kept routes: the ends only
    hosts = (crossing_hosts(state["crossing"], k, rank_hosts) if known
             else [h for h in dict.fromkeys(rank_hosts) if h in (c["a"], c["b"])])
    host = next((v for v in (c["a"], c["b"]) if v in hosts), None)
    if host is not None:
        return f"{ranks_on(rank_hosts, [host])} stopped answering: cable {ends} is down"
    if hosts:
        return f"{ranks_on(rank_hosts, hosts)} stopped answering: their routes cross cable {ends}, which is down"
    return f"Cable {ends} is down" + (" (no rank's route crosses it)" if known and rank_hosts else "")


def crossing_hosts(crossing: dict, k: int, rank_hosts: list[str]) -> list[str]:
    """The ranks' hosts whose routes to or from another rank's host cross cable k."""
    hosts = list(dict.fromkeys(rank_hosts))
    hit = {h for a in hosts for b in hosts if a != b and k in crossing.get(a, {}).get(b, ()) for h in (a, b)}
    return [h for h in hosts if h in hit]
