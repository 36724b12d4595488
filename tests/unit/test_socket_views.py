"""report/socket_views.py on synthetic points: loss, jitter and received rate against the
offered rate, each stream's share with Jain's index, latency under load; from imported
iperf3 points (info["socket"]) and from measured points' counters."""
from dataclasses import replace

import pytest

from fabriclab import imports
from fabriclab.imports.printed import Parsed, Printed
from fabriclab.report import socket_views as sv
from fabriclab.report.curves import RunView
from fabriclab.schema import Document, Footer, Header
from fabriclab.schema.records import Point, Summary
from fabriclab.suite import benchmarks


def imported(figs: list) -> RunView:
    parsed = Parsed("iperf 3.12", "test", 2, figures=figs)
    return RunView.of("iperf3", imports.build(parsed, "iperf3", "x.json", b"x", 0.0))


def udp(offered_bps: float, loss: float, jitter_s: float, size: int = 1400) -> Printed:
    got = offered_bps / 8 * (1 - loss)
    sock = {"offered_bps": offered_bps, "received_Bps": got, "loss_fraction": loss, "jitter_s": jitter_s,
            "out_of_order": 0, "stream_Bps": [got]}
    return Printed("iperf3 UDP", "udp.stream", f"rate={int(offered_bps)}", size, 2, size / got, size, 1, False,
                   got * 8, "bits/s", "c", None, {}, info={"socket": sock})


def test_loss_jitter_and_received_rate_against_the_offered_rate():
    run = imported([udp(400e6, 0.5, 40e-6), udp(100e6, 0.0, 10e-6), udp(200e6, 0.1, 20e-6)])
    loss, jitter, got = sv.udp_rate([run])
    (s,) = loss.series
    assert s.x == [100, 200, 400] and s.y == pytest.approx([0, 10, 50])
    assert jitter.series[0].y == pytest.approx([10, 20, 40])
    assert got.series[0].y == pytest.approx([100, 180, 200])
    line = got.series[-1]
    assert line.dashed and line.x == line.y == [100, 400]


def test_each_stream_is_a_bar_and_the_title_gives_jains_index():
    shares = [1e6, 1e6, 1e6, 3e6]
    p = Printed("iperf3 TCP -P 4", "tcp.stream", "streams=4", 131072, 2, 131072 / 6e6, 131072, 1, False, 48e6,
                "bits/s", "c", None, {}, info={"socket": {"stream_Bps": shares, "received_Bps": 6e6}})
    (fig,) = sv.stream_fairness([imported([p, udp(100e6, 0, 1e-5)])])     # one stream: no figure
    assert [v for _, v in fig.bars] == pytest.approx([8, 8, 8, 24]) and fig.title.startswith("Jain's index 0.750")
    assert sv.jain(shares) == pytest.approx(36 / 48) and sv.jain([2, 2]) == 1 and sv.jain([]) is None
    # an imported file whose streams say 0 bytes beside a sum that does not: a figure, no index
    p0 = Printed("iperf3 TCP -P 2", "tcp.stream", "streams=2", 131072, 2, 131072 / 6e6, 131072, 1, False, 48e6,
                 "bits/s", "c", None, {}, info={"socket": {"stream_Bps": [0, 0], "received_Bps": 6e6}})
    (fig,) = sv.stream_fairness([imported([p0])])
    assert fig.title.startswith("no stream moved a byte: ") and [v for _, v in fig.bars] == [0, 0]


def measured(points: list) -> RunView:
    doc = Document(Header(run_id="m", nranks=2, argv=["fabriclab"]), points, Footer("complete", None, None,
                                                                                    len(points)))
    return RunView.of("run", doc)


def test_measured_streams_from_the_receivers_counters(monkeypatch):
    b = benchmarks.REGISTRY["tcp.stream"]
    monkeypatch.setitem(benchmarks.REGISTRY, "tcp.stream", replace(b, counters={"received_bytes": "sum"}))
    # stream 0 received 1 and 2 MB in two samples, stream 1 3 and 2 MB
    c = {"received_bytes.0": [0, 1e6, 3e6], "received_bytes.1": [0, 3e6, 5e6]}
    p = Point("tcp.stream", 65536, 65536, Summary(0.5), variant="streams=2", params={"streams": "2"},
              samples=[0.5, 0.5], batch=1, stop="converged", rank_counters=[None, c])
    (fig,) = sv.stream_fairness([measured([p])])
    # each stream's bytes over the samples' second (analysis/streams.py), in Mbit/s
    assert [v for _, v in fig.bars] == pytest.approx([3 * 8, 5 * 8])
    s = sv.socket_figures(measured([p]))[p.key]
    assert s.received_Bps == pytest.approx(8e6) and s.offered_bps is None and s.loss_fraction is None


def test_latency_under_load_is_the_replies_mean_without_per_op():
    def pt(mps, lat, back):
        c = {"sent": [0, 1000], "asked": [0, 10], "back": [0, back], "lost": [0, 10 - back], "latency_s": [0, lat]}
        return Point("udp.underload", 16, 16, Summary(1e-3), variant=f"mps={mps}", params={"mps": str(mps)},
                     samples=[1e-3], batch=1000, stop="converged", rank_counters=[c, None])
    (fig,) = sv.underload([measured([pt(20000, 40e-6, 8), pt(10000, 50e-6, 10)])])
    (s,) = fig.series
    assert s.x == [10000, 20000] and s.y == pytest.approx([5, 5]) and s.label.endswith("mean")


def test_measured_udp_loss_jitter_and_offer_from_the_flows_counters(monkeypatch):
    from fabriclab.suite import udp as udp_rules
    b = benchmarks.REGISTRY.get("udp.stream") or benchmarks.REGISTRY["tcp.stream"]
    monkeypatch.setitem(benchmarks.REGISTRY, "udp.stream",
                        replace(b, name="udp.stream", counters=udp_rules.STREAM_COUNTERS))
    snd = {"sent.0": [0, 600, 1000], "sent.1": [0, 500, 1000], "lost.0": [0, 0, 0], "lost.1": [0, 0, 0]}
    rcv = {"received.0": [0, 550, 900], "received.1": [0, 400, 700],
           "lost.0": [0, 50, 100], "lost.1": [0, 100, 300], "out_of_order.0": [0, 1, 2], "out_of_order.1": [0, 0, 0],
           "received_bytes.0": [0, 4e5, 9e5], "received_bytes.1": [0, 2e5, 7e5],
           "jitter_s.0": [0, 5e-6, 10e-6], "jitter_s.1": [0, 1e-6, 30e-6]}
    p = Point("udp.stream", 1400, 1400, Summary(1e-3), variant="rate=100000000,streams=2",
              params={"rate": "100000000", "streams": "2"}, samples=[1e-3, 1e-3], batch=500, stop="converged",
              rank_counters=[snd, rcv])
    s = sv.socket_figures(measured([p]))[p.key]
    assert s.offered_bps == 200e6 and s.loss_fraction == pytest.approx(0.2) and s.out_of_order == 2
    # jitter as analysis/udp.py reads the flows' levels (between the two flows' estimates)
    from fabriclab.analysis import udp
    (f,) = udp.stream_figures([p], udp_rules.STREAM_COUNTERS)
    assert s.jitter_s == f.jitter_s and 1e-6 < s.jitter_s < 30e-6
    # the flows' bytes over the samples' second (analysis/udp.py)
    assert s.received_Bps == pytest.approx(1.6e6) and s.stream_Bps == pytest.approx([9e5, 7e5])


def test_latency_under_load_percentiles_from_the_per_op_histogram():
    def pt(mps, lat):
        hist = {"buckets": 2000, "base_s": 1e-9, "error": 0.01,
                "ranks": [{"buckets": [[900, 100]], "n": 100, "min_s": lat, "max_s": lat}]}
        c = {"sent": [0, 1000], "asked": [0, 10], "back": [0, 10], "lost": [0, 0], "latency_s": [0, 10 * lat]}
        return Point("udp.underload", 16, 16, Summary(1e-3), variant=f"mps={mps}", params={"mps": str(mps)},
                     samples=[1e-3], batch=1000, stop="converged", rank_counters=[c, None], op_histogram=hist)
    (fig,) = sv.underload([measured([pt(2000, 30e-6), pt(1000, 20e-6)])])
    assert [s.label.rsplit(" ", 1)[1] for s in fig.series] == ["p50", "p99", "p99.9"]
    assert all(s.x == [1000, 2000] and s.y == pytest.approx([20, 30]) for s in fig.series)
    assert fig.series[2].dashed and not fig.series[0].dashed


def test_one_tcp_stream_without_counters_is_its_bandwidth():
    p = Point("tcp.stream", 65536, 65536, Summary(0.5), samples=[0.5, 0.5], batch=1, stop="converged")
    (s,) = sv.socket_figures(measured([p])).values()
    assert s.received_Bps == pytest.approx(131072) and s.stream_Bps == [] and sv.stream_fairness([measured([p])]) == []
