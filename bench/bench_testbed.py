"""The testbed's figures (root): `testbed up` of 16 hosts and 6 switches
(target under 15 s) and `down` (under 3 s), then `testbed validate` of every
example network (targets: measured per-node all-to-all within 5% of the
calibrated prediction at the largest size and within 10% at every size, each
validation in under 5 minutes, the per-cable records under 5% of its time),
with what the cables and the emulation's own check say; and the collectives
each validation measures at its largest size (targets: each within 10% of its
calibrated prediction, its bottleneck as busy as the busiest cable).

Usage: python bench/bench_testbed.py [--rounds N] [--skip-validate] [--only NAME,...] [--validations K]"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import _common as c

UP_S, DOWN_S, VALIDATE_S, TOP, EVERY, WATCH_SHARE, COLL = 15.0, 3.0, 300.0, 0.05, 0.10, 0.05, 0.10
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
    ap.add_argument("--only", metavar="NAMES", help="validate only these examples (comma-separated stems)")
    ap.add_argument("--validations", type=int, default=1, metavar="K", help="validations of each example (default 1)")
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
        only = set(opts.only.split(",")) if opts.only else None
        for f in sorted(EXAMPLES.glob("*.yaml")):
            if only and f.stem not in only:
                continue
            for _ in range(opts.validations):
                out = Path(work) / f"{f.stem}.json"
                t0 = time.monotonic()
                try:
                    c.run([exe, "testbed", "validate", str(f), "-o", str(out)], timeout=VALIDATE_S + 60)
                except c.BenchError:
                    pass  # exit 1: the measurement disagrees; the document says by how much
                dt = time.monotonic() - t0
                _report(f.stem, json.loads(out.read_text()), dt, work)


def _watch_cost(work: str, stem: str) -> float:
    """Seconds the per-cable records cost over the validation's runs (launch_end watch_cost_s)."""
    total = 0.0
    for f in (Path(work) / f"{stem}{tail}.ndjson" for tail in ("", "-saturation", "-bidirectional")):
        for line in (f.read_text().splitlines() if f.exists() else ()):
            r = json.loads(line)
            total += r.get("watch_cost_s", 0.0) if r.get("kind") == "launch_end" else 0.0
    return total


def _report(stem: str, doc: dict, dt: float, work: str) -> None:
    v = doc["validation"]
    top = v["per_size"][-1]
    ratios = " ".join(f"{c.fmt_size(r['size'])} {r['ratio']:.3f}" for r in v["per_size"])
    c.verdict(abs(top["ratio"] - 1) <= TOP and all(abs(r["ratio"] - 1) <= EVERY for r in v["per_size"])
              and dt < VALIDATE_S,
              f"{stem}: within {TOP:.0%} at the largest size and {EVERY:.0%} at every size, in under "
              f"{VALIDATE_S:g} s",
              f"measured/predicted {ratios}; predicted {v['predicted_Bps'] / 1e6:.2f} MB/s per node "
              f"({v['predicted_bottleneck']}); saturation one way {v['saturation']['rate_Bps'] / 1e6:.2f} MB/s; "
              f"{dt:.0f} s")
    emu = v.get("emulation") or {}
    print(f"    cables: {v.get('explanation')}")
    print("    emulation: " + ("faithful" if emu.get("faithful") else "NOT faithful: " + "; ".join(emu.get("reasons", [])))
          + f" (softirq wait {emu.get('softirq_wait', 0):.1%})")
    colls = v.get("collectives") or []
    if colls:
        c.verdict(all(abs(r["ratio"] - 1) <= COLL and r.get("busiest_agrees") for r in colls),
                  f"{stem}: every collective within {COLL:.0%} of its calibrated prediction, the cable it keeps busiest "
                  "the one measured busiest",
                  "; ".join(f"{r['bench'][5:]} {r['algorithm']} {r['ratio']:.3f}"
                            + ("" if r.get("busiest_agrees") else f" (busiest: model {r['busiest']}, measured {r.get('busiest_cable')})")
                            + ("" if abs(r["ratio"] - 1) <= COLL else
                               f" (its busiest cable's busiest windows at {r.get('model_busiest_p90') or 0:.2f} of the rate)")
                            for r in colls))
    cost = _watch_cost(work, stem)
    c.verdict(cost < WATCH_SHARE * dt, f"{stem}: per-cable records under {WATCH_SHARE:.0%} of the validation's time",
              f"{cost:.2f} s of {dt:.0f} s ({cost / dt:.1%})")


if __name__ == "__main__":
    c.main(body)
