"""`fabriclab doctor --machine | --tune | --reset`: the machine check printed,
its safe fixes applied and undone (host/machine.py, host/tune.py)."""

from __future__ import annotations

import os
import sys
import time

MARK = {"ok": "ok  ", "info": "--  ", "warn": "WARN", "unknown": "??  "}
DOCTOR_WINDOW_S = 0.3     # processes and steal measured over this long; the whole command stays under 2 s on a loaded machine


def is_root() -> bool:
    return os.geteuid() == 0


def show(args) -> int:
    """Every finding: status, what was found, its effect and its fix."""
    from ..host import machine, tune
    t0 = time.monotonic()
    findings = machine.check(window_s=DOCTOR_WINDOW_S)
    for f in findings:
        print(f"{MARK[f.status]}  {f.name:<14} {f.value}")
        if f.status in ("warn", "info") and f.effect:
            print(f"      {'':<14} effect: {f.effect}")
        if f.status in ("warn", "info") and f.fix:
            print(f"      {'':<14} fix{' (--tune)' if f.tune else ''}: {f.fix}")
    from . import doctor_noise
    for line in doctor_noise.measured(args):     # the noise itself, measured per core (about 2 s)
        print(line)
    n = sum(f.status == "warn" for f in findings)
    state = " (tuned by `fabriclab doctor --tune`; --reset undoes it)" if tune.tuned() else ""
    print(f"{n} of {len(findings)} findings may disturb timings; "
          f"{len(tune.planned(findings))} settings --tune would change{state}; "
          f"checked in {time.monotonic() - t0:.2f} s")
    return 0


def apply(args) -> int:
    """--tune: the safe fixes applied, each change one line."""
    from ..host import machine, tune
    changes = tune.tune(machine.check(window_s=0), is_root(), root=machine.ROOT,
                        say=lambda line: print(f"fabriclab: warning: {line}", file=sys.stderr))
    for c in changes:
        print(f"set {c['path']}: {c['previous']} -> {c['value']}")
    if not changes:
        print("nothing to tune: no safe setting here differs from its benchmark value "
              "(`fabriclab doctor --machine` lists what cannot be tuned)")
    else:
        print(f"previous values kept in {tune.STATE}; `fabriclab doctor --reset` restores them")
    return 0


def undo(args) -> int:
    """--reset: every value --tune replaced, written back."""
    from ..host import machine, tune
    restored = tune.reset(is_root(), root=machine.ROOT)
    for c in restored:
        print(f"restored {c['path']}: {c['value']} -> {c['previous']}")
    if not restored:
        print("nothing to reset: `fabriclab doctor --tune` changed nothing that is still recorded")
    return 0
