"""Sizes and units: parsing of `1:4M:x2` sweeps and SI formatting.

Storage is always SI (bytes, seconds, bytes per second); formatting happens only
at display time. Size suffixes K/M/G are binary (1K = 1024 bytes), as in OSU
and IMB size lists."""

from __future__ import annotations

import re

from .errors import UsageError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_NUM = re.compile(r"^\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)
MAX_SWEEP_POINTS = 10_000


def parse_size(text: str, what: str = "size") -> int:
    """'4096', '4K', '4KiB', '1M' -> bytes. Raises UsageError on anything else."""
    m = _NUM.match(str(text))
    if not m:
        raise UsageError(f"malformed {what} {text!r}: expected an integer with an optional K, M or G suffix")
    return int(m.group(1)) * _SUFFIX[m.group(2).upper()]


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
        if factor <= 1.0:
            raise UsageError(f"malformed {what} range {part!r}: the factor must be a number above 1")
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
