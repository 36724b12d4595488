"""udp.stream and udp.rr: bad input refused before launch, the figures derived from the counters,
and a run of the fake core shown with them."""
import pytest

from fabriclab.analysis import udp
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.report import udp_view
from fabriclab.schema.records import Point
from fabriclab.suite import streams as st, udp as udp_rules
from fabriclab.suite.benchmarks import REGISTRY

from fakebuild import fake_core  # noqa: E402

KINDS = REGISTRY["udp.stream"].counters


def _point(rc, samples=(1e-3, 1e-3), batch=10, size=1000) -> Point:
    return Point.from_dict({"bench": "udp.stream", "size": size, "bytes_per_op": size,
                            "summary": {"median": 1e-3}, "samples": list(samples), "batch": batch,
                            "rank_counters": rc})


def _flow(k, sent, recv, nbytes, lost, ooo, jit):
    """Counters of flow k: the sender's and the receiver's (every rank names all of them)."""
    z = [0] * len(sent)
    return ({f"sent.{k}": sent, f"received.{k}": z, f"received_bytes.{k}": z, f"lost.{k}": z,
             f"out_of_order.{k}": z, f"jitter_s.{k}": z},
            {f"sent.{k}": z, f"received.{k}": recv, f"received_bytes.{k}": nbytes, f"lost.{k}": lost,
             f"out_of_order.{k}": ooo, f"jitter_s.{k}": jit})


def test_jain_and_loss_follow_their_definitions():
    assert udp.jain([5, 5, 5]) == pytest.approx(1.0)
    assert udp.jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert udp.jain([0, 0]) is None
    assert udp.loss_fraction(1, 9) == pytest.approx(0.1) and udp.loss_fraction(0, 0) is None


def test_a_forward_flow_counts_what_arrived_at_the_median_rate_and_over_the_span():
    s, r = _flow(0, [100, 110, 120, 130], [90, 99, 107, 115], [90_000, 99_000, 107_000, 115_000], [5, 6, 8, 10],
                 [0, 1, 1, 1], [0, 2e-6, 3e-6, 3e-6])
    (f,) = udp.stream_figures([_point([s, r], samples=(1e-3, 1e-3, 4e-3))], KINDS)
    (x,) = f.flows
    # over the samples: 30 sent, 25 received, 5 lost, 1 out of order
    assert (x.rank, x.stream, x.sent, x.received, x.lost, x.out_of_order) == (1, 0, 30, 25, 5, 1)
    # sent at 1000 B per median 1e-3 s, 25 of 30 arrived; the span: 25 000 B over (6e-3 x 10) s
    assert x.received_Bps == pytest.approx(1e6 * 25 / 30) and x.span_Bps == pytest.approx(25_000 / 0.06)
    assert x.loss == pytest.approx(5 / 30) and x.jitter_s == pytest.approx(3e-6)
    assert f.fairness is None and f.received_Bps == pytest.approx(x.received_Bps)


def test_bidirectional_flows_sum_and_give_their_fairness():
    s0, r0 = _flow(0, [0, 10, 20], [0, 10, 20], [0, 10_000, 20_000], [0, 0, 0], [0, 0, 0], [0, 1e-6, 1e-6])
    s1, r1 = _flow(0, [0, 10, 20], [0, 5, 10], [0, 5_000, 10_000], [0, 5, 10], [0, 0, 0], [0, 3e-6, 3e-6])
    # rank 0 sends flow 0 to rank 1 (r0's figures on rank 1), rank 1 sends back (r1's on rank 0)
    rank0 = {**{k: v for k, v in s0.items() if k.startswith("sent")},
             **{k: v for k, v in r1.items() if not k.startswith("sent")}}
    rank1 = {**{k: v for k, v in s1.items() if k.startswith("sent")},
             **{k: v for k, v in r0.items() if not k.startswith("sent")}}
    (f,) = udp.stream_figures([_point([rank0, rank1])], KINDS)
    assert [(x.rank, x.received, x.lost) for x in f.flows] == [(0, 10, 10), (1, 20, 0)]
    assert f.received == 30 and f.lost == 10 and f.loss == pytest.approx(0.25)
    assert f.fairness == pytest.approx(udp.jain([10_000, 20_000]))
    assert f.jitter_s == pytest.approx(2e-6)


def test_per_sample_figures_split_the_totals():
    s, r = _flow(0, [0, 10, 20], [0, 10, 18], [0, 10_000, 18_000], [0, 0, 2], [0, 0, 0], [0, 1e-6, 4e-6])
    got = udp.stream_samples(_point([s, r]), KINDS)
    assert got["received"] == [10, 8] and got["lost"] == [0, 2]
    assert got["received_Bps"] == pytest.approx([10_000 / 0.01, 8_000 / 0.01])
    assert got["loss"] == pytest.approx([0, 0.2]) and got["jitter_s"] == pytest.approx([1e-6, 4e-6])


def test_request_response_counts_lost_transactions_and_the_latency_of_the_others():
    rc = [{"sent": [0, 50, 100], "completed": [0, 49, 97], "lost": [0, 1, 3], "late": [0, 0, 1],
           "rtt_s": [0, 49 * 20e-6, 97 * 20e-6]}, None]
    p = Point.from_dict({"bench": "udp.rr", "size": 64, "bytes_per_op": 128, "legs_per_op": 2,
                         "summary": {"median": 1e-4}, "samples": [1e-4, 1e-4], "batch": 50, "rank_counters": rc})
    (f,) = udp.rr_figures([p], REGISTRY["udp.rr"].counters)
    assert (f.sent, f.completed, f.lost, f.late) == (100, 97, 3, 1)
    assert f.rtt_s == pytest.approx(20e-6) and f.latency_s == pytest.approx(10e-6)
    assert f.loss == pytest.approx(0.03) and f.transactions_per_s == pytest.approx(97 / 0.01)


@pytest.mark.parametrize("argv, says", [
    (["udp.stream", "-p", "rate=0"], "rate"),
    (["udp.stream", "-p", "rate=2T"], "rate"),
    (["udp.stream", "--sizes", "65508"], "65507"),
    (["udp.stream", "-p", "streams=129"], "streams"),
    (["udp.rr", "-p", "timeout_us=0"], "timeout_us"),
    (["udp.stream", "-p", "pacing=unlimited", "-p", "pacing_timer=1000"], "pacing_timer"),
    (["udp.stream", "-p", "pacing_timer=2000000"], "pacing_timer"),
    # accepted values whose first sample would outlast --timeout: refused, not launched and taken for hung
    (["udp.stream", "-s", "1400", "-p", "rate=1"], "two datagrams of 1,400 B at rate=1 b/s, at least 22,400 s"),
    (["udp.stream", "-s", "1K", "-p", "rate=4K", "-t", "1"], "beyond --timeout 1 s (and twice --point-time)"),
    (["udp.underload", "-p", "mps=1"], "two cycles of reply_every=100 messages at mps=1, at least 200 s"),
    (["tcp.underload", "-p", "mps=3", "-p", "reply_every=100"], "at mps=3, at least 67 s"),
    (["noise.fwq", "-p", "work=1G"], "work=1,073,741,824 iterations"),
    (["udp.stream", "-p", "addr=notanaddress"], "parameter addr must be an IPv4 address"),
    (["udp.rr", "-p", "addr=999.1.1.1"], "not '999.1.1.1'"),
    (["tcp.stream", "-p", "addr=::1"], "parameter addr must be an IPv4 address"),
    (["noise.fwq", "-p", "work=1"], "work must be 1024.."),
    (["noise.detour", "-p", "record_ms=30000", "-t", "20"], "a record of record_ms=30,000, at least 30 s"),
])
def test_bad_input_is_one_line_before_launch(argv, says, capsys):
    assert main(["run", *argv, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_first_sample_within_the_timeout_is_launched(capsys):
    """The floors are floors: what fits runs (a dry run prints its command), a size below the
    header (skipped, not run) included."""
    for argv in (["udp.stream", "-s", "1K", "-p", "rate=8K", "-t", "3"], ["udp.underload", "-p", "mps=4"],
                 ["udp.stream", "-s", "16,1K", "-p", "rate=8K"],
                 ["noise.detour", "-p", "record_ms=30000", "-t", "31"]):
        assert main(["run", *argv, "--dry-run"]) == 0, capsys.readouterr().err


def test_more_streams_than_descriptors_are_refused(monkeypatch, capsys):
    with pytest.raises(UsageError, match="open-file limit"):
        udp_rules.check("udp.stream", (), {"streams": "40"}, 2, limit=100)
    udp_rules.check("udp.stream", (), {"streams": "36"}, 2, limit=100)
    monkeypatch.setattr(st, "nofile_limit", lambda: 70)
    assert main(["run", "udp.stream", "-p", "streams=8", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "open-file limit" in err and len(err.strip().splitlines()) == 1


def test_a_fake_run_shows_each_flow_and_its_fairness(tmp_path):
    fake = fake_core(tmp_path)
    out = tmp_path / "u.json"
    assert main(["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-q", "-L", "1", "udp.stream",
                 "--sizes", "1K", "-p", "streams=2", "-p", "direction=bidir", "-o", str(out)]) == 0
    from fabriclab import schema
    doc = schema.load(out)
    (p,) = doc.points
    assert len(p.rank_counters) == 2 and "received.1" in p.rank_counters[1]
    text = "\n".join(udp_view.lines(doc))
    assert "udp: udp.stream[direction=bidir,streams=2] at 1K: received" in text and "fairness" in text
    assert text.count("  flow ") == 4
