"""tcp.stream's parallel streams and directions and tcp.crr on real ranks, under
MPICH and Open MPI on one host, validated: every stream's bytes checked, each
sample's bytes delivered exactly (bidir: a batch each way at least) and counted
per stream on the receiving rank, the streams adding up to the point's bandwidth; one transaction of tcp.crr
checked both ways, with each way of closing, and the TIME_WAIT sockets it
leaves counted on each side (host/sockets.py)."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.analysis import streams
from fabriclab.analysis.tails import tails
from fabriclab.host import sockets
import realrun  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
SIZE, N = 65536, 4


def test_streams_each_way_validate_and_count_every_stream(flavour, tmp_path):
    name, _ = flavour
    out = tmp_path / "s.json"
    doc = realrun.run(out, "tcp.stream", "-s", str(SIZE), "-p", f"streams={N}",
                      "-p", "direction=forward,reverse,bidir", mpi=name)
    pts = {p["params"]["direction"]: p for p in docs.points(doc)}
    assert set(pts) == {"forward", "reverse", "bidir"}
    for direction, p in pts.items():
        both = direction == "bidir"
        assert p["validation"] == {"checked_bytes": N * SIZE * (2 if both else 1), "errors": 0}, p
        assert p["info"]["streams"] == N and p["info"]["loop"] == "epoll"
        assert p["bytes_per_op"] == SIZE * (2 if both else 1)
        receivers = {"forward": (1,), "reverse": (0,), "bidir": (0, 1)}[direction]
        for rank, c in enumerate(p["rank_counters"]):
            if rank not in receivers:
                assert c is None, (direction, rank)
                continue
            assert sorted(c) == [f"received_bytes.{k}" for k in range(N)]
            deltas = [sum(c[k][i + 1] - c[k][i] for k in c) for i in range(len(p["samples"]))]
            if both:   # the batch each way at least, the faster direction more: whole messages
                assert all(d >= p["batch"] * SIZE and d % SIZE == 0 for d in deltas), (rank, deltas)
            else:
                assert deltas == [p["batch"] * SIZE] * len(p["samples"]), (direction, rank)  # exactly a sample's
    points = [p for p in schema.load(out).points]
    for s in streams.by_point(points):
        p = next(x for x in points if x.key == s.key)
        batch_bytes = p.bytes_per_op * p.batch * len(p.samples)
        # the streams add up to the point's bandwidth: its batches' bytes over its samples' time
        assert s.sum_Bps == pytest.approx(batch_bytes / sum(x * p.batch for x in p.samples), rel=1e-9)
        assert 0 < s.fairness <= 1


def test_connection_rate_validates_and_leaves_time_wait_where_it_says(flavour, tmp_path):
    name, _ = flavour
    out = tmp_path / "c.json"
    doc = realrun.run(out, "tcp.crr", "-s", "1,4K", "-p", "close=server,reset", mpi=name,
                      after=("--per-op", "0.02"))
    counts = sockets.states()          # TIME_WAIT lasts 60 s: every launch's is still there
    pts = docs.points(doc)
    assert {(p["size"], p["info"]["close"]) for p in pts} == {(s, c) for s in (1, 4096) for c in ("server", "reset")}
    for p in pts:
        assert p["validation"] == {"checked_bytes": 2 * p["size"], "errors": 0}, p
        assert p["bytes_per_op"] == 2 * p["size"] and min(p["samples"]) > 0
        listening, connecting, _ = sockets.time_wait(counts, p["info"]["listen_port"])
        assert connecting == 0, p["info"]                  # no ephemeral port held on rank 0's side
        if p["info"]["close"] == "server":
            assert p["info"]["time_wait"] == "listener" and listening > 0, p["info"]
        else:                                              # an RST: no TIME_WAIT anywhere
            assert p["info"]["time_wait"] == "none" and listening == 0, p["info"]
    got = tails(schema.load(out).points)
    assert len(got) == 4 and all(t.estimates["p50"][0] > 0 for t in got)   # per-transaction percentiles
