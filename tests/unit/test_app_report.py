"""The applications in the report, `show` and `plot`, on runs of the fake core."""
import json
import os
import re
import statistics
import xml.etree.ElementTree as ET

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.report import app_views as apps, figures, html, svg
from fabriclab.report.figure import Axis, Figure
from fabriclab.units import fmt_bytes, parse_sizes

from fakebuild import fake_core  # noqa: E402
from htmlcheck import check_html  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"
VARIANTS = ["-p", "mode=packed,datatype,deposit", "-p", "elem=4,8,64"]


def _run(d, name, *argv) -> str:
    fake = fake_core(d)
    out = d / f"{name}.json"
    os.environ["FAKECORE_RANKS"] = "4"
    try:
        assert main(["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-q", "-L", "1", "-n", "4",
                     "-o", str(out), *argv]) == 0
    finally:
        del os.environ["FAKECORE_RANKS"]
    return str(out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The three apps on 1, 2 and 4 ranks with their variants; weak scaling; no 1-rank point; no app at all."""
    d = tmp_path_factory.mktemp("apps")
    return {"apps": _run(d, "apps", "app", *VARIANTS),
            "weak": _run(d, "weak", "app.matmul", "app.sort", "-s", "256,4K", "-p", "scale=weak"),
            "no1": _run(d, "no1", "app.sort", "-s", "64K,1M", "--active", "2,4"),
            "plain": _run(d, "plain", "message.pingpong", "message.stream", "-s", "1:64K:x4"), "dir": d}


def _view(path, name="r"):
    return figures.RunView.of(name, schema.load(path))


@pytest.fixture(scope="module")
def apps_run(runs):
    """The view of the apps' run, read once for the tests that only read it."""
    return _view(runs["apps"])


def _ids(text: str) -> list[str]:
    return re.findall(r'<figure id="fig-([^"]+)"', text)


def test_the_app_views_appear_in_the_report(runs):
    out = runs["dir"] / "apps.html"
    assert main(["report", runs["apps"], "-o", str(out)]) == 0
    text = out.read_text()
    assert check_html(text)[0] == []
    ids = _ids(text)
    for fid in ("speedup-app-matmul-strong", "speedup-app-sort-strong", "sort-rate-keys-app-sort",
                "sort-rate-bytes-app-sort", "transpose-app-transpose", "transpose-ranks-app-transpose",
                "phases-app-transpose", "phases-app-transpose-mode-datatype", "phases-app-transpose-mode-deposit",
                "phases-app-matmul", "phases-app-sort", "phases-app-sort-elem-4", "phases-app-sort-elem-64",
                "app-matmul-rate-vs-ranks", "app-matmul-communication", "app-sort-rate", "app-transpose-time"):
        assert fid in ids, fid
    for key in ("transpose", "speedup", "sort-rate", "phases", "apps"):
        assert f'href="#{"" if key == "apps" else "view-"}{key}"' in text
    # the apps' table: every rank count at the largest size, with rate, speedup and split
    assert '<h2 id="apps">' in text and "GFLOP/s" in text and "pack " in text and "gather " in text


def test_speedup_is_one_on_one_rank_and_t1_over_tn(apps_run):
    run = apps_run
    figs = {f.id: f for f in apps.speedup([run])}
    assert set(figs) == {"speedup-app-matmul-strong", "speedup-app-sort-strong"}
    for fig in figs.values():
        *measured, ideal = fig.series
        assert ideal.dashed and not ideal.markers and ideal.x == [1, 2, 4] and ideal.y == [1.0, 2.0, 4.0]
        assert measured and all(s.x[0] == 1 and s.y[0] == pytest.approx(1.0) for s in measured)
        assert "t(1) / t(N)" in fig.note and not fig.y.log
    # strong scaling: the same problem, so rate(N) / rate(1) = t(1) / t(N)
    rows = {(r.size, r.active): r for r in run.rows if r.bench == "app.matmul"}
    top = max(parse_sizes(REGISTRY["app.matmul"].sizes))
    curve = next(s for s in figs["speedup-app-matmul-strong"].series if s.label == f"n = {fmt_bytes(top)}")
    assert curve.y == pytest.approx([rows[(top, 1)].median_s / rows[(top, a)].median_s for a in curve.x])
    # sizes picked evenly when every variant's sizes would not fit: at most 8 curves and the ideal line
    assert len(figs["speedup-app-sort-strong"].series) <= 9


def test_weak_scaling_gives_the_scaled_speedup(runs):
    run = _view(runs["weak"])
    figs = {f.id: f for f in apps.speedup([run])}
    assert set(figs) == {"speedup-app-matmul-weak", "speedup-app-sort-weak"}
    fig = figs["speedup-app-sort-weak"]
    assert "scaled speedup" in fig.y.label and "Gustafson" in fig.note
    curve = next(s for s in fig.series if s.label == "4K keys per rank")
    rows = {r.active: r for r in run.rows if r.bench == "app.sort" and r.size == 4096}
    keys = {a: r.point.info["keys"] for a, r in rows.items()}
    assert keys == {1: 4096, 2: 8192, 4: 16384}   # the problem grows with N
    rate = {a: keys[a] / r.median_s for a, r in rows.items()}
    assert curve.y == pytest.approx([rate[a] / rate[1] for a in curve.x])
    matmul = {r.active: r for r in run.rows if r.bench == "app.matmul" and r.size == 256}
    assert [matmul[a].point.info["n"] for a in (1, 2, 4)] == [256, 323, 406]  # n cbrt(N)


def test_no_speedup_without_a_one_rank_point(runs, capsys):
    run = _view(runs["no1"])
    assert all(r.speedup is None for r in run.rows)
    (fig,) = apps.speedup([run])
    assert [s.label for s in fig.series] == ["ideal (speedup = N)"]
    assert "no 1-rank point, so no speedup, for 64K keys, 1M keys" in fig.note
    assert main(["show", runs["no1"]]) == 0
    table = capsys.readouterr().out
    assert re.search(r"\n\s+1M\s+4 .* - ", table)     # the speedup column says it has none


def test_sort_rate_has_a_curve_per_element_size(apps_run):
    run = apps_run
    keys, mbps = apps.sort_rate([run])
    top = max(parse_sizes(REGISTRY["app.sort"].sizes))      # the default sweep's largest
    assert [s.label for s in keys.series] == [f"E = {e} B, {fmt_bytes(top)} keys" for e in (4, 8, 64)]
    assert keys.x.label.startswith("ranks") and "keys" in keys.y.label and "MB/s" in mbps.y.label
    for ks, bs, e in zip(keys.series, mbps.series, (4, 8, 64)):
        rows = {r.active: r for r in run.rows if r.bench == "app.sort" and r.size == top
                and r.point.params["elem"] == str(e)}
        assert ks.x == [1, 2, 4]
        assert ks.y == pytest.approx([top / rows[a].median_s / 1e6 for a in ks.x])
        assert bs.y == pytest.approx([top * e / rows[a].median_s / 1e6 for a in bs.x])
        assert ks.band is not None


def test_transpose_has_a_curve_per_mode_at_the_most_ranks(apps_run):
    run = apps_run
    by_size, by_ranks = apps.transpose([run])
    assert [s.label for s in by_size.series] == ["packed", "datatype", "deposit (stores)"]
    assert "(N = 4)" in by_size.title and by_size.x.label == "array side M (words)"
    for s in by_size.series:
        mode = s.label.split(" ")[0]
        rows = {r.size: r for r in run.rows if r.bench == "app.transpose" and r.active == 4
                and r.point.params["mode"] == mode}
        assert s.x == [256, 512, 1024, 2048, 4096]
        assert s.y == pytest.approx([8 * m * m / rows[m].median_s / 1e9 for m in s.x])   # the array's bytes
    assert by_ranks.series[0].x == [1, 2, 4] and "(M = 4K)" in by_ranks.title


def test_phases_are_stacked_shares_of_the_op(apps_run):
    run = apps_run
    figs = {f.id: f for f in apps.phases([run])}
    assert figs["phases-app-transpose"].parts == ["pack", "exchange", "unpack", "other"]
    assert figs["phases-app-transpose-mode-datatype"].parts == ["exchange", "other"]
    assert figs["phases-app-matmul"].parts == ["gather", "multiply", "other"]
    assert figs["phases-app-sort"].parts == ["bucket", "exchange", "sort", "other"]
    fig = figs["phases-app-transpose"]
    assert [c for c, _ in fig.bars] == ["N=1", "N=2", "N=4"]
    row = next(r for r in run.rows if r.bench == "app.transpose" and r.variant == "" and r.size == 4096
               and r.active == 4)
    pack = statistics.median(row.point.phases["pack"])
    assert fig.bars[2][1][0] == pytest.approx(pack / row.median_s * 100)
    assert all(sum(v) == pytest.approx(100) for _, v in fig.bars)       # the parts and `other` fill the op
    root = ET.fromstring(svg.render(fig))
    assert len([r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]) == 3 * 4
    assert {t.text for t in root.iter(f"{NS}text")} >= {"pack", "exchange", "unpack", "other"}   # the legend


def test_matmul_reports_gflops_and_its_communication(apps_run):
    run = apps_run
    figs = {f.id: f for f in apps.app_figures([run], "app.matmul")}
    comm = figs["app-matmul-communication"]
    rate = figs["app-matmul-rate-vs-ranks"]
    assert rate.y.label.startswith("GFLOP/s") and comm.y.label.startswith("gather phase")
    r = next(r for r in run.rows if r.bench == "app.matmul" and r.size == 1024 and r.active == 4)
    s = next(s for s in rate.series if s.label == "n = 1K")
    assert s.y[s.x.index(4)] == pytest.approx(2 * 1024 ** 3 / r.median_s / 1e9)
    s = next(s for s in comm.series if s.label == "n = 1K")
    assert s.y[0] == 0 and s.y[s.x.index(4)] == pytest.approx(r.phases_s["gather"] / r.median_s * 100)


def test_show_gives_rate_speedup_and_phases(runs, apps_run, capsys):
    assert main(["show", runs["apps"]]) == 0
    table = capsys.readouterr().out
    for head in ("GFLOP/s", "Mkeys/s", "array GB/s", "speedup", "pack", "gather", "bucket", "matrix side n"):
        assert head in table, head
    assert "half-peak" not in table and re.search(r"app\.matmul: best [\d.]+ GFLOP/s", table)
    from fabriclab.report.summary import benchmark_rows     # the summary a run ends with
    best = {r[0]: r[2] for r in benchmark_rows(apps_run.doc)}
    top = fmt_bytes(max(parse_sizes(REGISTRY["app.matmul"].sizes)))
    assert re.fullmatch(rf"[\d.]+ GFLOP/s @{top} n=4", best["app.matmul"])
    top = fmt_bytes(max(parse_sizes(REGISTRY["app.sort"].sizes)))
    assert best["app.sort [elem=64]"].endswith(f"Mkeys/s @{top} n=4")
    assert main(["show", runs["apps"], "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    doc = apps_run.doc.to_dict()      # docs.read: the checked document as JSON data
    rows = {(r["bench"], r["variant"], r["size"], r["active"]): r for r in out["rows"]}
    for p in docs.points(doc):
        r = rows[(p["bench"], p["variant"], p["size"], p["active"])]
        assert r["phases_s"] == pytest.approx({k: statistics.median(v) for k, v in p["phases"].items()})
        if p["bench"] == "app.matmul":
            assert r["flops_per_s"] == pytest.approx(p["info"]["flops"] / r["median_s"])
        if p["bench"] == "app.sort":
            assert r["keys_per_s"] == pytest.approx(p["info"]["keys"] / r["median_s"])
        assert (r["speedup"] == pytest.approx(1.0)) if p["active"] == 1 else r["speedup"] > 1
    assert main(["show", runs["apps"], "-f", "csv"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("app.transpose,"))
    assert '"{""pack"": ' in line           # phases as JSON in their cell


def test_the_exchange_phase_beside_the_model(runs):
    """The run's exchange_model block (verdicts/exchange_prediction.py) as the report's table."""
    doc = schema.load(runs["apps"])
    doc.add_block("exchange_model", {"network": "two-switches.yaml", "calibration": None, "tolerance": 0.15,
                             "rows": [{"bench": "app.sort", "variant": "elem=64", "size": 16 << 20, "active": 4,
                                       "measured_s": 0.0123, "predicted_s": 0.0111, "ratio": 0.0123 / 0.0111,
                                       "verdict": "agrees", "bottleneck": "link trunk (s0\u2192s1)"}]})
    text = html.render([("apps", doc)])
    assert check_html(text)[0] == []
    assert "Exchange phase: measured vs predicted by the model" in text
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", text[text.index("Exchange phase"):])
    assert cells[:9] == ["app.sort [elem=64]", "16M keys", "4", "12.3 ms", "11.1 ms", "1.108", "agrees",
                         "link trunk (s0\u2192s1)", "two-switches.yaml"]
    del doc.blocks["exchange_model"]
    assert "Exchange phase" not in html.render([("apps", doc)]) and 'id="apps"' in html.render([("apps", doc)])


def test_a_document_without_app_points_is_unchanged(runs, monkeypatch, capsys):
    doc = schema.load(runs["plain"])
    stamp = re.compile(r"Generated [^<]* by")
    with_apps = stamp.sub("", html.render([("plain", doc)]))
    monkeypatch.setattr(figures, "VIEWS", tuple(v for v in figures.VIEWS
                                                if v.key not in ("transpose", "speedup", "sort-rate", "phases")))
    monkeypatch.setattr(html, "_apps", lambda runs: [])
    assert stamp.sub("", html.render([("plain", doc)])) == with_apps
    assert 'id="apps"' not in with_apps and "view-speedup" not in with_apps
    assert main(["show", runs["plain"]]) == 0
    table = capsys.readouterr().out
    assert "speedup" not in table and "GFLOP/s" not in table and "half-peak size" in table
    assert main(["show", runs["plain"], "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert all(r["speedup"] is None and r["phases_s"] is None and r["flops_per_s"] is None for r in rows)


def test_stacked_bars_in_svg_and_png(tmp_path):
    fig = Figure("s", "Split", Axis("ranks", log=False), Axis("share (%)", log=False),
                 bars=[("N=1", [60.0, 40.0]), ("N=2", [None, None]), ("N=4", [30.0, 70.0])], parts=["a", "b"])
    root = ET.fromstring(svg.render(fig))
    rects = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]
    assert len(rects) == 4 and any(t.text == "not measured" for t in root.iter(f"{NS}text"))
    # bottom up: a segment's top is the next one's bottom
    a, b = rects[:2]
    assert float(a.get("y")) == pytest.approx(float(b.get("y")) + float(b.get("height")))
    from fabriclab.report.raster import render_png
    render_png(fig, str(tmp_path / "s.png"))
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_an_apps_rate(runs, tmp_path):
    out = tmp_path / "mm.svg"
    assert main(["plot", runs["apps"], "app.matmul", "--metric", "rate", "--x", "active", "-o", str(out)]) == 0
    labels = {t.get("class"): t.text for t in ET.parse(out).getroot().iter(f"{NS}text") if t.get("class")}
    assert labels["ylabel"] == "GFLOP/s (10^9 floating-point operations/s)"
