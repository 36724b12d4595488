"""HPC Challenge's network figures on real ranks (families/message_ring.c, analysis/hpcc.py):
`fabriclab run hpcc` on 4 ranks under both MPIs, every ping-pong pair and both ring methods on
the natural and a random ring, every message checked, and HPCC's table printed."""
import pytest

from fabriclab import schema
from fabriclab.analysis import hpcc
from fabriclab.cli import main
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("mpi", ["mpich", "openmpi"])
def test_run_hpcc_on_four_ranks(mpi, tmp_path, capsys):
    out = tmp_path / "h.json"
    assert main(["run", "hpcc", "-n", "4", "-s", "8,64K", "-p", "seed=3", "--validate",
                 "--mpi-home", mpi_home(mpi), "-o", str(out), *FAST, "--point-time", "0.01"]) == 0
    doc = schema.load(out)
    assert doc.footer.status == "complete"
    pp = [p for p in doc.points if p.bench == hpcc.PINGPONG]
    rings = [p for p in doc.points if p.bench == hpcc.RING]
    assert sorted({p.active for p in pp}) == list(range(1, 13)) and len(pp) == 24
    assert len(rings) == 2 * 2 * 2                  # sizes x methods x (natural, a random ring)
    for p in pp + rings:
        assert p.validation["errors"] == 0 and p.validation["checked_bytes"] > 0
        assert p.samples and min(p.samples) > 0
    for p in rings:   # every rank sends SIZE each way an op; the layout one ring through all four
        assert p.rank_sent_bytes == [2 * p.size] * 4 and p.roles == "bbbb"
        assert p.info["method"] == p.params["method"]
    f = hpcc.figures(doc.points)
    assert f.pairs == 12 and f.rings == 1 and f.bandwidth_bytes == 64 << 10
    assert f.min_pingpong_latency_s <= f.avg_pingpong_latency_s <= f.max_pingpong_latency_s
    assert all(x > 0 for x in f.summary().values()) and len(f.summary()) == 10
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "HPCC network figures (4 ranks" in printed and "RandomlyOrderedRingLatency_usec" in printed
