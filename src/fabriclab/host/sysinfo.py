"""What the run header records about the machine that launched the run."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cache_sizes() -> dict:
    """Cache sizes in bytes by level name (L1d, L2, L3) from sysfs, if present."""
    out: dict[str, int] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        try:
            level = (idx / "level").read_text().strip()
            kind = (idx / "type").read_text().strip()
            size = (idx / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        out[f"L{level}" + ("d" if kind == "Data" else "")] = int(size.rstrip("KMG")) * mult
    return out


def loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def host() -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "caches": cache_sizes(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "loadavg_1min": loadavg(),
    }


def cpu_ticks() -> dict | None:
    """Aggregate CPU time from /proc/stat in clock ticks: total and steal (time
    a hypervisor gave this VM's virtual CPUs to someone else)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    steal = ticks[7] if len(ticks) > 7 else 0
    return {"total": sum(ticks[:8]), "steal": steal}


def cpu_mhz() -> list | None:
    """Current frequency of each CPU in MHz (cpufreq, else /proc/cpuinfo), where readable."""
    out = []
    for f in sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_cur_freq")):
        try:
            out.append(int(f.read_text()) / 1000.0)
        except (OSError, ValueError):
            pass
    if out:
        return out
    try:
        return [float(line.split(":", 1)[1]) for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("cpu MHz")] or None
    except (OSError, ValueError):
        return None


def noise() -> dict:
    """The machine's state around one launch: load, CPU ticks, frequencies."""
    return {"loadavg_1min": loadavg(), "ticks": cpu_ticks(), "cpu_mhz": cpu_mhz()}


def noise_between(before: dict, after: dict) -> dict:
    """What happened during a launch: load before and after, the steal-time
    fraction of the CPU time that passed, frequencies before and after."""
    b, a = before.get("ticks"), after.get("ticks")
    steal = None
    if b and a and a["total"] > b["total"]:
        steal = (a["steal"] - b["steal"]) / (a["total"] - b["total"])
    return {"loadavg_1min": [before.get("loadavg_1min"), after.get("loadavg_1min")],
            "steal_fraction": steal, "cpu_mhz": [before.get("cpu_mhz"), after.get("cpu_mhz")]}
