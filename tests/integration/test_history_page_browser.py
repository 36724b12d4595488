"""The history page (report/history.py) in headless Chromium: a page of series with
changes, events and a hostile name loads with no console error and fetches nothing,
every figure is an SVG with a title and something drawn, and its screenshot is not
blank (kept in the test output folder). A missing Chromium is a failure: `make test`
installs it."""
import pytest

from fabriclab.report.history import page

from browser import check_page, output_dir  # noqa: E402  (tests/support)
from htmlcheck import check_html  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration

T0, DAY = 1_760_000_000.0, 86400.0
HOSTILE = '<script>alert(1)</script>"\x1b[31m'


def _points(n: int, step_at: int, base: float, every: float) -> list:
    return [(f"r{j}", T0 + j * every, m, m * 0.96, m * 1.04)
            for j in range(n) for m in [base * (1.18 if j >= step_at else 1.0) * (1 + 0.02 * (j % 4))]]


def test_history_page_in_a_browser(tmp_path):
    figs = [{"title": f"coll.allreduce {1 << i} B", "points": _points(60, 40, 1e-5 * (1 + i), DAY),
             "changes": [(40, 1.18, 1.12, 1.25)], "cable": "sw1:3 <-> node07"} for i in range(5)]
    figs.append({"title": f"message.{HOSTILE}", "points": _points(10_000, 7000, 2e-6, 3600),
                 "changes": [(7000, 1.18, 1.17, 1.19)], "cable": HOSTILE})
    events = [(T0 + 10 * DAY, "r10", "MPI 4.2 -> 5.0"), (T0 + 30 * DAY, "r30", f"network file {HOSTILE}")]
    path = tmp_path / "history.html"
    path.write_text(page(figs, events, "fabriclab history: cluster <c1>", T0 + 61 * DAY))
    problems, found = check_html(path.read_text())
    assert problems == [] and len(found) == 6

    check = check_page(path, output_dir() / "history-page.png", timeout=90)
    assert check.console_errors == [] and check.external_requests == []
    assert check.title == "fabriclab history: cluster <c1>"
    assert [f["id"] for f in check.figures] == [f["id"] for f in found]
    for f in check.figures:
        assert f["svg"] and f["width"] > 100 and f["height"] > 100 and f["drawn"] > 10 and f["title"], f
    assert check.figures[-1]["title"] == "message.<script>alert(1)</script>\"\\x1b[31m"
    assert not check.blank
