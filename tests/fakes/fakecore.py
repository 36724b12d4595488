#!/usr/bin/env python3
"""A stand-in for fabriclab-core that speaks the same protocol with deterministic samples.

FAKECORE_MODE selects a behaviour: "ok" (default), "hang:N" (stop answering
after N points), "die:N" (exit 1 after N points), "error" (an error line),
"nosamples:N" (point N has no samples)."""
import json
import os
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv):
    bench = argv[0]
    opts = {"--sizes": "0", "--strides": "1"}
    i = 1
    while i < len(argv):
        if argv[i] == "--validate":
            opts["--validate"] = True
            i += 1
        else:
            opts[argv[i]] = argv[i + 1]
            i += 2
    mode, _, arg = os.environ.get("FAKECORE_MODE", "ok").partition(":")
    emit({"type": "hello", "core_version": "fake", "bench": bench, "mpi_library": "FakeMPI 1.0",
          "mpi_version": "3.1", "ranks": 2, "hosts": ["h0", "h0"], "node_size": 2,
          "timer": {"name": "fake", "overhead_s": 2e-8, "resolution_s": 1e-9}, "options": {}})
    if mode == "error":
        emit({"type": "error", "message": "fake kernel failure"})
        return 3
    n = 0
    legs = 2 if bench.endswith(("pingpong", "lat", "rr_poll", "rr_block")) else 1
    for size in map(int, opts["--sizes"].split(",")):
        for stride in map(int, opts["--strides"].split(",")):
            if mode in ("hang", "die") and n == int(arg):
                if mode == "hang":
                    time.sleep(3600)
                return 1
            emit({"type": "begin", "bench": bench, "size": size, "stride": stride})
            base = 1e-6 * legs + size / 5e9 * legs  # Hockney: 1 us + n / 5 GB/s per leg
            samples = [base * (1 + 0.001 * ((k * 7) % 5)) for k in range(20)]
            if mode == "nosamples" and n == int(arg):
                samples = []
            val = {"checked_bytes": size * legs, "errors": 0} if "--validate" in opts else None
            emit({"type": "point", "bench": bench, "size": size, "stride": stride,
                  "bytes_per_op": size * legs, "legs_per_op": legs, "warmup": 10, "batch": 4,
                  "samples": samples, "stop": "converged", "elapsed_s": 0.01, "validation": val, "info": {}})
            n += 1
    emit({"type": "end", "bench": bench, "points": n})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
