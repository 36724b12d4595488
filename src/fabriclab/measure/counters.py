"""Interface counters of the hosts a run uses, read through the run's own
launcher (one task per host running a shell one-liner), before and after
each launch: the bytes that really left each host's network interfaces and
InfiniBand ports (`fabriclab run --counters`).

Ethernet-like interfaces: /sys/class/net/IF/statistics/{tx,rx}_bytes.
InfiniBand ports: /sys/class/infiniband/DEV/ports/P/counters/port_{xmit,rcv}_data,
which count in units of 4 bytes (the IBA's PortXmitData/PortRcvData are octets
divided by 4), so they are multiplied by 4 here. Each line also carries the
interface's state (operstate; an IB port's state, ACTIVE when it carries data).

When a launch goes silent, the watch reads the counters twice, QUIET_S apart,
while the ranks still run, and names what it can without knowing the routes:
hosts that do not answer, interfaces that went down during the launch, and
interfaces that carried the launch's traffic and then stopped counting."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import replace

from .launch import LaunchSpec, command
from .runner import Watch, ranks_on

# Prints "HOST net IF TX RX STATE" and "HOST ib DEV/PORT TX RX STATE" lines; loopback left out.
SCRIPT = r"""h=$(hostname)
for d in /sys/class/net/*; do i=${d##*/}; [ "$i" = lo ] && continue
  [ -r $d/statistics/tx_bytes ] && echo "$h net $i $(cat $d/statistics/tx_bytes) $(cat $d/statistics/rx_bytes)" \
    "$(cat $d/operstate 2>/dev/null)"
done
for p in /sys/class/infiniband/*/ports/*; do [ -r $p/counters/port_xmit_data ] || continue
  s=$(cat $p/state 2>/dev/null)
  echo "$h ib ${p#/sys/class/infiniband/} $(cat $p/counters/port_xmit_data) $(cat $p/counters/port_rcv_data) ${s##* }"
done"""
TIMEOUT = 60
CHECK_TIMEOUT = 15     # seconds for each reading after a launch went silent
QUIET_S = 2.0          # seconds between those two readings
COUNT = re.compile(r"[0-9]+")
# States of an interface that carries nothing: operstate (Documentation/ABI sysfs-class-net)
# and the IB port states before ACTIVE (IBA vol. 1 §7.2: DOWN, INIT, ARMED).
DOWN = {"down", "lowerlayerdown", "notpresent", "init", "armed"}


def parse(text: str) -> dict:
    """{host: {"tx_bytes", "rx_bytes", "interfaces": {name: [tx, rx]}, "states": {name: state}}}
    from the script's lines (the state, lower-case, may be missing: "")."""
    out: dict = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) not in (5, 6) or f[1] not in ("net", "ib") or not (COUNT.fullmatch(f[3]) and COUNT.fullmatch(f[4])):
            continue
        scale = 4 if f[1] == "ib" else 1          # IB data counters count 4-byte words
        tx, rx = int(f[3]) * scale, int(f[4]) * scale
        h = out.setdefault(f[0], {"tx_bytes": 0, "rx_bytes": 0, "interfaces": {}, "states": {}})
        if f[2] not in h["interfaces"]:
            h["interfaces"][f[2]] = [tx, rx]
            h["states"][f[2]] = f[5].lower() if len(f) == 6 else ""
            h["tx_bytes"] += tx
            h["rx_bytes"] += rx
    return out


def hosts_of(spec: LaunchSpec) -> int:
    return len(dict.fromkeys(spec.hosts)) if spec.hosts else 1


class CounterWatch(Watch):
    """Counters of every host of the launch, read before and after it."""

    def __init__(self, spec: LaunchSpec):
        n = hosts_of(spec)
        hosts = tuple(dict.fromkeys(spec.hosts))
        self.spec = replace(spec, nranks=n, hosts=hosts, ppn=1, bind="none")
        self.start: dict = {}          # the reading at the current launch's start

    def read(self, timeout: float = TIMEOUT) -> dict:
        """One reading of every host; hosts that did not answer in time are missing."""
        argv, env = command(self.spec, ["sh", "-c", SCRIPT])
        try:
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 env={**os.environ, **env}, start_new_session=True)
        except OSError:
            return {}
        try:
            out = p.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            out = _end(p)
        return parse(out or "")

    def before(self):
        self.start = self.read()
        return self.start

    def after(self, token) -> dict:
        now = self.read()
        if not token or not now:
            return {"counters": None}
        delta = {h: {"tx_bytes": now[h]["tx_bytes"] - token[h]["tx_bytes"],
                     "rx_bytes": now[h]["rx_bytes"] - token[h]["rx_bytes"],
                     "interfaces": {i: [now[h]["interfaces"][i][0] - v[0], now[h]["interfaces"][i][1] - v[1]]
                                    for i, v in token[h]["interfaces"].items() if i in now[h]["interfaces"]}}
                 for h in now if h in token}
        return {"counters": delta, "wire_bytes": sum(d["tx_bytes"] for d in delta.values()),
                "fabric": "the hosts' network interfaces"}

    def stopped(self, rank_hosts: list[str]) -> str:
        first = self.read(CHECK_TIMEOUT)
        time.sleep(QUIET_S)
        return silent(self.start, first, self.read(CHECK_TIMEOUT), rank_hosts)


def _end(p: subprocess.Popen) -> str:
    """End a reading that ran out of time: SIGTERM first (the launcher then stops
    what it started where it still can), SIGKILL to its process group after 3 s
    (its children too, or they would hold the pipe); what the hosts that answered printed."""
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return p.communicate(timeout=wait)[0]
        except subprocess.TimeoutExpired:
            continue
    return ""


def silent(start: dict, first: dict, last: dict, rank_hosts: list[str]) -> str:
    """What three readings (at the launch's start, and twice QUIET_S apart after
    it went silent) say: hosts that no longer answer, interfaces that went down
    during the launch, interfaces that moved the launch's bytes and then none."""
    if start and not last:
        return f"No host answered the counter read within {CHECK_TIMEOUT} s"
    said = []
    lost = [h for h in start if h not in last]
    if lost:
        said.append(f"{ranks_on(rank_hosts, lost)} stopped answering: {', '.join(lost)} did not answer "
                    "the counter read")
    for h in (h for h in last if h in start):
        went = [i for i, st in last[h]["states"].items() if st in DOWN and start[h]["states"].get(i) not in DOWN]
        if went:
            said.append(f"{ranks_on(rank_hosts, [h])} stopped answering: interface{'s' if len(went) > 1 else ''} "
                        f"{', '.join(went)} of {h} went down")
    quiet = {h: _quiet(start[h], first[h], last[h]) for h in last if h in start and h in first}
    quiet = {h: ifs for h, ifs in quiet.items() if ifs}
    if quiet:
        which = ", ".join(f"{i} on {h}" for h, ifs in quiet.items() for i in ifs)
        said.append(f"{ranks_on(rank_hosts, list(quiet))}: {which} stopped counting (no byte in {QUIET_S:g} s "
                    "after carrying the launch's traffic)")
    return "; ".join(said)


def _quiet(start: dict, first: dict, last: dict) -> list[str]:
    """Interfaces whose counters moved between start and first but not since."""
    s, f, n = start["interfaces"], first["interfaces"], last["interfaces"]
    return [i for i in n if i in s and i in f and f[i] != s[i] and n[i] == f[i]]
