"""The apps' exchange phases on the shipped example testbeds, against the model's prediction.

For each network file of examples/testbeds: bring it up as a testbed, find
the cable the model names as the bottleneck and the pairs of hosts whose
routes cross it both ways (testbed/validate.py), calibrate that cable's
class with traffic that matches an exchange (message.bibw, one message per
pair per op at the exchange's block size, both directions at once:
`fabriclab calibrate --bidirectional`), then run app.transpose (packed) and
app.sort with one rank on each host, exchanging every block at once and in
pairwise steps (the schedules the model follows; an MPI collective's own is
the library's), and read each point's exchange phase beside the time the
model predicts for it, nominal and calibrated (the run's `exchange_model`
block, testbed/exchange.py). Target: measured within 15% of the calibrated
prediction at the largest size.

Usage: python bench/bench_apps_testbed.py [--networks two-switches,ring,...]
                                          [--transpose 1K,2K] [--sort 1M,4M]"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from _common import REPO, BenchError, fabriclab, fabriclab_exe, header, main, verdict

from fabriclab.model.datafile import read_data_file
from fabriclab.model.topologies.custom import CustomNetwork
from fabriclab.testbed import validate as v
from fabriclab.units import parse_size

NAME = "appbench"
TARGET = 0.15
FAST = ["--launches", "1", "--point-time", "2", "--min-samples", "3"]
# The schedules the model follows (testbed/exchange.py); the collective's own is the library's.
SCHEDULES = ("concurrent", "pairwise")


def _testbed(*args: str) -> None:
    p = subprocess.run([fabriclab_exe(), "testbed", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 and args[0] == "up":
        raise BenchError(f"testbed {' '.join(args)}: {p.stderr.strip()}")


def _calibrate(net: CustomNetwork, block: int, work: str) -> tuple[Path, float, str, float]:
    """(calibration file, rate per direction in MB/s, the cable, its nominal MB/s) from message.bibw
    across the bottleneck: five launches, the rate decides every calibrated prediction."""
    b = v.bottleneck(net)
    pairs = v.saturation_pairs(net, b.channel, both=True)
    if not pairs:
        raise BenchError(f"{net.name}: no pair of hosts loads the bottleneck cable both ways")
    hosts = [s for s, _ in pairs] + [d for _, d in pairs]
    doc, _, argv = fabriclab(["message.bibw", "--testbed", NAME, "--hosts", ",".join(hosts), "-n", str(len(hosts)),
                              "-s", str(block), "-p", "window=1", "--launches", "5", "--point-time", "2"], work)
    cal = Path(work) / f"cal-{len(list(Path(work).glob('cal-*')))}.yaml"
    links = ",".join(f"links[{i}]" for i in v.cable_class(net, b.link))
    run = argv[argv.index("-o") + 1]
    p = subprocess.run([fabriclab_exe(), "calibrate", run, "--bidirectional", "--resource", links, "-o", str(cal)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise BenchError(f"calibrate: {p.stderr.strip()}")
    best = max(p["bandwidth_Bps"] for p in doc["merged"] if p["bench"] == "message.bibw")
    return cal, best / 2 / 1e6, b.label, b.rate_Bps / 1e6


def _exchange(bench: str, size: int, hosts: list, extra: list, work: str) -> dict:
    """The prediction rows of one run, by schedule (the `exchange` parameter)."""
    n = str(len(hosts))
    doc, _, _ = fabriclab([bench, "--testbed", NAME, "--hosts", ",".join(hosts), "-n", n, "--active", n,
                           "-s", str(size), "-p", f"exchange={','.join(SCHEDULES)}", *extra, *FAST], work,
                          timeout=900)
    rows = (doc.get("exchange_model") or {}).get("rows") or []
    if not rows:
        raise BenchError(f"{bench} at {size}: the run has no exchange prediction")
    return {r["variant"].replace("exchange=", "") or "collective": r for r in rows}


def _network(path: Path, transpose: list, sort: list, work: str) -> bool:
    net = CustomNetwork.from_dict(read_data_file(str(path), "network file"), where=str(path))
    hosts = list(net.node_names)
    n = len(hosts)
    _testbed("down", NAME)
    _testbed("up", str(path), "--name", NAME)
    ok = True
    try:
        # one calibration per network, at the transpose's largest block (the sort's 4M keys make the same)
        cal, rate, cable, nominal_rate = _calibrate(net, (transpose[-1] // n) ** 2 * 8, work)
        print(f"  {cable} calibrated both ways at {rate:.2f} MB/s per direction (nominal {nominal_rate:g} MB/s)")
        for bench, sizes in (("app.transpose", transpose), ("app.sort", sort)):
            print(f"  {bench}")
            for size in sizes:
                got = _exchange(bench, size, hosts, ["--calibration", str(cal)], work)
                for sched, r in got.items():
                    nominal = r["predicted_s"] * rate / nominal_rate   # the bottleneck's class at its nominal rate
                    print(f"    size {size} {sched:10s}: exchange {r['measured_s'] * 1e3:7.1f} ms; predicted nominal "
                          f"{nominal * 1e3:7.1f} ms (ratio {r['measured_s'] / nominal:.3f}), calibrated "
                          f"{r['predicted_s'] * 1e3:7.1f} ms (ratio {r['ratio']:.3f}); {r['bottleneck']}")
            for sched in SCHEDULES:
                ok &= verdict(abs(got[sched]["ratio"] - 1) <= TARGET, f"{path.stem} {bench} exchange={sched} at "
                              f"{sizes[-1]}: within {TARGET:.0%} of the calibrated prediction",
                              f"{got[sched]['ratio']:.3f}")
    finally:
        _testbed("down", NAME)
    return ok


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default="two-switches,linear-array,ring,fat-tree")
    ap.add_argument("--transpose", default="1K,2K", help="array sides M (multiples of the host count)")
    ap.add_argument("--sort", default="1M,4M", help="key counts")
    a = ap.parse_args()
    header("app.transpose and app.sort: exchange phase vs the model, on the example testbeds",
           method="one rank per host, one launch per point; calibration from message.bibw window=1 both ways")
    transpose = [parse_size(x) for x in a.transpose.split(",")]
    sort = [parse_size(x) for x in a.sort.split(",")]
    with tempfile.TemporaryDirectory() as work:
        for name in a.networks.split(","):
            print(f"network {name}")
            _network(REPO / "examples" / "testbeds" / f"{name}.yaml", transpose, sort, work)


if __name__ == "__main__":
    main(body)
