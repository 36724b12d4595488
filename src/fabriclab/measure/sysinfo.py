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
