"""Sizes and units: the one grammar of every number a user types, and SI
formatting.

Grammar (docs/usage.md, "Numbers"): an integer with an optional binary
suffix, K, M, G or T (1024^1..4, either case), which may be spelled KiB, MiB,
GiB or TiB; nothing else. `KB` is refused as ambiguous (1000 or 1024 bytes),
and so is a bare `B`. Sizes, strides, connection and active counts and every
integer `-p` parameter use it; ranges (`1:4M:x2`) are built from it. The core
never sees a suffix: Python sends plain decimal integers (measure/protocol.py).

Storage is always SI (bytes, seconds, bytes per second); formatting happens only
at display time."""

from __future__ import annotations

import re

from .errors import UsageError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_NUM = re.compile(r"(\d+)(?:([KMGT])(?:iB)?)?", re.IGNORECASE | re.ASCII)
_DECIMAL_SUFFIX = re.compile(r"\d+\s*[KMGT]B", re.IGNORECASE)  # 4KB: refused with a hint
MAX_VALUE = (1 << 63) - 1  # the core reads int64
MAX_SWEEP_POINTS = 10_000


def in_range(v, lo: float, hi: float) -> bool:
    """A number (not a bool) from lo to hi: with finite bounds, NaN and infinity fail
    every comparison, so what passes is finite."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi


def check_range(what: str, v, lo: float, hi: float):
    """v if in_range, else UsageError naming `what` and its range."""
    if not in_range(v, lo, hi):
        raise UsageError(f"{what} must be from {lo:g} to {hi:g}, not {v!r:.40}")
    return v


def parse_size(text: str, what: str = "size") -> int:
    """'4096', '4K', '4KiB', '1M', '2t' -> an integer. Raises UsageError on anything else."""
    t = str(text).strip()
    m = _NUM.fullmatch(t)
    if not m:
        if _DECIMAL_SUFFIX.fullmatch(t):
            raise UsageError(f"ambiguous {what} {text!r:.60}: suffixes are binary; write K, M, G or T "
                             "(or KiB, MiB, GiB, TiB), e.g. 4K = 4KiB = 4096")
        if re.fullmatch(r"\d+\s*B", t, re.IGNORECASE):
            raise UsageError(f"malformed {what} {text!r:.60}: bytes are a plain integer, without B")
        raise UsageError(f"malformed {what} {text!r:.60}: expected an integer with an optional K, M, G or T "
                         "suffix (binary: 1K = 1024)")
    digits = m.group(1).lstrip("0") or "0"
    # more digits than 2^63 has are too large, and unread: int() refuses over 4,300 digits
    value = MAX_VALUE + 1 if len(digits) > 19 else int(digits) * _SUFFIX[(m.group(2) or "").upper()]
    if value > MAX_VALUE:
        raise UsageError(f"{what} {text!r:.60} is too large: at most 2^63 - 1")
    return value


def parse_sizes(spec: str, what: str = "size") -> list[int]:
    """Parse a size list or sweep.

    Accepted forms, combinable with commas:
      ``4096``          one size
      ``1:4M:x2``       geometric sweep from 1 to 4 MiB, factor 2 (``0:4M:x2``
                        starts with 0 then continues from 1)
      ``0:64K:+4K``     arithmetic sweep with a step
      ``1:1M``          default factor x2
    Returns a sorted list without duplicates."""
    if spec is None or not str(spec).strip():
        raise UsageError(f"empty {what} list")
    out: set[int] = set()
    for part in str(spec).split(","):
        part = part.strip()
        if not part:
            raise UsageError(f"malformed {what} list {spec!r}: empty element")
        if ":" not in part:
            out.add(parse_size(part, what))
            continue
        fields = part.split(":")
        if len(fields) not in (2, 3):
            raise UsageError(f"malformed {what} range {part!r}: expected MIN:MAX[:xF|:+STEP]")
        lo, hi = parse_size(fields[0], what), parse_size(fields[1], what)
        step = fields[2].strip() if len(fields) == 3 else "x2"
        if hi < lo:
            raise UsageError(f"malformed {what} range {part!r}: MAX is smaller than MIN")
        out.update(_expand(part, lo, hi, step, what))
        if len(out) > MAX_SWEEP_POINTS:
            raise UsageError(f"{what} range {spec!r} has more than {MAX_SWEEP_POINTS} points")
    return sorted(out)


def _expand(part: str, lo: int, hi: int, step: str, what: str) -> list[int]:
    if step[:1] in ("x", "X", "*"):
        try:
            factor = float(step[1:])
        except ValueError:
            factor = 0.0
        if not 1.0 < factor < 1e6:          # nan compares false: refused here too, as inf is
            raise UsageError(f"malformed {what} range {part!r}: the factor must be a number above 1 and "
                             "below 1,000,000")
        vals, v = [], lo
        if v == 0:
            vals.append(0)
            v = 1
        while v <= hi:
            vals.append(v)
            nxt = int(round(v * factor))
            v = nxt if nxt > v else v + 1
        return vals
    if step[:1] == "+":
        inc = parse_size(step[1:], what)
        if inc <= 0:
            raise UsageError(f"malformed {what} range {part!r}: the step must be positive")
        if (hi - lo) // inc + 1 > MAX_SWEEP_POINTS:
            raise UsageError(f"{what} range {part!r} has more than {MAX_SWEEP_POINTS} points")
        return list(range(lo, hi + 1, inc))
    raise UsageError(f"malformed {what} range {part!r}: the step must look like x2 or +4K")


def parse_strides(spec: str) -> list[int]:
    """Strides in 8-byte words; same syntax as sizes; 0 is refused."""
    vals = parse_sizes(spec, "stride")
    if 0 in vals:
        raise UsageError("stride 0 is meaningless: strides count 8-byte words and start at 1")
    return vals


def fmt_bytes(n: float) -> str:
    """Binary-prefixed size for display: 0, 512, 4K, 1.5M."""
    n = float(n)
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            v = n / div
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.3g}{unit}"
    return f"{n:.0f}"


def fmt_time(s: float, digits: int = 3) -> str:
    """Seconds to a readable string with an explicit unit and `digits` significant digits."""
    if s != s:
        return "nan"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(s) >= scale:
            return f"{s / scale:.{digits}g} {unit}"
    return f"{s * 1e9:.{digits}g} ns"


def fmt_rate(bps: float) -> str:
    """Bytes per second in decimal MB/s or GB/s (the seeds' MB/s are 10^6 B/s)."""
    if bps != bps:
        return "nan"
    if bps >= 1e9:
        return f"{bps / 1e9:.3g} GB/s"
    if bps >= 1e6:
        return f"{bps / 1e6:.3g} MB/s"
    if bps >= 1e3:
        return f"{bps / 1e3:.3g} kB/s"
    return f"{bps:.3g} B/s"
