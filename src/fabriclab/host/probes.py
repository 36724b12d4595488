"""The machine check's probes (host/machine.py), one per disturbance, each
reading /proc and /sys through a Tree and returning one Check.

The list follows pyperf's `system show` and the tuning guides of the MPI and
RDMA stacks: what changes a benchmark's time from one launch to the next
(steal, frequency, other processes, interrupts, page collapsing) and what
makes registration fail (the memory lock limit)."""

from __future__ import annotations

import os
import re

from ..units import fmt_bytes
from .sysfs import Check, Snapshot, Tree

CPU = "sys/devices/system/cpu"
THP = "sys/kernel/mm/transparent_hugepage"
STEAL_WARN = 0.01     # any steal shows a shared physical host; 1% is above /proc/stat's tick resolution
BUSY_SHARE = 0.2      # a process using a fifth of a CPU or more competes with the ranks


def virtualization(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    flags = next((line for line in (tree.read("proc/cpuinfo") or "").splitlines() if line.startswith("flags")), "")
    vendor = " ".join(w for w in (tree.word("sys/class/dmi/id/sys_vendor"), tree.word("sys/hypervisor/type"),
                                  tree.word("sys/class/dmi/id/product_name")) if w)
    if "hypervisor" not in flags.split() and not tree.word("sys/hypervisor/type"):
        return Check("virtualization", "ok", f"bare metal{f' ({vendor})' if vendor else ''}")
    return Check("virtualization", "warn", f"virtual machine ({vendor or 'hypervisor flag set; vendor not reported'})",
                   "virtual CPUs are threads on a host that may run other guests: steal time and the cost "
                   "of virtualised timers and interrupts add launch-to-launch spread")


def steal(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    if first.cpu is None:
        return Check("steal", "unknown", "/proc/stat has no aggregate cpu line")
    boot = _steal_share(first.cpu)
    now = _steal_share([b - a for a, b in zip(first.cpu, second.cpu)]) if second and second.cpu else None
    value = f"{boot:.1%} of CPU time since boot" + (f", {now:.1%} over the last {second.at - first.at:.1f} s"
                                                       if now is not None else "")
    if max(boot, now or 0.0) < STEAL_WARN:
        return Check("steal", "ok", value)
    return Check("steal", "warn", value, "the hypervisor gave this machine's CPU time to other guests: a "
                   "sample that spans it is slower, by a different amount in every launch")


def _steal_share(ticks: list) -> float:
    total = sum(ticks[:8])           # user nice system idle iowait irq softirq steal (proc(5))
    return ticks[7] / total if len(ticks) > 7 and total > 0 else 0.0


def governor(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    files = tree.glob(f"{CPU}/cpu[0-9]*/cpufreq/scaling_governor")
    if not files:
        return Check("governor", "info", "no cpufreq: this kernel does not set the CPU frequency (on a virtual "
                       "machine the host does); nothing to tune here")
    govs = {f: tree.word(f) or "?" for f in files}
    slow = [f for f, g in govs.items() if g != "performance"]
    kinds = ", ".join(sorted(set(govs.values())))
    if not slow:
        return Check("governor", "ok", f"performance on {len(files)} CPUs")
    can = all("performance" in (tree.read(f.parent / "scaling_available_governors") or "").split() for f in slow)
    return Check("governor", "warn", f"{kinds} on {len(slow)} of {len(files)} CPUs",
                   "the clock follows the load: short points and the first samples of a launch run at a lower "
                   "frequency than the rest",
                   "cpupower frequency-set -g performance", tuple((str(f), "performance") for f in slow) if can else ())


def turbo(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    effect = ("the clock depends on temperature and on how many cores are busy, so a point's time depends on "
              "what ran before it and beside it")
    no_turbo = tree.word(f"{CPU}/intel_pstate/no_turbo")
    if no_turbo is not None:
        if no_turbo == "1":
            return Check("turbo", "ok", "turbo off (intel_pstate)")
        return Check("turbo", "warn", "turbo on (intel_pstate)", effect,
                       f"echo 1 > /{CPU}/intel_pstate/no_turbo", ((str(tree.path(f"{CPU}/intel_pstate/no_turbo")), "1"),))
    boost = tree.word(f"{CPU}/cpufreq/boost")
    if boost is None:
        return Check("turbo", "info", "no turbo or boost control (intel_pstate/no_turbo, cpufreq/boost)")
    if boost == "0":
        return Check("turbo", "ok", "boost off (cpufreq)")
    return Check("turbo", "warn", "boost on (cpufreq)", effect, f"echo 0 > /{CPU}/cpufreq/boost",
                   ((str(tree.path(f"{CPU}/cpufreq/boost")), "0"),))


def smt(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    active = tree.word(f"{CPU}/smt/active")
    lists = [tree.word(f) or "" for f in tree.glob(f"{CPU}/cpu[0-9]*/topology/thread_siblings_list")]
    shared = sorted({x for x in lists if any(c in x for c in ",-")})
    if active == "0" or (active is None and not shared):
        return Check("smt", "ok", "no SMT siblings" + (f" ({tree.word(f'{CPU}/smt/control')})"
                                                          if tree.word(f"{CPU}/smt/control") else ""))
    return Check("smt", "info", f"SMT on: sibling threads {'; '.join(shared[:4]) or 'reported active'}",
                   "two ranks on sibling threads share a core's execution units and L1/L2 caches",
                   "keep --bind core (the default) so ranks land on separate cores; "
                   f"`echo off > /{CPU}/smt/control` takes the siblings offline (`echo on` brings them back)")


def isolation(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    iso = _cpulist(tree.word(f"{CPU}/isolated"))
    nohz = _cpulist(tree.word(f"{CPU}/nohz_full"))
    if iso or nohz:
        return Check("isolation", "ok", f"isolated CPUs {iso or '-'}, nohz_full {nohz or '-'}",
                       fix="run the ranks on them (--launcher-arg with the launcher's CPU list)")
    return Check("isolation", "info", "no isolated or nohz_full CPUs",
                   "ranks share their cores with the kernel's timer tick, its threads and every other process",
                   "add isolcpus=LIST nohz_full=LIST rcu_nocbs=LIST to the kernel command line and reboot")


def _cpulist(text: str | None) -> str:
    return "" if not text or text == "(null)" else text


def irq(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    table = (tree.read("proc/interrupts") or "").splitlines()
    found = []
    for nic, dev in _nics(tree):
        nums = [line.split(":", 1)[0].strip() for line in table[1:]
                if ":" in line and any(re.match(rf"{re.escape(n)}(\D|$)", line.split()[-1]) for n in (nic, dev) if n)]
        cpus = sorted({tree.word(f"proc/irq/{n}/smp_affinity_list") or "?" for n in nums if n.isdigit()})
        found.append(f"{nic}: {len(nums)} IRQs on CPUs {' / '.join(cpus) or '-'}")
    if not found:
        return Check("irq", "info", "no physical network interfaces")
    return Check("irq", "info", "; ".join(found),
                   "a NIC's interrupts and their softirq work run on the CPUs they are steered to: on a rank's "
                   "core they take time from it mid-sample",
                   "steer them away from the ranks' cores: echo CPU > /proc/irq/N/smp_affinity_list "
                   "(irqbalance may move them back)")


def _nics(tree: Tree) -> list:
    """(interface, device name) of interfaces backed by a device (not lo, bridges, veth)."""
    out = []
    for d in tree.glob("sys/class/net/*"):
        link = d / "device"
        if link.is_symlink() or link.is_dir():
            dev = os.path.basename(os.readlink(link)) if link.is_symlink() else ""
            out.append((d.name, dev))
    return out


def thp(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    modes = {k: tree.read(f"{THP}/{k}") for k in ("enabled", "defrag")}
    if modes["enabled"] is None:
        return Check("thp", "info", "no transparent huge pages in this kernel")
    chosen = {k: _bracketed(v) for k, v in modes.items() if v is not None}
    value = ", ".join(f"{k} {v}" for k, v in chosen.items())
    always = [k for k, v in chosen.items() if v == "always" and "madvise" in modes[k]]
    if not always:
        return Check("thp", "ok", value)
    return Check("thp", "warn", value, "khugepaged collapses pages under a running benchmark and a fault may "
                   "stall on compaction: a buffer has huge pages in one launch and not the next",
                   "; ".join(f"echo madvise > /{THP}/{k}" for k in always),
                   tuple((str(tree.path(f"{THP}/{k}")), "madvise") for k in always))


def _bracketed(text: str) -> str:
    """The chosen word of a sysfs choice file: 'always [madvise] never' -> 'madvise'."""
    words = [w for w in text.split() if w.startswith("[")]
    return words[0].strip("[]") if words else text.strip()


def numa(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    nodes = tree.glob("sys/devices/system/node/node[0-9]*")
    where = []
    for nic, _ in _nics(tree):
        node = tree.word(f"sys/class/net/{nic}/device/numa_node")
        where.append(f"{nic} on node {node if node not in (None, '-1') else '?'}")
    value = f"{len(nodes) or 1} NUMA node{'s' if len(nodes) > 1 else ''}" + (f"; {', '.join(where)}" if where else "")
    if len(nodes) <= 1:
        return Check("numa", "ok", value)
    return Check("numa", "info", value, "a rank on the node away from its NIC or its buffers' memory crosses "
                   "the inter-socket link on every transfer",
                   "run the ranks on the NIC's node: numactl --cpunodebind=N --membind=N, or the launcher's binding")


def memlock(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    text = tree.read("proc/self/limits")
    line = next((x for x in (text or "").splitlines() if x.startswith("Max locked memory")), None)
    if line is None:
        return Check("memlock", "unknown", "no 'Max locked memory' line in /proc/self/limits")
    soft, hard = line.split()[3:5]
    value = f"soft {_limit(soft)}, hard {_limit(hard)}"
    rdma = [p.name for p in tree.glob("sys/class/infiniband/*")]
    if soft == "unlimited":
        return Check("memlock", "ok", value)
    fix = "ulimit -l unlimited (raise the hard limit with `* - memlock unlimited` in /etc/security/limits.conf)"
    effect = ("RDMA registration pins buffers: beyond this limit it fails or the library falls back to "
              "copies (verbs, EFA, UCX's ib transports)")
    if not rdma:
        return Check("memlock", "info", f"{value}; no RDMA devices here", effect, fix)
    return Check("memlock", "warn", f"{value}; RDMA devices {', '.join(rdma)}", effect, fix)


def _limit(text: str) -> str:
    return text if text == "unlimited" else fmt_bytes(int(text))


def busy(tree: Tree, first: Snapshot, second: Snapshot | None) -> Check:
    load = (tree.word("proc/loadavg") or "?").split()[0]
    if second is None:
        return Check("busy", "info", f"load average {load} (no window to measure processes over)")
    span = max(second.at - first.at, 1e-3) * os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    # a process that started within the window counts all its ticks
    shares = sorted(((t - first.procs.get(p, (comm, 0))[1]) / span, comm, p) for p, (comm, t) in second.procs.items()
                    if p != me)
    hot = [(s, c, p) for s, c, p in reversed(shares) if s >= BUSY_SHARE]
    if not hot:
        return Check("busy", "ok", f"no other process above {BUSY_SHARE:.0%} of a CPU; load average {load}")
    names = ", ".join(f"{c} ({p}) {s:.0%}" for s, c, p in hot[:4])
    return Check("busy", "warn", f"{len(hot)} busy: {names}; load average {load}",
                   "other processes take CPU time and cache from the ranks, differently in every launch",
                   "stop them or run where they are not (ps -eo pid,pcpu,comm --sort=-pcpu lists them)")


PROBES = (("virtualization", virtualization), ("steal", steal), ("governor", governor), ("turbo", turbo),
          ("smt", smt), ("isolation", isolation), ("irq", irq), ("thp", thp), ("numa", numa),
          ("memlock", memlock), ("busy", busy))
