"""The message-rate benchmarks (message.mbw_mr, message.uniband, message.biband;
docs/message-rate.md): their facts and parameter rules, the figures a point
derives under each anchor's rule (osu_mbw_mr's mean over the senders,
IMB's slowest rank), the anchors' real output imported, the report's view
against size and window, and the model's prediction on a network file."""
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import imports, schema
from fabriclab.analysis import merge
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.measure import capacity as resources
from fabriclab.measure.plan import Sampling, build
from fabriclab.model.netfile import NetworkFile
from fabriclab.model.schedule_time import Network
from fabriclab.report import figures, rate_views
from fabriclab.report.curves import RunView
from fabriclab.schema.document import BLOCKS
from fabriclab.schema.fields import RecordError
from fabriclab.schema.records import MergedPoint, Point, Summary
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.verdicts import rate_prediction as rp

DATA = Path(__file__).parents[1] / "data" / "imports"
TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")
RATE = ("message.mbw_mr", "message.uniband", "message.biband")
OSU_WINDOWS = (1, 2, 4, 8, 16, 32, 64, 128)      # osu_util.h WINDOW_SIZES: the -V profile


# ---- facts and rules

def test_each_follows_its_anchor_in_the_registry():
    mbw, uni, bi = (REGISTRY[b] for b in RATE)
    assert (mbw.defaults["window"], uni.defaults["window"], bi.defaults["window"]) == ("64", "256", "256")
    assert (mbw.pattern, uni.pattern, bi.pattern) == ("pairs", "pairs", "bipairs")
    assert (mbw.reduce, uni.reduce, bi.reduce) == ("senders-mean", "slowest", "slowest")
    assert all(b.concurrent and "active" not in b.axes and "message-rate" in b.views for b in (mbw, uni, bi))


@pytest.mark.parametrize("bench,roles", [("message.mbw_mr", "sssrrr"), ("message.uniband", "sssrrr"),
                                         ("message.biband", "bbbbbb")])
def test_every_pair_takes_part_and_windows_are_variants(bench, roles):
    plan = build([bench], "8", None, ["window=" + ",".join(map(str, OSU_WINDOWS))], Sampling(), False, nranks=6)
    assert [j.params["window"] for j in plan.jobs] == [str(w) for w in OSU_WINDOWS]
    for job in plan.jobs:
        assert [(lay.active, lay.roles, lay.peers) for lay in job.layouts] == [(3, roles, (3, 4, 5, 0, 1, 2))]


@pytest.mark.parametrize("params,nranks,msg", [
    (["window=0"], 4, "parameter window must be 1..1048576, not 0"),
    (["window=2M"], 4, "parameter window must be 1..1048576"),
    ([], 3, "needs an even number of ranks; this run has 3"),
])
def test_bad_input_is_refused_before_anything_is_built(params, nranks, msg):
    for bench in RATE:
        with pytest.raises(UsageError, match=msg):
            build([bench], "8", None, params, Sampling(), False, nranks=nranks)


@pytest.fixture
def untouchable(tmp_path, fake_core):
    """A core that leaves a mark if it is ever launched, and the fake launcher."""
    mark = tmp_path / "launched"
    exe = tmp_path / "core"
    exe.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    exe.chmod(0o755)
    return ["--core", str(exe), "--mpiexec", fake_core["mpiexec"], "-L", "1", "-o", str(tmp_path / "r.json")], mark


@pytest.mark.parametrize("argv,msg", [
    (["message.mbw_mr", "-p", "window=0"], "window must be 1..1048576, not 0"),
    (["message.uniband", "-n", "3"], "needs an even number of ranks"),
    (["message.biband", "-s", "1M", "-p", "window=64K", "-p", "window_buffers=per-op"], "needs about"),
])
def test_cli_refuses_in_one_line_with_exit_2(argv, msg, untouchable, tmp_path, monkeypatch, capsys):
    f = tmp_path / "meminfo"
    f.write_text(f"MemTotal:       {(8 << 30) // 512} kB\nMemAvailable:   {(8 << 30) // 1024} kB\n")
    monkeypatch.setattr(resources, "MEMINFO", f)
    extra, mark = untouchable
    assert main(["run", *argv, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1, err
    assert not mark.exists()


# ---- the figures a point derives follow each anchor's rule

def _point(bench: str, size: int, sample: float, nranks: int = 4) -> Point:
    roles = "ss" + "rr" if REGISTRY[bench].pattern == "pairs" else "bbbb"
    sent = [size if r in "sb" else 0 for r in roles]
    return Point(bench=bench, size=size, bytes_per_op=sum(sent), concurrent=True, summary=Summary(median=sample),
                 samples=[sample], roles=roles, peers=[2, 3, 0, 1], rank_sent_bytes=sent,
                 rank_recv_bytes=[size if r in "rb" else 0 for r in roles], messages_per_op=sum(r in "sb" for r in roles),
                 rank_samples=[[sample]] * nranks)


def test_mbw_mr_gives_osus_mb_per_s_and_messages_per_s_from_the_senders_mean():
    """osu_mbw_mr.c calc_bw: t = the senders' summed window times over the pairs, MB/s =
    size / 1e6 x pairs x iterations x window / t, Messages/s = 1e6 x MB/s / size. The
    core's sample of the same windows is each sender's seconds per message, their mean."""
    size, window, iters, pairs = 4096, 64, 10, 2
    sender_total = [0.010, 0.030]                       # seconds of all 10 windows on each sender
    osu_t = sum(sender_total) / pairs
    osu_mbps = size / 1e6 * pairs * iters * window / osu_t
    osu_rate = 1e6 * osu_mbps / size
    ops = iters * window                                 # the sample's batch: every message of a pair
    mean_sample = sum(t / ops for t in sender_total) / pairs
    p = _point("message.mbw_mr", size, mean_sample)
    assert p.bandwidth_Bps / 1e6 == pytest.approx(osu_mbps, rel=1e-12)
    assert p.message_rate_per_s == pytest.approx(osu_rate, rel=1e-12)
    slowest = _point("message.mbw_mr", size, max(t / ops for t in sender_total))
    assert slowest.bandwidth_Bps / 1e6 == pytest.approx(osu_mbps * osu_t / max(sender_total))   # 2/3 of OSU's
    assert slowest.bandwidth_Bps / 1e6 < 0.7 * osu_mbps


@pytest.mark.parametrize("bench,scale_bw", [("message.uniband", 1), ("message.biband", 2)])
def test_imb_gives_its_msg_per_s_and_mbytes_per_s_from_the_slowest_rank(bench, scale_bw):
    """IMB_output.c: msgrate = scale_bw x SCALE x window x peers / t_max (t_max in usec, per
    window), throughput = MEGA x msgrate x size; the core's sample is the slowest rank's
    seconds per op, an op one message from every sending rank."""
    size, window, peers = 1024, 256, 2
    rank_window_s = [40e-6, 55e-6, 41e-6, 47e-6]        # each rank's time per window
    t_max_us = max(rank_window_s) * 1e6
    msgrate = scale_bw * 1e6 * window * peers / t_max_us
    p = _point(bench, size, max(rank_window_s) / window)
    assert p.message_rate_per_s == pytest.approx(msgrate, rel=1e-12)
    assert p.bandwidth_Bps / 1e6 == pytest.approx(msgrate * size / 1e6, rel=1e-12)


# ---- the anchors' real output

def _imported(name: str, tool: str) -> dict:
    doc = imports.load(DATA / name, tool)
    merge.analysed(doc)
    return doc.to_dict()


def test_osu_mbw_mr_rows_keep_their_rate_and_megabytes():
    doc = _imported("osu_mbw_mr_v7.txt", "osu")
    pts = {p["size"]: p for p in docs.points(doc)}
    assert sorted(pts) == [1 << k for k in range(13)] and {p["bench"] for p in pts.values()} == {"message.mbw_mr"}
    p = pts[2048]                     # "2048  542.17  264732.26", one pair
    assert p["message_rate_per_s"] == pytest.approx(264732.26) and p["roles"] == "sr" and p["active"] == 1
    assert p["bandwidth_Bps"] / 1e6 == pytest.approx(542.17, abs=0.01)
    assert all(q["variant"] == "" for q in pts.values())


def test_osu_mbw_mr_varied_windows_are_a_variant_each():
    doc = _imported("osu_mbw_mr_varied_v7.txt", "osu")
    pts = {(p["variant"], p["size"]): p for p in docs.points(doc)}
    assert len(pts) == 5 * len(OSU_WINDOWS)
    assert {v for v, _ in pts} == {"" if w == 64 else f"window={w}" for w in OSU_WINDOWS}
    assert pts[("window=8", 8)]["message_rate_per_s"] == pytest.approx(948366.20)   # the message rate profile
    assert pts[("", 16)]["message_rate_per_s"] == pytest.approx(143685.21)


def test_imb_uniband_and_biband_with_their_process_counts_and_timeouts():
    doc = _imported("imb_uniband_biband_2021.txt", "imb")
    pts = {(p["bench"], p["size"]): p for p in docs.points(doc)}
    uni, bi = pts[("message.uniband", 8)], pts[("message.biband", 8)]
    assert uni["message_rate_per_s"] == pytest.approx(356463) and uni["bandwidth_Bps"] / 1e6 == pytest.approx(2.85, abs=0.01)
    assert bi["message_rate_per_s"] == pytest.approx(232813) and bi["bandwidth_Bps"] / 1e6 == pytest.approx(1.86, abs=0.01)
    assert (uni["roles"], bi["roles"], bi["messages_per_op"]) == ("sr", "bb", 2)
    four = _imported("imb_uniband_biband_np4_2021.txt", "imb")
    got = {(p["bench"], p["size"], p["active"]) for p in docs.points(four)}
    assert ("message.uniband", 0, 2) in got and ("message.uniband", 0, 1) in got
    skips = [r for r in four["records"] if r["kind"] == "skip"]
    assert {r["bench"] for r in skips} == {"message.uniband", "message.biband"}
    assert all("time-out" in r["reason"] for r in skips)


# ---- the report

def test_the_view_draws_rate_against_size_and_window():
    doc = imports.load(DATA / "osu_mbw_mr_varied_v7.txt", "osu")
    merge.analysed(doc)
    drawn = dict((v.key, figs) for v, figs in figures.views([RunView.of("v", doc)]))
    figs = {f.id: f for f in drawn["message-rate"]}
    vs_size, vs_window = figs["rate-mbw_mr"], figs["rate-window-mbw_mr"]
    assert len(vs_size.series) == len(OSU_WINDOWS)
    line = next(s for s in vs_window.series if s.label == "8")
    assert line.x == list(OSU_WINDOWS) and line.y[3] == pytest.approx(948366.20)
    assert rate_views.window_of("message.uniband", "window_buffers=per-op") == (256, "window_buffers=per-op")


def test_no_window_figure_from_one_window():
    doc = imports.load(DATA / "osu_mbw_mr_v7.txt", "osu")
    merge.analysed(doc)
    ids = [f.id for v, figs in figures.views([RunView.of("v", doc)]) for f in figs if v.key == "message-rate"]
    assert ids == ["rate-mbw_mr"]


# ---- the model

def _where(hosts):
    net = Network(NetworkFile(TWO))
    names = list(net.topo.node_names)
    return net, [names.index(h) for h in hosts]


def test_model_predicts_each_rule_from_the_flows_max_min_rates():
    """two-switches.yaml: 60 MB/s host cables, a 20 MB/s trunk. Pair 0 (h0 -> h4) crosses
    the trunk, pair 1 (h1 -> h2) stays on one switch: rates 20 and 60 MB/s."""
    net, where = _where(["h0", "h1", "h4", "h2"])
    slow = rp.predict(net, where, "ssrr", [2, 3, 0, 1], "slowest")
    mean = rp.predict(net, where, "ssrr", [2, 3, 0, 1], "senders-mean")
    assert slow["rates_Bps"] == pytest.approx([20e6, 60e6]) and slow["aggregate_Bps"] == pytest.approx(80e6)
    assert slow["bandwidth_Bps"] == pytest.approx(2 * 20e6)                  # IMB: pairs x the slowest
    # OSU: both flows' bytes over the senders' mean time, 2 x the harmonic mean (60 MB/s, not 30)
    assert mean["bandwidth_Bps"] == pytest.approx(2 / ((1 / 20e6 + 1 / 60e6) / 2)) == pytest.approx(60e6)
    assert "trunk" in slow["bottleneck"]


def test_model_rows_for_measured_points_and_what_it_cannot_place():
    net, where = _where(["h0", "h1", "h4", "h5"])           # both pairs share the trunk: 10 MB/s each
    bi = rp.predict(net, where, "bbbb", [2, 3, 0, 1], "slowest")
    assert bi["bandwidth_Bps"] == pytest.approx(4 * 10e6)
    size = 1 << 20
    pts = [MergedPoint(**{k: getattr(_point(b, size, size * (4 if b == "message.biband" else 2) / 40e6), k)
                          for k in ("bench", "size", "bytes_per_op", "concurrent", "summary", "roles", "peers",
                                    "rank_sent_bytes", "rank_recv_bytes", "messages_per_op")}, active=2)
           for b in ("message.uniband", "message.biband", "message.pingpong")]
    rows = rp.rows(pts, ["h0", "h1", "h4", "h5"], NetworkFile(TWO))
    assert [r["bench"] for r in rows] == ["message.uniband", "message.biband"]
    assert rows[0]["predicted_Bps"] == pytest.approx(20e6) and rows[0]["verdict"] == "faster"
    assert rows[1]["predicted_Bps"] == pytest.approx(40e6) and rows[1]["verdict"] == "agrees"
    assert rows[1]["predicted_msgs_per_s"] == pytest.approx(40e6 / size)
    assert rp.rows(pts, ["h0", "h0", "h0", "h0"], NetworkFile(TWO)) == []    # one host: no cable to predict
    BLOCKS["rate_model"]({"network": TWO, "calibration": None, "tolerance": rp.TOLERANCE, "rows": rows})
    with pytest.raises(RecordError, match=r"rate_model rows\[0\]: rule"):
        BLOCKS["rate_model"]({"network": TWO, "calibration": None, "tolerance": 0.15,
                              "rows": [{**rows[0], "rule": "fastest"}]})


def test_a_run_across_a_network_keeps_the_models_rows(fake_core, tmp_path, monkeypatch):
    """--network: the run's document carries a rate_model block for its message-rate points
    (its hosts placed on the file's nodes: both pairs share the trunk), checked as it loads."""
    out = tmp_path / "r.json"
    monkeypatch.setenv("FAKECORE_RANKS", "4")
    monkeypatch.setenv("FAKECORE_HOSTS", "h0,h1,h4,h5")
    assert main(["run", "message.uniband", "-n", "4", "-s", "1M", "--core", fake_core["core"], "--mpiexec",
                 fake_core["mpiexec"], "-L", "1", "-q", "--hosts", "h0,h1,h4,h5", "--network", TWO,
                 "-o", str(out)]) == 0
    block = schema.load(out).blocks["rate_model"]
    assert block["network"].endswith("two-switches.yaml") and [r["bench"] for r in block["rows"]] == ["message.uniband"]
    assert block["rows"][0]["predicted_Bps"] == pytest.approx(2 * 10e6) and "trunk" in block["rows"][0]["bottleneck"]
