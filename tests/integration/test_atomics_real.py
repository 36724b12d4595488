"""The atomics of the deposit level on two real ranks, under MPICH and Open MPI:
every test in every one of OSU's sync modes, and IMB's aggregate mode, each
point validated (the target's final value and every value fetched, known from
the number of ops), timed by the origin alone, and each rank holding what the
footprint declares."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.suite import atomics
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
import realrun  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
NAMES = ("deposit.fop", "deposit.cas", "deposit.acc", "deposit.get_acc")
FAST = ("--point-time", "0.02", "--min-samples", "3")


def _check(p):
    assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] >= p["size"], p
    both = p["params"]["sync"] in atomics.BOTH_WAYS
    assert p["info"]["ops_per_round"] == (2 if both else 1) and p["batch"] % (2 if both else 1) == 0
    at = At(p["size"], p["buffers"], params=p["params"])
    for role, got in zip("sr", p["rank_alloc_bytes"]):
        declared = REGISTRY[p["bench"]].footprint.allocated(role, at)
        assert abs(declared - got) <= 0.15 * got, (p["bench"], role, declared, got)


def test_every_sync_mode_of_every_test_validates(flavour, tmp_path):
    name, _ = flavour
    doc = realrun.run(tmp_path / "r.json", *NAMES, "-s", "8", "-p", f"sync={','.join(atomics.SYNCS)}", mpi=name,
                      after=FAST)
    pts = docs.points(doc)
    assert {(p["bench"], p["params"]["sync"]) for p in pts} == {(b, s) for b in NAMES for s in atomics.SYNCS}
    for p in pts:
        _check(p)
        lock = p["info"]["lock"]   # each test's own lock type, from OSU's sources
        if p["params"]["sync"] == "lock":
            assert lock == ("shared" if p["bench"] == "deposit.acc" else "exclusive"), p["bench"]


def test_osus_clock_read_around_every_op_leaves_every_value_right(flavour, tmp_path):
    """clock=per-op reads the clock around each op (a round under fence) as OSU's
    loops do; the ops, their count and the final values stay what they were."""
    name, _ = flavour
    doc = realrun.run(tmp_path / "c.json", "deposit.fop", "deposit.acc", "-s", "8", "-p", "sync=flush,fence",
                      "-p", "clock=per-op", mpi=name, after=FAST)
    pts = docs.points(doc)
    assert {(p["bench"], p["params"]["sync"], p["params"]["clock"]) for p in pts} == {
        (b, s, "per-op") for b in ("deposit.fop", "deposit.acc") for s in ("flush", "fence")}
    for p in pts:
        _check(p)


def test_imbs_aggregate_mode_flushes_once_per_n_ops(flavour, tmp_path):
    name, _ = flavour
    doc = realrun.run(tmp_path / "a.json", *NAMES, "-s", "8", "-p", "sync=flush", "-p", "mode=aggregate",
                      "-p", "ops_per_flush=64", mpi=name, after=FAST)
    pts = docs.points(doc)
    assert {p["bench"] for p in pts} == set(NAMES)
    for p in pts:
        _check(p)
        assert p["info"]["ops_per_flush"] == 64 and p["batch"] % 64 == 0
        # every op of the flush fetched its own value: the target's n, and each op's fetch, checked
        fetched = 64 if atomics.ATOMICS[p["bench"]].fetches else 0
        assert p["validation"]["checked_bytes"] == 8 * (1 + fetched), p
