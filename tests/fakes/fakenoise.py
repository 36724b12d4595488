"""The fake core's noise records (docs/core-protocol.md, "noise"): plausible
raw quanta and detours, integer nanoseconds, per rank on CPU q. Rank 0
carries a disturbance of PERIOD_NS and LENGTH_NS (quanta that long, detours
that long at that period), the others only short ones."""

QUANTUM_NS = 70_000
PERIOD_NS, LENGTH_NS = 10_000_000, 1_000_000
SPAN_NS = 1_000_000_000


def record(bench: str, nranks: int, params: dict) -> dict:
    if bench == "noise.fwq":
        n = int(params["quanta"])
        return {"method": "fwq", "work": int(params["work"]),
                "ranks": [{"rank": q, "cpu": q, "quanta_ns": [QUANTUM_NS + (LENGTH_NS if q == 0 and i % 143 == 0
                                                                          else 500 * (i % 3)) for i in range(n)]}
                          for q in range(nranks)]}
    ranks = []
    for q in range(nranks):
        starts = list(range(3_000_000, SPAN_NS - LENGTH_NS, PERIOD_NS)) if q == 0 else []
        lengths = [LENGTH_NS] * len(starts)
        short = [(7_919_000 * k) % SPAN_NS for k in range(1, 50)]       # scattered 2 us detours
        both = sorted(zip(starts + short, lengths + [2_000] * len(short)))
        ranks.append({"rank": q, "cpu": q, "gap_min_ns": 20, "loops": 40_000_000, "span_ns": SPAN_NS,
                      "detours": len(both), "start_ns": [s for s, _ in both], "length_ns": [n for _, n in both]})
    return {"method": "detour", "threshold": float(params["threshold"]), "ranks": ranks}
