"""Both ways a window's ops share buffers, on real ranks (MPICH): two-sided
windows share them by default and one-sided windows take one per op; under
either `window_buffers` every point validates its data, records its layout
and rotates through the buffers the plan gave it, and each rank allocates what
its footprint declares (a hotspot target's slots per sender, the concurrent
all-to-all's arrays and scatter's message slots follow the layout in C)."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At
from mpihome import mpi_home  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
QUICK = ["-L", "1", "--point-time", "0.02", "--min-samples", "2", "--warmup", "2", "--validate", "-q"]
TOLERANCE = 0.15
RUNS = [
    (["message.stream", "message.bibw", "deposit.put_bw"], 2, ["-s", "64K,1M"]),
    (["message.scatter"], 2, ["-s", "1K"]),
    (["message.hotspot", "message.alltoall"], 4, ["-s", "64K", "--active", "3", "-p", "variant=concurrent"]),
]


def _at(doc: dict, p: dict) -> At:
    job = next(j for j in doc["header"]["plan"]["jobs"] if j["bench"] == p["bench"] and j["variant"] == p["variant"])
    n, roles = doc["header"]["nranks"], p.get("roles") or ("sr" + "i" * 8)[:doc["header"]["nranks"]]
    return At(p["size"], job["buffers"][job["sizes"].index(p["size"])], p["stride"], p["conns"], n,
              roles.count("s"), p["active"] if p.get("active") is not None else n, p["params"])


@pytest.mark.parametrize("names,n,opts", RUNS, ids=[r[0][0] for r in RUNS])
def test_both_layouts_validate_and_hold_what_they_declare(names, n, opts, tmp_path):
    home = mpi_home("mpich")
    out = tmp_path / "r.json"
    argv = ["run", *names, *opts, "-n", str(n), "-p", "window_buffers=shared,per-op", "--mpi-home", home, *QUICK]
    assert main([*argv, "-o", str(out)]) == 0
    doc = docs.read(out)
    seen = set()
    for p in docs.points(doc):
        at = _at(doc, p)
        layout = p["params"]["window_buffers"]
        seen.add((p["bench"], layout))
        assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0, p
        if p["bench"] in ("message.stream", "message.bibw", "deposit.put_bw"):
            assert p["buffers"] == (64 if layout == "per-op" else 1), p
        roles = p.get("roles") or ("sr" + "i" * n)[:n]
        for role, got in zip(roles, p["rank_alloc_bytes"]):
            declared = REGISTRY[p["bench"]].footprint.allocated(role, at)
            assert abs(declared - got) <= TOLERANCE * got, (p["bench"], layout, role, declared, got)
    assert seen == {(b, v) for b in names for v in ("shared", "per-op")}
