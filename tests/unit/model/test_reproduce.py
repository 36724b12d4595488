"""`reproduce sci-myrinet-2002`: figures and findings.

The study is computed and drawn once (`study`), through the command line as
a user runs it with SVG figures and JSON output; every test reads that run.
The PNG the figures are drawn as by default is model/plot.py's, checked in
test_crossover_published_plot.py; here the default is checked to be PNG."""

import inspect
import json
import xml.etree.ElementTree as ET

import pytest

from fabriclab.errors import UsageError
from fabriclab.studies.sci_myrinet_2002 import reproduce
from fabriclab.studies.sci_myrinet_2002.reproduce import run


@pytest.fixture(scope="module")
def study(tmp_path_factory, seed_model_once):
    """(figure folder, the Study, findings by id, the command's exit code and JSON output)."""
    import contextlib
    import io
    from fabriclab.cli import main
    out = tmp_path_factory.mktemp("repro")
    kept = {}
    computed = reproduce.run

    def keep(*args, **kw):          # the command's own run, kept for the tests that read its numbers
        kept["st"], kept["found"] = computed(*args, **kw)
        return kept["st"], kept["found"]
    text = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(text):
        mp.setattr(reproduce, "run", keep)
        rc = main(["reproduce", "sci-myrinet-2002", "--output", str(out), "-f", "json", "--plot-format", "svg"])
    return out, kept["st"], {f.id: f for f in kept["found"]}, rc, text.getvalue()


def test_all_eight_figures_written(study):
    out, st, _, _, _ = study
    assert sorted(st.figures, key=int) == ["2", "3", "4", "9", "10", "13", "14", "15"]
    ns = "{http://www.w3.org/2000/svg}"
    for num, path in st.figures.items():
        assert path == str(out / f"figure{num}.svg")
        assert ET.parse(path).getroot().tag == f"{ns}svg"           # a whole SVG document


def test_figures_are_png_unless_asked():
    import argparse
    from fabriclab.cli.model import register_reproduce
    p = argparse.ArgumentParser()
    register_reproduce(p.add_subparsers())
    assert p.parse_args(["reproduce", "sci-myrinet-2002"]).plot_format == "png"
    assert inspect.signature(run).parameters["fmt"].default == "png"


def test_findings_that_must_agree(study):
    _, _, f, _, _ = study
    for fid in ("F1", "F2", "F5", "F6", "F7", "F8", "F10", "F18"):
        assert f[fid].verdict == "agrees", (fid, f[fid].model)
    # the Clos64 keeps full bandwidth; the exact bound of the others is not monotone (explained)
    assert f["F16"].verdict == "partly" and "never limit a node below 159.6" in f["F16"].model


def test_differences_are_explained(study):
    _, _, f, _, _ = study
    for x in f.values():
        assert x.verdict in ("agrees", "differs", "partly", "example prices")
        if x.verdict in ("differs", "partly"):
            assert len(x.why) > 40, x.id


def test_model_crossovers(study):
    _, _, f, _, _ = study
    assert "ring best up to 4 nodes" in f["F3"].model            # seed: five (no 5-node 2D torus exists)
    assert "from 64 nodes" in f["F4"].model                       # seed: "more than 64" / "about 64"
    assert "ring best up to 5 nodes" in f["F9"].model             # seed: four (calibrated)
    assert "8/20 × 360 = 144.0" in f["F8"].model
    assert f["F13"].verdict == "example prices" and "example" in f["F13"].why


def test_exact_myrinet_mostly_below_published_average(study):
    """Eq. 12's weighted mean of remote and same-switch bandwidth is optimistic: above the
    exact minimum for large linear arrays and 2-cable rings, far above it at 128 nodes."""
    _, st, _, _, _ = study
    for key in ("myrinet-minimal", "myrinet-ring2"):
        pub = {p.n: p.overall for p in st.pub_myr[(key, True)]}
        for p in st.calibrated[key].points:
            if p.n > 24:
                assert p.per_node <= pub[p.n] * 1.0001, (key, p.n)
        assert st.calibrated[key].at(128).per_node < 0.7 * pub[128]


def test_cli_reproduce_json(study):
    _, st, f, rc, out = study
    assert rc == 0
    doc = json.loads(out)
    assert len(doc["findings"]) >= 15 and [x["id"] for x in doc["findings"]] == list(f)
    assert all(p.endswith(".svg") for p in doc["figures"].values()) and doc["figures"] == st.figures


def test_unknown_study():
    with pytest.raises(UsageError):
        run("nope", "/tmp")
