"""HPC Challenge's network figures as a named set of benchmarks:
`fabriclab run hpcc` runs what HPCC's latency and bandwidth test runs
(hpcc/src/bench_lat_bw_1.5.2.c, derived from b_eff), and analysis/hpcc.py
reads HPCC's figures off its points (docs/hpcc.md).

- message.cross_pingpong at 8 and 2,000,000 bytes between every ordered
  pair in turn (HPCC runs every pair while its time budget allows, and a
  stride of them beyond: here `--active` picks pairs);
- message.ring at the same sizes, on the natural ring and on RINGS random
  rings (seeds 1..RINGS, patterns.ring), each in HPCC's two ways
  (method=sendrecv and irecv), the better of the two counting.

HPCC draws 30 random rings at 8 bytes and 10 at 2,000,000; the set draws
RINGS at both (`-p seed=1,2,...` draws others)."""

from __future__ import annotations

LATENCY_BYTES = 8             # bench_lat_bw: msg_length_for_lat
BANDWIDTH_BYTES = 2_000_000   # msg_length_for_bw
RINGS = 10                    # ring_lat_bw_loop's rand_pattern_count at the bandwidth size
SIZES = f"{LATENCY_BYTES},{BANDWIDTH_BYTES}"

# A set's benchmarks, each with its sweep and parameters (a list of values runs a job each;
# one that means nothing beside the others, seed on the natural ring, is left out).
SETS = {
    "hpcc": {
        "message.cross_pingpong": {"sizes": SIZES, "params": {}},
        "message.ring": {"sizes": SIZES, "params": {"order": "natural,random", "method": "sendrecv,irecv",
                                                      "seed": ",".join(str(k) for k in range(1, RINGS + 1))}},
    },
}


def expand(names: list[str] | None) -> tuple[list[str] | None, dict]:
    """`names` with every set replaced by its benchmarks, and {benchmark: its sweep and
    parameters} for the benchmarks a set brought."""
    if not names or not any(n in SETS for n in names):
        return names, {}
    out, preset = [], {}
    for n in names:
        for b in SETS.get(n, {n: None}):
            if b not in out:
                out.append(b)
            if n in SETS:
                preset[b] = SETS[n][b]
    return out, preset
