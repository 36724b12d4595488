"""app.transpose on real ranks: every mode at 1, 2 and 4 ranks with --validate under MPICH and
Open MPI, array sides that do not divide by the rank count, both deposits, the phases and the bytes
each rank sends against the block arithmetic of suite/apps.py, and the refusals of bad input.

A missing MPI is a failure here, never a skip."""
import statistics
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.suite import apps
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration


def _run(out: Path, *argv: str, mpi: str = "mpich") -> dict:
    return realrun.run(out, "app.transpose", *argv, mpi=mpi)


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_every_mode_transposes_every_element(flavour, ranks, tmp_path):
    doc = _run(tmp_path / "t.json", "-n", str(ranks), "-s", "8,37,128", "-p", "mode=packed,datatype,deposit",
               mpi=flavour[0])
    pts = docs.points(doc)
    actives = apps_actives(ranks)
    assert {(p["params"].get("mode", "packed"), p["size"], p["active"]) for p in pts} == {
        (m, s, a) for m in ("packed", "datatype", "deposit") for s in (8, 37, 128) for a in actives}
    for p in pts:
        m, n = p["size"], p["active"]
        assert p["validation"] == {"checked_bytes": m * m * 8, "errors": 0}, p
        assert p["bytes_per_op"] == m * m * 8
        sent = apps.transpose_sent(m, n) + [0] * (ranks - n)
        assert p["rank_sent_bytes"] == sent and p["rank_recv_bytes"] == sent
        assert p["roles"] == "b" * n + "i" * (ranks - n)
        names = ["pack", "exchange", "unpack"] if p["info"]["mode"] == "packed" else ["exchange"]
        assert list(p["phases"]) == names and all(len(v) == len(p["samples"]) for v in p["phases"].values())
        # the phases are the op, split: their sum is the mean rank's op time, at most the slowest rank's
        # (how near is a timing, left to bench/: ranks on shared cores wait for each other)
        total = statistics.median(sum(x) for x in zip(*p["phases"].values()))
        assert 0 < total <= statistics.median(p["samples"]) * 1.5, p
    exchanges = {p["info"]["exchange"] for p in pts}
    assert {"MPI_Alltoallw", "stores"} <= exchanges
    assert ("MPI_Alltoallv" in exchanges) == (ranks > 1)        # 37 rows over 2 or 4 ranks: uneven blocks


def apps_actives(ranks: int) -> list[int]:
    return {1: [1], 2: [1, 2], 4: [1, 2, 4]}[ranks]


def test_the_deposit_by_put_moves_the_same_array(tmp_path):
    doc = _run(tmp_path / "p.json", "-n", "3", "-s", "50", "-p", "mode=deposit", "-p", "deposit=put")
    pts = docs.points(doc)
    assert {p["active"] for p in pts} == {1, 2, 3}
    assert all(p["info"]["exchange"] == "MPI_Put" and p["validation"]["errors"] == 0 for p in pts)


@pytest.mark.parametrize("argv,msg", [
    (["-n", "4", "-s", "3"], "divides array side M 3 over 4 ranks"),
    (["-n", "2", "-s", "64", "-p", "mode=fold"], "mode must be one of packed, datatype, deposit"),
    (["-n", "2", "-s", "300K"], "needs about"),
])
def test_bad_input_is_one_line_and_nothing_launched(argv, msg, tmp_path, capsys):
    out = tmp_path / "bad.json"
    assert main(["run", "app.transpose", *argv, "-o", str(out), *FAST]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err
    assert not out.exists() and not out.with_suffix(".ndjson").exists()


def test_the_exchange_schedules_move_the_same_blocks(tmp_path):
    """The packed transpose and the sort exchanging every message at once and in pairwise steps, on
    3 ranks (uneven blocks): every element checked, the schedule recorded."""
    pts = docs.points(realrun.run(tmp_path / "s.json", "app.transpose", "app.sort", "-n", "3", "-s", "37,1001",
                                  "--active", "3", "-p", "exchange=concurrent,pairwise"))
    assert {(p["bench"], p["params"]["exchange"]) for p in pts} == {
        (b, e) for b in ("app.transpose", "app.sort") for e in ("concurrent", "pairwise")}
    assert all(p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0 for p in pts)
    names = {p["params"]["exchange"]: p["info"]["exchange"] for p in pts}
    assert names == {"concurrent": "Isend/Irecv to every rank at once",
                     "pairwise": "pairwise MPI_Sendrecv steps, a barrier between steps"}
    # sync=none: the same steps without the barrier, the same blocks moved
    pts = docs.points(realrun.run(tmp_path / "free.json", "app.transpose", "app.sort", "-n", "3", "-s", "37,1001",
                                  "--active", "3", "-p", "exchange=pairwise", "-p", "sync=none"))
    assert len(pts) == 4 and all(p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0 for p in pts)
    assert {p["info"]["exchange"] for p in pts} == {"pairwise MPI_Sendrecv steps, no barrier"}


def test_force_overrides_the_memory_estimate_not_the_limits_of_an_int(tmp_path):
    """A side of 2^32 words: --force lets the point past the memory check, and the core skips it
    with the reason (its row count times the side would overflow 64 bits, let alone an MPI count)."""
    doc = _run(tmp_path / "big.json", "-s", "4G", "--force")
    assert doc["footer"]["status"] == "complete" and not docs.points(doc)
    reasons = {r["reason"] for r in doc["records"] if r["kind"] == "skip"}
    assert reasons and all(r.startswith("one rank's rows: ") and r.endswith("exceed an MPI int count")
                           for r in reasons), reasons
