"""`fabriclab model --topology-file FILE --flow SPEC`: socket flows' max-min shares and a UDP
flow's loss on a network file (cli/model_flows.py over model/sockets.py), on the two-switch
example (one 20 MB/s trunk, 60 MB/s host cables)."""
import json
from pathlib import Path

import pytest

from fabriclab.cli import main

TWO = str(Path(__file__).parents[3] / "examples" / "testbeds" / "two-switches.yaml")


def test_a_table_of_shares_losses_and_the_cable_that_drops(capsys):
    assert main(["model", "--topology-file", TWO, "--flow", "udp:h0:h4:240000000:1400",
                 "--flow", "tcp:h1:h5", "--flow", "udp:h2:h6:8M"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}
    # the small UDP flow keeps its offer (8 Mi bits/s, no datagram size: as given); the other two part
    # what is left of the trunk evenly; the large UDP flow's 31.4 MB/s on the wire loses the rest
    assert rows["udp:h2:h6:8M"][1:4] == ["1.049", "1.049", "0.00%"]
    assert rows["tcp:h1:h5"][1:3] == ["-", "9.476"] and rows["tcp:h1:h5"][3] == "-"
    assert rows["udp:h0:h4:240000000:1400"][1:4] == ["31.414", "9.476", "69.84%"]
    assert out.count("link trunk (s0\u2192s1)") == 2 and "its own offer" in out
    assert "MTU 1500, 38 bytes a frame" in out and "fragments" not in out


def test_a_fragmented_flow_s_loss_is_said_to_be_a_lower_bound(capsys):
    assert main(["model", "--topology-file", TWO, "--flow", "udp:h0:h4:240000000:8000"]) == 0
    out = capsys.readouterr().out
    assert "6 fragments a datagram; one lost loses the datagram, so its datagrams' loss is at least" in out
    assert main(["model", "--topology-file", TWO, "--flow", "udp:h0:h4:240000000:8000", "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["flows"][0]["fragments"] == 6


def test_json_on_the_testbed_s_frames(capsys):
    assert main(["model", "--topology-file", TWO, "--flow", "udp:h0:h4:240000000:8000", "--mtu", "9000",
                 "--frame", "14", "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["mtu"], doc["frame_bytes"]) == (9000, 14)
    (f,) = doc["flows"]
    assert f["offered_wire_Bps"] == pytest.approx(30e6 * 8042 / 8000)
    assert f["share_wire_Bps"] == pytest.approx(20e6) and f["loss"] == pytest.approx(1 - 20e6 / (30e6 * 8042 / 8000))
    assert f["bottleneck"] == "link trunk (s0\u2192s1)" and f["datagram_bytes"] == 8000


@pytest.mark.parametrize("argv, message", [
    (["--flow", "udp:h0:h4:0"], "rate must be 1 to"),
    (["--flow", "udp:h0:h4:2T"], "rate must be 1 to"),
    (["--flow", "udp:h0:h9:1M"], "'h9' is not a host"),
    (["--flow", "sctp:h0:h4"], "a flow is udp:SRC:DST:RATE[:DATAGRAM] or tcp:SRC:DST"),
    (["--flow", "tcp:h0"], "a flow is"),
    (["--flow", "udp:h0:h4:1M:70000"], "a datagram is 24 to 65507 bytes"),
    (["--flow", "udp:h0:h4:1M:8"], "a datagram is 24 to 65507 bytes"),
    (["--flow", "udp:h0:h4:" + "9" * 5000], "too large"),
    (["--flow", "tcp:h0:h0"], "crosses no cable"),
    (["--flow", "tcp:h0:h4", "--collective", "bcast"], "give one"),
    (["--flow", "tcp:h0:h4", "--traffic", "ring"], "--traffic is not used by --flow"),
    (["--flow", "tcp:h0:h4", "--seed", "3"], "--seed is not used by --flow"),
    (["--flow", "tcp:h0:h4", "--output", "plots"], "--output is not used by --flow"),
    (["--flow", "tcp:h0:h4", "--system", "sci-2d"], "--system is not used by --flow"),
    (["--flow", "tcp:h0:h4", "--sizes", "8"], "--sizes belongs to --collective"),
    (["--flow", "tcp:h0:h4", "--mtu", "10"], "argument --mtu: 10 is not between 68 and 65,535"),
    (["--flow", "tcp:h0:h4", "--frame", "9" * 5000], "argument --frame: '99999"),
    (["--mtu", "9000"], "--mtu belongs to --flow"),
    (["--frame", "14", "--collective", "bcast"], "--frame belongs to --flow"),
])
def test_bad_flows_are_one_line_and_exit_2(capsys, argv, message):
    assert main(["model", "--topology-file", TWO, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_flows_need_a_network_file(capsys):
    assert main(["model", "--flow", "tcp:h0:h4"]) == 2
    assert "--flow needs --topology-file" in capsys.readouterr().err
