"""Runs across a testbed: the launch spec that reaches its hosts through the
agent, and the watch that reads the cables' counters around every launch,
names the hosts that stopped answering, and leaves no process behind."""

from __future__ import annotations

from dataclasses import replace

from ..errors import UsageError
from ..measure.launch import make_spec
from ..measure.runner import Watch
from . import netns

IFACE = "eth0"        # every host's first cable (plan.py names host ends eth0, eth1, ...)


def testbed_spec(args, m):
    """The LaunchSpec of `fabriclab run --testbed NAME`: one rank per named
    host (default: the first N hosts), by IP (the machine's resolver does not
    know the emulated names), through the testbed's agent."""
    netns.require_root()
    state = netns.load(args.testbed)
    if args.hostfile:
        raise UsageError("--testbed takes --hosts (its host names), not --hostfile")
    if args.launcher == "srun":
        raise UsageError("--testbed launches with mpiexec through the testbed's agent, not srun")
    names = [h for h in (args.hosts or "").split(",") if h] or state["hosts"][:args.ranks]
    unknown = [h for h in names if h not in state["addresses"]]
    if unknown:
        raise UsageError(f"testbed {state['name']} has no host {unknown[0]!r} (hosts: {', '.join(state['hosts'])})")
    if not args.hosts and args.ranks > len(state["hosts"]):
        names = [state["hosts"][i % len(state["hosts"])] for i in range(args.ranks)]
    ips = ",".join(state["addresses"][h] for h in names)
    spec = make_spec("mpiexec", m.mpiexec, m.flavour, args.ranks, ips, None, args.ppn, args.launcher_arg, "none")
    return replace(spec, agent=state["agent"], prefix=tuple(netns.exec_argv(state, names[0], [])), iface=IFACE)


class TestbedWatch(Watch):
    """Counters of every host's cables before and after a launch: the bytes
    that really crossed the emulated fabric, against the payload the points
    moved (fewer means a path around it, such as shared memory)."""

    def __init__(self, name: str):
        self.state = netns.load(name)

    def before(self):
        return netns.counters(self.state)

    def after(self, token) -> dict:
        now = netns.counters(self.state)
        delta = {h: {k: now[h][k] - token[h][k] for k in now[h]} for h in now}
        return {"testbed": self.state["name"], "counters": delta,
                "wire_bytes": sum(d["tx_bytes"] for d in delta.values()),
                "fabric": f"testbed {self.state['name']}'s cables"}

    def stopped(self) -> list[str]:
        return netns.links_down(self.state)

    def cleanup(self) -> None:
        netns.kill_processes(self.state["name"], netns.LAUNCHED)
