"""Halo exchanges on real ranks (families/message_halo.c, families/coll_neighbor.c): IMB-P2P's
Stencil2D and the five neighbourhood collectives on 4 ranks under both MPIs, on IMB's own 2 x 2
grid (where each neighbour appears twice, so the order rule of repeated edges is checked), OSU's
Cartesian neighbourhood and a graph file; every block checked, the grid and the bytes as
suite/halo.py computes them."""
import pytest

from fabriclab import schema
from fabriclab.cli import main
from fabriclab.suite import halo
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
NEIGHBOR = ["coll.neighbor_allgather", "coll.neighbor_allgatherv", "coll.neighbor_alltoall",
            "coll.neighbor_alltoallv", "coll.neighbor_alltoallw"]


@pytest.mark.parametrize("mpi", ["mpich", "openmpi"])
def test_stencil_and_neighbourhood_collectives_on_four_ranks(mpi, tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("# a ring one way and a chord\n0 1\n1 2\n2 3\n3 0\n0 2\n")
    runs = [(["message.stencil2d", *NEIGHBOR], ["-s", "8,64K", "-p", "neighborhood=stencil2d", "-p", "form=persistent"]),
            (NEIGHBOR, ["-s", "4K", "-p", "neighborhood=graph", "-p", f"graph={graph}", "-p", "form=nonblocking"]),
            (["coll.neighbor_alltoallw"], ["-s", "4K"])]
    pts = []
    for i, (names, opts) in enumerate(runs):
        out = tmp_path / f"h{i}.json"
        assert main(["run", *names, "-n", "4", "--validate", "--mpi-home", mpi_home(mpi), *opts, "-o", str(out),
                     *FAST, "--point-time", "0.01", "--min-samples", "2"]) == 0
        doc = schema.load(out)
        assert doc.footer.status == "complete"
        pts += doc.points
    assert len(pts) == 2 * 6 + 5 + 1
    g = halo.parse_graph(graph.read_text())
    for p in pts:
        assert p.validation["errors"] == 0 and p.validation["checked_bytes"] > 0, p.bench
        assert p.samples and min(p.samples) > 0 and p.roles == "bbbb"
        kind = p.params.get("neighborhood")
        if p.bench == "message.stencil2d":
            assert p.info["grid"][:2] == list(halo.imb_grid(4, 2)) and p.info["neighbours"] == 4
            sent = [4 * p.size] * 4
        elif kind == "graph":
            sent = [len(g.destinations(r)) * p.size for r in range(4)]
        elif kind == "stencil2d":
            sent = [4 * p.size] * 4
        else:    # OSU's default: dim 1, radius 1
            sent = [len(halo.cart_neighbours(r, 4, 1, 1)) * p.size for r in range(4)]
        assert p.rank_sent_bytes == sent, (p.bench, kind)
        assert p.messages_per_op == sum(s // p.size for s in sent)
