"""Single-op timing against the batched samples: an 8-byte ping-pong run
with `--per-op`, its single ops' p50 (analysis/tails.py) over the batched
median of the same point, both as the point table gives them, and the tail
percentiles with their intervals over launches. Target: p50 within 5% of
the batched median. Each run's two figures come from the same launches
(the single ops follow the samples in each), so the ratio compares like
with like. Both figures depend on the machine (its timer, its noise).
Beside them, the single ops' mean over the batched median: a batched
sample is its batch's mean, so where that ratio is near 1 and the p50's is
not, the gap is the skew of the single ops' distribution (mean over p50),
not a difference of timing.

Usage: python bench/bench_per_op.py [--runs N] [--launches K] [--per-op SECONDS]"""

from __future__ import annotations

import argparse
import sys
import tempfile

import _common as c

TARGET = 0.05


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--per-op", type=float, default=0.5)
    a = ap.parse_args()
    import numpy as np
    from fabriclab.analysis.tails import tails
    from fabriclab.schema import Document
    ratios = []
    with tempfile.TemporaryDirectory() as work:
        for i in range(a.runs):
            doc, wall, _ = c.fabriclab(["message.pingpong", "-s", "8", "-L", str(a.launches),
                                        "--per-op", repr(a.per_op)], work)
            d = Document.from_dict(doc)
            (t,) = tails(d.points)
            batched = d.merged[0].latency_s
            p50 = t.estimates["p50"][0]
            mean = float(np.median([p.per_transfer(_mean(p.op_histogram)) for p in d.points if p.op_histogram]))
            ratios.append(p50 / batched)
            tail = ", ".join(f"{k} {v[0] * 1e6:.2f} us [{v[1] * 1e6:.2f}, {v[2] * 1e6:.2f}]"
                             for k, v in t.estimates.items() if k in ("p99", "p99.9"))
            print(f"run {i + 1}: batched median {batched * 1e6:.3f} us, single-op p50 {p50 * 1e6:.3f} us, "
                  f"ratio {p50 / batched:.3f} (single-op mean {mean / batched:.3f} of it); {tail}; {t.ops} ops, timer {t.timer_share:.1%} of p50 "
                  f"({wall:.1f} s)")
    worst = max(abs(r - 1) for r in ratios)
    print(f"p50 / batched median: {min(ratios):.3f}-{max(ratios):.3f} over {a.runs} runs "
          f"(target within {TARGET:.0%}): {'met' if worst <= TARGET else 'NOT met'}")
    return 0 if worst <= TARGET else 1


def _mean(hist: dict) -> float:
    """The mean single op of one launch's histogram, each bucket at its geometric middle."""
    import numpy as np
    from fabriclab.analysis.tails import counts
    c, _, _ = counts(hist)
    base, e = float(hist["base_s"]), float(hist["error"])
    return float((c * base * (1 + e) ** (np.arange(len(c)) + 0.5)).sum() / max(c.sum(), 1))


if __name__ == "__main__":
    sys.exit(main())
