"""Atomics and the message rate over several endpoints below MPI on real ranks,
validated, under MPICH and Open MPI: fabric.atomic and fabric.msg_rate on
libfabric's providers (shm offers FI_ATOMIC here, tcp does not: its atomic
points are skipped with the reason), ucx.atomic and ucx.msg_rate on UCX's
default transports and on tcp. Every atomic checks the word's final value
and every fetched value; every message lands in its slot.

A missing MPI or library is a failure here, never a skip."""
import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration

# (MPI, level): one run each, at 8 bytes, the op and endpoint count that run takes.
RUNS = {("mpich", "fabric"): ["fabric.atomic", "fabric.msg_rate", "-p", "op=cswap", "-p", "endpoints=4",
                              "-p", "provider=shm,tcp"],
        # the word UCP allocates (shared memory: the CPU's atomics) and the program's (emulated);
        # the clock around the measure call and after every op, and the target that reads the
        # word as ucx_perftest's responder does (ucx_atomic.c)
        ("mpich", "ucx"): ["ucx.atomic", "ucx.msg_rate", "-p", "op=cswap", "-p", "endpoints=4",
                           "-p", "memory=ucx,program", "-p", "clock=loop,per-op", "-p", "target=progress,perftest"],
        ("openmpi", "fabric"): ["fabric.atomic", "fabric.msg_rate", "-p", "op=fetch_add", "-p", "endpoints=2"],
        ("openmpi", "ucx"): ["ucx.atomic", "ucx.msg_rate", "-p", "op=fadd", "-p", "endpoints=2", "-p", "tls=tcp"]}


@pytest.mark.parametrize("mpi,level", sorted(RUNS))
def test_atomics_and_rates_validate(mpi, level, tmp_path):
    doc = realrun.run(tmp_path / "r.json", *RUNS[mpi, level], "-s", "8", mpi=mpi)
    pts = docs.points(doc)
    skips = [r for r in doc["records"] if r["kind"] == "skip"]
    assert pts and all(p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0 for p in pts)
    atomics = [p for p in pts if p["bench"] == f"{level}.atomic"]
    rates = [p for p in pts if p["bench"] == f"{level}.msg_rate"]
    assert atomics and rates, skips
    op = next(a.split("=")[1] for a in RUNS[mpi, level] if a.startswith("op="))
    call = ({"cswap": "fi_compare_atomic", "fetch_add": "fi_fetch_atomic"}[op] if level == "fabric"
            else f"ucp_atomic_op_nbx {op}")
    for p in atomics:
        assert p["params"]["op"] == op and p["bytes_per_op"] == 8 and p["info"]["op"] == call
        assert p["validation"]["checked_bytes"] == 33 * 8      # 32 fetched values and the word
    q = int(next(a.split("=")[1] for a in RUNS[mpi, level] if a.startswith("endpoints=")))
    for p in rates:
        assert p["info"]["endpoints"] == q and p["info"]["messages_per_op"] == 1
        assert p["message_rate_per_s"] == pytest.approx(1 / p["summary"]["median"])
        assert p["bandwidth_Bps"] == pytest.approx(8 * p["message_rate_per_s"])
        # one window, Q x W messages of 8 bytes, each slot checked
        assert p["validation"]["checked_bytes"] == q * 64 * 8
    if level == "fabric" and mpi == "mpich":
        assert {p["params"]["provider"] for p in atomics} == {"shm"}
        assert {p["params"]["provider"] for p in rates} == {"shm", "tcp"}
        assert [(r["bench"], r["reason"]) for r in skips] == [
            ("fabric.atomic", "provider tcp lacks FI_ATOMIC on rdm endpoints")]
    else:
        assert not skips
    if (mpi, level) == ("mpich", "ucx"):
        assert sorted((p["info"]["memory"], p["info"]["clock"], p["info"]["target"]) for p in atomics) == [
            (m, c, t) for m in ("program", "ucx") for c in ("loop", "per-op") for t in ("perftest", "progress")]
