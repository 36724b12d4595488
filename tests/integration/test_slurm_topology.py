"""The topology.conf that fabriclab exports, read by the real slurmctld
(tests/support/slurmbed.py: its cluster's nodes n1 and n2, restarted with
TopologyPlugin=topology/tree), and `scontrol show topology` listing every
switch with the children fabriclab wrote.

A missing Slurm is a failure here, never a skip: `make test` installs it."""
import os
import signal
import subprocess
import time

import pytest

import slurmbed
from slurmbed import slurm  # noqa: F401  (the fixture)
from fabriclab.topology import slurm as slurm_topology

pytestmark = pytest.mark.integration

# A fat tree's piece: two leaves, two spines, a core, and one cable (leaf1 -- spine2) that a
# tree cannot hold; the cluster's own node names.
NETWORK = {
    "name": "slurmbed", "nodes": list(slurmbed.NODES), "default_rate_MBps": 1000,
    "switches": ["leaf1", "leaf2", "spine1", "spine2", "core"],
    "links": [["n1", "leaf1"], ["n2", "leaf2"], ["leaf1", "spine1"], ["leaf2", "spine2"], ["leaf1", "spine2"],
              {"a": "spine1", "b": "core", "count": 2}, {"a": "spine2", "b": "core", "count": 2}],
}


def _restart_slurmctld(c) -> None:
    """slurmctld again, as slurmbed started it, reading slurm.conf and topology.conf anew."""
    proc = c.procs["slurmctld"]
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(20)
    slurmbed._spawn(c, "slurmctld", ["slurmctld", "-D", "-f", str(c.conf)])


def _show_topology(c) -> str:
    """`scontrol show topology` once slurmctld answers; fails with its log if it died."""
    deadline = time.monotonic() + 30
    while True:
        if c.procs["slurmctld"].poll() is not None:
            pytest.fail(f"slurmctld ended reading the exported topology.conf:\n{c.log_tails(20)}")
        p = subprocess.run(["scontrol", "show", "topology"], env=c.environ(), capture_output=True, text=True,
                           timeout=10)
        if p.returncode == 0 and "SwitchName=" in p.stdout:
            return p.stdout
        assert time.monotonic() < deadline, f"scontrol show topology: {p.stderr}\n{c.log_tails(20)}"
        time.sleep(0.2)


def test_slurmctld_reads_the_exported_topology(slurm):  # noqa: F811
    text = slurm_topology.export(NETWORK)
    assert "#   leaf1 -- spine2" in text
    (slurm.root / "topology.conf").write_text(text)
    with open(slurm.conf, "a") as f:
        f.write("TopologyPlugin=topology/tree\n")
    _restart_slurmctld(slurm)
    shown = _show_topology(slurm)
    # SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=n1 Switches=leaf1
    seen = {}
    for line in shown.split("\n"):
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "SwitchName" in fields:
            seen[fields["SwitchName"]] = fields
    assert set(seen) == set(NETWORK["switches"]), shown
    assert {s: (f["Level"], f["Nodes"], f.get("Switches")) for s, f in seen.items()} == {
        "leaf1": ("0", "n1", None), "leaf2": ("0", "n2", None),
        "spine1": ("1", "n1", "leaf1"), "spine2": ("1", "n2", "leaf2"),
        "core": ("2", "n[1-2]", "spine[1-2]")}, shown
    log = (slurm.root / "log" / "slurmctld.log").read_text(errors="replace")
    assert "TOPOLOGY" not in log and "Multiple leaf switches" not in log and "invalid child" not in log
    # and what Slurm lists is what fabriclab reads back from the file it wrote
    back = slurm_topology.read(text, "topology.conf", rates_MBps=[1000])
    assert back["switches"] == ["leaf1", "leaf2", "spine1", "spine2", "core"]
    assert sorted(back["nodes"]) == ["n1", "n2"]
