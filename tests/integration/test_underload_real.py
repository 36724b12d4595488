"""udp.underload and tcp.underload on two real ranks under MPICH and Open MPI: sockperf's under-load
mode's counts hold together (every message sent counted, one reply asked per
reply_every, each asked reply back or lost), each reply's latency reaches the
per-op histogram, and replies lost to a full receive queue are counted while
the run goes on. (How its latency compares with sockperf's is a figure:
bench/bench_sockperf.py.)"""
import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.analysis.underload import of_point
from fabriclab.schema import load

pytestmark = pytest.mark.integration


def _totals(p: dict) -> dict:
    return {k: v[-1] - v[0] for k, v in p["rank_counters"][0].items()}


def test_counts_hold_together_and_every_reply_is_timed(flavour, tmp_path):
    out = tmp_path / "ul.json"
    doc = realrun.run(out, "udp.underload", "tcp.underload", "-s", "64,1K", "-p", "mps=20000", "-p",
                      "reply_every=10", mpi=flavour[0], after=("--per-op", "0.02"))
    pts = docs.points(doc)
    assert sorted((p["bench"], p["size"]) for p in pts) == [("tcp.underload", 64), ("tcp.underload", 1024),
                                                           ("udp.underload", 64), ("udp.underload", 1024)]
    for p in pts:
        assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] == p["size"] - 24
        assert p["rank_counters"][1] is None and p["batch"] % 10 == 0
        c = _totals(p)
        assert c["sent"] == p["batch"] * len(p["samples"])
        assert c["asked"] == c["sent"] / 10 and c["back"] + c["lost"] == c["asked"] and c["back"] > 0
        assert p["bench"] == "udp.underload" or p["info"]["nodelay"] == 1
        h = p["op_histogram"]
        assert h["ops_per_timing"] == 10 and [r["rank"] for r in h["ranks"]] == [0]
    for pt in load(out).points:
        u = of_point(pt)
        assert 0 < u.rate <= 20000 * 1.01 and 0 < u.mean_s < 0.1
        assert 0 < u.quantiles["p50"] <= u.quantiles["p99"] <= u.max_s


def test_replies_lost_to_a_full_queue_are_counted_and_the_run_goes_on(tmp_path):
    """Unpaced 32 KiB messages, each asking a reply, hundreds a call, into the smallest receive
    queues: the kernel drops datagrams, and every call ends after its wait for the replies due."""
    doc = realrun.run(tmp_path / "lost.json", "udp.underload", "-s", "32K", "-p", "mps=10000000", "-p", "reply_every=1",
                      "-p", "rcvbuf=1", after=("--sample-time", "0.01"))
    (p,) = docs.points(doc)
    c = _totals(p)
    assert c["lost"] > 0 and c["back"] + c["lost"] == c["asked"] == c["sent"]
