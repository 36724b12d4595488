"""The halo exchanges against the network's model (verdicts/halo_prediction.py): a stencil's
and a neighbourhood collective's messages as flows between the two-switch network's nodes,
checked by hand; ranks that share a host send nothing over it; and the block a run stores."""
from pathlib import Path

import pytest

from fabriclab.model.netfile import NetworkFile
from fabriclab.schema.document import BLOCKS
from fabriclab.schema.records import MergedPoint, Summary
from fabriclab.verdicts.halo_prediction import modelled, rows

TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")
MB = 1e6


def _point(bench: str, size: int, median: float, params=None) -> MergedPoint:
    return MergedPoint(bench=bench, size=size, active=4, bytes_per_op=16 * size, summary=Summary(median=median),
                       roles="bbbb", params=params or {})


def test_a_stencils_cross_messages_load_the_trunk():
    """Stencil2D on 4 ranks, ranks 0 and 1 (row y=0 of the 2 x 2 grid) on h0, ranks 2 and 3 on h4:
    each rank's y-1 and y+1 neighbours are the other row, two messages of SIZE each way per
    rank, so 4 x SIZE cross the 20 MB/s trunk each way; the x neighbours stay on their host."""
    out = rows([_point("message.stencil2d", 1 << 20, 0.21)], ["h0", "h0", "h4", "h4"], NetworkFile(TWO))
    assert len(out) == 1
    r = out[0]
    assert r["network_bytes"] == 8 * (1 << 20)
    assert r["predicted_s"] == pytest.approx(4 * (1 << 20) / (20 * MB)) and "trunk" in r["bottleneck"]
    assert r["ratio"] == pytest.approx(0.21 / r["predicted_s"]) and r["verdict"] == "agrees"
    BLOCKS["halo_model"]({"network": TWO, "calibration": None, "tolerance": 0.15, "rows": out})


def test_the_collective_on_the_same_grid_is_the_same_exchange():
    hosts = ["h0", "h0", "h4", "h4"]
    st = rows([_point("message.stencil2d", 4096, 1e-3)], hosts, NetworkFile(TWO))[0]
    nb = rows([_point("coll.neighbor_alltoall", 4096, 1e-3, {"neighborhood": "stencil2d"})], hosts,
              NetworkFile(TWO))[0]
    assert nb["predicted_s"] == st["predicted_s"] and nb["network_bytes"] == st["network_bytes"]
    # OSU's 1-D ring of 4 (dim 1, radius 1): ranks 1 -> 2 and 3 -> 0 cross each way, one message each
    ring = rows([_point("coll.neighbor_allgather", 4096, 1e-3)], hosts, NetworkFile(TWO))[0]
    assert ring["network_bytes"] == 4 * 4096


def test_what_stays_on_a_host_or_off_the_network_is_no_row():
    assert rows([_point("message.stencil2d", 4096, 1e-3)], ["h0"] * 4, NetworkFile(TWO)) == []
    assert rows([_point("message.stencil2d", 4096, 1e-3)], ["x0", "x1", "h4", "h4"], NetworkFile(TWO)) == []
    assert modelled("message.stencil3d") and modelled("coll.neighbor_alltoallw") and not modelled("coll.allgather")
