"""`fabriclab import --from iperf3`: iperf3's --json output (TCP and UDP, -P, -R, --bidir),
written by iperf 3.12 on 127.0.0.1, as tcp.stream and udp.stream points whose socket
figures the report draws."""
import json

import pytest

from fabriclab import imports
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.imports import iperf3

from test_imports import DATA

IPERF = DATA / "iperf3"


def point(name: str):
    doc = imports.load(IPERF / name, "iperf3")
    (p,) = doc.points
    return doc, p


def test_udp_at_a_rate_is_one_point_with_jitter_and_loss():
    doc, p = point("udp100.json")
    d = json.loads((IPERF / "udp100.json").read_text())
    got = d["end"]["sum_received"]
    assert (p.bench, p.size, p.bytes_per_op) == ("udp.stream", 32768, 32768)
    assert p.variant == "rate=100000000"       # as `fabriclab run udp.stream -p rate=100000000` names its job
    assert p.bandwidth_Bps == pytest.approx(got["bits_per_second"] / 8)
    s = p.info["socket"]
    assert s["offered_bps"] == 100e6 and s["jitter_s"] == pytest.approx(got["jitter_ms"] * 1e-3)
    assert (s["lost"], s["packets"], s["loss_fraction"], s["out_of_order"]) == (0, 763, 0.0, 0)
    assert len(s["intervals_Bps"]) == 2 and s["cpu_percent"]["remote_system"] > 0
    assert set(s) == set(iperf3.SOCKET_KEYS)       # what docs/sockets.md lists
    assert doc.header.imported["tool"] == "iperf3" and doc.header.imported["tool_version"] == "iperf 3.12"


def test_udp_loss_is_the_receivers_count_and_its_rate_what_arrived():
    _, p = point("udp_loss.json")
    s = p.info["socket"]
    assert s["lost"] == 152867 and s["packets"] == 288881       # end.sum: the datagrams sent
    assert s["loss_fraction"] * 100 == pytest.approx(52.916945039653)   # iperf3's own lost_percent
    assert p.bandwidth_Bps == pytest.approx(757432717.5 / 8)         # not the sender's 1.6 Gb/s
    assert s["stream_Bps"][0] == pytest.approx(p.bandwidth_Bps, rel=0.02)


def test_parallel_reverse_and_bidir_become_variants_with_every_stream():
    _, p4 = point("tcp_p4.json")
    s = p4.info["socket"]
    assert (p4.bench, p4.variant, p4.size) == ("tcp.stream", "streams=4", 131072)
    assert len(s["stream_Bps"]) == 4 and sum(s["stream_Bps"]) == pytest.approx(p4.bandwidth_Bps, rel=1e-3)
    assert s["retransmits"] is not None and s["jitter_s"] is None
    _, r = point("tcp_r.json")
    assert r.variant == "direction=reverse"
    _, b = point("tcp_bidir.json")
    d = json.loads((IPERF / "tcp_bidir.json").read_text())["end"]
    both = d["sum_received"]["bits_per_second"] + d["sum_received_bidir_reverse"]["bits_per_second"]
    assert b.variant == "direction=bidir" and b.bandwidth_Bps == pytest.approx(both / 8)
    assert len(b.info["socket"]["stream_Bps"]) == 2
    _, u = point("udp_p2_r.json")
    assert u.variant == "direction=reverse,rate=50000000,streams=2"
    assert u.info["socket"]["offered_bps"] == 100e6       # -b is per stream


def test_concatenated_tests_are_points_of_a_sweep(tmp_path):
    f = tmp_path / "sweep.json"
    f.write_text((IPERF / "udp100.json").read_text() + "\n" + (IPERF / "udp_loss.json").read_text())
    doc = imports.load(f, "iperf3")
    assert sorted(p.info["socket"]["offered_bps"] for p in doc.points) == [100e6, 4e9]


@pytest.mark.parametrize("text, says", [
    ("not json at all", "not iperf3's --json output"),
    ("[1, 2]", "no \"start\" and \"end\""),
    ('{"start": {}, "end": {}, "error": "x"}', "test_start"),
    ('{"error": "unable to connect to server"}', "iperf3 reported an error"),
    ("[" * 100_000 + "]" * 100_000, "iperf3"),
])
def test_hostile_input_is_one_line_exit_2(tmp_path, capsys, text, says):
    f = tmp_path / "bad.json"
    f.write_text(text)
    assert main(["import", str(f), "--from", "iperf3", "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("path, value, says", [
    (("start", "test_start", "protocol"), "SCTP", "TCP and UDP"),
    (("start", "test_start", "num_streams"), 1000, "num_streams"),
    (("end", "sum_received", "bits_per_second"), 1e30, "bits_per_second"),
    (("end", "sum_received", "bits_per_second"), -5, "bits_per_second"),
    (("end", "sum", "lost_packets"), "many", "lost_packets"),
    (("start", "test_start", "blksize"), 0, "empty block"),
    (("start", "test_start", "blksize"), 100000, r"blksize = 100000 is not a UDP block iperf3 sends \(16..65507"),
    (("start", "test_start", "blksize"), 10, "blksize = 10 is not a UDP block"),
    (("start", "test_start", "target_bitrate"), 1.5, "target_bitrate = 1.5 is not a whole number"),
    (("start", "test_start", "target_bitrate"), 5e12, r"target_bitrate = 5000000000000.0 is not a number in 0..1e\+12"),
])
def test_a_field_out_of_range_is_named(tmp_path, path, value, says):
    d = json.loads((IPERF / "udp100.json").read_text())
    at = d
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(d))
    with pytest.raises(UsageError, match=says):
        imports.load(f, "iperf3")


def test_a_tcp_target_beyond_udp_stream_s_rate_is_kept(tmp_path):
    """udp.stream's 1 Tb/s cap is for a UDP target, which becomes its rate=; a TCP -b is only noted."""
    d = json.loads((IPERF / "tcp_p4.json").read_text())
    d["start"]["test_start"]["target_bitrate"] = 5 * 10**12
    f = tmp_path / "tcp.json"
    f.write_text(json.dumps(d))
    assert imports.load(f, "iperf3").header.imported["settings"]["target_bitrate"] == 5 * 10**12


def test_the_variant_is_the_one_fabriclabs_run_records():
    from fabriclab.measure.plan import Job
    from fabriclab.suite.benchmarks import REGISTRY
    _, u = point("udp_p2_r.json")
    b = REGISTRY["udp.stream"]
    given = {"rate": "50000000", "streams": "2", "direction": "reverse"}     # -p as `fabriclab run` takes it
    job = Job(b, (1400,), (1,), params={**b.defaults, **{k: b.canonical(k, v) for k, v in given.items()}})
    assert u.variant == job.variant


def test_a_test_that_received_nothing_is_a_skip():
    d = json.loads((IPERF / "udp100.json").read_text())
    d["end"]["sum_received"]["bits_per_second"] = 0
    out = iperf3.parse(json.dumps(d))
    assert out.figures == [] and out.skips[0][0] == "udp.stream" and "nothing received" in out.skips[0][2]


def test_iperf3_before_3_7_without_sum_received_takes_the_senders_sum_less_the_lost(tmp_path):
    d = json.loads((IPERF / "udp_loss.json").read_text())
    s = d["end"].pop("sum_received")
    f = tmp_path / "old.json"
    f.write_text(json.dumps(d))
    (p,) = imports.load(f, "iperf3").points
    kept = 1 - d["end"]["sum"]["lost_packets"] / d["end"]["sum"]["packets"]
    assert p.bandwidth_Bps == pytest.approx(d["end"]["sum"]["bits_per_second"] / 8 * kept)
    assert p.bandwidth_Bps == pytest.approx(s["bits_per_second"] / 8, rel=0.02)
