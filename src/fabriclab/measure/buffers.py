"""Cache state as a dimension of every transfer: how many buffers ops rotate through.

The core gets, per size, the number of distinct buffers per side (`--buffers`);
op i uses buffer i mod that number, and the receive slots of a window do the
same (docs/usage.md, "Cache state").

- `warm` (default, the convention of OSU and IMB): buffers are reused op
  after op, so they stay in cache as far as their size allows. A window's
  receive slots wrap within WARM_REGION bytes: floor(WARM_REGION / size)
  slots, at least 1, so from WARM_REGION up every message of a window lands
  in one buffer, as OSU's bandwidth tests do. 64 KiB stays within the L2 of
  any current core (with its peer's region, within the L1 of many), and at
  64 KiB and above a stream is exactly osu_bw's one buffer.
- `cold` (IMB's off_cache): ops rotate through ceil(2 x LLC / size) + 1
  buffers, more than twice the last-level cache, so every op finds its
  buffers evicted."""

from __future__ import annotations

from ..errors import UsageError

CACHE_STATES = ("warm", "cold")
WARM_REGION = 64 << 10
COLD_FACTOR = 2          # IMB off_cache: buffers beyond twice the last-level cache
DEFAULT_LLC = 32 << 20   # when the host does not say


def count(size: int, cache: str, llc_bytes: int) -> int:
    """Distinct buffers per side for one size."""
    if cache not in CACHE_STATES:
        raise UsageError(f"--cache must be warm or cold, not {cache!r}")
    unit = max(size, 1)
    if cache == "warm":
        return max(1, WARM_REGION // unit)
    return -(-COLD_FACTOR * llc_bytes // unit) + 1


def plan(sizes, cache: str, llc_bytes: int | None) -> list[int]:
    llc = llc_bytes or DEFAULT_LLC
    return [count(s, cache, llc) for s in sizes]
