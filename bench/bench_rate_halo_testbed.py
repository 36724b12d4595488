"""The multi-pair bandwidth and the halo exchange on the shipped example testbeds, against the model.

For each network file of examples/testbeds: bring it up as a testbed,
calibrate its bottleneck cable's class from message.saturation as `testbed
validate` does (bench/_testbed.py), then run with one rank on each host the
message-rate benchmarks (message.mbw_mr by osu_mbw_mr's rule, the senders'
mean, and with `--benches` message.uniband by IMB's, the slowest rank: rank
r sends to r + N/2, a window of 16)
and IMB-P2P's halo stencils (message.stencil2d, message.stencil3d: every
rank exchanges with its 4 or 6 grid neighbours at once), and read each
point's figure beside what the model predicts for it, calibrated: the run's
`rate_model` rows (verdicts/rate_prediction.py: each flow's max-min share
of the cables it crosses, reduced by the benchmark's own rule) and its
`halo_model` rows (verdicts/halo_prediction.py: the busiest cable's bytes
over its rate, one step). Target: measured within 10% of the calibrated
prediction, the median over `--rounds` rounds, each with its own
calibration.

Usage: python bench/bench_rate_halo_testbed.py [--networks two-switches,ring,...|all]
                                               [--sizes 64K] [--rounds 3] [--launches 3]"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _common import REPO, BenchError, fabriclab, header, main, verdict
from _testbed import calibrate, testbed

from fabriclab.datafile import read_data_file
from fabriclab.model.topologies.custom import CustomNetwork
from fabriclab.units import parse_size

NAME = "ratebench"
TARGET = 0.10
FAST = ["--point-time", "2", "--min-samples", "3"]
# bench -> (the run document's block, what its rows hold)
BENCHES = {"message.mbw_mr": "rate_model", "message.uniband": "rate_model",
           "message.stencil2d": "halo_model", "message.stencil3d": "halo_model"}
# A window of 16 keeps one op of the message-rate benchmarks to seconds on the slowest example
# cables (3 MB/s): their figures are steady-state rates, the same for any window that fills the pipe.
PARAMS = {"message.mbw_mr": ["-p", "window=16"], "message.uniband": ["-p", "window=16"]}


def _ratios(bench: str, sizes: list, hosts: list, cal: Path, launches: int, work: str) -> dict:
    """{size: (measured / predicted, the row)} of one run of `bench` on every host."""
    n = str(len(hosts))
    doc, _, _ = fabriclab([bench, "--testbed", NAME, "--hosts", ",".join(hosts), "-n", n,
                           "-s", ",".join(str(s) for s in sizes), "--calibration", str(cal),
                           "--launches", str(launches), *PARAMS.get(bench, []), *FAST], work, timeout=900)
    rows = (doc.get(BENCHES[bench]) or {}).get("rows") or []
    got = {r["size"]: r for r in rows if r["bench"] == bench}
    if set(got) != set(sizes):
        raise BenchError(f"{bench}: the run predicts sizes {sorted(got)}, not {sizes}")
    return got


def _show(bench: str, size: int, r: dict) -> str:
    if "measured_Bps" in r:
        return (f"{bench} {size}: {r['measured_Bps'] / 1e6:8.2f} MB/s measured, {r['predicted_Bps'] / 1e6:8.2f} "
                f"predicted ({r['rule']}), ratio {r['ratio']:.3f}; {r['bottleneck']}")
    return (f"{bench} {size}: {r['measured_s'] * 1e3:8.2f} ms measured, {r['predicted_s'] * 1e3:8.2f} ms "
            f"predicted, ratio {r['ratio']:.3f}; {r['bottleneck']}")


def _network(path: Path, benches: list, sizes: list, rounds: int, launches: int, work: str) -> bool:
    net = CustomNetwork.from_dict(read_data_file(str(path), "network file"), where=str(path))
    hosts = list(net.node_names)
    testbed("down", NAME)
    testbed("up", str(path), "--name", NAME)
    runs = []
    try:
        for k in range(rounds):
            cal, rate, cable, nominal = calibrate(net, NAME, work)
            print(f"  round {k + 1} of {rounds}: {cable} calibrated at {rate:.2f} MB/s (nominal {nominal:g})")
            got = {}
            for bench in benches:
                for size, r in _ratios(bench, sizes, hosts, cal, launches, work).items():
                    print("    " + _show(bench, size, r))
                    got[(bench, size)] = r["ratio"]
            runs.append(got)
    finally:
        testbed("down", NAME)
    ok = True
    for bench in benches:
        for size in sizes:
            each = [r[(bench, size)] for r in runs]
            med = statistics.median(each)
            ok &= verdict(abs(med - 1) <= TARGET, f"{path.stem} {bench} at {size}: median over {rounds} rounds "
                          f"within {TARGET:.0%} of the calibrated prediction",
                          f"{med:.3f} (rounds {', '.join(f'{x:.3f}' for x in each)})")
    return ok


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default="all", help="example testbeds (examples/testbeds/NAME.yaml), or `all`")
    ap.add_argument("--benches", default="message.mbw_mr,message.stencil2d,message.stencil3d",
                    help="of " + ", ".join(BENCHES))
    ap.add_argument("--sizes", default="64K", help="message sizes, each judged")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of calibration and runs; verdicts on the median")
    ap.add_argument("--launches", type=int, default=3, help="launches per point")
    a = ap.parse_args()
    benches = a.benches.split(",")
    if any(b not in BENCHES for b in benches):
        raise BenchError(f"--benches: one of {', '.join(BENCHES)}")
    header("message rate and halo exchange vs the model, on the example testbeds",
           method=f"one rank per host, {a.launches} launches per point; calibration from message.saturation "
                  f"(64K, window 16) before each of {a.rounds} rounds; verdicts on the median ratio over the rounds")
    sizes = [parse_size(x) for x in a.sizes.split(",")]
    with tempfile.TemporaryDirectory() as work:
        names = (sorted(p.stem for p in (REPO / "examples" / "testbeds").glob("*.yaml")) if a.networks == "all"
                 else a.networks.split(","))
        for name in names:
            print(f"network {name}")
            try:
                _network(REPO / "examples" / "testbeds" / f"{name}.yaml", benches, sizes, a.rounds, a.launches,
                         work)
            except BenchError as e:            # the other networks still run
                verdict(False, f"{name}: measured", str(e))


if __name__ == "__main__":
    main(body)
