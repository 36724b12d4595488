"""A site's imported network as a testbed (root, which CI has): switches named by their
descriptions (';', ':', '/', spaces), cables by their ends' ports, parallel cables as
entries of their own (tests/data/imported/fabric.yaml). Brought up, one parallel cable
degraded by its imported name, then the pair matrix and `check --network` name that
cable, ports and direction included. One short run of each keeps it to about a minute."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from fabriclab import schema
from fabriclab.analysis import merge
from fabriclab.cli import main
from fabriclab.testbed import netns
from fabriclab.verdicts import pair_matrix
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
FABRIC = str(Path(__file__).resolve().parents[1] / "data" / "imported" / "fabric.yaml")
BED = f"imp{os.getpid() % 100000}"
CABLE = "leaf07 [17] -- spine02 [3]"
LEAF07, SPINE = "MF0;leaf07:SX6036/U1", "MF0;spine02:CS7500/S01 spine of row 2, hall B"
NODES = ["node001", "node002", "node003", "node004"]


@pytest.fixture(scope="module")
def bed():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (CI runs as root)")
    main(["testbed", "down", BED])
    assert main(["testbed", "up", FABRIC, "--name", BED]) == 0
    yield netns.load(BED)
    assert main(["testbed", "down", BED]) == 0
    assert netns.namespaces(BED) == []


def test_the_imported_fabric_comes_up_under_the_sites_names(bed, capsys):
    assert bed["hosts"] == NODES and bed["switches"][0] == LEAF07 and bed["switches"][2] == SPINE
    assert bed["namespaces"][LEAF07] == f"fltb-{BED}-MF0-leaf07-SX6036-U1"
    assert sorted(netns.namespaces(BED)) == sorted(bed["namespaces"].values())
    out = subprocess.run(netns.exec_argv(bed, "node003", ["hostname"]), capture_output=True, text=True)
    assert out.stdout.strip() == "node003"
    capsys.readouterr()
    assert main(["testbed", "show", BED]) == 0
    shown = capsys.readouterr().out
    assert f"  {CABLE}: {LEAF07}:p2 <-> {SPINE}:p0  10 MB/s each way" in shown
    assert "  leaf07 [18] -- spine02 [4]: " in shown                   # its parallel cable, by its own name


def test_a_cable_degraded_by_its_imported_name_is_named_so_by_the_pair_matrix_and_check(bed, tmp_path, capsys):
    assert main(["testbed", "degrade", BED, CABLE, "2.5"]) == 0
    try:
        state = netns.load(BED)
        assert [c["shaped_MBps"] for c in state["cables"] if c.get("shaped_MBps")] == [2.5]
        run = tmp_path / "pairs.json"
        assert main(["run", "message.shift", "--testbed", BED, "-n", "4", "-s", "256K", "-p", "window=4",
                     "-o", str(run), *FAST, "--point-time", "0.3"]) == 0
        capsys.readouterr()
        rc = main(["check", "--testbed", BED, "--network", FABRIC, "-n", "4", "--tests", "pairs", "--attempts", "1",
                   "-q", "-o", str(tmp_path / "check"), "--timeout", "120"])
    finally:
        assert main(["testbed", "restore", BED]) == 0
    out = capsys.readouterr().out
    d = schema.load(run)
    assert d.header.hosts == NODES[:4]
    (m,) = pair_matrix.matrices(merge.merged(d), d.header.hosts, d.header.network)
    assert m.predicted is not None and f"link {CABLE} ({SPINE}→{LEAF07})" in m.named, m.named
    failing = [ln for ln in out.splitlines() if ln.startswith("FAIL pairs: cable ")]
    assert rc == 1 and f"FAIL pairs: cable link {CABLE} ({SPINE}→{LEAF07}): " in "\n".join(failing), out
    done = json.loads((tmp_path / "check" / "check.json").read_text())
    assert not done["passed"]
