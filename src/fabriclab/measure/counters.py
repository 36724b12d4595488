"""Interface counters of the hosts a run uses, read through the run's own
launcher (one task per host running a shell one-liner), before and after
each launch: the bytes that really left each host's network interfaces and
InfiniBand ports (`fabriclab run --counters`).

Ethernet-like interfaces: /sys/class/net/IF/statistics/{tx,rx}_bytes.
InfiniBand ports: /sys/class/infiniband/DEV/ports/P/counters/port_{xmit,rcv}_data,
which count in units of 4 bytes (the IBA's PortXmitData/PortRcvData are octets
divided by 4), so they are multiplied by 4 here."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace

from .launch import LaunchSpec, command
from .runner import Watch

# Prints "HOST net IF TX RX" and "HOST ib DEV/PORT TX RX" lines; loopback left out.
SCRIPT = r"""h=$(hostname)
for d in /sys/class/net/*; do i=${d##*/}; [ "$i" = lo ] && continue
  [ -r $d/statistics/tx_bytes ] && echo "$h net $i $(cat $d/statistics/tx_bytes) $(cat $d/statistics/rx_bytes)"
done
for p in /sys/class/infiniband/*/ports/*; do [ -r $p/counters/port_xmit_data ] || continue
  echo "$h ib ${p#/sys/class/infiniband/} $(cat $p/counters/port_xmit_data) $(cat $p/counters/port_rcv_data)"
done"""
TIMEOUT = 60


def parse(text: str) -> dict:
    """{host: {"tx_bytes", "rx_bytes", "interfaces": {name: [tx, rx]}}} from the script's lines."""
    out: dict = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) != 5 or f[1] not in ("net", "ib") or not (f[3].isdigit() and f[4].isdigit()):
            continue
        scale = 4 if f[1] == "ib" else 1          # IB data counters count 4-byte words
        tx, rx = int(f[3]) * scale, int(f[4]) * scale
        h = out.setdefault(f[0], {"tx_bytes": 0, "rx_bytes": 0, "interfaces": {}})
        if f[2] not in h["interfaces"]:
            h["interfaces"][f[2]] = [tx, rx]
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

    def read(self) -> dict:
        argv, env = command(self.spec, ["sh", "-c", SCRIPT])
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                               env={**os.environ, **env})
        except (OSError, subprocess.TimeoutExpired):
            return {}
        return parse(p.stdout)

    def before(self):
        return self.read()

    def after(self, token) -> dict:
        now = self.read()
        if not token or not now:
            return {"counters": None}
        delta = {h: {"tx_bytes": now[h]["tx_bytes"] - token[h]["tx_bytes"],
                     "rx_bytes": now[h]["rx_bytes"] - token[h]["rx_bytes"]} for h in now if h in token}
        return {"counters": delta, "wire_bytes": sum(d["tx_bytes"] for d in delta.values()),
                "fabric": "the hosts' network interfaces"}
