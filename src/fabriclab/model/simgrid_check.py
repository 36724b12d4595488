"""Cross-check the model against SimGrid, an established network simulator.

The topology's resources become SimGrid links (zero latency, the model's
rates as bandwidths, shared between the flows that cross them); the routes
are the model's routes, written into a "Full" routing zone. One actor starts
every message of an all-to-all at once with Comm.sendto_async and waits for
all of them; SimGrid's clock at the end is the completion time. SimGrid runs
with its CM02 network model (pure max-min sharing, no TCP correction
factors, no cross-traffic), so it and the model answer the same question by
different means: a flow-level simulation against a load count.

SimGrid runs in a subprocess with the system Python (`/usr/bin/python3`),
where Debian's python3-simgrid package installs the module.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import RunError, UsageError
from .loads import solve
from .loads import class_rates
from .traffic import all_pairs

PYTHON = os.environ.get("FABRICLAB_SIMGRID_PYTHON", "/usr/bin/python3")

_PROGRAM = r'''
import json, sys, time
from simgrid import Actor, Comm, Engine, LinkInRoute, NetZone
spec = json.load(open(sys.argv[1]))
e = Engine(["fabriclab", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
            "--log=root.thres:critical"])
t0 = time.time()
zone = NetZone.create_full_zone("fabric")
hosts = [zone.create_host("n%d" % i, 1e9) for i in range(spec["n"])]
links = [zone.create_link("r%d" % i, bw).set_latency(0).seal() for i, bw in enumerate(spec["bw"])]
src, dst, ptr, res = spec["src"], spec["dst"], spec["ptr"], spec["res"]
for f in range(len(src)):
    route = [LinkInRoute(links[r]) for r in res[ptr[f]:ptr[f + 1]]]
    zone.add_route(hosts[src[f]].netpoint, hosts[dst[f]].netpoint, None, None, route, False)
zone.seal()
size = spec["size"]
def main():
    comms = [Comm.sendto_async(hosts[s], hosts[d], size) for s, d in zip(src, dst)]
    Comm.wait_all(comms)
    print("FABRICLAB_TIME %.17g" % Engine.clock, flush=True)
Actor.create("alltoall", hosts[0], main)
e.run()
print("FABRICLAB_WALL %.6f" % (time.time() - t0), flush=True)
'''


@dataclass
class CrossCheck:
    topology: str
    n_nodes: int
    message_bytes: int
    simgrid_time: float      # simulated seconds
    model_time: float        # seconds from the load solver
    simgrid_wall: float      # wall-clock seconds of the SimGrid run (build + simulate)
    model_wall: float        # wall-clock seconds of the model
    bottleneck: str

    @property
    def rel_error(self) -> float:
        return abs(self.simgrid_time - self.model_time) / self.model_time

    @property
    def speedup(self) -> float:
        return self.simgrid_wall / max(self.model_wall, 1e-9)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d.update(rel_error=self.rel_error, speedup=self.speedup)
        return d


def available(python: str = PYTHON) -> bool:
    """True when `python` can import the simgrid module."""
    try:
        r = subprocess.run([python, "-c", "import simgrid"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def platform_spec(topo, rates, message_bytes: int) -> dict:
    """The SimGrid input: link bandwidths and one route per all-to-all flow."""
    src, dst = all_pairs(topo.n_nodes)
    p = topo.paths(src, dst)
    if np.any(np.abs(p.weight - 1.0) > 1e-12):
        raise UsageError("the SimGrid cross-check needs single-path routing (d-mod-k), not ECMP splitting")
    used, inv = np.unique(p.res, return_inverse=True)
    rate = np.array([r for r, _, _ in class_rates(topo, rates)])
    bw = rate[topo.class_of(used)]
    return {"n": topo.n_nodes, "size": int(message_bytes), "bw": bw.tolist(),
            "src": src.tolist(), "dst": dst.tolist(), "ptr": p.indptr.tolist(), "res": inv.tolist()}


def cross_check(topo, rates, message_bytes: int = 1 << 20, timeout: float = 600.0,
                python: str = PYTHON) -> CrossCheck:
    """Run SimGrid on the all-to-all of `topo` and compare with the model."""
    t0 = time.perf_counter()
    res = solve(topo, rates)
    model_time = res.time_for(message_bytes)
    model_wall = time.perf_counter() - t0
    spec = platform_spec(topo, rates, message_bytes)
    with tempfile.TemporaryDirectory(prefix="fabriclab-simgrid-") as tmp:
        prog, data = os.path.join(tmp, "alltoall.py"), os.path.join(tmp, "platform.json")
        with open(prog, "w") as f:
            f.write(_PROGRAM)
        with open(data, "w") as f:
            json.dump(spec, f)
        t1 = time.perf_counter()
        try:
            r = subprocess.run([python, prog, data], capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            raise RunError(f"cannot run {python} for SimGrid (install python3-simgrid)") from None
        except subprocess.TimeoutExpired:
            raise RunError(f"SimGrid did not finish within {timeout:g} s") from None
        wall = time.perf_counter() - t1
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RunError(f"SimGrid run failed (exit {r.returncode}): {tail}")
    sim = _field(r.stdout, "FABRICLAB_TIME")
    if sim is None:
        raise RunError("SimGrid run printed no completion time")
    return CrossCheck(topo.describe(), topo.n_nodes, int(message_bytes), sim, model_time, wall, model_wall,
                      res.bottleneck.label)


def _field(text: str, name: str) -> Optional[float]:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None
