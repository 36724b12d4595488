"""Halo exchanges and neighbourhoods (suite/halo.py): IMB-P2P's grids and
neighbours, OSU's Cartesian neighbourhoods, the graph file reader, the bytes
a point reports, and bad input (a radius larger than the grid, a dimension
the ranks cannot fill, a graph file that is not one) ending in one line and
exit 2 before anything launches."""
import pytest

from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.suite import footprint as fp, halo
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint_mpi import HALO_2D, NEIGHBOR_ALLTOALL, NEIGHBOR_GATHER


# IMB-P2P's loops (imb_p2p_stencil2d.c, imb_p2p_stencil3d.c) worked by hand: 2-D grows 2x2 to
# 3x3 and shrinks Y to a divisor; 3-D shrinks Z to a divisor, then fits X x Y in the rest.
@pytest.mark.parametrize("n,dims,grid", [(4, 2, (2, 2)), (6, 2, (2, 3)), (8, 2, (4, 2)), (9, 2, (3, 3)),
                                         (12, 2, (3, 4)), (5, 2, None), (7, 2, None), (3, 2, None),
                                         (8, 3, (2, 2, 2)), (12, 3, (2, 3, 2)), (16, 3, (4, 2, 2)),
                                         (4, 3, None), (9, 3, None)])
def test_imb_grids(n, dims, grid):
    assert halo.imb_grid(n, dims) == grid


def test_imb_neighbours_in_imbs_order():
    # x-1, x+1, y-1, y+1: rank 2 of a 2 x 3 grid sits at x=0, y=1
    assert halo.imb_neighbours(2, (2, 3)) == [3, 3, 0, 4]
    # a 2-wide side names one rank twice, as IMB's Stencil2D on 4 ranks does
    assert halo.imb_neighbours(0, (2, 2)) == [1, 1, 2, 2]
    assert halo.imb_neighbours(7, (2, 2, 2)) == [6, 6, 5, 5, 3, 3]
    assert halo.imb_neighbours(5, (3, 3)) == [4, 3, 2, 8]


# MPICH 5's MPI_Dims_create: among the largest sides as small as can be, the smallest sum of squares
@pytest.mark.parametrize("n,d,dims", [(12, 2, [4, 3]), (12, 3, [3, 2, 2]), (4, 3, [2, 2, 1]), (16, 2, [4, 4]),
                                      (7, 2, [7, 1]), (8, 1, [8]), (20, 4, [5, 2, 2, 1]), (72, 2, [9, 8]),
                                      (99, 4, [11, 3, 3, 1])])
def test_dims_create(n, d, dims):
    assert halo.dims_create(n, d) == dims


def test_osus_cartesian_neighbours():
    # OSU's order: displacements -r..r, the last dimension fastest, the rank itself left out
    assert halo.cart_neighbours(0, 4, 1, 1) == [3, 1]
    assert halo.cart_neighbours(4, 9, 2, 1) == [0, 1, 2, 3, 5, 6, 7, 8]
    assert halo.cart_neighbours(0, 9, 2, 1) == [8, 6, 7, 2, 1, 5, 3, 4]
    assert len(halo.cart_neighbours(12, 25, 2, 2)) == (2 * 2 + 1) ** 2 - 1


def test_graph_files_read_both_forms_and_comments(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("# a ring and a chord\n0 1\n1,2\n\n  2\t3\n3 , 0\n0 2\n")
    g = halo.read_graph(str(f))
    assert g.edges == ((0, 1), (1, 2), (2, 3), (3, 0), (0, 2)) and g.ranks == 4
    assert g.destinations(0) == [1, 2] and g.sources(0) == [3] and g.sources(2) == [1, 0]


@pytest.mark.parametrize("text,says", [("0 1\nzero one\n", "line 2 is not an edge"), ("# none\n\n", "no edges"),
                                       ("0 1 2\n", "line 1 is not an edge"), ("-1 0\n", "line 1 is not an edge")])
def test_a_graph_file_that_is_not_one_is_refused(tmp_path, text, says):
    f = tmp_path / "g.txt"
    f.write_text(text)
    with pytest.raises(UsageError, match=says):
        halo.read_graph(str(f))


def test_the_rules():
    with pytest.raises(UsageError, match="radius 2 is larger than the grid"):
        halo.check_neighbourhood("coll.neighbor_allgather", [8], {"neighborhood": "cart", "dim": "1", "radius": "2"}, 4)
    with pytest.raises(UsageError, match="4 ranks cannot fill 3 dimensions"):
        halo.check_neighbourhood("coll.neighbor_allgather", [8], {"neighborhood": "cart", "dim": "3", "radius": "1"}, 4)
    # 2-D at radius 1 needs sides of 3: 9 ranks have them, 4 do not (OSU's own refusal)
    halo.check_neighbourhood("x", [8], {"neighborhood": "cart", "dim": "2", "radius": "1"}, 9)
    with pytest.raises(UsageError, match="radius 1 is larger"):
        halo.check_neighbourhood("x", [8], {"neighborhood": "cart", "dim": "2", "radius": "1"}, 4)
    # the advice is one that fits: 4 ranks fill no 2-D grid at radius 1 (sides of 3), so dim <= 1
    # and the rank count named fits: MPI_Dims_create's sides decide, 10 ranks in 2-D are 5 x 2
    for dim, radius, ranks, advice in (("3", "1", 4, "give dim <= 1 or 27 ranks (3 x 3 x 3)"),
                                       ("2", "1", 4, "give dim <= 1 or 9 ranks (3 x 3)"),
                                       ("3", "1", 8, "give dim <= 1 or 27 ranks (3 x 3 x 3)"),
                                       ("3", "1", 18, "give dim <= 2 or 27 ranks (3 x 3 x 3)"),
                                       ("2", "1", 10, "give dim <= 1 or 12 ranks (4 x 3)"),
                                       ("2", "1", 13, "give dim <= 1 or 15 ranks (5 x 3)"),
                                       ("1", "3", 5, "give 7 ranks (7) or a smaller radius")):
        with pytest.raises(UsageError) as e:
            halo.check_neighbourhood("x", [8], {"neighborhood": "cart", "dim": dim, "radius": radius}, ranks)
        assert str(e.value).endswith(advice), str(e.value)
        fits = int(advice.split(" ranks")[0].split()[-1])
        halo.check_neighbourhood("x", [8], {"neighborhood": "cart", "dim": dim, "radius": radius}, fits)
    with pytest.raises(UsageError, match="no grid of 5 ranks"):
        halo.check_stencil("message.stencil2d", [8], {}, 5)
    with pytest.raises(UsageError, match="no grid of 4 ranks"):
        halo.check_neighbourhood("x", [8], {"neighborhood": "stencil3d"}, 4)


def test_bytes_and_footprint_follow_the_neighbours(tmp_path):
    assert halo.sent_per_rank({"neighborhood": "stencil3d"}, 8, 1000) == 6000
    assert halo.sent_per_rank({"neighborhood": "cart", "dim": "2", "radius": "1"}, 9, 10) == 80
    f = tmp_path / "g.txt"
    f.write_text("0 1\n0 2\n0 3\n1 0\n")
    assert halo.degrees({"neighborhood": "graph", "graph": str(f)}, 4) == (1, 3)
    big = fp.At(size=1 << 20, nranks=4, params={**REGISTRY["message.stencil2d"].defaults})
    assert HALO_2D.allocated("b", big) == fp.PAGE + 2 * (4 << 20) + fp.PAGE
    at = fp.At(size=1 << 20, nranks=4, params={**REGISTRY["coll.neighbor_alltoall"].defaults})
    # OSU's default neighbourhood (dim 1, radius 1): two neighbours, a block to and from each
    assert NEIGHBOR_ALLTOALL.allocated("b", at) > 4 << 20 > NEIGHBOR_GATHER.allocated("b", at) > 3 << 20


@pytest.mark.parametrize("argv,says", [
    (["coll.neighbor_allgather", "-p", "radius=2"], "radius 2 is larger than the grid"),
    (["coll.neighbor_alltoall", "-p", "dim=3"], "4 ranks cannot fill 3 dimensions"),
    (["coll.neighbor_alltoallw", "-p", "neighborhood=graph", "-p", "graph=GRAPH"], "is not an edge"),
    (["coll.neighbor_allgather", "-p", "neighborhood=graph"], "needs graph=PATH"),
    (["message.stencil2d", "-n", "6", "-p", "touch=maybe"], "touch must be one of"),
    (["message.stencil2d", "-n", "7"], "no grid of 7 ranks"),
])
def test_bad_input_is_one_line_and_launches_nothing(fake_core, tmp_path, argv, says, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a graph\n")
    argv = [a.replace("GRAPH", str(bad)) for a in argv]
    assert main(["run", "-n", "4", *argv, "--dry-run", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


def test_a_graph_naming_more_ranks_than_the_run_is_refused(fake_core, tmp_path, capsys):
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 5\n")
    assert main(["run", "coll.neighbor_allgather", "-p", "neighborhood=graph", "-p", f"graph={g}", "-n", "4",
                 "--dry-run", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"]]) == 2
    assert "names rank 5; this run has 4 ranks" in capsys.readouterr().err


def test_a_level_run_leaves_out_what_its_ranks_cannot_grid(fake_core, capsys):
    """`fabriclab run message -n 5`: no IMB grid of 5 ranks, so the stencils are left out of the
    level with a note (as a rank count below a minimum is), and the rest runs."""
    assert main(["run", "message", "-n", "5", "--dry-run", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"]]) == 0
    err = capsys.readouterr().err
    assert "message.stencil2d left out of the message level" in err and "no grid of 5 ranks" in err


def test_the_view_sets_the_collective_beside_the_stencil_on_the_same_grid(fake_core, tmp_path):
    from fabriclab import schema
    from fabriclab.report import halo_views
    from fabriclab.report.curves import RunView
    out = tmp_path / "h.json"
    assert main(["run", "message.stencil2d", "coll.neighbor_alltoall", "coll.neighbor_allgather", "-p",
                 "neighborhood=stencil2d,cart", "-s", "1K,64K", "-n", "4", "-L", "1", "-q", "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"], "-o", str(out)]) == 0
    figs = {f.id: f for f in halo_views.view([RunView.of("h", schema.load(out))])}
    assert set(figs) == {"halo-time", "halo-ratio"} and len(figs["halo-time"].series) == 5
    # only the collectives on IMB's grid have the stencil's neighbours: one ratio line each
    ratios = figs["halo-ratio"].series
    assert len(ratios) == 2 and all(s.label.endswith(" / stencil2d") and len(s.x) == 2 for s in ratios)
    doc = schema.load(out)
    row = {"bench": "message.stencil2d", "variant": "", "size": 1024, "active": 4, "measured_s": 1e-3,
           "predicted_s": 2e-4, "ratio": 5.0, "verdict": "slower", "bottleneck": "trunk"}
    doc.add_block("halo_model", {"network": "n.yaml", "calibration": None, "tolerance": 0.15, "rows": [row]})
    drawn = next(f for f in halo_views.view([RunView.of("h", doc)]) if f.id == "halo-time")
    model = [s for s in drawn.series if s.label.endswith("(model)")]
    measured = next(s for s in drawn.series if s.label == "message.stencil2d")
    assert len(model) == 1 and model[0].dashed and model[0].y == [pytest.approx(200.0)]
    assert model[0].x == measured.x[:1]     # at the measured point's bytes per rank
