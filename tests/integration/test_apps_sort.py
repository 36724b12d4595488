"""app.sort on real ranks under MPICH and Open MPI: 1, 2 and 4 ranks with
--validate, every element size, key counts that do not divide by the rank
count, strong and weak scaling, the bytes each rank sends against the
problem's own arithmetic (suite/apps.py), the phases of every sample, and
the bad input refused before anything is launched.

A missing MPI is a failure here, never a skip: `make test` installs both."""
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
import realrun  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.suite import apps
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
PHASES = ["bucket", "exchange", "sort"]
KEYS = 10007   # prime: no rank count divides it
SEED = 1


def _run(out: Path, mpi: str, *argv: str) -> list[dict]:
    return docs.points(realrun.run(out, "app.sort", *argv, mpi=mpi))


def _check(p: dict, keys: int) -> None:
    """Sorted and the same multiset, every element checked; the exchange is the keys' own."""
    e, n = int(p["params"]["elem"]), p["active"]
    assert p["info"] == {"keys": keys, "elem": e, "key_bytes": 4 if e == 4 else 8,
                         "scale": p["params"]["scale"], "seed": SEED, "exchange": "MPI_Alltoallv"}, p["info"]
    assert p["validation"] == {"errors": 0, "checked_bytes": keys * e}, p["validation"]
    assert p["bytes_per_op"] == keys * e and all(0 < s < 10 for s in p["samples"])
    assert list(p["phases"]) == PHASES
    assert all(len(v) == len(p["samples"]) and all(x >= 0 for x in v) for v in p["phases"].values())
    counts = apps.sort_counts(keys, n, SEED)
    sent = [(sum(row) - row[a]) * e for a, row in enumerate(counts)]
    recv = [(sum(col) - col[b]) * e for b, col in enumerate(zip(*counts))]
    idle = [0] * (len(p["rank_sent_bytes"]) - n)
    assert p["rank_sent_bytes"] == sent + idle and p["rank_recv_bytes"] == recv + idle
    pairs = apps.sort_pairs(p["size"], n, p["params"])
    for a in range(n):   # within 5 standard deviations of the uniform expectation
        want = sum(v for (x, _), v in pairs.items() if x == a)
        assert abs(sent[a] - want) <= 5 * e * (want / e) ** 0.5 + e, (a, sent[a], want)


@pytest.mark.parametrize("nranks", [1, 2, 4])
def test_every_element_size_sorts_and_validates(flavour, nranks, tmp_path):
    pts = _run(tmp_path / "s.json", flavour[0], "-n", str(nranks), "-s", str(KEYS),
               "-p", "elem=4,8,16,32,64")
    actives = [1, 2, 4][:[1, 2, 4].index(nranks) + 1]
    assert sorted((p["active"], int(p["params"]["elem"])) for p in pts) == \
        sorted((a, e) for a in actives for e in apps.ELEMENT_SIZES)
    for p in pts:
        _check(p, KEYS)


def test_weak_scaling_keeps_the_keys_per_rank(flavour, tmp_path):
    pts = _run(tmp_path / "w.json", flavour[0], "-n", "4", "-s", "2503", "-p", "scale=weak",
               "-p", "elem=4,16")
    assert sorted((p["active"], p["info"]["keys"]) for p in pts) == \
        sorted([(1, 2503), (2, 5006), (4, 10012)] * 2)
    for p in pts:
        _check(p, 2503 * p["active"])


def test_more_keys_than_one_cache_and_another_seed(tmp_path):
    """Past the cache the local sort splits on the highest digit first (app_sort.c, radix_e)."""
    pts = _run(tmp_path / "b.json", "mpich", "-n", "2", "-s", "200003", "-p", "elem=8,64",
               "-p", "seed=99", "--active", "2")
    assert len(pts) == 2
    for p in pts:
        e = int(p["params"]["elem"])
        assert p["info"]["seed"] == 99 and p["validation"] == {"errors": 0, "checked_bytes": 200003 * e}


@pytest.mark.parametrize("argv,msg", [
    (["-p", "elem=12"], "app.sort: parameter elem must be one of 8, 4, 16, 32, 64, not '12'"),
    (["-n", "4", "-s", "3"], "app.sort divides key count 3 over 4 ranks: each rank needs at least one key"),
])
def test_bad_input_is_one_line_and_nothing_runs(argv, msg, tmp_path, capsys):
    out = tmp_path / "bad.json"
    assert main(["run", "app.sort", *argv, "--mpi-home", mpi_home("mpich"), "-q", "-o", str(out), *FAST]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fabriclab: error: ") and msg in err[0], err
    assert not out.exists() and not out.with_suffix(".ndjson").exists()


def test_force_overrides_the_memory_estimate_not_the_limits_of_an_int(tmp_path):
    """16 Gi keys on one rank: --force lets the point past the memory check, and the core skips it
    with the reason (an MPI int count), freeing only what it made (no datatype it never created)."""
    doc = realrun.run(tmp_path / "big.json", "app.sort", "-s", "16G", "--force", "--active", "1")
    assert doc["footer"]["status"] == "complete" and not docs.points(doc)
    reasons = {r["reason"] for r in doc["records"] if r["kind"] == "skip"}
    assert reasons == {"app.sort keys per rank: 17179869184 items exceed an MPI int count"}, reasons
