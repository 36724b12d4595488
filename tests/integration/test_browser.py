"""The page checker in a real headless Chromium, on small handcrafted pages.

Chromium is required: without it these tests fail (make debs installs it).
"""
import os
import time
from pathlib import Path

import pytest

from browser import Browser, BrowserError, PhaseTimeout, check_page, find_chromium, output_dir

FIGURE = """<figure id="{id}">
<svg xmlns="http://www.w3.org/2000/svg" width="420" height="240" viewBox="0 0 420 240">
<title>{title}</title>
<line x1="50" y1="200" x2="400" y2="200" stroke="#333"/>
<line x1="50" y1="20" x2="50" y2="200" stroke="#333"/>
<text x="225" y="232" text-anchor="middle">message size (B)</text>
<text x="14" y="110" transform="rotate(-90 14 110)" text-anchor="middle">{ylabel}</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{points}"/>
<circle cx="50" cy="190" r="3" fill="#1f77b4"/><circle cx="400" cy="40" r="3" fill="#1f77b4"/>
</svg>
<figcaption>{title}, by message size.</figcaption>
</figure>"""


def page(body, title="fabriclab test page"):
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            '<style>body{font:14px sans-serif;margin:2em} figure{margin:1em 0}</style></head>'
            f"<body>{body}</body></html>")


GOOD = page("<h1>Fabric report</h1><p>Two measured curves.</p>"
            + FIGURE.format(id="fig-latency", title="Latency", ylabel="time (us)",
                            points="50,190 120,180 190,150 260,110 330,70 400,40")
            + FIGURE.format(id="fig-bandwidth", title="Bandwidth", ylabel="GB/s",
                            points="50,195 120,170 190,100 260,60 330,45 400,40"))


@pytest.fixture(scope="session")
def shots():
    return output_dir()


@pytest.fixture(scope="module")
def chromium():
    """One browser for the module: starting one costs about half a second."""
    with Browser(timeout=60) as b:
        yield b


@pytest.fixture
def check(chromium, shots, tmp_path, request):
    def run(html, **kw):
        path = tmp_path / "page.html"
        path.write_text(html)
        return check_page(path, shots / f"{request.node.name}.png", browser=chromium, **kw)
    return run


def chromium_processes(but=None):
    """Live Chromium processes (crash handlers included), less those of process group `but`."""
    found = set()
    for d in Path("/proc").iterdir():
        try:
            stat = (d / "stat").read_text()
        except (OSError, ValueError):
            continue
        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if "chrom" in comm.lower() and rest[0] not in "ZX" and int(rest[2]) != but:
            found.add(int(d.name))
    return found


def test_good_page(check):
    r = check(GOOD)
    assert r.console_errors == [] and r.external_requests == []
    assert r.title == "fabriclab test page"
    assert [f["id"] for f in r.figures] == ["fig-latency", "fig-bandwidth"]
    for f, title in zip(r.figures, ("Latency", "Bandwidth")):
        assert f["svg"] and f["width"] == 420 and f["height"] == 240
        assert f["drawn"] == 7  # two axes, two labels, the curve, two markers
        assert f["title"] == title and f["caption"] == f"{title}, by message size."
    assert r.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not r.blank, r.screenshot


def test_console_error_reported(check):
    r = check(page('<p>text</p><script>console.error("boom")</script>'))
    assert any("boom" in e for e in r.console_errors), r.console_errors


def test_exception_reported(check):
    r = check(page("<p>text</p><script>null.x</script>"))
    assert any("TypeError" in e for e in r.console_errors), r.console_errors


def test_missing_image_reported(check):
    r = check(page('<p>text</p><img src="missing.png">'))
    assert any("missing.png" in e and "ERR_FILE_NOT_FOUND" in e for e in r.console_errors), r.console_errors
    assert r.external_requests == []


def test_external_request_reported(check):
    # Port 9 refuses at once: the request is made, and fails, without a network.
    dot = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='8' height='8'/%3E"
    r = check(page(f'<link rel="stylesheet" href="http://127.0.0.1:9/x.css"><img src="{dot}"><p>text</p>'))
    assert r.external_requests == ["http://127.0.0.1:9/x.css"]
    assert len(r.inline_requests) == 1 and r.inline_requests[0].startswith("data:image/svg")
    assert any("127.0.0.1:9" in e for e in r.console_errors)


def test_figure_without_svg(check):
    r = check(page('<figure id="f"><figcaption>empty</figcaption></figure>'))
    assert r.figures == [{"id": "f", "svg": False, "width": 0, "height": 0, "drawn": 0,
                          "title": None, "caption": "empty"}]


def test_white_page_is_blank(check):
    r = check(page(""))
    assert r.blank and r.figures == [] and r.console_errors == []


def test_own_browser_leaves_no_process(chromium, shots, tmp_path):
    before = chromium_processes(but=chromium.pid)
    (tmp_path / "p.html").write_text(GOOD)
    t = time.monotonic()
    r = check_page(tmp_path / "p.html", shots / "own_browser.png")
    print(f"check with its own browser: {time.monotonic() - t:.1f} s")
    assert r.figures and not r.blank
    assert chromium_processes(but=chromium.pid) <= before


def test_timeout_names_phase(chromium, shots, tmp_path):
    # Reading a FIFO no one writes to never ends, so neither does the page's load.
    os.mkfifo(tmp_path / "never.png")
    (tmp_path / "p.html").write_text(page('<img src="never.png">'))
    before = chromium_processes(but=chromium.pid)
    with pytest.raises(PhaseTimeout, match="'load'") as e:
        check_page(tmp_path / "p.html", shots / "timeout.png", timeout=1)
    assert e.value.phase == "load"
    assert chromium_processes(but=chromium.pid) <= before


def test_missing_browser_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("FABRICLAB_CHROMIUM", str(tmp_path / "no-such-browser"))
    with pytest.raises(BrowserError, match="start"):
        Browser()
    monkeypatch.delenv("FABRICLAB_CHROMIUM")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrowserError, match="no browser"):
        find_chromium()
