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


def test_a_datagram_on_the_wire_carries_its_headers_and_each_fragment_s_frame():
    assert sockets.wire_bytes(1400) == 1400 + 8 + 20 + 38            # one Ethernet frame
    assert sockets.wire_bytes(8000, mtu=9000, frame=14) == 8042      # the testbed's jumbo frame
    # 8008 bytes of UDP in fragments of 1480: six, each with its IP header and frame
    assert sockets.wire_bytes(8000) == 8008 + 6 * (20 + 38) and sockets.fragments(8000) == 6
    assert sockets.wire_bytes(1472) == 1500 + 38 and sockets.wire_bytes(1473) == 1481 + 2 * 58
    # an MTU whose room (8980) is not a multiple of 8: a packet that fits uses all of it, and
    # only the fragments before the last carry a multiple of 8 (8976)
    assert sockets.fragments(8972, 9000) == 1 and sockets.wire_bytes(8972, 9000, 14) == 8980 + 34
    assert sockets.fragments(8973, 9000) == 2 and sockets.wire_bytes(8973, 9000, 14) == 8981 + 2 * 34
    assert sockets.fragments(2 * 8976 - 8, 9000) == 2 and sockets.fragments(2 * 8976 + 4 - 8 + 1, 9000) == 3
    assert sockets.wire_bytes(0) == 66
    with pytest.raises(UsageError, match="MTU of 20 bytes"):
        sockets.wire_bytes(100, mtu=20)


def test_ethernet_s_frame_is_the_catalog_s():
    from fabriclab.model import catalog
    for key in ("fast-ethernet", "gigabit-ethernet"):
        assert float(catalog.technology(key).resources["link"].overhead) == sockets.ETHERNET_FRAME


def test_a_link_s_own_efficiency_is_left_out_on_the_wire(tmp_path):
    """A network file's link with payload_B and overhead_B has a payload rate in the model's other
    parts; flows that bring their own headers cross it at its gross rate."""
    path = tmp_path / "net.yaml"
    path.write_text("name: one switch\nnodes: [h0, h1]\nswitches: [s0]\nlinks:\n"
                    "  - {a: h0, b: s0, rate_MBps: 100, payload_B: 1000, overhead_B: 1000}\n"
                    "  - {a: h1, b: s0, rate_MBps: 100}\n")
    net = sockets.network(str(path))
    assert sorted(set(net.cap)) == [50e6, 100e6]                     # half of the first link is payload
    assert set(sockets.wire_capacity(net)) == {100e6}
    assert sockets.udp_loss(net, "h0", "h1", 150e6).loss == pytest.approx(1 / 3)


def test_the_offer_of_payload_goes_on_the_wire_with_its_headers(net):
    payload = sockets.udp_loss(net, "h0", "h4", 1.5 * 20e6, datagram=1400)
    wire = 1.5 * 20e6 * 1466 / 1400
    assert payload.offered_Bps == pytest.approx(wire) and payload.loss == pytest.approx(1 - 20e6 / wire)
    # the steady state loses 1/3 of the wire's bytes without headers, 36.3% of 1400-byte datagrams
    assert payload.loss == pytest.approx(0.3633, abs=1e-4)
    assert sockets.udp_loss(net, "h0", "h4", 1.5 * 20e6).loss == pytest.approx(1 / 3)
    # a jumbo frame's headers are half a per cent of it
    jumbo = sockets.udp_loss(net, "h0", "h4", 1.5 * 20e6, datagram=8000, mtu=9000, frame=14)
    assert jumbo.loss == pytest.approx(1 - 20e6 / (1.5 * 20e6 * 8042 / 8000))


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
