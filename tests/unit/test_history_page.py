"""The history page (report/history.py) from plain data: a figure per series with its
title, a labelled marker per change, each event once on every figure it falls in,
hostile names escaped, dates across, and a bounded size whatever the number of runs."""
import re
import time

import pytest

from fabriclab.errors import UsageError
from fabriclab.report import history, svg
from fabriclab.report.history import HistoryFigure, decimate, page, step_label

from htmlcheck import check_html  # noqa: E402  (tests/support)

T0 = 1_760_000_000.0          # 2025-10-09 08:53:20 UTC
DAY = 86400.0
EVENTS = [(T0 + 10 * DAY, "r10", "MPI 4.2 -> 5.0"), (T0 + 30 * DAY, "r30", "network file changed")]


def _series(n: int, step_at: int | None = None, base: float = 1e-5, every: float = DAY) -> list:
    out = []
    for j in range(n):
        m = base * (1.2 if step_at is not None and j >= step_at else 1.0) * (1 + 0.01 * (j % 3))
        out.append((f"r{j}", T0 + j * every, m, m * 0.97, m * 1.03))
    return out


def _figures_of(text: str) -> dict:
    """figure id -> its HTML."""
    parts = re.split(r'(?=<figure id=")', text)
    return {re.match(r'<figure id="([^"]+)"', p).group(1): p.split("</figure>")[0] for p in parts[1:]}


def test_every_figure_its_title_changes_and_events():
    figs = [{"title": "coll.allreduce 256 KiB", "unit": "s", "points": _series(60, 40),
             "changes": [(40, 1.18, 1.12, 1.25)], "cable": "sw1:3 <-> node07"},
            HistoryFigure("message.pingpong 8 B", _series(60, 20, 2e-6), [(20, 0.905, 0.88, 0.93), (45, 1.1, 1.05,
                                                                                                      1.16)])]
    text = page(figs, EVENTS, "fabriclab history: c1", T0 + 61 * DAY)
    problems, found = check_html(text)
    assert problems == [] and len(found) == 2
    drawn = _figures_of(text)
    assert len(drawn) == 2
    one, two = drawn.values()
    assert "<title" in one and "coll.allreduce 256 KiB</title>" in one and "message.pingpong 8 B</title>" in two
    assert one.count('class="mark"') == 1 + 2 and two.count('class="mark"') == 2 + 2
    assert ">+18% [12%, 25%], cable sw1:3 &lt;-&gt; node07</text>" in one
    assert ">-9.5% [-12%, -7.0%]</text>" in two and ">+10% [5.0%, 16%]</text>" in two
    for fig in (one, two):
        assert fig.count(">MPI 4.2 -&gt; 5.0</text>") == 1 and fig.count(">network file changed</text>") == 1
    # the events and changes tables, once each
    assert text.count("MPI 4.2 -&gt; 5.0") == 2 + 1 and text.count("+18% [12%, 25%]") == 2
    assert "2025-11-18 08:53:20 UTC" in text             # r40's start in the changes table
    assert "time per op (\u00b5s)" in one and "run start (UTC)" in one


def test_the_x_axis_is_dated():
    text = page([{"title": "t", "points": _series(60)}], [], "h", "now")
    ticks = re.findall(r'text-anchor="middle">(\d{4}-\d\d-\d\d)</text>', text)
    assert len(ticks) >= 4 and ticks == sorted(ticks)
    ticks = svg._date_ticks(T0, T0 + 60 * DAY)          # weekly, on Mondays at midnight
    assert 4 <= len(ticks) <= 7 and all(t % DAY == 0 and time.gmtime(t).tm_wday == 0 for t in ticks)
    ticks = svg._date_ticks(T0, T0 + 3 * 365 * DAY)     # first days of months
    assert 3 <= len(ticks) <= 7 and all(time.gmtime(t).tm_mday == 1 and t % DAY == 0 for t in ticks)
    assert [svg._label(t, "date") for t in svg._date_ticks(T0, T0 + 4 * 3600)] == [
        "10-09 09:00", "10-09 10:00", "10-09 11:00", "10-09 12:00"]


def test_hostile_names_are_escaped_and_control_characters_visible():
    bad = '<script>alert(1)</script>"&\x1b[31m\x00'
    figs = [{"title": f"coll.{bad}", "points": _series(8, 4), "changes": [(4, 1.2, 1.1, 1.3)], "cable": bad}]
    text = page(figs, [(T0 + DAY, f"run{bad}", f"MPI {bad}")], f"history {bad}", bad)
    assert check_html(text)[0] == []
    assert "<script" not in text and "\x1b" not in text and "\x00" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;\\x1b[31m\\x00" in text
    assert text.count("cable &lt;script&gt;") == 1


def test_many_runs_draw_a_bounded_figure_and_keep_a_spike():
    pts = _series(10_000, 6000, every=3600)
    pts[2500] = (pts[2500][0], pts[2500][1], 1e-3, 0.9e-3, 1.1e-3)     # one slow run among 10,000
    kept, decimated = decimate(pts)
    assert decimated and len(kept) <= 2 * history.MAX_COLUMNS and "r2500" in [p[0] for p in kept]
    assert [p[1] for p in kept] == sorted(p[1] for p in kept)
    text = page([{"title": "long", "points": pts, "changes": [(6000, 1.2, 1.19, 1.21)]}], EVENTS, "h", "now")
    fig = next(iter(_figures_of(text).values()))
    assert len(fig) < 40_000 and fig.count("<circle") == 0
    vertices = [len(p.split()) for p in re.findall(r'<polyline class="series" points="([^"]+)"', fig)]
    assert sum(vertices) <= 2 * history.MAX_COLUMNS
    assert "10000 runs drawn as the lowest and highest median" in fig


def test_a_page_of_many_series_stays_small():
    figs = [{"title": f"coll.allreduce {2 ** i} B", "points": _series(60, 30),
             "changes": [(30, 1.2, 1.15, 1.25)]} for i in range(40)]
    text = page(figs, EVENTS, "h", "now")
    assert len(_figures_of(text)) == 40
    assert len(text) / 40 < 8_000                      # 500 such series: under 4 MB


def test_events_outside_a_series_and_beyond_the_bound_are_not_drawn():
    many = [(T0 + i * 3600, f"e{i}", f"event {i}") for i in range(history.MAX_EVENTS + 5)]
    text = page([{"title": "t", "points": _series(5)}], many + [(T0 - 30 * DAY, "old", "long before")], "h", "now")
    fig = next(iter(_figures_of(text).values()))
    assert fig.count('class="mark"') == history.MAX_EVENTS and ">event 0</text>" not in fig
    assert ">long before</text>" not in fig and "5 earlier events not drawn" in fig
    assert text.count(">long before</td>") == 1           # listed in the events table all the same


def test_a_long_event_text_is_cut_on_the_figure_and_whole_in_its_table():
    long = "MPI " + "x" * 200
    text = page([{"title": "t", "points": _series(5)}], [(T0 + DAY, "r1", long)], "h", "now")
    fig = next(iter(_figures_of(text).values()))
    assert f">{long[:history.LABEL_CHARS - 1]}\u2026</text>" in fig and f"<td>{long}</td>" in text


def test_step_labels_and_bad_changes():
    assert step_label(1.18, 1.12, 1.25) == "+18% [12%, 25%]"
    assert step_label(0.95, None, None) == "-5.0%" and step_label(2.0, float("nan"), 3.0) == "+100%"
    with pytest.raises(UsageError, match="outside its 3 runs"):
        page([{"title": "t", "points": _series(3), "changes": [(3, 1.2, 1.1, 1.3)]}], [], "h", "now")
    with pytest.raises(UsageError, match="unknown field"):
        page([{"title": "t", "points": [], "colour": "red"}], [], "h", "now")


def test_a_series_without_a_dated_point_is_named_not_drawn():
    text = page([{"title": "empty <b>", "points": [("r1", None, 1e-6, None, None)]}], [], "h", "now")
    assert check_html(text)[0] == [] and "<figure" not in text and "empty &lt;b&gt;: no run" in text


def test_the_readers_own_types_are_taken_as_they_come():
    """Points as the store's SeriesPoint (a named tuple with more fields), changes as
    analysis/changepoints.py's Change."""
    from typing import NamedTuple

    from fabriclab.analysis.changepoints import Change

    class Point(NamedTuple):
        run_uid: str
        started_s: float
        median: float
        ci_low: float
        ci_high: float
        launch_medians: list
        unit: str

    pts = [Point(*p, [p[2]], "s") for p in _series(12, 6)]
    text = page([HistoryFigure("t", pts, [Change(6, 1.2, 1.1, 1.3, 0.001)])], [], "h", "now")
    fig = next(iter(_figures_of(text).values()))
    assert ">+20% [10%, 30%]</text>" in fig and fig.count("<circle") == 12
