"""Performance figures of the fabriclab model.

    PYTHONPATH=src python bench/bench_model.py [--skip-simgrid]

1. All-to-all per-node bandwidth of a 64,000-node 40-ary 3-cube torus and a
   65,536-node 4-ary 8-tree (target: under 2 s each).
2. Max-min fair rates of 1,000,000 flows (target: at most 5 s).
3. SimGrid against the model on the all-to-all of a 256-node network
   (target: within 1%, model at least 50 times faster).
4. A 10,000-host leaf-spine network from a file (YAML), read and solved for
   all-to-all with both routings, in a fresh process (target: under 10 s and
   1 GB each); then `fabriclab model --topology-file FILE` as a user runs it,
   with its plot and with --no-plot: wall and CPU time and the peak memory of
   the whole process (max RSS, as /usr/bin/time -v reports it).
5. `fabriclab model --collective allreduce` on a 4,096-node fat tree: every
   algorithm at 20 sizes (8 B to 4 MiB), with its plot and with --no-plot,
   three fresh processes each (target: under 10 s and 1 GB).
6. `fabriclab model --no-plot --collective allreduce` on every built-in system at
   its largest node count (at most --nodes accepts), a fresh process each, under
   a 4 GB address-space limit (target: under 10 s and 1 GB, or refused in one
   line with exit code 2 within that).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _common as c
from fabriclab.model.catalog import system
from fabriclab.model.loads import class_rates, solve
from fabriclab.model.maxmin import check_max_min, max_min
from fabriclab.model.resources import MB
from fabriclab.model.topologies import FatTree, Torus


def timed(fn, repeat=3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_large():
    print("1. All-to-all per-node bandwidth at scale (build + solve, best of 3)")
    for key, n, what in (("sci-3d", 64_000, "40-ary 3-cube SCI torus"),
                         ("qsnet-fattree", 65_536, "4-ary 8-tree (QsNET)")):
        s = system(key)

        def run():
            t = s.build(n)
            return t, solve(t, s.rates(t))

        dt, (t, r) = timed(run)
        print(f"   {what:26s} N={n:6d}: {r.per_node / MB:9.3f} MB/s per node, bottleneck "
              f"{r.bottleneck.label} ({r.method})  {dt:.3f} s  [target < 2 s: {'ok' if dt < 2 else 'MISSED'}]")


def bench_maxmin():
    print("2. Max-min fair rates of 1,000,000 flows (random source/destination pairs)")
    rng = np.random.default_rng(7)
    s = system("ib-ndr-fattree")
    topo = FatTree.kary_ntree(8, 4, node_model=s.tech.node_model())
    n, F = topo.n_nodes, 1_000_000
    src = rng.integers(0, n, F)
    dst = (src + rng.integers(1, n, F)) % n
    t0 = time.perf_counter()
    paths = topo.paths(src, dst)
    t_paths = time.perf_counter() - t0
    cap_catalog = np.array([r for r, _, _ in class_rates(topo, s.rates(topo))])[topo.class_of(np.arange(topo.n_resources))]
    cap_random = rng.uniform(0.5, 2.0, topo.n_resources) * 25e9
    for name, cap in (("catalog rates (NDR links, PCIe Gen5)", cap_catalog),
                      ("random capacities (many fill levels)", cap_random)):
        dt, r = timed(lambda: max_min(paths, cap), repeat=2)
        ok = check_max_min(paths, cap, r)
        print(f"   {topo.describe()}, {name}: {dt:.2f} s, {r.levels} fill levels, "
              f"max-min property {'verified' if ok else 'VIOLATED'}  [target <= 5 s: {'ok' if dt <= 5 else 'MISSED'}]")
    print(f"   (building the 1,000,000 paths: {t_paths:.2f} s, not included)")


def bench_simgrid():
    from fabriclab.model.simgrid_check import available, cross_check
    print("3. SimGrid against the model, all-to-all of 256 nodes, 1 MiB messages")
    if not available():
        print("   SimGrid not available (apt-get install python3-simgrid)")
        return
    cases = [("sci-2d", Torus((16, 16), False, system("sci-2d").tech.node_model()), "16×16 SCI torus"),
             ("myrinet-minimal", FatTree((16, 16), (1, 8)), "2:1 two-level fat tree of 16 leaves")]
    for key, topo, what in cases:
        s = system(key)
        c = cross_check(topo, s.rates(topo), 1 << 20, timeout=900)
        t_enum, _ = timed(lambda: solve(topo, s.rates(topo), method="enumerate"))
        print(f"   {what}: SimGrid {c.simgrid_time:.6f} s, model {c.model_time:.6f} s, "
              f"difference {c.rel_error:.2e} [target < 1%: {'ok' if c.rel_error < 0.01 else 'MISSED'}]; "
              f"bottleneck {c.bottleneck}")
        print(f"      wall time: SimGrid {c.simgrid_wall:.2f} s, model {c.model_wall * 1e3:.2f} ms "
              f"({c.speedup:,.0f}× faster), model enumerating all 65,280 flows {t_enum * 1e3:.1f} ms "
              f"({c.simgrid_wall / t_enum:,.0f}× faster)  [target >= 50×: "
              f"{'ok' if c.simgrid_wall / t_enum >= 50 else 'MISSED'}]")


def leaf_spine(hosts: int, per_leaf: int = 32, spines: int = 16, routing: str = "d-mod-k") -> dict:
    """A two-level leaf-spine network as a file's content: `per_leaf` hosts and one
    cable to every spine on each leaf (2:1 oversubscribed with the defaults), 100 Gb/s links."""
    leaves = -(-hosts // per_leaf)
    links = [[f"h{i}", f"leaf{i // per_leaf}"] for i in range(hosts)]
    links += [[f"leaf{l}", f"spine{s}"] for l in range(leaves) for s in range(spines)]
    return {"name": f"leaf-spine of {hosts} hosts", "nodes": [f"h{i}" for i in range(hosts)],
            "switches": [f"leaf{l}" for l in range(leaves)] + [f"spine{s}" for s in range(spines)],
            "routing": routing, "default_rate_MBps": 12500, "links": links}


def _solve_file_child(path: str) -> None:
    """Read and solve one file in this (fresh) process; print the times as JSON."""
    from fabriclab.errors import UsageError
    from fabriclab.model.topologies import load_network_file
    t0 = time.perf_counter()
    try:
        t = load_network_file(path)
        t1 = time.perf_counter()
        r = solve(t, None)
    except UsageError as e:
        print(json.dumps({"error": str(e), "s": time.perf_counter() - t0}))
        return
    t2 = time.perf_counter()
    print(json.dumps({"read_s": t1 - t0, "solve_s": t2 - t1, "per_node": r.per_node, "method": r.method,
                      "bottleneck": r.bottleneck.instance or r.bottleneck.label}))


def bench_file(hosts: int = 10_000):
    print(f"4. A {hosts:,}-host leaf-spine network from a YAML file, all-to-all (fresh process each)")
    import yaml
    with tempfile.TemporaryDirectory() as tmp:
        for routing in ("d-mod-k", "ecmp"):
            f = Path(tmp) / f"leaf-spine-{routing}.yaml"
            f.write_text(yaml.safe_dump(leaf_spine(hosts, routing=routing), default_flow_style=None))
            out = subprocess.run([sys.executable, __file__, "--solve-file", str(f)], capture_output=True,
                                 text=True, check=True).stdout
            r = json.loads(out)
            if "error" in r:
                print(f"   {routing:8s}: refused after {r['s']:.1f} s: {r['error']}")
                continue
            print(f"   {routing:8s}: {r['per_node'] / MB:8.1f} MB/s per node, bottleneck {r['bottleneck']} "
                  f"({r['method']}); read {r['read_s']:.2f} s + solve {r['solve_s']:.2f} s")
            for extra in ([], ["--no-plot"]):
                m = c.measured([c.fabriclab_exe(), "model", "--topology-file", str(f), "--output", tmp, *extra])
                ok = m.rc == 0 and m.cpu_s < 10 and m.maxrss_MiB < 1024     # CPU: the machine may be shared
                print(f"      fabriclab model --topology-file FILE {' '.join(extra) or '(with its plot)':16s}: "
                      f"{m.wall_s:.2f} s ({m.cpu_s:.2f} s CPU), peak {m.maxrss_MiB:.0f} MiB  "
                      f"[target < 10 s, < 1 GB: {'ok' if ok else 'MISSED'}]")


def bench_collective(runs: int = 3):
    print("5. fabriclab model --collective allreduce: every algorithm, 20 sizes, a 4,096-node fat tree "
          f"(fresh process, {runs} runs)")
    with tempfile.TemporaryDirectory() as tmp:
        for extra in ([], ["--no-plot"]):
            ms = [c.measured([c.fabriclab_exe(), "model", "--collective", "allreduce", "--system", "ib-ndr-fattree",
                              "--nodes", "4096", "--sizes", "8:4M", "--output", tmp, *extra]) for _ in range(runs)]
            wall, cpu = (sorted(getattr(m, k) for m in ms)[runs // 2] for k in ("wall_s", "cpu_s"))
            peak = max(m.maxrss_MiB for m in ms)
            ok = all(m.rc == 0 for m in ms) and cpu < 10 and peak < 1024
            print(f"   {' '.join(extra) or '(with its plot)':16s}: median {wall:.2f} s ({cpu:.2f} s CPU), "
                  f"walls {', '.join(f'{m.wall_s:.2f}' for m in ms)} s, peak {peak:.0f} MiB  "
                  f"[target < 10 s, < 1 GB: {'ok' if ok else 'MISSED'}]")


def largest(name: str) -> int:
    """The largest node count `--nodes` accepts that the system has a configuration of."""
    from fabriclab.model.choices import MAX_NODES
    s = system(name)
    n = MAX_NODES
    while n > 2 and s.build(n) is None:
        s.built.clear()
        n -= 1
    return n


def bench_every_system():
    from fabriclab.model.catalog import system_names
    print("6. fabriclab model --no-plot --collective allreduce on every built-in system at its largest node count "
          "(fresh process, 4 GB address space)")
    for name in system_names():
        n = largest(name)
        m = c.measured(["prlimit", f"--as={4 << 30}", c.fabriclab_exe(), "model", "--no-plot", "--collective",
                        "allreduce", "--system", name, "--nodes", str(n)], timeout=300)
        lines = m.err.strip().splitlines()
        refused = m.rc == 2 and len(lines) == 1
        ok = (m.rc == 0 or refused) and m.cpu_s < 10 and m.maxrss_MiB < 1024
        what = f"refused: {lines[0]}" if refused else ("ok" if m.rc == 0 else f"exit {m.rc}: {lines[-1:]}")
        print(f"   {name:20s} {n:7,d} nodes: {m.wall_s:6.2f} s ({m.cpu_s:5.2f} s CPU), peak {m.maxrss_MiB:5.0f} MiB  "
              f"[target < 10 s, < 1 GB: {'ok' if ok else 'MISSED'}] {what}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skip-simgrid", action="store_true", help="Do not run SimGrid. Default: run it.")
    p.add_argument("--only-file", action="store_true", help="Run only benchmark 4. Default: all.")
    p.add_argument("--only-collective", action="store_true", help="Run only benchmark 5. Default: all.")
    p.add_argument("--only-systems", action="store_true", help="Run only benchmark 6. Default: all.")
    p.add_argument("--hosts", type=int, default=10_000, help="Hosts of benchmark 4. Default: 10000.")
    p.add_argument("--solve-file", metavar="FILE", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.solve_file:
        _solve_file_child(a.solve_file)
        return 0
    if a.only_collective:
        bench_collective()
        return 0
    if a.only_systems:
        bench_every_system()
        return 0
    if not a.only_file:
        bench_large()
        bench_maxmin()
        if not a.skip_simgrid:
            bench_simgrid()
    bench_file(a.hosts)
    if not a.only_file:
        bench_collective()
        bench_every_system()
    return 0


if __name__ == "__main__":
    sys.exit(main())
