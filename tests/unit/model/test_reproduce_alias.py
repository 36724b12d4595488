"""`fabriclab reproduce sci-myrinet-2002`, the old spelling of seed 001's study: it says
once that it is deprecated and writes `study run millich-george-oral`'s model part."""
import contextlib
import io
import json

import pytest

from fabriclab.cli import main
from fabriclab.cli.model import DEPRECATED
from fabriclab.studies.recipe import MODEL, VERDICTS_ON

PRICES = """schema: 1
currency: USD
items:
  sci-adapter-2d: {value: 3300, source: "a quote", date: "2024"}
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The alias run once, with a price list that doubles the 2D torus's adapter: (folder, stdout, stderr)."""
    out = tmp_path_factory.mktemp("alias") / "s"
    prices = out.parent / "prices.yaml"
    prices.write_text(PRICES)
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        rc = main(["reproduce", "sci-myrinet-2002", "--output", str(out), "--prices", str(prices)])
    assert rc == 0
    return out, o.getvalue(), e.getvalue()


def test_one_deprecation_line_then_the_study_s_model_part_in_its_folder(written):
    out, stdout, stderr = written
    assert stderr.splitlines() == [DEPRECATED] and "study run millich-george-oral" in DEPRECATED
    doc = json.loads((out / "study.json").read_text())
    assert doc["study"] == "millich-george-oral" and doc["seed"] == "001"
    assert [s["step"] for s in doc["steps"]] == ["saturation", "alltoall"]
    assert all("not run by `fabriclab reproduce`" in s["skipped"] for s in doc["steps"])
    model = [f for f in doc["findings"] if f["judged_on"] == MODEL]
    assert len(model) == 18 and all(f["verdict"] in VERDICTS_ON[MODEL] for f in model)
    html = (out / "report.html").read_text()
    assert html.count("<figure") == 8 and 'id="fig-mgo-projection-15"' in html     # the measured three are empty
    assert "mgo-m8 " in stdout and f"report: {out / 'report.html'}" in stdout


def test_its_price_list_reaches_the_costs(written):
    out, _, _ = written
    found = {f["id"]: f for f in json.loads((out / "study.json").read_text())["findings"]}
    # the shipped example prices give a 2D torus 0.98-1.01 the cost of minimal Myrinet; its adapter doubled, more
    low = float(found["mgo-m14"]["model"].split(": ")[1].split(" to ")[0])
    assert low > 1.3, found["mgo-m14"]["model"]


@pytest.mark.parametrize("argv,says", [
    (["-f", "json"], "DIR/study.json"),
    (["--plot-format", "svg"], "inline (SVG) in DIR/report.html"),
])
def test_what_no_longer_means_anything_is_refused_in_one_line(argv, says, tmp_path, capsys):
    assert main(["reproduce", "sci-myrinet-2002", "--output", str(tmp_path / "s"), *argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and says in err[0] and "study run millich-george-oral" in err[0]
    assert not (tmp_path / "s").exists()


def test_only_the_seed_s_name_is_known(capsys):
    assert main(["reproduce", "nope"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_a_study_that_draws_no_costs_refuses_a_price_list(tmp_path, capsys):
    assert main(["study", "run", "hellwagner-via", "-o", str(tmp_path / "hv"), "--prices", "p.yaml"]) == 2
    assert "draws no costs" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("items: [")
    assert main(["study", "run", "millich-george-oral", "-o", str(tmp_path / "m"), "--prices", str(bad)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1 and not (tmp_path / "m").exists()
