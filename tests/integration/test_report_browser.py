"""The report of a small real run, rendered in headless Chromium: it loads
with no console error and fetches nothing, every figure is an SVG with a
title and something drawn, and the page's screenshot is not blank (kept in
the test output folder). A missing Chromium is a failure: `make test`
installs it."""

from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from realrun import FAST  # noqa: E402  (tests/support)

from browser import check_page, output_dir  # noqa: E402
from htmlcheck import check_html  # noqa: E402

pytestmark = pytest.mark.integration


def test_report_of_a_real_run_in_a_browser(tmp_path):
    run = tmp_path / "small.json"
    assert main(["run", "memory.copy", "message.pingpong", "message.stream", "tcp.rr_poll", "tcp.rr_block",
                 "-s", "8,1K,64K", "-o", str(run), *FAST, "-L", "2"]) == 0
    assert docs.read(run)["footer"]["status"] == "complete"
    page = tmp_path / "small.html"
    net = Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "three-level.yaml"   # drawn too
    assert main(["report", str(run), str(net), "-o", str(page), "--technology", "gigabit-ethernet"]) == 0
    problems, figs = check_html(page.read_text())
    assert problems == [] and len(figs) >= 10

    shot = output_dir() / "report-small-run.png"
    check = check_page(page, shot, timeout=90)
    assert check.console_errors == [] and check.external_requests == []
    assert check.title.startswith("fabriclab report")
    assert [f["id"] for f in check.figures] == [f"{f['id']}" for f in figs]
    assert "fig-network" in [f["id"] for f in check.figures]
    for f in check.figures:
        assert f["svg"] and f["width"] > 100 and f["height"] > 100 and f["drawn"] > 10 and f["title"], f
    assert shot.stat().st_size > 10_000 and not check.blank
