"""`run --per-op` on real ranks under MPICH and Open MPI: every point carries a histogram of
single ops from each rank that times (a ping-pong's rank 0 and 1 alike, an allreduce's every
rank), its counts adding up, the timer's cost beside it, the sampling recorded in the header,
and `show` reading the percentiles. (How close p50 comes to the batched median is a figure:
bench/bench_per_op.py.)"""
import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.cli import main

pytestmark = pytest.mark.integration


def test_every_point_carries_its_single_ops(flavour, tmp_path, capsys):
    out = tmp_path / "po.json"
    doc = realrun.run(out, "message.pingpong", "coll.allreduce", "-s", "8,4K", mpi=flavour[0],
                      after=("--per-op", "0.05"))
    assert doc["header"]["plan"]["sampling"]["per_op"] == 0.05
    pts = docs.points(doc)
    assert {p["bench"] for p in pts} == {"message.pingpong", "coll.allreduce"} and len(pts) == 4
    for p in pts:
        h = p["op_histogram"]
        assert h["error"] == 0.01 and 0 < h["timer_cost_s"] < 1e-5, h
        assert h["ranks"], p["bench"]
        for r in h["ranks"]:
            assert r["n"] == sum(c for _, c in r["buckets"]) > 0
            assert 0 < r["min_s"] <= r["max_s"]
            assert all(0 <= i < h["buckets"] for i, _ in r["buckets"])
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("per-op:")]
    assert len(lines) == 4 and all("p99.9" in ln and "max" in ln and "timer" in ln for ln in lines)
    assert main(["compare", str(out), str(out)]) == 0
    cmp = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("per-op ")]
    assert len(cmp) == 12 and all(ln.endswith(" same") for ln in cmp)       # p50, p99, p99.9 of 4 points
    html = tmp_path / "po.html"
    assert main(["report", str(out), "-o", str(html)]) == 0
    text = html.read_text()
    assert 'id="fig-message-pingpong-per-op"' in text and 'id="fig-coll-allreduce-per-op"' in text


def test_windowed_kernels_are_timed_a_window_at_a_time(tmp_path):
    """Kernels that time only whole windows or rounds (fl_shape.batch_multiple) run their per-op
    phase a window at a time, and say so, under every level's protocol (no hang, no stray ack)."""
    doc = realrun.run(tmp_path / "w.json", "message.stream", "deposit.put_bw", "tcp.stream", "tcp.conns",
                      "-s", "4K", "--conns", "4", after=("--per-op", "0.02"))
    units = {p["bench"]: p["op_histogram"]["ops_per_timing"] for p in docs.points(doc)}
    assert set(units) == {"message.stream", "deposit.put_bw", "tcp.stream", "tcp.conns"}
    assert all(u > 1 for u in units.values()), units
