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
import os
import re
import stat
import time
from pathlib import Path

from ..errors import RunError, UsageError
from ..datafile import parse
from ..inputs import read_text
from .sysfs import Check

STATE = Path("/run/fabriclab/tune.json")
STATE_LIMIT = 256 << 10          # a few hundred changes at most: one per CPU and setting
# Every setting --tune makes (probes.py), below the machine's root, and the form of the
# values it writes or finds there: the state file is read as a claim, and --reset writes
# nothing that is not one of these (an edited file could otherwise name any path and value).
SETTINGS = (
    (r"sys/devices/system/cpu/cpu[0-9]{1,5}/cpufreq/scaling_governor", r"[a-z][a-z0-9_]{0,31}"),
    (r"sys/devices/system/cpu/cpufreq/policy[0-9]{1,5}/scaling_governor", r"[a-z][a-z0-9_]{0,31}"),  # cpuN/cpufreq links here
    (r"sys/devices/system/cpu/intel_pstate/no_turbo", r"[01]"),
    (r"sys/devices/system/cpu/cpufreq/boost", r"[01]"),
    (r"sys/kernel/mm/transparent_hugepage/(enabled|defrag)", r"always|madvise|never|defer|defer\+madvise"),
)


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


def tune(findings: list[Check], root_user: bool, state: Path | None = None, root: Path | str = "/",
         say=None) -> list[dict]:
    """Apply the planned writes and record their previous values; the changes
    made. Without root, nothing is touched: a UsageError names what would change.
    A state file that fails its check is set aside (`say` is told), not obeyed."""
    writes = planned(findings)
    if not root_user:
        raise UsageError(f"--tune needs root; it would change: {describe(writes)}")
    state = state or STATE
    try:
        kept = _load(state, root)
    except UsageError as e:
        aside = _set_aside(state)
        kept = []
        if say:
            say(f"{e}; set aside as {aside}" if aside else str(e))
    known = {c["path"] for c in kept}
    changes = [{"path": p, "previous": current(p), "value": v} for p, v in writes]
    changes = [c for c in changes if c["previous"] != c["value"]]
    # the state is written before any setting: a write that fails halfway still leaves --reset its way back
    if changes:
        _save(state, kept + [c for c in changes if c["path"] not in known])
    for c in changes:
        _write(c["path"], c["value"])
    return changes


def reset(root_user: bool, state: Path | None = None, root: Path | str = "/") -> list[dict]:
    """Write back every value --tune replaced, then forget them; the changes undone.
    Only the settings --tune makes, with values of their form (SETTINGS): a state file
    that names anything else is refused whole, set aside, and nothing is written."""
    state = state or STATE
    try:
        kept = _load(state, root)
    except UsageError as e:
        aside = _set_aside(state)
        raise UsageError(f"{e}; nothing restored{f', the file set aside as {aside}' if aside else ''}") from None
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


def _load(state: Path, root: Path | str = "/") -> list[dict]:
    """The changes a state file records, each checked against SETTINGS; UsageError
    naming the first that is not a change --tune makes."""
    if not os.path.lexists(state):
        return []
    text = read_text(state, "the tune state", STATE_LIMIT)

    def bad(why: str):
        return UsageError(f"the tune state {state} is not one fabriclab wrote: {why}")
    try:        # parsed as every data file (datafile.py): too deep a nesting is one line too
        changes = parse(text, state, "JSON")["changes"]
    except UsageError as e:
        raise bad(str(e).removeprefix(f"{state}: ")) from None
    except (KeyError, TypeError):
        raise bad("no JSON object with a list of changes") from None
    if not isinstance(changes, list):
        raise bad("no JSON object with a list of changes")
    base = os.path.normpath(os.path.realpath(root))
    seen = set()
    for i, c in enumerate(changes):
        if not isinstance(c, dict) or set(c) != {"path", "previous", "value"} or \
                not all(isinstance(v, str) for v in c.values()):
            raise bad(f"change {i} is not a path with its previous value and its value")
        path = c["path"]
        # a setting as written and where its links lead (no '..', no link out of the tree)
        form, rel = _form(path, base) if os.path.isabs(path) else (None, "")
        if form is None or os.path.normpath(path) != path or _form(os.path.realpath(path), base)[0] != form:
            raise bad(f"change {i} names {path[:80]!r}, no setting --tune makes")
        for key in ("previous", "value"):
            if not re.fullmatch(form, c[key]):
                raise bad(f"change {i}: {key} {c[key][:40]!r} is no value of {rel}")
        if path in seen:
            raise bad(f"change {i} names {rel} a second time")
        seen.add(path)
    return changes


def _form(path: str, base: str) -> tuple:
    """(the form of a setting's values, its path below base) for a path of SETTINGS, else (None, '')."""
    rel = os.path.relpath(path, base)
    form = next((v for p, v in SETTINGS if re.fullmatch(p, rel)), None)
    return (form, rel) if form else (None, "")


def _set_aside(state: Path) -> Path | None:
    """A refused state file renamed beside itself (so that --tune is not blocked by it
    and nothing of it is lost); None where it cannot be."""
    aside = state.with_name(state.name + f".refused-{int(time.time())}")
    try:
        if not (stat.S_ISREG(os.lstat(state).st_mode) or os.path.islink(state)):
            return None                  # a device or a pipe put there is left where it is
        os.replace(state, aside)
    except OSError:
        return None
    return aside


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
