"""The apps' exchange phases against the model (model/exchange.py, verdicts/exchange_prediction.py): the busiest
resource's work for explicit flows, checked by hand on the two-switch network; rank placement by host
name; a calibration that lowers the trunk's rate; and `fabriclab calibrate --bidirectional`."""
from pathlib import Path

import pytest
import yaml

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.suite import apps
from fabriclab.model.calibration import Calibration
from fabriclab.model.exchange import exchange_time
from fabriclab.model.netfile import NetworkFile
from fabriclab.schema.records import MergedPoint, Summary
from fabriclab.verdicts.exchange_prediction import rows

TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")
MB = 1e6


def test_the_trunk_carries_every_cross_flow():
    """h0 and h1 (switch s0) each send 1 MB to h4 and h5 (switch s1): 4 MB cross the 20 MB/s trunk
    one way, 2 MB leave each 60 MB/s host cable: the trunk decides, 0.2 s."""
    sys = NetworkFile(TWO)
    flows = [(a, b, 1e6) for a in (0, 1) for b in (4, 5)]
    ex = exchange_time(sys, flows)
    assert ex.seconds == pytest.approx(4e6 / (20 * MB))
    assert "trunk" in ex.bottleneck and ex.rate_Bps == pytest.approx(20 * MB) and not ex.calibrated
    # flows inside one switch: the host cables decide (2 MB out of h0 at 60 MB/s)
    local = exchange_time(sys, [(0, 1, 1e6), (0, 2, 1e6)])
    assert local.seconds == pytest.approx(2e6 / (60 * MB))
    cal = exchange_time(sys, flows, Calibration(common={"links[8]": 10 * MB}, capped=False))
    assert cal.seconds == pytest.approx(0.4) and cal.calibrated


def test_an_exchange_that_never_reaches_the_network_is_refused():
    with pytest.raises(UsageError, match="sends nothing"):
        exchange_time(NetworkFile(TWO), [(3, 3, 1e6)])
    with pytest.raises(UsageError, match="outside the network's 8 nodes"):
        exchange_time(NetworkFile(TWO), [(0, 9, 1e6)])


def _transpose(m: int, active: int, exchange_s: float) -> MergedPoint:
    return MergedPoint(bench="app.transpose", size=m, active=active, bytes_per_op=m * m * 8,
                       summary=Summary(median=2 * exchange_s), roles="b" * active,
                       phases={"pack": [0.1], "exchange": [exchange_s], "unpack": [0.1]})


def test_rows_place_ranks_by_host_and_leave_out_what_stays_on_a_host():
    """Four ranks, two per host (h0, h4): the blocks between ranks of one host stay off the network."""
    m = 1024
    sent = apps.TRANSPOSE.exchange(m, 4, {})
    cross = sum(b for (a, d), b in sent.items() if (a < 2) != (d < 2))
    pts = [_transpose(m, 4, 0.2), _transpose(m, 1, 0.1)]
    out = rows(pts, ["h0", "h0", "h4", "h4"], NetworkFile(TWO))
    assert len(out) == 1                      # one rank exchanges nothing
    r = out[0]
    assert r["network_bytes"] == pytest.approx(cross)
    assert r["predicted_s"] == pytest.approx(cross / 2 / (20 * MB))    # half each way over the trunk
    assert r["ratio"] == pytest.approx(0.2 / r["predicted_s"])
    assert r["verdict"] == ("agrees" if abs(r["ratio"] - 1) <= 0.15 else "slower" if r["ratio"] > 1 else "faster")
    assert rows(pts, ["x0", "x1", "h4", "h4"], NetworkFile(TWO)) == []   # hosts the file does not know


def test_calibrate_both_ways_from_bibw(fake_core, tmp_path):
    common = ["--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-q", "-L", "1"]
    run = tmp_path / "bibw.json"
    assert main(["run", "message.bibw", "-n", "2", "-s", "64K,1M", *common, "-o", str(run)]) == 0
    out = tmp_path / "cal.yaml"
    assert main(["calibrate", str(run), "--bidirectional", "--resource", "links[8],trunk", "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    from fabriclab import schema
    from fabriclab.model.calibration import load_file
    # Two resources share one point's figures: written out, not aliased, since the loader refuses aliases.
    assert "&" not in out.read_text() and set(load_file(str(out)).common) == {"links[8]", "trunk"}
    best = max(p["bandwidth_Bps"] for p in docs.read(run)["merged"])
    assert set(data) == {"links[8]", "trunk"}
    assert data["trunk"]["value"] == pytest.approx(best / 2 / 1e6, abs=1e-3)
    assert "loading it both ways" in data["trunk"]["source"]


@pytest.mark.parametrize("argv,msg", [
    (["--network", "/nonexistent/net.yaml"], "/nonexistent/net.yaml"),
    (["--calibration", "cal.yaml"], "--calibration applies to the network of --network or --testbed"),
])
def test_a_bad_network_ends_the_run_before_it_starts(fake_core, tmp_path, capsys, argv, msg):
    out = tmp_path / "r.json"
    assert main(["run", "app.transpose", "-s", "64", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"],
                 *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err
    assert not out.exists()


def test_a_pairwise_exchange_is_predicted_step_by_step():
    """exchange=pairwise: step k sends from rank r to r + k; each step's flows at once, the steps in turn.
    With one rank on each of h0, h1, h4, h5, steps 1 and 3 cross the trunk once each way, step 2 twice."""
    m, hosts = 1024, ["h0", "h1", "h4", "h5"]
    sys = NetworkFile(TWO)
    block = (m // 4) ** 2 * 8
    p = _transpose(m, 4, 0.2)
    p.params = {"exchange": "pairwise"}
    (row,) = rows([p], hosts, sys)
    nodes = [0, 1, 4, 5]
    steps = [exchange_time(sys, [(nodes[r], nodes[(r + k) % 4], block) for r in range(4)]).seconds
             for k in (1, 2, 3)]
    assert row["predicted_s"] == pytest.approx(sum(steps)) and row["steps"] == 3
    assert steps[1] == pytest.approx(2 * block / (20 * MB))           # two flows each way on the trunk
    assert steps[0] == pytest.approx(block / (20 * MB)) == pytest.approx(steps[2])
    p.params = {"exchange": "concurrent"}
    (together,) = rows([p], hosts, sys)
    assert together["predicted_s"] == pytest.approx(4 * block / (20 * MB)) and together["steps"] == 1
    assert "pairwise steps" in row["schedule"] and together["schedule"] == "every flow at once"
    assert "barrier between steps" in row["schedule"]
    p.params = {"exchange": "pairwise", "sync": "none"}
    (free,) = rows([p], hosts, sys)      # the same lockstep sum, named as what it is without the barrier
    assert free["predicted_s"] == pytest.approx(row["predicted_s"]) and "without a barrier" in free["schedule"]


def test_mpich_s_alltoall_of_large_blocks_is_predicted_as_its_xor_steps():
    """MPICH's MPI_Alltoall runs blocks above 32 KiB as pairwise steps, partner rank XOR k at a
    power-of-two rank count; other libraries' collectives, small blocks and the sort's Alltoallv stay
    every flow at once."""
    m, hosts = 1024, ["h0", "h1", "h4", "h5"]
    sys = NetworkFile(TWO)
    block = (m // 4) ** 2 * 8
    p = _transpose(m, 4, 0.2)
    (row,) = rows([p], hosts, sys, flavour="mpich")
    nodes = [0, 1, 4, 5]
    steps = [exchange_time(sys, [(nodes[r], nodes[r ^ k], block) for r in range(4)]).seconds for k in (1, 2, 3)]
    assert row["steps"] == 3 and row["predicted_s"] == pytest.approx(sum(steps)) and "XOR" in row["schedule"]
    # XOR steps 2 and 3 both cross the trunk with both pairs: 2 + 2 flows each way, step 1 none
    assert steps[0] == 0 or steps[0] < steps[1]
    (other,) = rows([p], hosts, sys, flavour="openmpi")
    assert other["steps"] == 1 and other["schedule"].startswith("the library's collective")
    small = _transpose(64, 4, 0.2)                                   # 8 KiB blocks: not the pairwise range
    (row,) = rows([small], hosts, sys, flavour="mpich")
    assert row["steps"] == 1
