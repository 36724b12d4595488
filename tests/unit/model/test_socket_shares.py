"""model/sockets.py: a UDP stream's predicted loss above its max-min share, naming the cable,
and TCP streams' max-min shares, on the two-switch example (one 20 MB/s trunk, 60 MB/s
host cables)."""
from pathlib import Path

import pytest

from fabriclab.errors import UsageError
from fabriclab.model import sockets

TWO = str(Path(__file__).parents[3] / "examples" / "testbeds" / "two-switches.yaml")


@pytest.fixture(scope="module")
def net():
    return sockets.network(TWO)


def test_udp_above_the_trunk_loses_what_the_trunk_cannot_carry(net):
    f = sockets.udp_loss(net, "h0", "h4", 1.5 * 20e6)
    assert f.share_Bps == pytest.approx(20e6) and f.loss == pytest.approx(1 / 3)
    assert f.cable == "link trunk (s0\u2192s1)"
    below = sockets.udp_loss(net, "h0", "h4", 15e6)
    assert below.loss == 0 and below.share_Bps == 15e6 and below.cable == ""
    # within one switch the host cable (60 MB/s) decides
    local = sockets.udp_loss(net, "h0", "h1", 90e6)
    assert local.loss == pytest.approx(1 / 3) and "trunk" not in local.cable
    # a run of 3 s that starts with the trunk's 10 MB queue empty: 30 MB of 90 are excess, 10 of them queued
    assert f.loss_over(3.0, 10e6) == pytest.approx(20 / 90) and f.loss_over(1.0, 10e6) == 0
    assert f.loss_over(1e6, 10e6) == pytest.approx(f.loss, rel=1e-5)


def test_udp_beside_tcp_gets_its_max_min_share(net):
    f = sockets.udp_loss(net, "h0", "h4", 30e6, others=[("h1", "h5", None)])
    assert f.share_Bps == pytest.approx(10e6) and f.loss == pytest.approx(2 / 3)
    small = sockets.udp_loss(net, "h0", "h4", 4e6, others=[("h1", "h5", None)])
    assert small.loss == 0


def test_tcp_streams_share_the_trunk_max_min(net):
    four = sockets.shares(net, [("h0", "h4", None)] * 4)
    assert [s.share_Bps for s in four] == pytest.approx([5e6] * 4)
    assert {s.cable for s in four} == {"link trunk (s0\u2192s1)"} and all(s.loss == 0 for s in four)
    # a capped flow leaves its unused share to the others
    mixed = sockets.shares(net, [("h0", "h4", None), ("h1", "h5", None), ("h2", "h6", 2e6)])
    assert [s.share_Bps for s in mixed] == pytest.approx([9e6, 9e6, 2e6])
    # the reverse direction is another cable direction
    both = sockets.shares(net, [("h0", "h4", None), ("h4", "h0", None)])
    assert [s.share_Bps for s in both] == pytest.approx([20e6, 20e6])


@pytest.mark.parametrize("flows, says", [
    ([("h0", "nowhere", None)], "not a host"),
    ([("h0", "h0", 1e6)], "itself"),
    ([("h0", "h4", 0.0)], "positive"),
])
def test_bad_flows_are_one_line(net, flows, says):
    with pytest.raises(UsageError, match=says):
        sockets.shares(net, flows)
