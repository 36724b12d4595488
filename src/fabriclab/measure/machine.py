"""The machine check: what on this host is known to disturb fabric benchmarks,
each finding with its effect and the command that fixes it.

Probes (measure/probes.py) read /proc and /sys below a root directory, so
tests run them on recorded trees. A probe never raises: a file that cannot be
read makes its finding "unknown". `check` is what `fabriclab doctor --machine`
prints and what the start of every run records in `header.machine`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/")
STATUSES = ("ok", "info", "warn", "unknown")


class Unreadable(Exception):
    """A file that exists but cannot be read or parsed: its finding is unknown."""


@dataclass(frozen=True)
class Finding:
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
        self.root = Path(root or ROOT)

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


def check(root: Path | str | None = None, window_s: float = 0.5) -> list[Finding]:
    """Every probe's finding, in a fixed order; the process and steal figures
    cover `window_s` seconds of this machine's life (0: since boot only)."""
    from . import probes
    tree = Tree(root)
    first = snapshot(tree)
    if window_s > 0:
        time.sleep(window_s)
    second = snapshot(tree) if window_s > 0 else None
    out = []
    for name, probe in probes.PROBES:
        try:
            out.append(probe(tree, first, second))
        except Unreadable as e:
            out.append(Finding(name, "unknown", str(e)))
        except Exception as e:   # a malformed file must not end a run: the finding says what went wrong
            out.append(Finding(name, "unknown", f"unexpected contents ({type(e).__name__}: {e})"))
    return out


def record(root: Path | str | None = None, window_s: float = 0.25, tuned: bool = False) -> dict:
    """What a run's header keeps of the check (`header.machine`); never raises."""
    t0 = time.monotonic()
    try:
        findings = [f.to_dict() for f in check(root, window_s)]
    except Exception as e:    # nothing about the machine check may make a run fail
        return {"error": f"{type(e).__name__}: {e}", "findings": []}
    return {"findings": findings, "window_s": window_s, "probe_s": round(time.monotonic() - t0, 3),
            "tuned": tuned}


def short_line(findings: list[dict]) -> str:
    """The one line a run prints before it measures."""
    warn = [f["name"] for f in findings if f["status"] == "warn"]
    unknown = [f["name"] for f in findings if f["status"] == "unknown"]
    if not warn and not unknown:
        return "machine check: nothing known to disturb timings"
    parts = [f"{len(warn)} may disturb timings ({', '.join(warn)})"] if warn else []
    if unknown:
        parts.append(f"{len(unknown)} unknown ({', '.join(unknown)})")
    return f"machine check: {'; '.join(parts)}; `fabriclab doctor --machine` gives effects and fixes"
