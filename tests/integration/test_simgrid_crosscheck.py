"""All-to-all completion time from SimGrid (python3-simgrid, run in a subprocess) against the model.

`make test` installs python3-simgrid, so a missing SimGrid is a failure, never a skip."""

import pytest

from fabriclab.model.catalog import system
from fabriclab.model.simgrid_check import available, cross_check
from fabriclab.model.topologies import FatTree, NodeModel, SwitchArray, Torus

HAVE = available()


@pytest.fixture(autouse=True)
def _need_simgrid():
    if not HAVE:
        pytest.fail("SimGrid is missing for /usr/bin/python3: apt-get install python3-simgrid (make test does)")


def sci_rates(topo):
    return system("sci-2d").rates(topo)


CASES = [
    ("ring", lambda: Torus((8,), False, NodeModel(adapter_bus=True, host_bus="half")), "sci-2d"),
    ("2D torus", lambda: Torus((4, 4), False, NodeModel(adapter_bus=True, host_bus="half")), "sci-2d"),
    ("two-switch array", lambda: SwitchArray(24, 16, 1), "myrinet-minimal"),
    ("small fat tree", lambda: FatTree((4, 4), (1, 2), routing="d-mod-k"), "myrinet-minimal"),
]


@pytest.mark.parametrize("name,build,sysname", CASES, ids=[c[0] for c in CASES])
def test_simgrid_agrees_within_one_percent(name, build, sysname):
    topo = build()
    s = system(sysname)
    c = cross_check(topo, s.rates(topo), message_bytes=1 << 20, timeout=300)
    assert c.rel_error < 0.01, (name, c.simgrid_time, c.model_time)
    assert c.simgrid_time > 0


def test_oversubscribed_tree_bottleneck_is_inside():
    # a 2:1 tree: the up-links, not the node links, decide; SimGrid must see the same
    topo = FatTree((4, 4), (1, 2), routing="d-mod-k")
    s = system("myrinet-minimal")
    c = cross_check(topo, s.rates(topo))
    assert "up" in c.bottleneck or "down" in c.bottleneck
    assert c.rel_error < 0.01
