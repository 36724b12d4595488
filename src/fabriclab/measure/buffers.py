"""Cache state as a dimension of every transfer: how many buffers ops rotate through.

The core gets, per size, the number of distinct buffers per side (`--buffers`);
op i uses buffer i mod that number on both sides, and so does the op of a
window, the ops a transfer keeps in flight between two completions
(docs/usage.md, "Cache state"). One rule gives the count:

- Every op of a window has its own buffer on each side: at least `window`
  buffers. The established one-sided suites put each op of a window at its
  own offset (OSU's osu_put_bw and osu_get_bw: `sbuf + j * size` to
  displacement `j * size`); a window whose ops all land in one buffer that
  nobody reads leaves the "remote" lines in the writer's cache after the
  first window, and a put becomes an in-cache copy.
- `warm` (default, the convention of OSU and IMB): the buffers are reused
  window after window, so they stay in cache as far as their size allows:
  the window's buffers, and for small transfers floor(WARM_REGION / size) of
  them (64 KiB stays within the L2 of any current core). The working set,
  the bytes per side that the ops rotate through, is max(window x size,
  WARM_REGION) up to a transfer of WARM_REGION.
- `cold` (IMB's off_cache): ops rotate through ceil(2 x LLC / size) + 1
  buffers, more than twice the last-level cache, so every op finds its
  buffers evicted; and through a window's worth at least.

A kernel whose op takes several slot-sized pieces at once (a hotspot target
receiving from N senders, an all-to-all array of N blocks, a scatter message
of S segments) divides the count by them and keeps at least a window of
slots per unit (fl.h, fl_unit_slots); footprint.py follows the same
arithmetic."""

from __future__ import annotations

from ..errors import UsageError

CACHE_STATES = ("warm", "cold")
WARM_REGION = 64 << 10
COLD_FACTOR = 2          # IMB off_cache: buffers beyond twice the last-level cache
DEFAULT_LLC = 32 << 20   # when the host does not say


def count(size: int, cache: str, llc_bytes: int, window: int = 1) -> int:
    """Distinct buffers per side for one size, with `window` ops in flight."""
    if cache not in CACHE_STATES:
        raise UsageError(f"--cache must be warm or cold, not {cache!r}")
    unit = max(size, 1)
    rotation = WARM_REGION // unit if cache == "warm" else -(-COLD_FACTOR * llc_bytes // unit) + 1
    return max(1, window, rotation)


def plan(sizes, cache: str, llc_bytes: int | None, window: int = 1) -> list[int]:
    llc = llc_bytes or DEFAULT_LLC
    return [count(s, cache, llc, window) for s in sizes]
