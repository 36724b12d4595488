"""Per-cable truth of a launch across a testbed: every shaped cable's bytes in
both directions over each point's time, its busiest windows, the shaper's
drops and overlimits, and the CPU the emulation had, so that a disagreement
with the model can be traced to cables and to the emulation itself.

A cable's direction a -> b is what leaves a's end (its interface's transmit
counter, after the shaper). A sampler thread reads every namespace's
/proc/thread-self/net/dev SAMPLE_S apart, entering each namespace with
setns(2) on its own thread (a read, no process started: about 2.5 ms for 14
namespaces here), together with /proc/stat and the ksoftirqd threads'
scheduler statistics and the kernel's input-backlog drops. The shapers' counters (`tc -s qdisc`) are read before
and after the launch. The accounting from those readings is pure
(`span_cables`, `qdisc_delta`) and tested on recorded counters."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import threading
import time
from pathlib import Path

SAMPLE_S = 0.1          # seconds between readings: windows of 100 ms
CLONE_NEWNET = 0x40000000
BUSY_UTIL = 0.9         # a window at >= 90% of the cable's rate is "at rate"
QDISC_FIELDS = ("bytes", "packets", "drops", "overlimits", "requeues")


def directions(state: dict) -> list[dict]:
    """Every cable direction of a testbed: {cable, from, to, dev, rate_Bps}, in
    state["cables"] order, a -> b before b -> a; the rate is the one shaped
    now (a degraded cable's, `testbed degrade`)."""
    out = []
    for k, c in enumerate(state["cables"]):
        rate = c.get("shaped_MBps") or c["rate_MBps"]
        for src, dev, dst in ((c["a"], c["a_if"], c["b"]), (c["b"], c["b_if"], c["a"])):
            out.append({"cable": k, "from": src, "to": dst, "dev": dev, "rate_Bps": rate * 1e6})
    return out


def _net_dev(text: str) -> dict:
    """{interface: (tx_bytes, tx_packets)} from /proc/net/dev's text."""
    out = {}
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        if len(f) >= 10:
            out[name.strip()] = (int(f[8]), int(f[9]))
    return out


def _cpu() -> tuple:
    """(total, idle, softirq) jiffies from /proc/stat's cpu line."""
    f = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    v = [int(x) for x in f]
    return sum(v[:8]), v[3] + v[4], v[6]


def _backlog_drops() -> int:
    """Packets the kernel dropped at its per-CPU input backlog (net.core.netdev_max_backlog):
    /proc/net/softnet_stat's second column, hexadecimal, summed over CPUs. A veth's peer
    receives through that backlog, so these are packets lost between cables, by no shaper."""
    try:
        return sum(int(line.split()[1], 16) for line in Path("/proc/net/softnet_stat").read_text().splitlines()
                   if len(line.split()) > 1)
    except (OSError, ValueError):
        return 0


def _ksoftirqd() -> list[str]:
    """The schedstat files of the kernel's softirq threads (one per CPU)."""
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if (p / "comm").read_text().startswith("ksoftirqd/"):
                    found.append(str(p / "schedstat"))
            except OSError:
                continue
    return found


def _waited(files: list[str]) -> float:
    """Seconds the softirq threads have spent runnable but waiting for a CPU."""
    total = 0
    for f in files:
        try:
            total += int(Path(f).read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


class Sampler:
    """Readings of every cable's transmit counters, the CPU and the softirq
    threads' waiting, SAMPLE_S apart, from start() to stop()."""

    def __init__(self, state: dict):
        self.dirs = directions(state)
        self.namespaces = state["namespaces"]
        self.samples: list = []        # (time, {vertex: {dev: (bytes, packets)}}, cpu, waited, backlog drops)
        self._stop = threading.Event()
        self._thread = None
        self._softirq = _ksoftirqd()
        self.error = ""
        self.cpu_s = 0.0               # the sampler thread's own CPU time: what watching costs

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="cable-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        # setns moves this thread alone into each namespace; the run's own
        # threads stay where they are. The thread ends in the last one.
        libc = ctypes.CDLL(None, use_errno=True)
        fds = {}
        try:
            for v, ns in self.namespaces.items():
                fds[v] = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            while True:
                self.samples.append(self._read(libc, fds))
                if self._stop.wait(SAMPLE_S):
                    self.samples.append(self._read(libc, fds))
                    return
        except OSError as e:
            self.error = f"cable counters could not be sampled: {e.strerror or e}"
        finally:
            for fd in fds.values():
                os.close(fd)
            self.cpu_s = time.thread_time()

    def _read(self, libc, fds: dict) -> tuple:
        """(time, {namespace: counters}, CPU, softirq wait, backlog drops, {namespace: when its
        counters were read}): one pass over the namespaces takes milliseconds, and a
        descheduled pass longer, so each namespace's counters carry their own time."""
        t = time.monotonic()
        devs, at = {}, {}
        for v, fd in fds.items():
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {v} failed")
            before = time.monotonic()
            with open("/proc/thread-self/net/dev") as f:
                text = f.read()
            at[v] = (before + time.monotonic()) / 2
            devs[v] = _net_dev(text)
        return t, devs, _cpu(), _waited(self._softirq), _backlog_drops(), at


def span_cables(dirs: list[dict], samples: list, t0: float, t1: float) -> dict:
    """One point's span [t0, t1] of a launch: per cable direction its bytes,
    rate and utilization over the span, and its busiest windows (the 90th
    percentile of the windows' utilization, and the share of windows at
    BUSY_UTIL of the rate or more); the CPU's idle and softirq shares and the
    share of the span the softirq threads waited for a CPU."""
    inside = [s for s in samples if t0 - SAMPLE_S / 2 <= s[0] <= t1 + SAMPLE_S / 2]
    if len(inside) < 2:
        return {}
    first, last = inside[0], inside[-1]
    dt = last[0] - first[0]
    if dt <= 0:
        return {}
    cables = []
    for d in dirs:
        # each window over the times its own namespace's counters were read
        series = [(s[5].get(d["from"], s[0]) if len(s) > 5 else s[0], s[1].get(d["from"], {}).get(d["dev"], (0, 0)))
                  for s in inside]
        moved = series[-1][1][0] - series[0][1][0]
        span = max(series[-1][0] - series[0][0], 1e-9)
        utils = sorted((b[1][0] - a[1][0]) / max(b[0] - a[0], 1e-9) / d["rate_Bps"]
                       for a, b in zip(series, series[1:]))
        cables.append({"cable": d["cable"], "from": d["from"], "to": d["to"], "bytes": moved,
                       "packets": series[-1][1][1] - series[0][1][1], "Bps": moved / span,
                       "util": moved / span / d["rate_Bps"], "p90_util": utils[int(0.9 * (len(utils) - 1))],
                       "at_rate": sum(u >= BUSY_UTIL for u in utils) / len(utils)})
    (tot0, idle0, soft0), (tot1, idle1, soft1) = first[2], last[2]
    jiffies = max(tot1 - tot0, 1)
    ncpu = os.cpu_count() or 1
    cpu = {"idle": (idle1 - idle0) / jiffies, "softirq": (soft1 - soft0) / jiffies,
           "softirq_wait": (last[3] - first[3]) / (dt * ncpu),
           "backlog_drops": last[4] - first[4] if len(first) > 4 else 0}
    return {"seconds": dt, "cables": cables, "cpu": cpu}


def qdisc(state: dict, run=subprocess.run) -> dict:
    """{"VERTEX DEV": {bytes, packets, drops, overlimits, requeues}} of every shaper."""
    out = {}
    for v, ns in state["namespaces"].items():
        p = run(["tc", "-n", ns, "-s", "-j", "qdisc", "show"], capture_output=True, text=True, timeout=15)
        for q in json.loads(p.stdout or "[]"):
            if q.get("kind") == "tbf":
                out[f"{v} {q.get('dev')}"] = {k: int(q.get(k, 0)) for k in QDISC_FIELDS}
    return out


def qdisc_delta(dirs: list[dict], before: dict, after: dict) -> list[dict]:
    """Per cable direction, what its shaper counted over the launch."""
    out = []
    for d in dirs:
        key = f"{d['from']} {d['dev']}"
        a, b = before.get(key), after.get(key)
        if a is None or b is None:
            continue
        out.append({"cable": d["cable"], "from": d["from"], "to": d["to"],
                    **{k: b[k] - a[k] for k in QDISC_FIELDS}})
    return out
