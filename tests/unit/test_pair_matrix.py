"""The N x N pair matrix (verdicts/pair_matrix.py): every ordered pair from message.shift's steps,
each against the model's max-min rate on the run's network, and a slow cable named (and only it)
where the topology alone would have made every pair across it look slow."""
from pathlib import Path

import numpy as np
import pytest

from fabriclab.verdicts import pair_matrix
from fabriclab.verdicts.coll_prediction import system
from fabriclab.model.schedule_time import Network
from fabriclab.schema.records import MergedPoint, Summary
from fabriclab.schema.summaries import RankFigures

TWO = str(Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml")
HOSTS = [f"h{i}" for i in range(8)]


def _points(rate, size: int = 1 << 18) -> list:
    """message.shift's merged points, each rank sending to rank + k at rate(r, c)."""
    out = []
    for k in range(1, 8):
        ranks = [RankFigures(r, "both", HOSTS[r], None, rate(r, (r + k) % 8)) for r in range(8)]
        out.append(MergedPoint(bench="message.shift", size=size, active=k, bytes_per_op=size,
                               summary=Summary(median=1e-3), roles="b" * 8, ranks=ranks))
    return out


def _model():
    net = Network(system(TWO))
    where = np.arange(8)
    pred = {}
    for k in range(1, 8):
        rates, _ = net.rates(where, (where + k) % 8)
        pred.update({(r, (r + k) % 8): rates[r] for r in range(8)})
    return pred


def test_every_pair_is_read_and_the_topology_alone_names_nothing():
    pred = _model()
    (m,) = pair_matrix.matrices(_points(lambda r, c: 0.97 * pred[(r, c)]), HOSTS, TWO)
    assert np.isnan(np.diag(m.bandwidth)).all() and not np.isnan(m.bandwidth[~np.eye(8, dtype=bool)]).any()
    assert m.bandwidth[1, 4] == pytest.approx(0.97 * pred[(1, 4)])
    assert m.low == [] and m.named == []
    # against the median pair instead, the pairs that cross the 20 MB/s trunk look slow
    (flat,) = pair_matrix.matrices(_points(lambda r, c: 0.97 * pred[(r, c)]), HOSTS)
    assert flat.low and flat.predicted is None


def test_a_trunk_at_half_its_rate_is_named_and_nothing_else():
    pred = _model()
    crosses = lambda r, c: (r < 4) != (c < 4)      # noqa: E731
    (m,) = pair_matrix.matrices(_points(lambda r, c: pred[(r, c)] * (0.5 if crosses(r, c) else 1.0)), HOSTS, TWO)
    assert set(m.low) == {(r, c) for r in range(8) for c in range(8) if r != c and crosses(r, c)}
    assert [lab for lab, _, _ in m.cables] and all("trunk" in lab for lab, _, _ in m.cables)
    assert m.hosts_named == []


def test_a_slow_host_cable_names_that_cable_and_the_text_marks_its_pairs():
    pred = _model()
    (m,) = pair_matrix.matrices(_points(lambda r, c: pred[(r, c)] * (0.3 if r == 5 else 1.0)), HOSTS, TWO)
    assert set(m.low) == {(5, c) for c in range(8) if c != 5}
    assert len(m.cables) == 1 and "h5" in m.cables[0][0] and m.hosts_named == []
    text = "\n".join(pair_matrix.lines([m]))
    assert sum(ln.count("*") for ln in text.splitlines()[2:10]) == 7 and "named: link h5-s1" in text


def test_a_host_is_named_where_no_network_is_known():
    (m,) = pair_matrix.matrices(_points(lambda r, c: 50e6 * (0.3 if c == 2 else 1.0)), HOSTS)
    assert m.cables == [] and m.hosts_named == [("h2", "receives", 7, 7)]


def test_the_report_draws_the_matrix_with_its_low_pairs_framed():
    from types import SimpleNamespace
    from fabriclab.report import pair_views
    pred = _model()
    doc = SimpleNamespace(analysed=(_points(lambda r, c: pred[(r, c)] * (0.3 if r == 5 else 1.0)), {}),
                          header=SimpleNamespace(hosts=HOSTS, network=TWO))
    html = "".join(pair_views.html([SimpleNamespace(name="run <1>", doc=doc)]))
    assert html.count("<rect") == 56 and html.count('stroke="#b00020"') == 7
    assert "named: link h5-s1" in html and "run &lt;1&gt;" in html and 'id="pairs"' in html
    assert pair_views.html([SimpleNamespace(name="x", doc=SimpleNamespace(analysed=([], {}), header=doc.header))]) == []
