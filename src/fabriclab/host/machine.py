"""The machine check: what on this host is known to disturb fabric benchmarks,
each finding with its effect and the command that fixes it.

Probes (host/probes.py) read /proc and /sys below a root directory, so
tests run them on recorded trees. A probe never raises: a file that cannot be
read makes its finding "unknown". `check` is what `fabriclab doctor --machine`
prints and what the start of every run records in `header.machine`."""

from __future__ import annotations

import time
from pathlib import Path

from . import probes
from .sysfs import Check, Tree, Unreadable, snapshot

ROOT = Path("/")


def check(root: Path | str | None = None, window_s: float = 0.5) -> list[Check]:
    """Every probe's finding, in a fixed order; the process and steal figures
    cover `window_s` seconds of this machine's life (0: since boot only)."""
    tree = Tree(root or ROOT)
    first = snapshot(tree)
    if window_s > 0:
        time.sleep(window_s)
    second = snapshot(tree) if window_s > 0 else None
    out = []
    for name, probe in probes.PROBES:
        try:
            out.append(probe(tree, first, second))
        except Unreadable as e:
            out.append(Check(name, "unknown", str(e)))
        except Exception as e:   # a malformed file must not end a run: the finding says what went wrong
            out.append(Check(name, "unknown", f"unexpected contents ({type(e).__name__}: {e})"))
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


RUN_WINDOW_S = 0.25     # the short check at the start of a run


def run_start() -> dict:
    """The short check at the start of a run: its `header.machine`."""
    from . import tune
    return record(window_s=RUN_WINDOW_S, tuned=tune.tuned())


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
