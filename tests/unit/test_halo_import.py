"""`fabriclab import` of OSU's neighbourhood collectives and IMB-P2P's stencils (imports/halo.py):
real output of osu_neighbor_allgather, osu_neighbor_alltoall -f, osu_ineighbor_alltoallw and
IMB-P2P Stencil2D on 4 ranks (OSU 7.4 and IMB 2021.11 built with MPICH 5), as fabriclab's ops."""
import pytest

from fabriclab.cli import main
from fabriclab import schema
from fabriclab.imports import imb, osu

OSU = """Dimensions size = 4 
Time took to create topology graph:830.35 us.

# OSU MPI Neighborhood Allgather Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                    6514.66
1024                 8799.86
Dimensions size = 2 2 
Time took to create topology graph:4163.96 us.

# OSU MPI Neighborhood Alltoall Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
1                    8499.07           5579.01          16549.34          10
2                    7807.96           3033.94          14825.46          10
Dimensions size = 4 
Time took to create topology graph:4202.15 us.

# OSU MPI Non-blocking Neighborhood Alltoallw Latency Test v7.4
# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait

# Datatype: MPI_CHAR.
# Size           Overall(us)       Compute(us)    Coll. Init(us)      MPI_Test(us)      MPI_Wait(us)    Pure Comm.(us)     Min Comm.(us)     Max Comm.(us)        Overlap(%)
1                   20476.49          18465.98             17.69              0.00           1992.19           8870.72           7004.02          13652.88             77.34
Time took to create topology graph:19.10 us.

# OSU MPI Neighborhood Allgatherv Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
8                    100.00
"""

IMB = """#------------------------------------------------------------
#    Intel(R) MPI Benchmarks 2021.11, IMB-P2P part
#------------------------------------------------------------
# MPI Version           : 5.0
#----------------------------------------------------------------
# Benchmarking Stencil2D (2 x 2)
# #processes = 4
#----------------------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec      Msg/sec
            1          200       351.74         0.01        11178
         4096          200       498.82        32.77         8000
"""


def test_osu_neighbourhood_tests_become_fabriclabs_ops():
    p = osu.parse(OSU, nranks=4)
    by = {(f.bench, f.size): f for f in p.figures}
    # osu_neighbor_allgather, 1-D (OSU's default): 2 neighbours, Avg Latency the op's time
    f = by[("coll.neighbor_allgather", 1024)]
    assert f.variant == "" and f.median_s == pytest.approx(8799.86e-6) and f.bytes_per_op == 4 * 2 * 1024
    assert f.messages == 8 and f.concurrent
    # -f prints Max Latency: the slowest process, as fabriclab's op; a 2 x 2 grid is dim=2 (8 neighbours
    # at radius 1, OSU's default radius, which it does not print)
    g = by[("coll.neighbor_alltoall", 2)]
    assert g.variant == "dim=2" and g.column == "Max Latency(us)" and g.median_s == pytest.approx(14825.46e-6)
    assert g.bytes_per_op == 4 * 8 * 2
    # the non-blocking test's Pure Comm.: post and wait, no compute between (form=nonblocking)
    w = by[("coll.neighbor_alltoallw", 1)]
    assert w.variant == "form=nonblocking" and w.median_s == pytest.approx(8870.72e-6)
    # a graph neighbourhood prints no grid: its degrees are unknown, the row a skip
    assert p.skips == [("coll.neighbor_allgatherv", 8, "osu_neighbor_allgatherv on a graph file: OSU prints no "
                                                       "degrees")]


def test_imb_p2p_stencil_rows_keep_imbs_figures():
    p = imb.parse(IMB)
    f = {x.size: x for x in p.figures}[4096]
    # 4 ranks x 4 neighbours = 16 messages an op; Msg/sec is all messages over the slowest time
    assert f.bench == "message.stencil2d" and f.nprocs == 4 and f.messages == 16
    assert f.median_s == pytest.approx(16 / 8000) and f.bytes_per_op == 16 * 4096
    # so the op's bandwidth is IMB's Mbytes/sec (10^6 B/s in imb_p2p_stencil2d.c) again
    assert f.bytes_per_op / f.median_s / 1e6 == pytest.approx(32.77, rel=1e-3)


def test_imported_points_read_as_a_run_of_the_same_benchmarks(tmp_path):
    src, out = tmp_path / "imb.txt", tmp_path / "imb.json"
    src.write_text(IMB)
    assert main(["import", str(src), "--from", "imb", "-o", str(out)]) == 0
    pts = schema.load(out).points
    assert {p.bench for p in pts} == {"message.stencil2d"} and all(p.roles == "bbbb" for p in pts)
    big = next(p for p in pts if p.size == 4096)
    assert big.rank_sent_bytes == [4 * 4096] * 4 and big.message_rate_per_s == pytest.approx(8000)
