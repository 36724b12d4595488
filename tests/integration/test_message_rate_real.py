"""The message-rate benchmarks on real ranks, under MPICH and Open MPI: every
pair of four ranks at once, validated, each sample reduced by its anchor's
rule (osu_mbw_mr: the mean of the senders' own times, the receivers timing
nothing; IMB Uniband and Biband: the slowest rank's), and each rank holding
what its footprint declares."""
import statistics

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
import realrun  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
RATE = ("message.mbw_mr", "message.uniband", "message.biband")


def test_every_pair_validates_and_samples_follow_each_rule(flavour, tmp_path):
    name, _ = flavour
    doc = realrun.run(tmp_path / "r.json", *RATE, "-n", "4", "-s", "8,64K", "-p", "window=1,64", mpi=name)
    pts = docs.points(doc)
    assert {(p["bench"], p["params"]["window"]) for p in pts} == {(b, w) for b in RATE for w in ("1", "64")}
    for p in pts:
        assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0, p
        both = p["bench"] == "message.biband"
        assert p["roles"] == ("bbbb" if both else "ssrr") and p["messages_per_op"] == (4 if both else 2)
        assert p["bytes_per_op"] == p["messages_per_op"] * p["size"] and p["message_rate_per_s"] > 0
        per = p["rank_samples"]
        for i, x in enumerate(p["samples"]):
            if p["bench"] == "message.mbw_mr":     # the senders' mean; receivers time nothing
                assert per[2] is None and per[3] is None, p
                assert x == pytest.approx(statistics.fmean([per[0][i], per[1][i]]), rel=1e-9)
            else:                                 # the slowest of every rank
                assert x == pytest.approx(max(r[i] for r in per), rel=1e-9)
        at = At(p["size"], p["buffers"], nranks=4, params=p["params"])
        for role, got in zip(p["roles"], p["rank_alloc_bytes"]):
            declared = REGISTRY[p["bench"]].footprint.allocated(role, at)
            assert abs(declared - got) <= 0.15 * got, (p["bench"], role, declared, got)
