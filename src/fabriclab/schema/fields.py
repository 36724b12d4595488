"""Typed reading of one JSON object: every field checked for its type and a
physical range, with one line naming the record and the field when it is wrong.

A document is input like any other a user hands in: its numbers may be
strings, booleans, integers of thousands of digits, or values no machine
can produce (a size of 10^32 bytes, a time of 10^302 s). The bounds below
are loose enough for any real fabric and tight enough that arithmetic on
what passes cannot overflow or divide by a denormal."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from ..errors import UsageError

MAX_BYTES = 1 << 50           # 1 PiB moved by one op
MAX_SECONDS = 1e6             # one op lasting 11.6 days
MAX_RANKS = 1 << 24           # ranks or processes in one job
MAX_COUNT = 1 << 53           # counts (samples, batches, launches): exact in a double
MAX_ITEMS = 1 << 24           # elements of one list


class RecordError(UsageError, ValueError):
    """A field of a record has the wrong type or an impossible value: bad
    input (exit 2) wherever it is found, and a ValueError to the statistics."""


_MISSING = object()


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Fields:
    """Reads the fields of one mapping; `where` names it in every error (a
    string, or a function that makes one: a document's ten thousand records
    format their names only when one is wrong).

    Each reader tests the common case first (a value of the plain type in
    range) and only then works out what is wrong and says it: reading a
    record is what checking it costs, once per document."""

    __slots__ = ("d", "_where")

    def __init__(self, d: Any, where):
        if type(d) is not dict and not isinstance(d, Mapping):   # a typing ABC's isinstance is slow
            raise RecordError(f"{where() if callable(where) else where} is not an object")
        self.d, self._where = d, where

    @property
    def where(self) -> str:
        w = self._where
        return w() if callable(w) else w

    def bad(self, key: str, what: str):
        raise RecordError(f"{self.where}: {key} {what}")

    def _get(self, key, default):
        v = self.d.get(key, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                self.bad(key, "is missing")
            return default, True
        return v, False

    def int(self, key: str, default=_MISSING, lo: int = 0, hi: int = MAX_COUNT, none: bool = False):
        v = self.d.get(key, _MISSING)
        if type(v) is int and lo <= v <= hi or v is None and none:
            return v
        v, absent = self._get(key, default)
        if absent or (v is None and none):
            return v
        if isinstance(v, float) and v.is_integer() and abs(v) <= MAX_COUNT:
            v = int(v)
        if not isinstance(v, int) or isinstance(v, bool):
            self.bad(key, f"must be an integer, not {_show(v)}")
        if not lo <= v <= hi:
            self.bad(key, f"must be between {lo} and {hi}, not {_show(v)}")
        return v

    def num(self, key: str, default=_MISSING, lo: float = 0.0, hi: float = MAX_SECONDS, none: bool = False):
        v = self.d.get(key, _MISSING)
        t = type(v)
        if (t is float or t is int) and lo <= v <= hi and v - v == 0:    # v - v: NaN and inf fail it
            try:
                return float(v)
            except OverflowError:         # an integer beyond every double, under an infinite hi
                pass
        if v is None and none:            # the next common case: a statistic an imported point lacks
            return v
        v, absent = self._get(key, default)
        if absent or (v is None and none):
            return v
        if not _number(v) or not _finite(v):
            self.bad(key, f"must be a finite number, not {_show(v)}")
        if not lo <= v <= hi:
            self.bad(key, f"must be between {lo:g} and {hi:g}, not {_show(v)}")
        return float(v)

    def str(self, key: str, default=_MISSING, none: bool = False, choices: tuple = ()):
        v = self.d.get(key, _MISSING)
        if type(v) is str and (not choices or v in choices) or v is None and none:
            return v
        v, absent = self._get(key, default)
        if absent or (v is None and none):
            return v
        if not isinstance(v, str):
            self.bad(key, f"must be text, not {_show(v)}")
        if choices and v not in choices:
            self.bad(key, f"must be one of {', '.join(choices)}, not {_show(v)}")
        return v

    def bool(self, key: str, default=_MISSING):
        v = self.d.get(key, _MISSING)
        if type(v) is bool:
            return v
        v, absent = self._get(key, default)
        if absent:
            return v
        if not isinstance(v, bool) and v not in (0, 1):
            self.bad(key, f"must be true or false, not {_show(v)}")
        return bool(v)

    def obj(self, key: str, default=_MISSING, none: bool = False):
        v = self.d.get(key, _MISSING)
        if type(v) is dict or v is None and none:
            return v
        v, absent = self._get(key, default)
        if absent or (v is None and none):
            return v
        if not isinstance(v, Mapping):
            self.bad(key, f"must be an object, not {_show(v)}")
        return v

    def list(self, key: str, item: Callable[[Any], bool] | None, what: str, default=_MISSING, none: bool = False):
        """A list whose every element passes `item` (described as `what`; None: the caller checks them)."""
        v, absent = self._get(key, default)
        if absent or (v is None and none):
            return v
        if not isinstance(v, list):
            self.bad(key, f"must be a list of {what}, not {_show(v)}")
        if len(v) > MAX_ITEMS:
            self.bad(key, f"has more than {MAX_ITEMS} elements")
        if item and not all(map(item, v)):
            i = next(i for i, x in enumerate(v) if not item(x))
            self.bad(f"{key}[{i}]", f"must be {what}, not {_show(v[i])}")
        return v

    def counts(self, key: str, lo: int, hi: int, what: str, default=_MISSING, none: bool = False):
        """A list of integers in lo..hi, checked as a whole (rank numbers, byte counts)."""
        v = self.d.get(key, _MISSING)
        if type(v) is list and len(v) <= MAX_ITEMS and (not v or set(map(type, v)) == {int}
                                                        and lo <= min(v) and max(v) <= hi):
            return v
        return self.list(key, lambda x: type(x) is int and lo <= x <= hi, what, default, none)


def _finite(x) -> bool:
    """Not NaN, infinite or an integer beyond every double (where math.isfinite
    raises OverflowError)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def is_duration(x) -> bool:
    return _number(x) and _finite(x) and 0 <= x <= MAX_SECONDS


def is_count(x, hi: int = MAX_COUNT) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= hi


def is_text(x) -> bool:
    return isinstance(x, str)


_NUMBER_TYPES = {float, int}


def durations(x) -> bool:
    """A non-empty list of durations (samples of one launch or one rank).

    Tens of thousands of samples per document: checked by whole-list
    operations, not per element. bool is a type of its own, so it fails the
    type test; NaN can slip past min but not past the sum, and of durations
    that are all at least 0, none exceeds their sum (max is needed only when
    the sum is beyond the bound)."""
    if type(x) is not list or not x or len(x) > MAX_ITEMS:
        return False
    if not set(map(type, x)) <= _NUMBER_TYPES and not all(map(_number, x)):  # numpy's floats, say
        return False
    if min(x) < 0:
        return False
    try:
        total = sum(x)
    except OverflowError:         # an integer of hundreds of digits among floats
        return False
    return _finite(total) and (total <= MAX_SECONDS or max(x) <= MAX_SECONDS)


def _show(v) -> str:
    """A value as an error shows it: short, one line, never a 4,300-digit integer."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 10 ** 18:
        return f"an integer of {len(str(abs(v))) if v.bit_length() < 14000 else 'thousands of'} digits"
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
