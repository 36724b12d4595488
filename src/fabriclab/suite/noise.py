"""The noise benchmarks' facts (benchmarks.py, the `noise` level;
csrc/families/noise.c runs them; docs/noise.md): their parameters' defaults
and the one rule checked before launch, the detour threshold's.

FWQ's quantum is `work` iterations of a dependent 64-bit multiply-add, about
1.1 ns each on this machine's cores: 65536 make a quantum of about 70 us,
within the 50-100 us that keeps a timer interrupt (1-4 ms apart) from
landing in most quanta while a 1 ms disturbance still spans many. The
selfish detour's threshold is a multiple of the shortest gap between two
clock reads (about 20 ns here): 9 makes a detour any gap above about 0.2 us,
far below a scheduler's slice or an interrupt, far above a cache miss."""

from __future__ import annotations

import math

from ..errors import UsageError

FWQ_WORK = 65536          # iterations of one quantum
FWQ_QUANTA = 10000        # quanta in a point's record: about 0.7 s a rank
DETOUR_THRESHOLD = "9"    # a detour: a gap above 9 x the shortest
DETOUR_RECORD_MS = 1000   # the detour loop's record: 1 s a rank
THRESHOLD_MAX = 1e6
FWQ_MIN_WORK = 1024       # a quantum of about 1 us: 50 x the clock read it is timed by, else the quanta time the clock
ITERATION_FLOOR_S = 0.25e-9   # one dependent multiply-add: at least a cycle of a 4 GHz core


def fwq_first_sample(params: dict, size: int):
    """noise.fwq writes a point's record of QUANTA quanta of WORK iterations once it is whole."""
    work, quanta = int(params["work"]), int(params["quanta"])
    return (work * quanta * ITERATION_FLOOR_S,
            f"a record of quanta={quanta:,} of work={work:,} iterations (at least {ITERATION_FLOOR_S * 1e9:g} ns each)")


def detour_first_sample(params: dict, size: int):
    """noise.detour writes its record of RECORD_MS once it is whole."""
    return int(params["record_ms"]) / 1000, f"a record of record_ms={int(params['record_ms']):,}"


def threshold(text, what: str = "noise.detour: parameter threshold") -> float:
    """A detour threshold as typed: a finite number from 1 to THRESHOLD_MAX; UsageError
    in one line otherwise (below 1 x the shortest gap, every gap is a detour). The
    parameter's own rule (facts.Param.check), so it holds whether the benchmark
    was named or came with its level."""
    try:
        x = float(str(text))
    except ValueError:
        x = math.nan
    if not 1 <= x <= THRESHOLD_MAX:
        raise UsageError(f"{what} must be a number from 1 to {THRESHOLD_MAX:.0f} (a multiple of the "
                         f"shortest loop; below 1 every gap is a detour), not {text!s:.40}")
    return x
