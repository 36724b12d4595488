"""`doctor --tune` and `--reset`: the machine check's safe, reversible fixes
applied, with the values they replaced kept in a state file so `--reset`
writes exactly those back (pyperf's `system tune` / `system reset`).

Safe here means a sysfs setting that takes effect at once, touches no other
process's configuration and is undone by writing the old value back: the
frequency governor, turbo or boost, transparent huge pages. Kernel command
lines, SMT, IRQ steering and limits are reported with their fix, never
applied."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..errors import RunError, UsageError
from .sysfs import Check

STATE = Path("/run/fabriclab/tune.json")


def planned(findings: list[Check]) -> list[tuple[str, str]]:
    """(path, value) of every write --tune would make, in the findings' order."""
    return [w for f in findings for w in f.tune]


def describe(writes: list[tuple[str, str]]) -> str:
    return "; ".join(f"{path} -> {value}" for path, value in writes) or "nothing"


def current(path: str) -> str:
    """A setting's value as it would be written back: the bracketed choice of a
    choice file ('always [madvise] never' -> 'madvise'), else the stripped text."""
    text = Path(path).read_text()
    chosen = [w for w in text.split() if w.startswith("[")]
    return chosen[0].strip("[]") if chosen else text.strip()


def tune(findings: list[Check], root_user: bool, state: Path | None = None) -> list[dict]:
    """Apply the planned writes and record their previous values; the changes
    made. Without root, nothing is touched: a UsageError names what would change."""
    writes = planned(findings)
    if not root_user:
        raise UsageError(f"--tune needs root; it would change: {describe(writes)}")
    state = state or STATE
    kept = _load(state)
    known = {c["path"] for c in kept}
    changes = [{"path": p, "previous": current(p), "value": v} for p, v in writes]
    changes = [c for c in changes if c["previous"] != c["value"]]
    # the state is written before any setting: a write that fails halfway still leaves --reset its way back
    if changes:
        _save(state, kept + [c for c in changes if c["path"] not in known])
    for c in changes:
        _write(c["path"], c["value"])
    return changes


def reset(root_user: bool, state: Path | None = None) -> list[dict]:
    """Write back every value --tune replaced, then forget them; the changes undone."""
    state = state or STATE
    kept = _load(state)
    if not root_user:
        raise UsageError(f"--reset needs root; it would restore: "
                         f"{describe([(c['path'], c['previous']) for c in kept])}")
    for c in reversed(kept):
        _write(c["path"], c["previous"])
    state.unlink(missing_ok=True)
    return kept


def tuned(state: Path | None = None) -> bool:
    """Whether --tune's changes are in place (a state file not yet reset)."""
    try:
        return (state or STATE).is_file()
    except OSError:
        return False


def _load(state: Path) -> list[dict]:
    try:
        return json.loads(state.read_text())["changes"]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"cannot read the tune state {state}: {e}") from None


def _save(state: Path, changes: list[dict]) -> None:
    try:
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps({"time": time.time(), "changes": changes}, indent=1) + "\n")
    except OSError as e:
        raise RunError(f"cannot write the tune state {state}: {e.strerror}") from None


def _write(path: str, value: str) -> None:
    try:
        Path(path).write_text(value)
    except OSError as e:
        raise RunError(f"cannot write {value!r} to {path}: {e.strerror}; `fabriclab doctor --reset` "
                       "restores what was changed") from None
