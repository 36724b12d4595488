"""The fake core's applications: what an app point of the real core carries, from a cost model.

Each app's op is a sum of phases (docs/core-protocol.md, "phases"), timed on
a made-up machine: memory copies at 4 GB/s, a network of 2 GB/s per rank
with 2 us per message, a multiply at 4 GFLOP/s per rank (1 with the loop).
Only the shape matters to the tests: more ranks cut the local work and add
messages, so speedups fall short of N, and the modes of the transpose differ.
Bytes, `info` and the per-rank counts follow the real kernels' arithmetic
(suite/apps.py)."""
from fabriclab.suite import apps

COPY, NET, MSG, FLOPS = 4e9, 2e9, 2e-6, 4e9
# The slowest rank (a sample) takes this much longer than the mean rank (the phases).
IMBALANCE = 1.02


def _transpose(m: int, n: int, params: dict) -> tuple:
    """(phases, info, bytes per op, bytes each rank sends, bytes each receives)"""
    mine = 8 * m * m / n                      # one rank's rows
    out = mine * (n - 1) / n                  # the part of them that leaves
    talk = out / NET + MSG * (n - 1)
    mode = params["mode"]
    if mode == "packed":
        phases = {"pack": mine / COPY, "exchange": talk + mine / n / COPY, "unpack": mine / COPY}
    elif mode == "datatype":
        phases = {"exchange": talk * 1.3 + mine / COPY * 1.5}
    else:
        phases = {"exchange": talk * 0.8 + mine / n / COPY}
    info = {"mode": mode}
    if mode == "deposit":    # every fake rank shares host h0: stores through a window unless put is asked for
        info["deposit"] = "put" if params.get("deposit") == "put" else "stores"
    sent = apps.transpose_sent(m, n)
    return phases, info, 8 * m * m, sent, sent


def _matmul(size: int, n: int, params: dict) -> tuple:
    side = apps.matmul_side(size, n, params["scale"])
    local = "loop" if params.get("local") == "loop" else "blas"
    got = apps.matmul_received(side, n)
    phases = {"gather": max(got) / NET + MSG * (n - 1) if n > 1 else 0.0,
              "multiply": apps.flops(side) / n / (FLOPS if local == "blas" else FLOPS / 4)}
    sent = [h * side * 8 * (n - 1) for h in apps.blocks(side, n)]
    return phases, {"n": side, "flops": apps.flops(side), "local": local}, sum(sent), sent, got


def _sort(size: int, n: int, params: dict) -> tuple:
    keys = apps.sort_keys(size, n, params["scale"])
    e = int(params["elem"])
    mine = keys / n
    phases = {"bucket": mine * e / COPY + mine * 2e-9,
              "exchange": mine * e * (n - 1) / n / NET + MSG * (n - 1),
              "sort": mine * (3e-9 + e / COPY)}
    sent = [int(k * e * (n - 1) / n) for k in apps.blocks(keys, n)]
    return phases, {"keys": keys, "elem": e}, keys * e, sent, sent


MODELS = {"app.transpose": _transpose, "app.matmul": _matmul, "app.sort": _sort}


def point(bench: str, size: int, roles: str, params: dict, jitter: list) -> dict:
    """The fields of an app point: samples, phases, bytes, per-rank counts and info."""
    n = roles.count("b")
    phases, info, total, sent, got = MODELS[bench](size, n, params)
    op = sum(phases.values()) * IMBALANCE
    samples = [op * j for j in jitter]
    idle = [0] * (len(roles) - n)               # the active ranks come first
    return {"samples": samples, "bytes_per_op": total, "info": info,
            "phases": {k: [v * j for j in jitter] for k, v in phases.items()},
            "messages_per_op": n * (n - 1), "rank_sent_bytes": list(sent) + idle, "rank_recv_bytes": list(got) + idle,
            # rank 0 is the slowest; the others a little faster
            "rank_samples": [None if r == "i" else [s * (1 - q / 200) for s in samples]
                             for q, r in enumerate(roles)]}
