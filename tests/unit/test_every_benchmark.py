"""Every registered benchmark through the fake core: planned, measured at two sizes,
validated, written, shown and reported, without a test of its own.

The fake core (tests/fakes/fakecore.py) answers every kernel the registry names
with the plan's own facts, so a benchmark added to the registry is run here by
itself; one the runs below do not reach fails the first test by name."""
import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.suite.benchmarks import REGISTRY

pytestmark = pytest.mark.unit

# One run per group of benchmarks that share their sizes and parameters.
SCATTER = ("message.scatter", "tcp.scatter", "fabric.scatter")
APPS = ("app.transpose", "app.matmul")
# Atomics update one 8-byte word: size 8 is their only size.
ONE_SIZE = ("fabric.atomic", "ucx.atomic", "deposit.fop", "deposit.cas")
# IMB-P2P's Stencil3D needs a grid of 2 x 2 x 2 ranks at least.
EIGHT = ("message.stencil3d",)
# A datagram carries at most 65,507 bytes (measure/plan.py), and a header of 16 or 24.
DATAGRAMS = ("udp.stream", "udp.rr", "udp.underload")
GROUPS = {
    "transfers": ([b for b in REGISTRY if not b.startswith("app.") and b not in SCATTER + ONE_SIZE + EIGHT + DATAGRAMS],
                  ["-s", "64,64K", "--strides", "1,8", "--conns", "1,2"]),
    "scatter": (list(SCATTER), ["-s", "8,1K"]),
    "apps": (list(APPS), ["-s", "256,512"]),
    "sort": (["app.sort"], ["-s", "64K,1M"]),
    "atomics": (list(ONE_SIZE), ["-s", "8"]),
    "eight": (list(EIGHT), ["-s", "64,64K", "-n", "8"]),
    "datagrams": (list(DATAGRAMS), ["-s", "64,1K"]),
}


@pytest.fixture(scope="module")
def runs(fake_core_module, tmp_path_factory):
    """Each group's document, run once: two sizes, one launch, validated."""
    out, fake = tmp_path_factory.mktemp("every"), fake_core_module
    made = {}
    for group, (names, opts) in GROUPS.items():
        path = out / f"{group}.json"
        rc = main(["run", *names, "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-n", "4",
                   "-L", "1", "--validate", "-q", "-o", str(path), *opts])
        made[group] = (rc, path)
    return made


@pytest.fixture(scope="module")
def documents(runs):
    """Each group's document as JSON data, read once (docs.read) for the tests that only read it."""
    return {group: docs.read(path) for group, (rc, path) in runs.items() if rc == 0}


def test_every_registered_benchmark_is_run(runs, documents):
    ran = set()
    for group, (rc, path) in runs.items():
        assert rc == 0, group
        doc = documents[group]
        assert doc["footer"]["status"] == "complete", group
        pts = docs.points(doc)
        assert pts and all(p["validation"]["errors"] == 0 for p in pts), group
        ran |= {p["bench"] for p in pts}
    assert ran == set(REGISTRY), f"not run through the fake core: {sorted(set(REGISTRY) - ran)}"


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_benchmark_at_both_sizes(documents, group):
    names, _ = GROUPS[group]
    doc = documents[group]
    sizes = {b: {p["size"] for p in docs.points(doc) if p["bench"] == b} for b in names}
    assert all(len(s) == (1 if b in ONE_SIZE else 2) for b, s in sizes.items()), sizes


def test_show_and_report_name_every_benchmark(runs, tmp_path):
    for group, (_, path) in runs.items():
        shown = tmp_path / f"{group}.show.json"
        assert main(["show", str(path), "-f", "json", "-o", str(shown)]) == 0
        rows = json.loads(shown.read_text())
        named = {r["bench"] for r in rows["rows"]}
        assert named == set(GROUPS[group][0]), group
        page = tmp_path / f"{group}.html"
        assert main(["report", str(path), "-o", str(page)]) == 0
        text = page.read_text()
        assert all(b in text for b in GROUPS[group][0]), group


def test_the_collectives_draw_time_against_ranks_where_a_run_swept_them(runs):
    """Four ranks: each collective at 2 and 4 (IMB's -npmin 2), so every operation but the
    barrier (whose own figure is against ranks) has its time-vs-ranks figure, a line per size."""
    from fabriclab import schema
    from fabriclab.report import coll_views, figures
    run = figures.RunView.of("transfers", schema.load(runs["transfers"][1]))
    figs = {f.id: f for f in coll_views.collectives([run])}
    ops = [b[5:] for b in REGISTRY if REGISTRY[b].coll and b != "coll.barrier"]
    assert all(f"coll-{op}-ranks" in figs for op in ops) and "coll-barrier-ranks" not in figs
    line = figs["coll-allreduce-ranks"].series[0]
    assert line.x == [2, 4] and line.label.endswith(" 64") and len(figs["coll-allreduce-ranks"].series) == 2
