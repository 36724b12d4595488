"""What reading ibnetdiscover's output costs (fabriclab.topology.ibnet.read): generated
fat trees of 1,000 and 10,000 hosts, in its topology format and its -p ports report,
as the real ibnetdiscover prints them under ibsim (tests/support/ibsim.py, checked
against the real tool by tests/integration/test_ibsim_import.py).

Each read runs in a fresh process: the time of the read itself and the peak
resident memory of the whole process (interpreter and file included), median of 3.
Targets: 1,000 hosts under 2 s, 10,000 hosts under 20 s and 1 GB.

Usage: python bench/bench_topology.py [--runs N]"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _common as c

sys.path.insert(0, str(c.REPO / "tests" / "support"))
import ibsim  # noqa: E402  (the tests' writer of ibnetdiscover's format)

TARGETS = {1_000: (2.0, 1024), 10_000: (20.0, 1024)}
SHAPES = {1_000: dict(leaves=25, per_leaf=40, spines=10, parallel=2),
          10_000: dict(leaves=250, per_leaf=40, spines=20, parallel=1)}
READ = ("import sys, time\nfrom fabriclab.topology import ibnet\ntext = open(sys.argv[1]).read()\n"
        "t0 = time.perf_counter()\nd = ibnet.read(text, sys.argv[1])\n"
        "print(time.perf_counter() - t0, len(d['nodes']), len(d['links']))\n")


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()
    py = str(c.venv_bin() / "python")
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as tmp:
        c.header("ibnetdiscover output read into a network file (fresh process per read)",
                 method=f"{opts.runs} runs each; median (min..max) of the read's time and the process's peak RSS")
        for hosts, shape in SHAPES.items():
            net = ibsim.fat_tree(**shape)
            for mode, ports in (("topology", False), ("-p", True)):
                path = Path(tmp) / f"fabric-{hosts}-{'ports' if ports else 'topology'}.txt"
                path.write_text(ibsim.topology_text(net, ports))
                secs, rss, shape_read = [], [], ""
                for _ in range(opts.runs):
                    m = c.measured([py, "-c", READ, str(path)], timeout=300)
                    if m.rc != 0:
                        raise c.BenchError(f"exit {m.rc}: {m.err.strip()[-300:]}")
                    t, n_hosts, n_links = m.out.split()
                    secs.append(float(t))
                    rss.append(m.maxrss_MiB)
                    shape_read = f"{int(n_hosts):,} hosts, {int(n_links):,} cables, {path.stat().st_size >> 10:,} KiB"
                s, mib = TARGETS[hosts]
                c.verdict(c.median(secs) < s and c.median(rss) < mib, f"{hosts:,} hosts ({mode}) under {s:g} s "
                          f"and {mib} MiB", f"read {c.median(secs):.2f} s ({c.spread(secs)} s), peak "
                          f"{c.median(rss):.0f} MiB ({c.spread(rss)} MiB); {shape_read}")


if __name__ == "__main__":
    c.main(body)
