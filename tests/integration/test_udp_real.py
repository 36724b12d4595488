"""udp.stream and udp.rr on real ranks under MPICH and Open MPI, one host: every direction with two
flows at a set rate, unlimited, and request/response, validated; every datagram sent is either
received or counted lost, every transaction either completes or is lost, the paced calls last their
schedule, and each rank holds what its footprint declares."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.analysis import counters
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
import realrun  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
RATE = 50_000_000          # bits/s per flow


def _totals(p: dict) -> list:
    return counters.rank_totals(p["rank_counters"], REGISTRY[p["bench"]].counters)


def _check_alloc(p: dict) -> None:
    at = At(p["size"], p["buffers"], nranks=2, params=p["params"])
    for role, got in zip("sr", p["rank_alloc_bytes"]):
        declared = REGISTRY[p["bench"]].footprint.allocated(role, at)
        assert abs(declared - got) <= 0.15 * got, (p["bench"], role, declared, got)


def test_streams_and_transactions_account_for_every_datagram(flavour, tmp_path):
    name, _ = flavour
    doc = realrun.run(tmp_path / "u.json", "udp.stream", "udp.rr", "-s", "1K", "-p", "streams=2",
                      "-p", f"rate={RATE}", "-p", "direction=forward,reverse,bidir", mpi=name)
    flat = realrun.run(tmp_path / "f.json", "udp.stream", "-s", "1K", "-p", "pacing=unlimited", mpi=name)
    ticked = realrun.run(tmp_path / "t.json", "udp.stream", "-s", "1K", "-p", f"rate={RATE}",
                         "-p", "pacing_timer=1000", mpi=name)      # iperf3's bursts, a tick's datagrams at once
    assert [p["info"]["tick_s"] for p in docs.points(ticked)] == [0.001]
    pts = docs.points(doc) + docs.points(flat) + docs.points(ticked)
    seen = {(p["bench"], p["params"].get("direction"), p["params"].get("pacing")) for p in pts}
    assert seen == {("udp.stream", d, "rate") for d in ("forward", "reverse", "bidir")} | {
        ("udp.rr", None, None), ("udp.stream", "forward", "unlimited")}
    for p in pts:
        assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0, p
        _check_alloc(p)
        ops = p["batch"] * len(p["samples"])
        tot = _totals(p)
        if p["bench"] == "udp.rr":
            c = tot[0]
            assert tot[1] is None and c["sent"] == ops and c["completed"] + c["lost"] == ops, c
            if not c["lost"]:    # a round trip is timed from before its request's send: most of a transaction
                per_op = sum(p["samples"]) * p["batch"] / ops
                assert 0.75 * per_op <= c["rtt_s"] / c["completed"] <= 1.01 * per_op, (c, per_op)
            continue
        d, streams = p["params"]["direction"], int(p["params"]["streams"])
        senders = {"forward": [0], "reverse": [1], "bidir": [0, 1]}[d]
        assert p["bytes_per_op"] == 1024 * streams * len(senders)
        for q in senders:
            r = 1 - q
            for k in range(streams):
                assert tot[q][f"sent.{k}"] == ops, (d, q, k)
                assert tot[r][f"received.{k}"] + tot[r][f"lost.{k}"] == ops, (d, q, k, tot[r])
                assert tot[r][f"received_bytes.{k}"] == 1024 * tot[r][f"received.{k}"]
        if p["params"]["pacing"] == "rate":      # a paced call lasts at least its schedule
            assert min(p["samples"]) >= 1024 * 8 / RATE * (1 - 1e-9), p["samples"]
