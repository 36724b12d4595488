"""What the testbed benches share: bringing an example network up and down, and calibrating
its bottleneck cable's class from message.saturation as `testbed validate` does."""

from __future__ import annotations

import subprocess
from pathlib import Path

from _common import BenchError, fabriclab, fabriclab_exe

from fabriclab.model import validate as v
from fabriclab.model.topologies.custom import CustomNetwork


def testbed(*args: str) -> None:
    """`fabriclab testbed ARGS`; a failed `up` ends the bench."""
    p = subprocess.run([fabriclab_exe(), "testbed", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 and args[0] == "up":
        raise BenchError(f"testbed {' '.join(args)}: {p.stderr.strip()}")


def calibrate(net: CustomNetwork, name: str, work: str) -> tuple[Path, float, str, float]:
    """(calibration file, rate in MB/s, the cable, its nominal MB/s): the bottleneck saturated one way
    by every pair across it at once, three launches; the rate decides every calibrated prediction."""
    b = v.bottleneck(net)
    pairs = v.saturation_pairs(net, b.channel)
    hosts = [s for s, _ in pairs] + [d for _, d in pairs]
    n = str(len(hosts))
    doc, _, argv = fabriclab(["message.saturation", "--testbed", name, "--hosts", ",".join(hosts), "-n", n,
                              "--active", str(len(pairs)), "-s", "64K", "-p", "window=16", "--launches", "3",
                              "--point-time", "3"], work)
    cal = Path(work) / f"cal-{len(list(Path(work).glob('cal-*')))}.yaml"
    links = ",".join(f"links[{i}]" for i in v.cable_class(net, b.link))
    run = argv[argv.index("-o") + 1]
    p = subprocess.run([fabriclab_exe(), "calibrate", run, "--resource", links, "-o", str(cal)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise BenchError(f"calibrate: {p.stderr.strip()}")
    best = max(p["aggregate_bandwidth_Bps"] for p in doc["merged"] if p["bench"] == "message.saturation")
    return cal, best / 1e6, b.label, b.rate_Bps / 1e6
