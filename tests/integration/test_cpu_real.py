"""Each rank's CPU over a point's samples on real ranks under MPICH and Open MPI: the header
says how CPU was read, a TCP stream's sender used CPU, the wall seconds span the samples
(each rank's rounds: at most the samples' sum times the batch, the samples being the slower
rank's times; both ranks' together at least that), and `show` prints the socket
benchmarks' CPU columns. (Whether reading it moves a figure: bench/bench_cpu.py.)"""
import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.cli import main

pytestmark = pytest.mark.integration


def test_a_socket_point_says_what_cpu_each_rank_used(flavour, tmp_path, capsys):
    out = tmp_path / "cpu.json"
    doc = realrun.run(out, "tcp.stream", "tcp.rr_poll", "-s", "64K", mpi=flavour[0], validate=False,
                      after=("--point-time", "0.2"))
    clock = doc["header"]["timer"]["cpu"]
    assert clock["name"] == "getrusage(RUSAGE_SELF)" and 0 < clock["step_s"] <= clock["tick_s"] <= 0.01
    pts = {p["bench"]: p for p in docs.points(doc)}
    assert set(pts) == {"tcp.stream", "tcp.rr_poll"}
    for bench, p in pts.items():
        span = sum(p["samples"]) * p["batch"]
        assert len(p["rank_cpu"]) == 2, bench
        sender = p["rank_cpu"][0]
        assert sender["user_s"] + sender["sys_s"] > 0, (bench, sender)
        # a sample is the slower rank's time: each rank's own rounds last at most the span
        # (and the few reads around them), the two ranks' together at least the span
        walls = [use["wall_s"] for use in p["rank_cpu"]]
        assert max(walls) < 1.05 * span + 1e-3 and sum(walls) > 0.95 * span, (bench, walls, span)
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "us/KB local" in text and "us/Tr local" in text and "cpu0%" in text
