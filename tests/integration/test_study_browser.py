"""A seed study run for real, at reduced sizes, its report loaded in headless Chromium."""
import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.studies.recipe import VERDICTS
from fabriclab.studies.registry import study

from browser import check_page, output_dir  # noqa: E402

pytestmark = pytest.mark.integration


def test_hellwagner_via_end_to_end_in_a_browser(tmp_path):
    out = tmp_path / "hv"
    assert main(["study", "run", "hellwagner-via", "-o", str(out), "-s", "4,1K", "-L", "1",
                 "--point-time", "0.05", "--min-samples", "5", "-q"]) == 0
    s = study("hellwagner-via")
    for st in s.steps:
        doc = docs.read(out / f"{st.name}.json")
        assert doc["footer"]["status"] == "complete" and docs.points(doc), st.name
    found = json.loads((out / "study.json").read_text())["findings"]
    assert len(found) == 4 and all(f["verdict"] in VERDICTS for f in found)
    # every finding measured here: each rests on points the reduced run still has
    assert all(f["verdict"] != "not measured" and f["measured"] for f in found), found
    check = check_page(out / "report.html", output_dir() / "study-hellwagner-via.png", timeout=90)
    assert check.console_errors == [] and check.external_requests == []
    assert check.title.startswith("fabriclab study hellwagner-via")
    assert len(check.figures) == 4
    for f in check.figures:
        assert f["svg"] and f["width"] > 100 and f["drawn"] > 10 and f["title"], f
    assert not check.blank


def test_millich_george_oral_on_one_machine_draws_its_projections_in_a_browser(tmp_path):
    """Seed 001 on one machine: both measured steps skipped (they need 4 hosts), its eight
    projections drawn and its findings judged on the model, the page clean in Chromium."""
    out = tmp_path / "mgo"
    assert main(["study", "run", "millich-george-oral", "-o", str(out)]) == 0
    manifest = json.loads((out / "study.json").read_text())
    assert all("skipped" in s for s in manifest["steps"])
    assert sum(f["judged_on"] == "model" and f["verdict"] in VERDICTS for f in manifest["findings"]) == 18
    check = check_page(out / "report.html", output_dir() / "study-millich-george-oral.png", timeout=90)
    assert check.console_errors == [] and check.external_requests == []
    assert len(check.figures) == 8
    for f in check.figures:
        assert f["svg"] and f["width"] > 100 and f["drawn"] > 10 and f["title"].startswith("Fig. "), f
    assert not check.blank
