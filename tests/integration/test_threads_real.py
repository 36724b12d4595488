"""Threads per rank under real MPIs (docs/threads.md): the core asks MPI_Init_thread for
MPI_THREAD_MULTIPLE for osu_latency_mt's and IMB-MT's rules alone, both PyPI MPIs grant it, and
every thread's bytes arrive whole, with several senders and receivers (tags per round trip) and
with one sender and two receivers (OSU's fixed tags and defaults; one receiver under Open MPI,
which can stall with two); a benchmark without threads keeps MPI_Init's level."""
import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)


def _levels(doc: dict) -> dict:
    """bench -> the thread level each of its launches' hello recorded (one per bench here)."""
    return {r["bench"]: r["hello"]["thread_level"] for r in doc["records"] if r["kind"] == "launch"}


def test_threaded_benchmarks_get_thread_multiple_and_move_every_byte(flavour, tmp_path):
    name, _ = flavour
    # Open MPI 5.0.11 can stall for good with two receiver threads in MPI_Recv at once (a missed
    # wake-up in ompi_sync_wait_mt, docs/threads.md): under it one receiver thread per rank
    receivers = "2" if name == "mpich" else "1"
    doc = realrun.run(tmp_path / "mt.json", "message.latency_mt", "message.mt_biband", "message.pingpong",
                      "-s", "8,70000", "-p", "senders=1,3", "-p", f"receivers={receivers}", "-p", "threads=2",
                      "-p", "clock=per-op,osu", "-p", "window=8", mpi=name)
    multiple = {"required": "MULTIPLE", "provided": "MULTIPLE"}
    assert _levels(doc) == {"message.latency_mt": multiple, "message.mt_biband": multiple,
                            "message.pingpong": {"required": "SINGLE", "provided": "SINGLE"}}
    assert doc["header"]["mpi"]["thread_level"] in (multiple, {"required": "SINGLE", "provided": "SINGLE"})
    pts = docs.points(doc)
    by = {(p["bench"], p["variant"], p["size"]): p for p in pts}

    def mt(*parts):   # a latency_mt variant: its params, and receivers where not the default 2
        return ",".join(sorted(parts + (() if receivers == "2" else (f"receivers={receivers}",))))
    assert {(b, v) for b, v, _ in by} == {("message.latency_mt", mt("clock=per-op")),
                                          ("message.latency_mt", mt("clock=per-op", "senders=3")),
                                          ("message.latency_mt", mt("clock=osu")),
                                          ("message.latency_mt", mt("clock=osu", "senders=3")),
                                          ("message.mt_biband", "window=8"), ("message.pingpong", "")}
    for p in pts:
        assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0, p["bench"]
        assert all(s > 0 for s in p["samples"])
    # three senders: a round trip per sender thread per op, both ways
    three = by["message.latency_mt", mt("clock=per-op", "senders=3"), 70000]
    assert three["bytes_per_op"] == 2 * 3 * 70000 and three["info"]["tags"] == "per-round-trip"
    assert by["message.latency_mt", mt("clock=per-op"), 8]["info"]["tags"] == "fixed"
    # IMB-MT biband: two threads each send and receive one message per op
    assert by["message.mt_biband", "window=8", 70000]["bytes_per_op"] == 2 * 2 * 70000
