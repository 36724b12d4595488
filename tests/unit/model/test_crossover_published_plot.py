"""Crossover wording, the 'as published' formulas, and plot files."""

import pytest

from fabriclab.errors import UsageError
from fabriclab.model import crossover as X
from fabriclab.studies.millich_george_oral import as_published as P
from fabriclab.model.catalog import system
from fabriclab.model.evaluate import Curve, Prediction, curve
from fabriclab.model.plot import Series, figure
from fabriclab.model.resources import MB


def mk(label, pts):
    c = Curve(label, label, False)
    c.points = [Prediction(n, v, v, "", "", "", "", "") for n, v in pts]
    return c


def test_segments_and_sentence():
    a = mk("A", [(2, 10), (3, 8), (4, 6), (5, 4)])
    b = mk("B", [(2, 7), (5, 7)])                 # only buildable at 2 and 5: interpolated between
    segs = X.segments([a, b])
    assert [(s.label, s.first, s.last) for s in segs] == [("A", 2, 3), ("B", 4, 5)]
    assert X.sentence(segs).startswith("A best up to 3 nodes, then B (from 4 to 5 nodes)")
    assert "interpolated" in X.sentence(segs)
    sw = X.pairwise(a, b)
    assert len(sw) == 1 and sw[0].n == 4 and sw[0].winner == "B"


def test_ties_are_named():
    a, b = mk("A", [(2, 5), (3, 5)]), mk("B", [(2, 5), (3, 4)])
    segs = X.segments([a, b])
    assert segs[0].label == "A = B (equal)" and segs[1].label == "A"


def test_lower_is_better_for_cost():
    a, b = mk("A", [(2, 1), (3, 5)]), mk("B", [(2, 2), (3, 2)])
    assert [s.label for s in X.segments([a, b], lower_better=True)] == ["A", "B"]


def test_published_sci_equals_exact():
    for key, f in (("sci-2d", 2), ("sci-3d", 3)):
        s = system(key)
        c = curve(s, [r ** f for r in range(2, 7)], with_cost=False)
        res = s.tech.resources
        for p in c.points:
            r = round(p.n ** (1 / f))
            v = P.sci_bandwidth(r, f, res["link"].effective(), res["adapter_bus"].effective())
            assert v["overall"] == pytest.approx(p.per_node)


def test_published_myrinet_formulas():
    assert P.h_minimal(2) == 1 and P.h_minimal(5) == 2
    assert P.h_ring(2) == 1 and P.h_ring(3) == 1 and P.h_ring(4) == pytest.approx(4 / 3)
    assert P.efficiency(4096, 1) == pytest.approx(4096 / 4103)
    one = P.myrinet("minimal", 12, 160 * MB)
    assert one.switches == 1 and one.sw2sw is None and one.overall == pytest.approx(160 * MB * 4096 / 4102)
    pt = P.myrinet("clos64", 128, 160 * MB, calibrated=144 * MB)
    assert pt.sw2sw == pytest.approx(144 * MB) and pt.overall == pytest.approx(144 * MB)
    # Eq. 12 is the message-weighted mean of remote (Eq. 10) and local (Eq. 11) bandwidth
    m = P.myrinet("minimal", 40, 160 * MB, calibrated=144 * MB)
    assert m.overall == pytest.approx(((40 - m.k) * m.sw2sw + (m.k - 1) * 144 * MB) / 39)
    with pytest.raises(UsageError):
        P.myrinet("hypercube", 40, 1.0)


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_figure_files(tmp_path, suffix):
    out = figure([Series("a", [1, 2, 3], [3, 2, 1]), Series("b", [1, 3], [1, 2], dashed=True)],
                 tmp_path / f"f.{suffix}", "title", "MB/s", logx=True, note="note")
    assert out.stat().st_size > 1000
    with pytest.raises(UsageError):
        figure([], tmp_path / "f.pdf", "t", "y")


@pytest.mark.parametrize("topo,cables", [("minimal", 1), ("ring", 2), ("ring", 4), ("clos64", 1)])
def test_published_myrinet_never_exceeds_the_link(topo, cables):
    """Seed 001 §4.1: a node has its full link through the crossbar, 'restricted' by too few
    switch-to-switch links; so Eq. 10 and Eq. 12 never exceed B_eff (Clos64 stays the leader, §5)."""
    for n in range(2, 129):
        p = P.myrinet(topo, n, 160 * MB, calibrated=144 * MB, cables=cables)
        assert p.overall <= 144 * MB * (1 + 1e-12), (topo, cables, n)
        assert p.sw2sw is None or p.sw2sw <= 144 * MB * (1 + 1e-12)
    if (topo, cables) == ("ring", 4):
        # three partly filled switches at 17 nodes: j·S = 24 > N·h = 17, so uncapped Eq. 10 gave 1.41 B_eff
        p = P.myrinet("ring", 17, 160 * MB, calibrated=144 * MB, cables=4)
        assert p.switches == 3 and p.overall == pytest.approx(144 * MB)
        assert (p.n - p.k) / P.hot_link(p.n, p.k, p.h, p.j, p.switches) > 1.4
