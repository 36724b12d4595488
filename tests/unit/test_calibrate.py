"""`fabriclab calibrate`: saturation points of a (fake-core) run become a
calibration file that the model reads back."""

import pytest
import yaml

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.model.calibration import load_file
from fabriclab.report.tables import derived, rows


@pytest.fixture
def runs(fake_core, tmp_path, monkeypatch):
    common = ["--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-q", "-L", "2"]
    monkeypatch.setenv("FAKECORE_RANKS", "4")
    assert main(["run", "message.saturation", "-n", "4", "-s", "64K,1M", *common, "-o", str(tmp_path / "sat.json")]) == 0
    monkeypatch.delenv("FAKECORE_RANKS")
    assert main(["run", "message.stream", "-s", "1K,1M", *common, "-o", str(tmp_path / "st.json")]) == 0
    return tmp_path


def test_calibration_from_saturation(runs, capsys):
    out = runs / "cal.yaml"
    assert main(["calibrate", str(runs / "sat.json"), "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    doc = schema.load(runs / "sat.json")
    plateau = derived(doc, rows(doc))["message.saturation"]["saturation"][1 << 20]
    m = data["link"]
    assert m["value"] == pytest.approx(plateau["rate_Bps"] / 1e6, abs=1e-3)
    assert m["ci_MBps"][0] <= m["value"] <= m["ci_MBps"][1]
    assert "message.saturation at 1M" in m["source"] and f"run {doc.header.run_id}" in m["source"]
    assert m["date"] == doc.header.start_time[:10]
    assert load_file(str(out)).common["link"] == pytest.approx(m["value"] * 1e6)   # the model reads it back


def test_calibration_per_technology_and_from_streams(runs, capsys):
    assert main(["calibrate", str(runs / "st.json")]) == 2
    assert "no message.saturation points" in capsys.readouterr().err
    out = runs / "cal.yaml"
    assert main(["calibrate", str(runs / "st.json"), "--stream", "--technology", "myrinet-m2l", "-o", str(out)]) == 0
    cal = load_file(str(out))
    assert set(cal.by_tech) == {"myrinet-m2l"} and "link" in cal.by_tech["myrinet-m2l"]
    assert "message.stream peak" in yaml.safe_load(out.read_text())["myrinet-m2l"]["link"]["source"]


@pytest.mark.parametrize("argv,says", [
    (["--technology", "no-such-tech"], "unknown technology 'no-such-tech'"),
    (["--technology", "myrinet-m2l", "--resource", "warp_drive"], "technology myrinet-m2l has no resource 'warp_drive'"),
    (["--resource", "link\x1b[2J"], "is no resource name"),
    (["--resource", " , "], "--resource names no resource"),
    (["--collectives", "--stream"], "--stream calibrate a rate; --collectives writes alpha and gamma"),
    (["--collectives", "--bidirectional", "--resource", "adapter_bus"], "--bidirectional, --resource calibrate"),
])
def test_a_calibration_for_nothing_the_model_has_is_refused_before_anything_is_written(runs, capsys, argv, says):
    out = runs / "cal.yaml"
    assert main(["calibrate", str(runs / "sat.json"), "-o", str(out), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err and "\x1b" not in err, err
    assert not out.exists()


def test_alpha_and_gamma_from_a_ping_pong_and_a_local_reduction(fake_core, tmp_path, capsys):
    """--collectives: alpha is the ping-pong's one-way time at its smallest size, gamma the local
    reduction's seconds per byte at its largest; the model reads both back (and uses them)."""
    common = ["--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-q", "-L", "2"]
    run, out = tmp_path / "ab.json", tmp_path / "ab.yaml"
    assert main(["run", "message.pingpong", "coll.reduce_local", "-s", "8,64K,1M", *common, "-o", str(run)]) == 0
    assert main(["calibrate", str(run), "--collectives", "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    doc = schema.load(run)
    rs = rows(doc)
    ping = next(r for r in rs if r.bench == "message.pingpong" and r.size == 8)
    red = min((r for r in rs if r.bench == "coll.reduce_local" and r.size == 1 << 20), key=lambda r: r.active)
    assert data["alpha_s"]["value"] == pytest.approx(ping.median_s / 2, rel=1e-3)
    assert data["gamma_s_per_byte"]["value"] == pytest.approx(1 / red.bandwidth_Bps, rel=1e-3)
    for m in data.values():
        assert m["ci_s"][0] <= m["value"] <= m["ci_s"][1] and f"run {doc.header.run_id}" in m["source"]
    cal = load_file(str(out))
    assert cal.alpha_s == data["alpha_s"]["value"] and not cal    # costs, no rates
    assert f"at 1M on {red.active} ranks" in data["gamma_s_per_byte"]["source"]
    only = tmp_path / "st.json"
    assert main(["run", "message.stream", "-s", "1K", *common, "-o", str(only)]) == 0
    assert main(["calibrate", str(only), "--collectives"]) == 2
    assert "neither message.pingpong nor coll.reduce_local" in capsys.readouterr().err
