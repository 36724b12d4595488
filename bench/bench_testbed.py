"""The testbed's figures (root): `testbed up` of 16 hosts and 6 switches
(target under 15 s) and `down` (under 3 s), then `testbed validate` of every
example network (target: measured per-node all-to-all within 10% of the
calibrated prediction at the largest size, each in under 5 minutes).

Usage: python bench/bench_testbed.py [--rounds N] [--skip-validate]"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import _common as c

UP_S, DOWN_S, VALIDATE_S, TOLERANCE = 15.0, 3.0, 300.0, 0.10
EXAMPLES = c.REPO / "examples" / "testbeds"


def fat_tree_16() -> str:
    """16 hosts, 4 leaves, 2 spines: the size the up/down targets name."""
    hosts = [f"h{i}" for i in range(16)]
    links = [[h, f"l{i // 4}"] for i, h in enumerate(hosts)]
    links += [{"a": f"l{j}", "b": f"sp{k}", "rate_MBps": 20} for j in range(4) for k in range(2)]
    return json.dumps({"name": "16 hosts", "nodes": hosts, "switches": [f"l{j}" for j in range(4)] + ["sp0", "sp1"],
                       "default_rate_MBps": 40, "links": links})


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="up/down rounds (default 5)")
    ap.add_argument("--skip-validate", action="store_true", help="only time up and down")
    opts = ap.parse_args()
    exe = c.fabriclab_exe()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        net = Path(work) / "ft16.json"
        net.write_text(fat_tree_16())
        c.header("fabriclab testbed: up, down and the model's validation",
                 commands=[f"fabriclab testbed up {net} --name benchup", "fabriclab testbed down benchup",
                           f"fabriclab testbed validate {EXAMPLES}/NAME.yaml"],
                 method=f"{opts.rounds} up/down rounds, median, min..max; one validation per example")
        c.run([exe, "testbed", "down", "benchup"])
        ups, downs = [], []
        for _ in range(opts.rounds):
            ups.append(c.timed([exe, "testbed", "up", str(net), "--name", "benchup"]))
            downs.append(c.timed([exe, "testbed", "down", "benchup"]))
        c.verdict(c.median(ups) < UP_S, f"up of 16 hosts and 6 switches under {UP_S:g} s",
                  f"median {c.median(ups):.2f} s ({c.spread(ups)} s)")
        c.verdict(c.median(downs) < DOWN_S, f"down under {DOWN_S:g} s",
                  f"median {c.median(downs):.2f} s ({c.spread(downs)} s)")
        if opts.skip_validate:
            return
        for f in sorted(EXAMPLES.glob("*.yaml")):
            out = Path(work) / f"{f.stem}.json"
            t0 = time.monotonic()
            try:
                c.run([exe, "testbed", "validate", str(f), "-o", str(out)], timeout=VALIDATE_S + 60)
            except c.BenchError:
                pass  # exit 1: the measurement disagrees; the document says by how much
            dt = time.monotonic() - t0
            v = json.loads(out.read_text())["validation"]
            top = v["per_size"][-1]
            c.verdict(abs(top["ratio"] - 1) <= TOLERANCE and dt < VALIDATE_S,
                      f"{f.stem}: within {TOLERANCE:.0%} at the largest size, in under {VALIDATE_S:g} s",
                      f"measured {top['measured_Bps'] / 1e6:.2f} vs predicted {v['predicted_Bps'] / 1e6:.2f} MB/s "
                      f"per node (ratio {top['ratio']:.3f}, {v['predicted_bottleneck']}); saturation one way "
                      f"{v['saturation']['rate_Bps'] / 1e6:.2f}, both ways "
                      f"{(v['bidirectional'] or {}).get('rate_Bps', float('nan')) / 1e6:.2f} MB/s; {dt:.0f} s")


if __name__ == "__main__":
    c.main(body)
