"""The HTML report, its figures and `fabriclab plot`, on runs of the fake core."""
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.analysis import merge
from fabriclab.cli import main
from fabriclab.report import figures, html, svg
from fabriclab.report.figure import Axis, Figure, Mark, Series

from fakebuild import fake_core  # noqa: E402
from htmlcheck import check_html  # noqa: E402

PATTERNS = ("message.hotspot", "message.saturation", "message.alltoall", "message.bisection", "deposit.hotspot_put",
            "deposit.hotspot_get", "message.bibw", "deposit.put_bibw", "message.stream", "deposit.put_bw")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, default_suite):
    """The default suite (2 launches, unit/conftest.py) and the traffic patterns on 4 ranks, from the fake core."""
    d = tmp_path_factory.mktemp("runs")
    fake = fake_core(d)
    common = ["--core", fake["core"], "--mpiexec", fake["mpiexec"], "-q"]
    os.environ["FAKECORE_RANKS"] = "4"
    try:
        assert main(["run", *common, "-o", str(d / "patterns.json"), "-L", "1", "-n", "4", "-s", "1K,64K,1M",
                     *PATTERNS]) == 0
    finally:
        del os.environ["FAKECORE_RANKS"]
    return {"dir": d, "suite": default_suite["path"], "patterns": d / "patterns.json", "core": common}


@pytest.fixture(scope="module")
def suite(runs):
    """The default suite's document, read once for the tests that only read it (a document
    keeps its merged points for every reader: schema/document.py)."""
    return schema.load(runs["suite"])


def _figure_ids(text: str) -> list[str]:
    return re.findall(r'<figure id="fig-([^"]+)"', text)


def test_report_of_the_default_suite(runs, suite, capsys):
    out = runs["dir"] / "suite.html"
    assert main(["report", str(runs["suite"]), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out}"
    text = out.read_text()
    problems, figs = check_html(text)
    assert problems == []
    ids = _figure_ids(text)
    # The views of the seed studies, and every benchmark's size figures.
    for fid in ("ladder-bandwidth", "ladder-latency", "postal", "bidir-message", "via-latency",
                "via-conns-tcp-conns", "via-conns-message-conns", "via-scatter", "message-pingpong-residuals",
                "layers-latency", "layers-bandwidth", "layer-cost-latency", "layer-cost-bandwidth"):
        assert fid in ids
    assert any(i.startswith("strided-") for i in ids)
    doc = suite.to_dict()         # docs.read: the checked document as JSON data
    for bench in {p["bench"] for p in docs.points(doc)}:
        key = bench.replace('.', '-').replace('_', '-')   # coll.barrier: one size, its figure against ranks alone
        assert any(i == key or i.startswith(f"{key}-") for i in ids), bench
    # The header says what ran, where and how; warnings are grouped by kind.
    for fact in ("launch command", "cache state", "launches per point", "FakeMPI", "complete"):
        assert fact in text
    assert "efficiency" not in ids and "--wire-rate MBPS" in text
    assert "<script" not in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_report_with_a_network_file_passes_the_page_checks(runs):
    """The default suite's report with a network file among its inputs: the section after the
    warnings, its drawing a figure the page checks pass, every switch named in it."""
    net = Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "three-level.yaml"
    out = runs["dir"] / "suite-network.html"
    assert main(["report", str(runs["suite"]), str(net), "-o", str(out)]) == 0
    text = out.read_text()
    problems, figs = check_html(text)
    assert problems == [] and "network" in [f["id"].removeprefix("fig-") for f in figs]
    assert text.index('id="warnings"') < text.index('<h2 id="network">') < text.index('id="ladder"')
    drawing = text[text.index('<figure id="fig-network"'):]
    drawing = drawing[:drawing.index("</figure>")]
    for switch in ("l0", "l1", "l2", "l3", "a0", "a1", "a2", "a3", "c0", "c1"):
        assert f">{switch}</text>" in drawing
    assert drawing.count("4 hosts</text>") == 4 and "level 3" in drawing


def test_the_cost_of_each_layer_is_mpi_over_the_layer_below(suite):
    from fabriclab.report import layers
    run = figures.RunView.of("suite", suite)
    found = layers.costs(run)
    assert {(c.upper, c.lower) for c in found} == {("message.pingpong", "fabric.pingpong"),
                                                    ("message.pingpong", "ucx.pingpong"),
                                                    ("message.stream", "fabric.stream"),
                                                    ("message.stream", "ucx.stream")}
    for c in found:
        mine = [r for r in run.rows if r.bench == c.upper and r.size == c.size]
        below = [r for r in run.rows if r.bench == c.lower and r.size == c.size]
        if c.metric == "latency":   # the best variant of each at that size
            assert c.upper_value == min(r.latency_s for r in mine) and c.lower_value == min(r.latency_s for r in below)
        else:
            assert c.upper_value == max(r.bandwidth_Bps for r in mine)
        assert c.ratio == pytest.approx(c.upper_value / c.lower_value)
    text = html.render([("suite", suite)])
    assert '<h2 id="layers">The cost of each layer</h2>' in text and "fabric.pingpong" in text
    # the header says which provider each fabric job ran on, and why
    assert "fabric level" in text and "provider shm (every rank on one host" in text


def test_fit_and_half_peak_are_drawn(suite):
    """The fake core follows Hockney (1 us, 5 GB/s): the fit line and its label appear, the
    residuals are tiny, and the bandwidth figure marks the half-peak size."""
    run = figures.RunView.of("suite", suite)
    figs = {f.id: f for f in figures.per_benchmark([run], "message.pingpong")}
    lat = figs["message-pingpong-latency"]
    fit = [s for s in lat.series if s.dashed]
    assert len(fit) == 1 and re.search(r"Hockney fit: 1 \u00b5s \+ n / (5|4\.99) GB/s", fit[0].label)
    res = figs["message-pingpong-residuals"].series[0].y
    assert max(abs(r) for r in res) < 5  # percent
    bw = figs["message-pingpong-bandwidth"]
    assert bw.marks and bw.marks[0].label.startswith("half-peak") and bw.marks[0].x == pytest.approx(5000, rel=0.5)
    measured = lat.series[0]
    assert measured.band and measured.spread and len(measured.band[0]) == len(measured.x)
    assert all(lo <= y <= hi for lo, y, hi in zip(measured.band[0], measured.y, measured.band[1]))


def test_patterns_report(runs):
    doc = schema.load(runs["patterns"])
    text = html.render([("patterns", doc)])
    assert check_html(text)[0] == []
    ids = _figure_ids(text)
    for fid in ("saturation", "alltoall", "fairness", "hotspot-message-hotspot-1048576",
                "hotspot-deposit-hotspot-put-1048576", "hotspot-deposit-hotspot-get-1048576", "bidir-message", "bidir-deposit"):
        assert fid in ids
    run = figures.RunView.of("p", doc)
    hs = figures.hotspot([run])[0]
    assert [s.label for s in hs.series] == ["aggregate", "per sender (mean)", "slowest sender"]
    agg, per, slow = hs.series
    pts = {p.active: p.to_dict() for p in merge.merged(run.doc) if p.bench == "message.hotspot" and p.size == 1 << 20}
    for a, m, lo in zip(per.x, per.y, slow.y):
        senders = [r["bandwidth_Bps"] / 1e6 for r in pts[a]["ranks"] if r["role"] == "sender"]
        assert len(senders) == a and m == pytest.approx(sum(senders) / a) and lo == pytest.approx(min(senders))
        assert lo <= m
    fair = figures.fairness([run])[0]
    assert not fair.y.log and all(0 < v <= 1 for s in fair.series for v in s.y)
    a2a = figures.alltoall([run])[0]
    row = next(r for r in run.rows if r.bench == "message.alltoall" and r.size == 1 << 20)
    s = next(s for s in a2a.series if s.label == "message.alltoall")
    assert s.y[s.x.index(1 << 20)] == pytest.approx(row.bandwidth_Bps / 4 / 1e6)


def test_two_runs_overlay_and_compare(runs):
    a, b = runs["dir"] / "a.json", runs["dir"] / "b.json"
    assert main(["run", *runs["core"], "-o", str(a), "-L", "2", "message.pingpong", "-s", "1:4K:x4"]) == 0
    assert main(["run", *runs["core"], "-o", str(b), "-L", "2", "message.pingpong", "-s", "1:4K:x4"]) == 0
    out = runs["dir"] / "ab.html"
    assert main(["report", str(a), str(b), "-o", str(out), "--wire-rate", "1000"]) == 0
    text = out.read_text()
    assert check_html(text)[0] == []
    assert 'id="compare"' in text and "b against a" in text and "verdict" in text
    run_a, run_b = (figures.RunView.of(n, schema.load(p)) for n, p in (("a", a), ("b", b)))
    lat = figures.per_benchmark([run_a, run_b], "message.pingpong")[0]
    assert [s.label for s in lat.series] == ["a", "b"]
    eff = [f for f in figures.ladder([run_a], 1e9, "x") if f.id == "efficiency"][0]
    best = max(r.bandwidth_Bps for r in run_a.rows)
    assert dict(eff.bars)["message"] == pytest.approx(best / 1e9 * 100)
    assert "fig-efficiency" in text and "--wire-rate 1000 MB/s" in text


def test_technology_gives_the_wire_rate(runs):
    out = runs["dir"] / "tech.html"
    assert main(["report", str(runs["suite"]), "-o", str(out), "--technology", "gigabit-ethernet"]) == 0
    text = out.read_text()
    assert "fig-efficiency" in text and "125 MB/s" in text


def test_a_run_that_ended_early_still_reports(runs, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKECORE_MODE", "die:3")
    assert main(["run", *runs["core"], "-o", str(tmp_path / "f.json"), "-L", "1", "message.pingpong",
                 "-s", "1:1K:x2"]) == 1
    monkeypatch.delenv("FAKECORE_MODE")
    assert main(["report", str(tmp_path / "f.ndjson"), "-o", str(tmp_path / "f.html")]) == 0
    text = (tmp_path / "f.html").read_text()
    assert 'class="banner"' in text and "ended early" in text
    assert text.index("ended early") < text.index("What ran")
    assert check_html(text)[0] == []


def test_plot_svg_and_png(runs, suite, tmp_path):
    svg_out = tmp_path / "pp.svg"
    assert main(["plot", str(runs["suite"]), "message.pingpong", "-o", str(svg_out)]) == 0
    root = ET.parse(svg_out).getroot()  # well-formed XML: a standalone SVG file
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.find(f"{ns}title").text
    labels = {t.get("class"): t.text for t in root.iter(f"{ns}text") if t.get("class")}
    assert labels["xlabel"] == "message size (bytes)" and "\u00b5s" in labels["ylabel"]
    png = tmp_path / "st.png"
    assert main(["plot", str(runs["suite"]), "memory.strided_store", "--x", "stride", "--metric", "bandwidth",
                 "--yscale", "linear", "-o", str(png)]) == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image as mpimg
    px = mpimg.imread(str(png))
    assert px.std() > 0.05  # not blank
    # One curve per working set when x is the stride.
    run = figures.RunView.of("s", suite)
    fig = figures.sweep([run], ["memory.strided_store"], "bandwidth", "stride")
    sizes = {r.size for r in run.rows if r.bench == "memory.strided_store"}
    assert len(fig.series) == len(sizes) and all(s.x == sorted(s.x) for s in fig.series)


@pytest.fixture(scope="module")
def bad_files(runs, tmp_path_factory):
    """A file that is no JSON, and the suite's document at a schema version from the future."""
    d = tmp_path_factory.mktemp("bad")
    (d / "not.json").write_text("hello\n")
    doc = json.loads(runs["suite"].read_text())
    doc["schema_version"] = schema.SCHEMA_VERSION + 1
    (d / "newer.json").write_text(json.dumps(doc))
    return {"notjson": d / "not.json", "newer": d / "newer.json"}


@pytest.mark.parametrize("argv,msg", [
    (["report", "{suite}", "--wire-rate", "0"], "--wire-rate: 0 is not between 1e-06 and 1e+09"),
    (["report", "{suite}", "--wire-rate", "nan"], "--wire-rate: nan is not a finite number"),
    (["report", "{suite}", "--wire-rate", "10", "--technology", "gigabit-ethernet"], "not both"),
    (["report", "{suite}", "--technology", "nosuch"], "unknown technology"),
    (["report", "{suite}", "-o", "/proc/version/dir/r.html"], "cannot write"),     # a folder under a file
    (["report", "{notjson}"], "is not a fabriclab result"),
    (["report", "{newer}"], "is not supported"),
    (["plot", "{suite}", "message.nosuch"], "unknown benchmark"),
    (["plot", "{suite}", "message.pingpong", "--x", "stride"], "no stride axis"),
    (["plot", "{suite}", "message.pingpong", "-o", "x.pdf"], "name it .svg or .png"),
    (["plot", "{patterns}", "memory.copy"], "was not measured"),
    (["plot", "message.pingpong"], "needs a result file"),
])
def test_bad_input_is_one_line_exit_2(runs, bad_files, capsys, argv, msg):
    paths = {"suite": runs["suite"], "patterns": runs["patterns"], **bad_files}
    capsys.readouterr()
    assert main([a.format(**paths) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and msg in err


# ---- the SVG renderer -------------------------------------------------------------------------

def test_svg_log_size_axis_and_gaps():
    fig = Figure("t", "A title", figures.SIZE, Axis("time (us)"),
                 [Series("a", [1, 2, 4, 8, 16, 1 << 20], [1.0, None, 3.0, 4.0, 0.0, 9.0],
                         hollow=[False, False, True, False, False, False])], marks=[Mark(8, "half-peak 8")])
    text = svg.render(fig)
    root = ET.fromstring(text)
    ns = "{http://www.w3.org/2000/svg}"
    ticks = [t.text for t in root.iter(f"{ns}text") if t.text in ("1", "16", "256", "4K", "64K", "1M")]
    assert "1M" in ticks and "1" in ticks
    # None and 0 (not drawable on a log axis) split the curve into runs of points.
    lines = list(root.iter(f"{ns}polyline"))
    assert [len(p.get("points").split()) for p in lines] == [2]  # 1 | 4, 8 | 1M: one line of two points
    circles = list(root.iter(f"{ns}circle"))
    assert len(circles) == 4 and sum(c.get("fill") == "#ffffff" for c in circles) == 1
    assert any(t.text == "half-peak 8" for t in root.iter(f"{ns}text"))


def test_svg_linear_count_ticks_are_whole_numbers():
    fig = Figure("c", "Counts", figures.XAXES["active"], Axis("bandwidth (MB/s)", log=False),
                 [Series("a", [1, 2, 3], [10.0, 20.0, 30.0])])
    root = ET.fromstring(svg.render(fig))
    ns = "{http://www.w3.org/2000/svg}"
    y_bottom = max(float(t.get("y")) for t in root.iter(f"{ns}text") if t.get("text-anchor") == "middle"
                   and not t.get("class"))
    xt = [t.text for t in root.iter(f"{ns}text") if t.get("text-anchor") == "middle" and not t.get("class")
          and float(t.get("y")) == y_bottom]
    assert xt and all(re.fullmatch(r"\d+", x) for x in xt)


def test_svg_bars_and_escaping():
    fig = Figure("b", "Levels <&>", Axis("level", log=False), Axis("best (MB/s)", log=False),
                 bars=[("memory", 100.0), ("tcp", None)])
    text = svg.render(fig)
    root = ET.fromstring(text)  # the title's < and & are escaped
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text == "Levels <&>"
    assert len([r for r in root.iter(f"{ns}rect") if r.get("class") == "bar"]) == 1
    assert any(t.text == "not measured" for t in root.iter(f"{ns}text"))


def test_imported_results_report_and_plot_beside_a_run(runs, tmp_path):
    data = Path(__file__).parents[1] / "data" / "imports"
    osu = tmp_path / "osu.json"
    assert main(["import", str(data / "osu_latency_v5.txt"), "--from", "osu", "-o", str(osu)]) == 0
    page = tmp_path / "osu.html"
    assert main(["report", str(osu), str(runs["suite"]), "-o", str(page)]) == 0
    text = page.read_text()
    assert check_html(text)[0] == []
    assert "imported" in text and "no samples" in text and "no-interval" in text
    run = figures.RunView.of("osu", schema.load(osu))
    lat = figures.per_benchmark([run], "message.pingpong")[0]
    s = lat.series[0]
    assert s.band is not None and all(v is None for v in s.band[0])  # no interval drawn for a printed figure
    assert not any(s.hollow)  # imported points are not "unconverged"
    assert s.y[s.x.index(8)] == pytest.approx(1.6, rel=0.05)  # osu_latency's 8-byte row, in microseconds
    assert main(["plot", str(osu), str(runs["suite"]), "message.pingpong", "-o", str(tmp_path / "o.svg")]) == 0


def test_views_come_from_the_benchmark_facts():
    """A benchmark joins a view by naming it; every view named exists and shows something."""
    from fabriclab.suite.benchmarks import REGISTRY
    keys = {v.key for v in figures.VIEWS}
    named = {k for b in REGISTRY.values() for k in b.views}
    assert named == keys
    assert all(v.benches for v in figures.VIEWS)
    assert figures.VIEWS[0].benches == tuple(b.name for b in REGISTRY.values() if "strided" in b.views)


def _rate_point(bench, size, rate, ws, buffers=1, spread=0.01):
    """A launch's point of `bench` moving `size` bytes per op at `rate` bytes/s, with its working set."""
    from fabriclab.analysis.stats import summarize
    t = size / rate
    samples = [t * (1 + spread * (i - 5) / 5) for i in range(11)]
    return schema.Point(bench=bench, size=size, bytes_per_op=size, summary=summarize(samples), samples=samples,
                        buffers=buffers, working_set_bytes=ws, launch=0)


def test_ladder_holds_each_level_against_the_copy_of_its_working_set():
    M = 1 << 20
    copies = [_rate_point("memory.copy", s, r, s) for s, r in ((64 << 10, 50e9), (1 * M, 35e9), (4 * M, 30e9))]
    put = _rate_point("deposit.put_bw", 64 << 10, 25e9, 4 * M, buffers=64)          # 64 x 64 KiB: 4 MiB
    stream = _rate_point("message.stream", 32 << 10, 20e9, 2 * M, buffers=64)       # 2 MiB: between two copies
    ucx = _rate_point("ucx.put_bw", 1 * M, 8e9, 64 * M, buffers=64)                 # beyond every copy
    run = figures.RunView.of("x", docs.of([*copies, put, stream, ucx]))
    rungs = {r.level: r for r in figures.ladder_rows(run)}
    assert rungs["memory"].working_set is None and rungs["memory"].best_Bps == pytest.approx(50e9)
    dep = rungs["deposit"]
    assert (dep.working_set, dep.copy_how, dep.above) == (4 * M, "measured", "")
    assert dep.copy_Bps == pytest.approx(30e9)
    msg = rungs["message"]   # halfway between 1 and 4 MiB in log working set
    assert msg.copy_how == "interpolated between 1M and 4M" and msg.copy_Bps == pytest.approx(32.5e9)
    assert rungs["ucx"].copy_Bps is None
    note = figures.ladder([run])[0].note
    assert "no transfer level reads above memory.copy at its own working set" in note
    assert "no memory.copy at the working set of ucx (64M working set: fabriclab run memory.copy -s 64M)" in note
    # a level above the copy of its working set is named, with why (one host: the library's own copy)
    fast = _rate_point("deposit.put_bw", 64 << 10, 45e9, 4 * M, buffers=64)
    run = figures.RunView.of("y", docs.of([*copies, fast]))
    dep = next(r for r in figures.ladder_rows(run) if r.level == "deposit")
    assert dep.above.startswith("both ranks ran on one host")
    note = figures.ladder([run])[0].note
    assert "deposit (deposit.put_bw, 45 GB/s) reads above memory.copy's 30 GB/s at its 4M working set" in note
    # within the intervals of both: no difference to tell
    close = _rate_point("deposit.put_bw", 64 << 10, 30.1e9, 4 * M, buffers=64, spread=0.2)
    run = figures.RunView.of("z", docs.of([*copies, close]))
    assert "intervals overlap" in next(r for r in figures.ladder_rows(run) if r.level == "deposit").above
    text = html.render([("y", docs.of([*copies, fast]))])
    assert "memory.copy there" in text and "30 GB/s (below this level)" in text


def test_a_document_before_working_sets_reads_buffers_times_size():
    old = _rate_point("deposit.put_bw", 64 << 10, 45e9, None, buffers=1)
    run = figures.RunView.of("old", docs.of([_rate_point("memory.copy", 64 << 10, 50e9, None), old]))
    dep = next(r for r in figures.ladder_rows(run) if r.level == "deposit")
    assert dep.working_set == 64 << 10 and dep.copy_Bps == pytest.approx(50e9) and dep.above == ""
