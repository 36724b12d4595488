"""Cache state as a dimension of every transfer: how many buffers ops rotate through.

The core gets, per size, the number of distinct buffers per side (`--buffers`);
op i uses buffer i mod that number on both sides, and so does the op of a
window, the ops a transfer keeps in flight between two completions
(docs/usage.md, "Cache state"). One rule gives the count, and a windowed
benchmark's `window_buffers` parameter says how a window's ops share it, each
level following its anchor:

- `shared` (two-sided transfers' default): a window's ops take the rotation
  as it comes, so from WARM_REGION up every op of a warm window sends from
  one buffer into one buffer, as OSU's osu_bw and osu_bibw do by default and
  IMB's PingPing and Exchange. A receive moves the data into the receiver's
  buffer whichever buffer that is, so one buffer is what those suites read:
  a buffer per op read 0.43 of osu_bw at 64 KiB-4 MiB on one host.
- `per-op` (one-sided transfers' default; osu_bw's `-b multiple`): every op
  of a window has its own buffer on each side, at least `window` buffers.
  OSU's osu_put_bw and osu_get_bw put op j of a window from `sbuf + j x
  size` to displacement `j x size`; a window whose puts all land in one
  buffer that nobody reads leaves the "remote" lines in the writer's cache
  after the first window, and a put becomes an in-cache copy.
- `warm` (default, the convention of OSU and IMB): the buffers are reused
  window after window, so they stay in cache as far as their size allows:
  one, and for small transfers floor(WARM_REGION / size) of them (64 KiB
  stays within the L2 of any current core); `per-op` raises that to the
  window's.
- `cold` (IMB's off_cache): ops rotate through ceil(2 x LLC / size) + 1
  buffers, more than twice the last-level cache, so every op finds its
  buffers evicted; `per-op` raises that to the window's.

A kernel whose op takes several slot-sized pieces at once (a hotspot target
receiving from N senders, an all-to-all array of N blocks, a scatter message
of S segments) divides the count by them and keeps at least a buffer per
unit for each op of a window that has its own (fl.h, fl_unit_slots and
fl_own_slots); footprint.py follows the same arithmetic."""

from __future__ import annotations

from ..errors import UsageError

CACHE_STATES = ("warm", "cold")
# window_buffers: how the ops of a window share the rotation (its first value
# the two-sided default, the second the one-sided)
LAYOUTS = ("shared", "per-op")
WARM_REGION = 64 << 10
COLD_FACTOR = 2          # IMB off_cache: buffers beyond twice the last-level cache
DEFAULT_LLC = 32 << 20   # when the host does not say


def own(window: int, layout: str) -> int:
    """The ops of a window that each need a buffer of their own."""
    return window if layout == "per-op" else 1


def count(size: int, cache: str, llc_bytes: int, window: int = 1) -> int:
    """Distinct buffers per side for one size, with `window` ops that each
    need their own (own(): the window under per-op, else 1)."""
    if cache not in CACHE_STATES:
        raise UsageError(f"--cache must be warm or cold, not {cache!r}")
    unit = max(size, 1)
    rotation = WARM_REGION // unit if cache == "warm" else -(-COLD_FACTOR * llc_bytes // unit) + 1
    return max(1, window, rotation)


def plan(sizes, cache: str, llc_bytes: int | None, window: int = 1) -> list[int]:
    llc = llc_bytes or DEFAULT_LLC
    return [count(s, cache, llc, window) for s in sizes]
