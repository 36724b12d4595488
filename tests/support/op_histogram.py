"""A histogram of single ops as the core's per_op.c buckets them (bucket floor(log(t / 1e-9) /
log(1.01))), for tests that build documents with per-op tails."""
import numpy as np


def histogram(ops) -> dict:
    idx = np.floor(np.log(np.asarray(ops) / 1e-9) / np.log1p(0.01)).astype(int)
    i, c = np.unique(idx, return_counts=True)
    return {"base_s": 1e-9, "error": 0.01, "buckets": 2800, "timer_cost_s": 2e-8, "ops_per_timing": 1,
            "ranks": [{"rank": 0, "n": len(ops), "min_s": float(min(ops)), "max_s": float(max(ops)),
                       "buckets": [[int(a), int(b)] for a, b in zip(i, c)]}]}
