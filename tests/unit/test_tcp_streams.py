"""tcp.stream's streams and directions and tcp.crr: the parameters' rules before
launch, the per-stream rates and Jain's fairness from the counters, the fake
core's per-stream counters through `show`, and the TIME_WAIT count's parser."""
import json
from types import SimpleNamespace

import pytest

from fabriclab.analysis import streams
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.host import sockets
from fabriclab.report import stream_view
from fabriclab.schema.records import Point
from fabriclab.suite import streams as st
from fabriclab.suite.benchmarks import REGISTRY


@pytest.mark.parametrize("argv, says", [
    (["tcp.stream", "-p", "streams=0"], "streams"),
    (["tcp.stream", "-p", "direction=sideways"], "direction"),
    (["tcp.crr", "-p", "close=later"], "close"),
])
def test_bad_input_is_one_line_before_launch(argv, says, capsys):
    assert main(["run", *argv, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_more_streams_than_descriptors_are_refused(monkeypatch, capsys):
    with pytest.raises(UsageError, match="RLIMIT_NOFILE"):
        st.check_streams("tcp.stream", (), {"streams": "37", "direction": "forward"}, 2, limit=100)
    st.check_streams("tcp.stream", (), {"streams": "36", "direction": "forward"}, 2, limit=100)
    with pytest.raises(UsageError, match="bidir: two connections each"):   # both ways: twice the descriptors
        st.check_streams("tcp.stream", (), {"streams": "20", "direction": "bidir"}, 2, limit=100)
    monkeypatch.setattr(st, "nofile_limit", lambda: 70)
    assert main(["run", "tcp.stream", "-p", "streams=8", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "open-file limit" in err and len(err.strip().splitlines()) == 1


def test_the_defaults_keep_one_stream_forward():
    b = REGISTRY["tcp.stream"]
    assert b.defaults["streams"] == "1" and b.defaults["direction"] == "forward"
    assert b.canonical("direction", "bidir") == "bidir" and b.canonical("streams", "4") == "4"


def test_jain_is_one_for_equal_shares_and_one_over_n_for_one_taking_all():
    assert streams.jain([5, 5, 5, 5]) == 1.0
    assert streams.jain([8, 0, 0, 0]) == 0.25
    assert streams.jain([3, 1]) == pytest.approx(16 / (2 * 10))
    assert streams.jain([]) is None and streams.jain([0, 0]) is None


def _point(rc, samples, batch, size=200):
    return Point.from_dict({"bench": "tcp.stream", "variant": "direction=bidir,streams=2", "size": size,
                            "bytes_per_op": 2 * size, "summary": {"median": samples[0]}, "samples": samples,
                            "batch": batch, "rank_counters": rc})


def test_each_stream_is_its_bytes_over_the_samples_seconds_per_direction():
    # two launches of one point: rank 1 receives 0->1, rank 0 receives 1->0
    a = _point([{"received_bytes.0": [0, 300, 600], "received_bytes.1": [0, 100, 200]},
                {"received_bytes.0": [0, 200, 400], "received_bytes.1": [0, 200, 400]}], [1e-3, 1e-3], 2)
    b = _point([{"received_bytes.0": [50, 350], "received_bytes.1": [0, 100]},
                {"received_bytes.0": [0, 200], "received_bytes.1": [0, 200]}], [2e-3], 2)
    s = streams.stream_rates([a, b])
    assert s.seconds == pytest.approx(8e-3)
    assert s.directions["1->0"] == pytest.approx([900 / 8e-3, 300 / 8e-3])
    assert s.directions["0->1"] == pytest.approx([600 / 8e-3, 600 / 8e-3])
    assert s.stream_Bps[:2] == pytest.approx([75000, 75000])            # 0->1 first
    assert s.sum_Bps == pytest.approx(2400 / 8e-3)
    assert s.fairness_of("0->1") == 1.0 and s.fairness_of("1->0") == pytest.approx(0.8)
    assert streams.stream_rates([_point(None, [1e-3], 1)]) is None


def test_a_bidir_sample_that_moved_more_than_its_batch_is_over_the_time_that_moved_it():
    # batch 2 of 2 x 100 bytes: 400 bytes; the sample moved 300 + 700 = 1000 (the faster direction
    # wrote on while the slower finished: tcp_streams.c ms_loop), and its time per op is the elapsed
    # 5 ms x 2 ops / 10 ops moved, 1 ms: 2 ms for the batch over 400 bytes, 5 ms over the 1000 moved
    p = _point([{"received_bytes.0": [0, 300]}, {"received_bytes.0": [0, 700]}], [1e-3], 2, size=100)
    s = streams.stream_rates([p])
    assert s.seconds == pytest.approx(5e-3)
    assert s.directions == {"1->0": pytest.approx([300 / 5e-3]), "0->1": pytest.approx([700 / 5e-3])}
    assert s.sum_Bps == pytest.approx(p.bytes_per_op / p.samples[0])     # the point's bandwidth


def test_the_fake_core_gives_each_stream_a_counter_that_show_lists():
    import fakebuild  # noqa: F401  (tests/support: puts tests/fakes on the path)
    import fakecore
    lines = [json.loads(t) for kind, t in fakecore.script(["tcp.stream", "--sizes", "65536", "--param",
                                                           "streams=4"], {}) if kind == "out"]
    (rec,) = [x for x in lines if x["type"] == "point"]
    p = Point.from_dict({**rec, "variant": "streams=4", "summary": {"median": rec["samples"][0]}})
    assert [f"received_bytes.{k}" for k in range(4)] == list(p.rank_counters[1])
    (s,) = streams.by_point([p])
    assert list(s.directions) == ["0->1"] and len(s.directions["0->1"]) == 4     # forward: rank 1 receives
    assert s.fairness_of("0->1") == pytest.approx(1.0)
    text = "\n".join(stream_view.lines(SimpleNamespace(points=[p])))
    assert "streams: tcp.stream [streams=4] at 64K, ranks 0->1: sum" in text and "fairness 1.000" in text
    assert text.count(" MB/s") == 5                                       # the sum and four streams


PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:8CA7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:8CA7 0100007F:9C40 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
   2: 0100007F:8CA7 0100007F:9C42 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
   3: 0100007F:9C44 0100007F:8CA7 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
   4: 0100007F:1F90 0100007F:D000 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
"""


def test_time_wait_sockets_are_counted_by_side():
    counts = sockets.parse(PROC_NET_TCP)
    assert counts[("0A", 0x8CA7, 0)] == 1                 # the listener
    # 0x8CA7 = 36007: two on the listening side, one on the connecting side, one elsewhere
    assert sockets.time_wait(counts, 0x8CA7) == (2, 1, 1)
    assert sockets.time_wait(sockets.parse(""), 1) == (0, 0, 0)


def test_show_gives_the_connection_rate_as_one_over_the_median_transaction():
    crr = SimpleNamespace(bench="tcp.crr", variant="close=reset", size=1, summary=SimpleNamespace(median=80e-6))
    other = SimpleNamespace(bench="tcp.rr_poll", variant="", size=1, summary=SimpleNamespace(median=10e-6))
    (line,) = stream_view.crr_lines([crr, other])
    assert line.startswith("connections: tcp.crr [close=reset] at 1: 12,500 transactions/s") and "80 us" in line
