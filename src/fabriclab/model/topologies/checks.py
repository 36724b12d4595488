"""The fields of a network file, each checked for its type and range before use.

A field's value is used or printed only after it is known to be a scalar of
the right type inside its range (limits.py), so nothing the file holds
reaches a table, a computation or an error line unchecked; an error shows a
bad value through fabriclab/datafile.py's shown (escaped, cut short, a collection by its
size only).
"""

from __future__ import annotations

import math

from ...errors import UsageError
from ...datafile import shown
from ..limits import MAX_NAME_CHARS, Range


def number(value, what: str, where: str, bounds: Range) -> float:
    """A finite number (not a boolean) inside bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: {what} must be a number, got {shown(value)}")
    if not math.isfinite(value):
        raise UsageError(f"{where}: {what} must be a finite number {bounds}, got {shown(value)}")
    if value <= 0 < bounds.lo:
        raise UsageError(f"{where}: {what} must be greater than 0: {bounds}, got {shown(value)}")
    if not bounds.lo <= value <= bounds.hi:
        raise UsageError(f"{where}: {what} must be {bounds}, got {shown(value)}")
    return float(value)


def positive_int(value, what: str, where: str) -> int:
    """An integer (not a boolean) of at least 1; the caller bounds it from above."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{where}: {what} must be a positive integer, got {shown(value)}")
    return value


def amount(value: int) -> str:
    """An integer for an error line: with thousands separators, or cut short when huge."""
    return f"{value:,}" if abs(value) < 10 ** 18 else shown(value)


def name(value, what: str, where: str, kinds: tuple = (str, int)) -> str:
    """A name as the file gives it: a string (or another scalar of `kinds`) of 1 to
    MAX_NAME_CHARS characters that all print (str.isprintable: no newline, escape,
    NUL, zero-width or direction-changing character), since names reach tables,
    reports and commands."""
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise UsageError(f"{where}: {what} must be text, got {shown(value)}")
    text = str(value)
    if not text or not text.isprintable():
        raise UsageError(f"{where}: {what} {shown(text)} is empty or holds a character that does not print")
    if len(text) > MAX_NAME_CHARS:
        raise UsageError(f"{where}: {what} {shown(text)} is longer than {MAX_NAME_CHARS} characters")
    return text


def choice(value, what: str, where: str, options: tuple) -> str:
    """One of options (strings)."""
    if not isinstance(value, str) or value not in options:
        raise UsageError(f"{where}: {what} must be {' or '.join(repr(o) for o in options)}, got {shown(value)}")
    return value


def flag(value, what: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{where}: {what} must be true or false, got {shown(value)}")
    return value


def check_keys(d: dict, known: set, required: tuple, where: str) -> None:
    """Refuse unknown keys (typos) and missing required ones, naming the first."""
    unknown = [k for k in d if k not in known]
    if unknown:
        first = min(unknown, key=repr)       # keys of mixed types do not sort among themselves
        raise UsageError(f"{where}: unknown key {shown(first)} (known: {', '.join(sorted(known))})")
    if any(k not in d for k in required):
        raise UsageError(f"{where}: {' and '.join(repr(k) for k in required)} are required")
