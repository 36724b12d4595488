"""Reading /proc and /sys below a root directory, for the machine check
(host/machine.py, host/probes.py): a Tree of files, the CPU tick
snapshot the steal and busy probes measure over, and the Check a probe
returns. A missing file reads as None; one that exists but cannot be read
raises Unreadable, which the check turns into an "unknown" finding."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

STATUSES = ("ok", "info", "warn", "unknown")


class Unreadable(Exception):
    """A file that exists but cannot be read or parsed: its finding is unknown."""


@dataclass(frozen=True)
class Check:
    name: str            # the probe: virtualization, steal, governor, turbo, smt, isolation, irq, thp, numa, ...
    status: str          # ok | info (context, not a fault) | warn (known to disturb timings) | unknown
    value: str           # what was found, in words
    effect: str = ""     # how it disturbs a benchmark
    fix: str = ""        # the exact command (or step) that fixes it; "" where none is safe
    tune: tuple = field(default=())   # (path, value) writes `doctor --tune` makes, reversibly

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "value": self.value, "effect": self.effect,
                "fix": self.fix, "tunable": bool(self.tune)}


class Tree:
    """Files of /proc and /sys read below `root`; a missing file reads as None,
    one that exists but cannot be read raises Unreadable."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root or "/")

    def path(self, rel: str) -> Path:
        return self.root / rel.lstrip("/")

    def read(self, rel: str | Path) -> str | None:
        """rel below the root, or a Path that glob returned."""
        p = rel if isinstance(rel, Path) else self.path(rel)
        try:
            return p.read_text()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError) as e:
            raise Unreadable(f"cannot read {p}: {getattr(e, 'strerror', None) or e}") from None

    def word(self, rel: str | Path) -> str | None:
        text = self.read(rel)
        return None if text is None else text.strip()

    def glob(self, pattern: str) -> list[Path]:
        try:
            return sorted(self.root.glob(pattern.lstrip("/")))
        except OSError:
            return []


@dataclass(frozen=True)
class Snapshot:
    """CPU ticks of the whole machine and of each process at one moment."""
    at: float
    cpu: list | None          # /proc/stat's aggregate cpu line, in ticks
    procs: dict               # pid -> (comm, utime + stime ticks)


def snapshot(tree: Tree) -> Snapshot:
    cpu = None
    try:
        stat = tree.read("proc/stat") or ""
        line = stat.split("\n", 1)[0].split()
        cpu = [int(x) for x in line[1:]] if line[:1] == ["cpu"] else None
    except (Unreadable, ValueError):
        pass
    procs = {}
    for d in tree.glob("proc/[0-9]*"):
        try:
            text = (d / "stat").read_text()
            comm, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
            procs[int(d.name)] = (comm, int(rest[11]) + int(rest[12]))   # fields 14, 15: utime, stime
        except (OSError, ValueError, IndexError):
            continue      # a process that ended between the listing and the read
    return Snapshot(time.monotonic(), cpu, procs)
