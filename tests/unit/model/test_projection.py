"""The model's library entry point (model/projection.py): one question, one typed result,
the same one `fabriclab model -f json` prints."""

import json

import pytest

from fabriclab.errors import UsageError
from fabriclab.model.calibration import Calibration
from fabriclab.model.catalog import system
from fabriclab.model.projection import Question, project
from fabriclab.model.traffic import Traffic
from fabriclab.studies.millich_george_oral import as_published as published


def test_projection_is_what_the_command_prints(run_cli):
    q = Question(systems=("sci-2d", "myrinet-clos64"), nodes=(9, 16), calibration=Calibration(use_catalog=True),
                 cost=True, target_MBps=130, maxmin=True)
    p = project(q)
    assert [c.key for c in p.curves] == ["sci-2d", "myrinet-clos64"] and p.calibrated
    assert p.curves[0].at(9).per_node == pytest.approx(144e6)        # seed 001 §5: 8/20 x 360 MB/s
    assert [t.n for t in p.target] == [9, 16] and all(t.per_node >= 130e6 for t in p.target if t.system)
    assert {(m.system, m.n) for m in p.maxmin} == {(s, n) for s in ("sci-2d", "myrinet-clos64") for n in (9, 16)}
    rc, out = run_cli("model", "--nodes", "9,16", "--system", "sci-2d", "--system", "myrinet-clos64", "-c", "catalog",
                      "--cost", "--target", "130", "-M", "-f", "json", "--no-plot")
    assert rc == 0 and json.loads(out) == json.loads(json.dumps(p.to_dict()))


def test_published_curves_come_from_the_study():
    s = system("sci-2d")
    c = published.curve(s, [4, 8, 9], s.calibrated(Calibration(use_catalog=True)))
    assert [p.n for p in c.points] == [4, 9]                           # r^2 sizes only
    assert c.at(9).per_node == pytest.approx(8 / 20 * 360e6) and c.calibrated
    assert published.curve(system("t3d-torus"), [8], {}) is None
    p = project(Question(systems=("sci-2d", "t3d-torus"), nodes=(9,), published=published.curve))
    assert [c.key for c in p.published] == ["sci-2d:published"] and p.no_published_form == ["Cray T3D - 3D torus"]


def test_questions_are_checked_before_anything_is_computed():
    with pytest.raises(UsageError, match="all-to-all traffic only"):
        project(Question(systems=("sci-2d",), traffic=Traffic("hotspot"), published=published.curve))
    with pytest.raises(UsageError, match="unknown method"):
        project(Question(systems=("sci-2d",), method="guess"))


def test_plot_is_drawn_where_asked(tmp_path):
    p = project(Question(systems=("sci-ring",), nodes=(2, 3, 4), plot=tmp_path / "m.svg"))
    assert p.plot == tmp_path / "m.svg" and "SCI - Ring" in p.plot.read_text()
    assert project(Question(systems=("sci-ring",), nodes=(2,))).plot is None
