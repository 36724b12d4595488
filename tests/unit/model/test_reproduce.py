"""`reproduce sci-myrinet-2002`: figures and findings."""

import json

import pytest

from fabriclab.errors import UsageError
from fabriclab.studies.sci_myrinet_2002.reproduce import run


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    st, found = run("sci-myrinet-2002", str(out))
    return out, st, {f.id: f for f in found}


def test_all_eight_figures_written(study):
    out, st, _ = study
    assert sorted(st.figures, key=int) == ["2", "3", "4", "9", "10", "13", "14", "15"]
    for path in st.figures.values():
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_findings_that_must_agree(study):
    _, _, f = study
    for fid in ("F1", "F2", "F5", "F6", "F7", "F8", "F10", "F18"):
        assert f[fid].verdict == "agrees", (fid, f[fid].model)
    # the Clos64 keeps full bandwidth; the exact bound of the others is not monotone (explained)
    assert f["F16"].verdict == "partly" and "never limit a node below 159.6" in f["F16"].model


def test_differences_are_explained(study):
    _, _, f = study
    for x in f.values():
        assert x.verdict in ("agrees", "differs", "partly", "example prices")
        if x.verdict in ("differs", "partly"):
            assert len(x.why) > 40, x.id


def test_model_crossovers(study):
    _, _, f = study
    assert "ring best up to 4 nodes" in f["F3"].model            # seed: five (no 5-node 2D torus exists)
    assert "from 64 nodes" in f["F4"].model                       # seed: "more than 64" / "about 64"
    assert "ring best up to 5 nodes" in f["F9"].model             # seed: four (calibrated)
    assert "8/20 × 360 = 144.0" in f["F8"].model
    assert f["F13"].verdict == "example prices" and "example" in f["F13"].why


def test_exact_myrinet_mostly_below_published_average(study):
    """Eq. 12's weighted mean of remote and same-switch bandwidth is optimistic: above the
    exact minimum for large linear arrays and 2-cable rings, far above it at 128 nodes."""
    _, st, _ = study
    for key in ("myrinet-minimal", "myrinet-ring2"):
        pub = {p.n: p.overall for p in st.pub_myr[(key, True)]}
        for p in st.calibrated[key].points:
            if p.n > 24:
                assert p.per_node <= pub[p.n] * 1.0001, (key, p.n)
        assert st.calibrated[key].at(128).per_node < 0.7 * pub[128]


def test_cli_reproduce_json(run_cli, tmp_path):
    rc, out = run_cli("reproduce", "sci-myrinet-2002", "--output", str(tmp_path), "-f", "json", "--plot-format", "svg")
    assert rc == 0
    doc = json.loads(out)
    assert len(doc["findings"]) >= 15
    assert all(p.endswith(".svg") for p in doc["figures"].values())


def test_unknown_study():
    with pytest.raises(UsageError):
        run("nope", "/tmp")
