"""Recorded /proc and /sys trees for the machine check's probes
(host/probes.py), written below a directory: a virtual machine with steal
time, a tuned two-socket host with InfiniBand, an untuned bare-metal host,
and a host where some files cannot be read or hold garbage.

A tree is a dict path -> contents; a value `LINK(target)` is a symlink and
`UNREADABLE` a directory where a file should be (a read fails even for root)."""

from __future__ import annotations

from pathlib import Path

UNREADABLE = object()


class LINK(str):
    pass


LIMITS = ("Limit                     Soft Limit           Hard Limit           Units\n"
          "Max cpu time              unlimited            unlimited            seconds\n"
          "Max locked memory         {soft:<20} {hard:<20} bytes\n")
CPU = "sys/devices/system/cpu"
THP = "sys/kernel/mm/transparent_hugepage"

# This kind of VM as recorded: Firecracker, 2 vCPUs, virtio NIC, 5% steal since boot.
VM_STEAL = {
    "proc/cpuinfo": "processor\t: 0\nmodel name\t: Intel Xeon\nflags\t\t: fpu vme de pse hypervisor lahf_lm\n",
    "proc/stat": "cpu  1000 0 500 8000 0 0 0 500 0 0\ncpu0 500 0 250 4000 0 0 0 250 0 0\n",
    "proc/loadavg": "3.10 2.00 1.00 2/100 1234\n",
    "proc/self/limits": LIMITS.format(soft=8388608, hard=8388608),
    "proc/interrupts": ("           CPU0       CPU1\n"
                        " 28:          2          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config\n"
                        " 37:          0          0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config\n"
                        " 38:          0      50997 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
                        " 39:      33818          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0\n"
                        " 40:          0          0 PCI-MSIX-0000:00:04.0   0-edge      virtio20-config\n"),
    "proc/irq/37/smp_affinity_list": "0-1\n", "proc/irq/38/smp_affinity_list": "1\n",
    "proc/irq/39/smp_affinity_list": "0\n",
    f"{CPU}/smt/control": "notsupported\n", f"{CPU}/smt/active": "0\n",
    f"{CPU}/cpu0/topology/thread_siblings_list": "0\n", f"{CPU}/cpu1/topology/thread_siblings_list": "1\n",
    f"{CPU}/isolated": "\n",
    f"{THP}/enabled": "[always] madvise never\n", f"{THP}/defrag": "always defer defer+madvise [madvise] never\n",
    "sys/class/net/eth0/device": LINK("../../../virtio2"), "sys/class/net/lo/mtu": "65536\n",
    "sys/devices/system/node/node0/cpulist": "0-1\n",
    "proc/4242/stat": "4242 (busy loop) R 1 4242 4242 0 -1 4194304 1 0 0 0 900 100 0 0 20 0 1 0 5 0 0\n",
}

# A benchmark host set up by the book: performance governor, turbo off, isolated
# and nohz_full cores, THP never, memlock unlimited; two sockets, SMT, an HCA on node 1.
TUNED = {
    "proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu vme de pse lahf_lm\n",
    "sys/class/dmi/id/sys_vendor": "Dell Inc.\n",
    "proc/stat": "cpu  1000 0 500 8500 0 0 0 0 0 0\n",
    "proc/loadavg": "0.02 0.01 0.00 1/300 999\n",
    "proc/self/limits": LIMITS.format(soft="unlimited", hard="unlimited"),
    "proc/interrupts": ("           CPU0       CPU1       CPU2       CPU3\n"
                        " 90:        100          0          0          0  IR-PCI-MSI  mlx5_comp0@pci:0000:81:00.0\n"
                        " 91:        100          0          0          0  IR-PCI-MSI  ib0-rx\n"),
    "proc/irq/91/smp_affinity_list": "0-1\n",
    **{f"{CPU}/cpu{i}/cpufreq/scaling_governor": "performance\n" for i in range(4)},
    **{f"{CPU}/cpu{i}/cpufreq/scaling_available_governors": "performance powersave\n" for i in range(4)},
    **{f"{CPU}/cpu{i}/topology/thread_siblings_list": f"{i % 2},{i % 2 + 2}\n" for i in range(4)},
    f"{CPU}/intel_pstate/no_turbo": "1\n",
    f"{CPU}/smt/control": "on\n", f"{CPU}/smt/active": "1\n",
    f"{CPU}/isolated": "2-3\n", f"{CPU}/nohz_full": "2-3\n",
    f"{THP}/enabled": "always madvise [never]\n", f"{THP}/defrag": "always defer defer+madvise madvise [never]\n",
    "sys/class/net/ib0/device": LINK("../../../0000:81:00.0"),
    "sys/class/net/ib0/device/numa_node": "1\n",
    "sys/class/infiniband/mlx5_0/node_type": "1: CA\n",
    "sys/devices/system/node/node0/cpulist": "0,2\n", "sys/devices/system/node/node1/cpulist": "1,3\n",
}

# The same host before tuning: powersave, turbo on, THP always, memlock 64 KiB.
UNTUNED = {
    **TUNED,
    **{f"{CPU}/cpu{i}/cpufreq/scaling_governor": "powersave\n" for i in range(4)},
    f"{CPU}/intel_pstate/no_turbo": "0\n",
    f"{CPU}/isolated": "\n",
    f"{THP}/enabled": "[always] madvise never\n", f"{THP}/defrag": "[always] defer defer+madvise madvise never\n",
    "proc/self/limits": LIMITS.format(soft=65536, hard=65536),
}

# Files a probe needs that cannot be read (directories in their place) or hold garbage.
BROKEN = {
    **VM_STEAL,
    "proc/stat": UNREADABLE,
    f"{CPU}/cpu0/cpufreq/scaling_governor": UNREADABLE,
    f"{THP}/enabled": UNREADABLE,
    "proc/self/limits": "Max locked memory         lots\n",
    "proc/cpuinfo": b"\xff\xfe not text",
    "proc/4243/stat": "garbage",
}


def write(tree: dict, root: Path) -> Path:
    """The tree below root; root returned."""
    for rel, content in tree.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if content is UNREADABLE:
            p.mkdir(exist_ok=True)
        elif isinstance(content, LINK):
            (root / Path(rel).parent / content).resolve().mkdir(parents=True, exist_ok=True)
            p.symlink_to(content)
        else:
            p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root
