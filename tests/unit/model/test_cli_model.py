"""`fabriclab model` in-process: tables, JSON, plots, calibration, cost, errors."""

import json

import pytest
import yaml

from fabriclab.errors import UsageError
from fabriclab.cli.model import parse_nodes


def test_parse_nodes():
    assert parse_nodes("9") == [9]
    assert parse_nodes("4,9,16") == [4, 9, 16]
    assert parse_nodes("2:6") == [2, 3, 4, 5, 6]
    assert parse_nodes("2:1000") == [2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert parse_nodes("16:64:+16") == [16, 32, 48, 64]
    assert parse_nodes("64K") == [65536]
    for bad in ("", "x", "9:2", "2:9:x1", "2:9:-1", "1", "200000", "2:3:4"):
        with pytest.raises(UsageError):
            parse_nodes(bad)


def test_table_with_bottlenecks_and_crossover(run_cli, tmp_path):
    rc, out = run_cli("model", "--nodes", "2:20", "--system", "sci-ring", "--system", "sci-2d",
                      "--output", str(tmp_path))
    assert rc == 0
    assert "B-Link" in out and "SCI link, dimension 1" in out
    assert "Best per-node bandwidth: SCI - Ring best up to 4 nodes, then SCI - 2D torus" in out
    assert (tmp_path / "model.png").exists()


def test_json_output_is_complete(run_cli, tmp_path):
    rc, out = run_cli("model", "--nodes", "9,16", "--system", "sci-2d", "--system", "myrinet-clos64", "-c", "catalog",
                      "--cost", "-f", "json", "--plot-format", "svg", "--output", str(tmp_path))
    doc = json.loads(out)
    assert rc == 0 and doc["schema"] == "fabriclab.model/1" and doc["calibrated"]
    sci = doc["systems"][0]["points"][0]
    assert sci["n"] == 9 and sci["per_node_bytes_per_s"] == pytest.approx(144e6)
    assert sci["nominal_bytes_per_s"] > sci["per_node_bytes_per_s"]
    assert sci["bottleneck"] == "B-Link" and sci["cost_usd"] > 0 and sci["usd_per_MBps"] > 0
    assert doc["plot"].endswith(".svg")


def test_calibration_flags_and_file(run_cli, tmp_path):
    f = tmp_path / "cal.yaml"
    f.write_text(yaml.safe_dump({"sci-d33x": {"link": 390, "adapter_bus": {"value": 360, "source": "run",
                                                                            "date": "2024"}}}))
    rc, out1 = run_cli("model", "--nodes", "9", "--system", "sci-2d", "-C", str(f), "-f", "json", "--no-plot")
    rc, out2 = run_cli("model", "--nodes", "9", "--system", "sci-2d", "-c", "sci-d33x.adapter_bus=360",
                       "-c", "link=390",
                       "-f", "json", "--no-plot")
    a, b = json.loads(out1), json.loads(out2)
    assert a["systems"][0]["points"][0]["per_node_bytes_per_s"] == pytest.approx(144e6)
    assert b["systems"][0]["points"][0]["per_node_bytes_per_s"] == pytest.approx(144e6)


def test_published_and_target(run_cli, tmp_path):
    rc, out = run_cli("model", "--nodes", "9,16,32", "--system", "sci-2d", "--system", "myrinet-minimal",
                      "-c", "catalog", "-P",
                      "--cost", "--target", "130", "--output", str(tmp_path))
    assert rc == 0
    assert "(as published)" in out
    assert "Cheapest system giving every node at least 130 MB/s" in out
    assert "Best cost effectiveness" in out
    rc, out = run_cli("model", "--nodes", "9,16,32", "--system", "sci-2d", "--system", "myrinet-minimal",
                      "-c", "catalog", "-P",
                      "--cost", "--target", "130", "-f", "json", "--no-plot")
    doc = json.loads(out)
    pub = {c["system"]: {p["n"]: p["per_node_bytes_per_s"] for p in c["points"]} for c in doc["published"]}
    # seed 001 Eq. 1, 2 with the measured 390 / 360 MB/s: 3×3 torus, hot B-Link 20 → 8/20 × 360
    assert pub["sci-2d:published"][9] == pytest.approx(8 / 20 * 360e6)
    # beside it, the same formulas at the catalog's nominal rates, not the calibrated figure again
    nominal = {c["system"]: {p["n"]: p["nominal_bytes_per_s"] for p in c["points"]} for c in doc["published"]}
    assert nominal["sci-2d:published"][9] > pub["sci-2d:published"][9]
    for row in doc["target"]:
        ok = [(p["cost_usd"], s["system"]) for s in doc["systems"] for p in s["points"]
              if p["n"] == row["n"] and p["per_node_bytes_per_s"] >= 130e6 and p["cost_usd"] is not None]
        if not ok:
            assert row["cheapest"] is None
        else:
            assert (row["cheapest"]["cost_usd"], row["cheapest"]["system"]) == min(ok)


def test_other_traffic_and_spec_systems(run_cli, tmp_path):
    rc, out = run_cli("model", "--nodes", "16", "--system", "infiniband-ndr:folded-clos:oversubscription=3",
                      "-T", "permutation", "--no-plot")
    assert rc == 0 and "random permutation" in out


def test_topology_file(run_cli, tmp_path):
    f = tmp_path / "n.yaml"
    f.write_text(yaml.safe_dump({"nodes": 3, "switches": 1, "default_rate_MBps": 10,
                                 "links": [["n0", "s0"], ["n1", "s0"], ["n2", "s0"]]}))
    rc, out = run_cli("model", "--nodes", "4", "--system", "sci-2d", "--topology-file", str(f), "--no-plot")
    assert rc == 0 and "n [file:" in out and "link n0-s0 (n0→s0)" in out
    assert "Best per-node bandwidth: n best up to 3 nodes, then SCI - 2D torus" in out


def _two_switch_file(tmp_path, **extra) -> str:
    """8 nodes on two switches joined by a 2-cable trunk: the trunk (16 messages per cable) decides."""
    links = [[f"n{i}", f"s{i // 4}"] for i in range(8)] + [{"a": "s0", "b": "s1", "count": 2, "name": "trunk"}]
    f = tmp_path / "two.yaml"
    f.write_text(yaml.safe_dump({"name": "two switches", "nodes": 8, "switches": 2, "default_rate_MBps": 160,
                                 "links": links, **extra}))
    return str(f)


def _file_curve(doc):
    (c,) = [c for c in doc["systems"] if c["system"].startswith("file:")]
    return c


def test_topology_file_alone_is_a_system_with_cost_payload_maxmin_and_plot(run_cli, tmp_path):
    f = _two_switch_file(tmp_path, packet={"payload_B": 4096, "overhead_B": 6},
                         prices={"adapter": "myrinet-nic", "switch": "myrinet-switch16",
                                 "cable": {"value": 50, "source": "example", "date": "2024"}})
    rc, out = run_cli("model", "--topology-file", f, "--cost", "-M", "--target", "100", "-f", "json",
                      "--plot-format", "svg",
                      "--output", str(tmp_path))
    doc = json.loads(out)
    assert rc == 0 and len(doc["systems"]) == 1          # no default systems beside the file
    (p,) = _file_curve(doc)["points"]
    eff = 4096 / 4102
    assert p["n"] == 8 and p["per_node_bytes_per_s"] == pytest.approx(7 / 8 * 160e6 * eff)
    assert p["bottleneck"] == "link trunk (s0→s1), cable 1 of 2"
    assert p["cost_usd"] == pytest.approx(8 * 1400 + 2 * 4000 + 10 * 50)     # 8 host cables + 2 trunk cables
    assert p["usd_per_MBps"] == pytest.approx(p["cost_usd"] / (8 * p["per_node_bytes_per_s"] / 1e6))
    assert doc["best"] == "two switches best at 8 nodes"
    assert [m["n"] for m in doc["maxmin"]] == [8] and doc["maxmin"][0]["max"] <= 160e6 * eff * (1 + 1e-9)
    assert doc["target"] == [{"n": 8, "target_MBps": 100.0, "cheapest": {
        "system": _file_curve(doc)["system"], "cost_usd": p["cost_usd"], "per_node_bytes_per_s": p["per_node_bytes_per_s"]}}]
    assert "two switches" in (tmp_path / "model.svg").read_text()
    rc, out = run_cli("model", "--topology-file", f, "--payload", "64", "-f", "json", "--no-plot")
    (q,) = _file_curve(json.loads(out))["points"]
    assert q["per_node_bytes_per_s"] == pytest.approx(7 / 8 * 160e6 * 64 / 70)


def test_topology_file_calibration_by_link_name(run_cli, tmp_path):
    f = _two_switch_file(tmp_path)
    rc, out = run_cli("model", "--topology-file", f, "-c", "trunk=100", "-c", "link=150", "-f", "json", "--no-plot")
    (p,) = _file_curve(json.loads(out))["points"]
    assert p["per_node_bytes_per_s"] == pytest.approx(7 / 8 * 100e6)     # the trunk's own measurement wins
    assert p["nominal_bytes_per_s"] == pytest.approx(7 / 8 * 160e6)
    rc, out = run_cli("model", "--topology-file", f, "-c", "links[8]=100", "-c", "trunk=120", "-f", "json",
                      "--no-plot")
    (p,) = _file_curve(json.loads(out))["points"]
    assert p["per_node_bytes_per_s"] == pytest.approx(7 / 8 * 100e6)     # the link's index wins over its name
    assert "exceeds its rate 160 MB/s" in _one_line_error(run_cli, "--topology-file", f, "-c", "link=200", "--no-plot")
    assert "belongs to none" in _one_line_error(run_cli, "--topology-file", f, "-c", "trnk=100", "--no-plot")
    rc, out = run_cli("model", "--topology-file", f, "--system", "myrinet-clos64", "--nodes", "8", "-f", "json",
                      "--no-plot")
    doc = json.loads(out)
    assert [c["system"] for c in doc["systems"]][0] == "myrinet-clos64" and len(doc["systems"]) == 2
    assert doc["best"].startswith("Myrinet - Clos64")


def test_list(run_cli):
    rc, out = run_cli("model", "--list")
    assert rc == 0 and "sci-d33x" in out and "seed 001 Table 1" in out and "myrinet-clos64" in out


@pytest.mark.parametrize("argv,msg", [
    (["--system", "nope"], "unknown system"),
    (["--system", "sci-d33x:hypercube"], "unknown topology family"),
    (["--system", "sci-d33x:torus:colour=3"], "has no parameter 'colour'"),
    (["-c", "link"], "is not RESOURCE=MBps"),
    (["-c", "link=-4"], "must be positive"),
    (["-c", "sci-d33x.bogus=4", "--system", "sci-2d"], "has no resource 'bogus'"),
    (["--nodes", "0:4"], "between 2 and"),
    (["--topology-file", "/nonexistent.yaml"], "cannot read"),
    (["--system", "myrinet-clos64", "-T", "all-to-all", "--prices", "/nonexistent.yaml"], "cannot read"),
    (["--system", "sci-d33x:torus:dims=0", "--nodes", "4"], "must be"),
    (["--system", "infiniband-ndr:dragonfly:p=2,a=4,h=2,g=4"], "divide"),
    (["--system", "infiniband-ndr:xgft:m=4/4,w=2/4", "--nodes", "8"], "w1 must be 1"),
    (["--system", "sci-2d", "-c", "scix.link=390"], "unknown technology 'scix'"),
    (["--system", "sci-2d", "-c", "lnk=390"], "'lnk' belongs to none of the selected technologies"),
    (["--system", "qsnet-fattree", "-c", "adapter_bus=300"], "belongs to none of the selected"),
    (["--system", "sci-2d", "--system", "myrinet-minimal", "-c", "link=390"], "exceeds its gross rate 160 MB/s"),
    (["--system", "sci-2d", "-c", "sci-d33x.link=700"], "exceeds its gross rate"),
    (["--system", "sci-2d", "-c", "link=inf"], "positive and finite"),
    (["--system", "quadrics-qsnet:kary-tree:k=1", "--nodes", "8"], "fat-tree arity k must be between 2 and 1024"),
    (["--system", "quadrics-qsnet:kary-tree:k=1.5", "--nodes", "8"], "fat-tree arity k must be an integer"),
    (["--system", "quadrics-qsnet:kary-tree:k=0", "--nodes", "8"], "fat-tree arity k must be between"),
    (["--system", "sci-d33x:torus:dims=2.5", "--nodes", "4"], "torus dimensions must be an integer"),
    (["--system", "myrinet-m2l:switch-array:cables=1.5", "--nodes", "16"], "cables between neighbouring switches must be"),
    (["--system", "myrinet-m2l:switch-ring:cables=0", "--nodes", "16"], "cables between neighbouring switches must be"),
    (["--system", "myrinet-m2l:crossbar:ports=0", "--nodes", "4"], "switch ports must be at least 2"),
    (["--system", "infiniband-ndr:dragonfly:p=0", "--nodes", "8"], "dragonfly nodes per router p must be at least 1"),
    (["--system", "infiniband-ndr:folded-clos:levels=2.5", "--nodes", "8"], "folded Clos levels must be an integer"),
    (["--system", "infiniband-ndr:folded-clos:oversubscription=inf", "--nodes", "8"], "oversubscription must be"),
    (["--system", "sci-d33x:ring:bidirectional=3", "--nodes", "4"], "bidirectional must be true or false"),
])
def test_bad_input_is_one_line(run_cli, argv, msg):
    with pytest.raises(UsageError) as e:
        run_cli("model", "--no-plot", *argv)
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_registers_both_subcommands():
    import argparse
    from fabriclab.cli.model import _model, _reproduce, register_model, register_reproduce
    p = argparse.ArgumentParser()
    sp = p.add_subparsers()
    register_model(sp)
    register_reproduce(sp)
    assert p.parse_args(["model"]).func is _model
    assert p.parse_args(["reproduce", "sci-myrinet-2002"]).func is _reproduce


def test_maxmin_spread(run_cli):
    # hotspot: every sender shares the target's ejection link equally
    rc, out = run_cli("model", "--nodes", "16", "--system", "myrinet-clos64", "-T", "hotspot", "-M", "-f", "json",
                      "--no-plot")
    doc = json.loads(out)
    m = doc["maxmin"][0]
    assert m["min"] == pytest.approx(m["max"])
    assert m["min"] == pytest.approx(doc["systems"][0]["points"][0]["per_node_bytes_per_s"])
    # all-to-all on a linear array: nodes far from the hot cut get more than the synchronized bound
    rc, out = run_cli("model", "--nodes", "40", "--system", "myrinet-minimal", "-M", "-f", "json", "--no-plot")
    doc = json.loads(out)
    m, p = doc["maxmin"][0], doc["systems"][0]["points"][0]
    assert m["min"] >= p["per_node_bytes_per_s"] * (1 - 1e-9) and m["max"] > m["min"]


def test_maxmin_too_large_is_refused_before_any_flow_is_made(run_cli):
    """100,000 nodes all-to-all would make 10^10 flows (75 GiB) before counting them; 101 sizes
    of 1,800 nodes, half an hour: each refused in one line, at once."""
    from fabriclab.errors import UsageError
    from fabriclab.model import evaluate, traffic
    from fabriclab.model.catalog import system
    with pytest.raises(UsageError, match="9,999,900,000 flows at 100,000 nodes are too many"):
        evaluate.maxmin_rates(system("ib-ndr-fattree"), 100_000)
    with pytest.raises(UsageError, match=r"solves 345,571,500 flows in all, more than 8,000,000"):
        run_cli("model", "--system", "ib-ndr-fattree", "--nodes", "1800:1900", "-M", "--no-plot")
    assert traffic.Traffic("hotspot").count(100_000) == 100_000


@pytest.mark.parametrize("extra", [["-T", "hotspot"], ["--payload", "64"], ["-T", "permutation", "-m", "enumerate"]])
def test_target_uses_the_same_traffic_payload_and_method(run_cli, extra):
    rc, out = run_cli("model", "--nodes", "16", "--system", "myrinet-clos64", "--system", "sci-2d", "--cost",
                      "--target", "1",
                      "-f", "json", "--no-plot", *extra)
    doc = json.loads(out)
    t = doc["target"][0]["cheapest"]
    main = {s["system"]: s["points"][0]["per_node_bytes_per_s"] for s in doc["systems"]}
    assert t["per_node_bytes_per_s"] == pytest.approx(main[t["system"]])


def test_published_skips_systems_without_a_form_and_uses_family_defaults(run_cli):
    rc, out = run_cli("model", "--nodes", "32,64", "--system", "t3d-torus", "--system", "fast-ethernet",
                      "--system", "myrinet-ring2",
                      "--system", "myrinet-m2l:switch-ring", "-P", "-f", "json", "--no-plot")
    doc = json.loads(out)
    assert rc == 0
    assert doc["no_published_form"] == ["Cray T3D - 3D torus", "Fast Ethernet - switched"]
    pub = {c["system"]: [p["per_node_bytes_per_s"] for p in c["points"]] for c in doc["published"]}
    # the family's default is 2 cables between ring switches, as myrinet-ring2 says explicitly
    assert pub["myrinet-m2l:switch-ring:published"] == pytest.approx(pub["myrinet-ring2:published"])
    from fabriclab.studies.millich_george_oral import as_published as P
    assert pub["myrinet-ring2:published"][1] == pytest.approx(
        P.myrinet("ring", 64, 160e6, 4096, cables=2).overall)


def _one_line_error(run_cli, *argv):
    with pytest.raises(UsageError) as e:
        run_cli("model", *argv)
    text = str(e.value)
    assert "\n" not in text
    return text


def test_non_utf8_files_are_refused_in_one_line(run_cli, tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_bytes(b"nodes: 2\n\xff\xfe links: []\n")
    assert "not UTF-8" in _one_line_error(run_cli, "--no-plot", "--system", "sci-2d", "--nodes", "4",
                                          "--topology-file", str(f))
    assert "not UTF-8" in _one_line_error(run_cli, "--no-plot", "--system", "sci-2d", "--nodes", "4", "-C", str(f))
    assert "not UTF-8" in _one_line_error(run_cli, "--no-plot", "--system", "sci-2d", "--nodes", "4", "--cost",
                                          "--prices", str(f))


def test_unusable_plot_directory_is_one_line(run_cli, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out in (afile, afile / "sub"):
        assert "cannot create plot directory" in _one_line_error(run_cli, "--system", "sci-2d", "--nodes", "4",
                                                                 "--output", str(out))


@pytest.mark.parametrize("key,value", [("default_rate_MBps", float("nan")), ("efficiency", float("nan")),
                                       ("efficiency", float("inf")), ("rate_MBps", float("inf"))])
def test_custom_file_refuses_nan_and_inf(run_cli, tmp_path, key, value):
    d = {"nodes": 2, "switches": 1, "default_rate_MBps": 10, "links": [["n0", "s0"], {"a": "n1", "b": "s0"}]}
    if key == "default_rate_MBps":
        d[key] = value
    else:
        d["links"][1][key] = value
    f = tmp_path / "n.yaml"
    f.write_text(yaml.safe_dump(d))
    assert "finite" in _one_line_error(run_cli, "--no-plot", "--system", "sci-2d", "--nodes", "4",
                                       "--topology-file", str(f))


def test_payload_nan_and_catalog_nan_are_refused(capsys):
    from fabriclab.cli.main import main
    assert main(["model", "--no-plot", "--system", "sci-2d", "--nodes", "4", "--payload", "nan"]) == 2
    assert "--payload: nan is not a finite number" in capsys.readouterr().err
    from fabriclab.model.catalog import _sourced
    with pytest.raises(UsageError, match="finite"):
        _sourced({"value": float("nan"), "source": "s", "date": "d"}, "x")


def test_enumerate_limit_names_the_aggregated_solver(run_cli):
    msg = _one_line_error(run_cli, "--no-plot", "--system", "sci-2d", "--nodes", "10000", "-m", "enumerate")
    assert "--method auto" in msg and "no aggregated solver" not in msg


def test_payload_is_clamped_to_the_format_maximum(run_cli):
    def rate(*extra):
        rc, out = run_cli("model", "--nodes", "4", "--system", "pcie-gen6:crossbar", "--system", "sci-ring",
                          "-f", "json",
                          "--no-plot", *extra)
        return [s["points"][0]["per_node_bytes_per_s"] for s in json.loads(out)["systems"]]
    assert rate("--payload", "4096") == pytest.approx(rate())     # 256 B and 128 B are the maxima
    pcie, sci = rate("--payload", "4096")
    assert pcie < 128000e6 * 256 / (256 + 39) * (1 + 1e-9)


@pytest.mark.parametrize("argv,msg", [
    (["--target", "-5"], "--target: -5 is not between 1e-06 and 1e+09"),
    (["--target", "0"], "--target: 0 is not between"),
    (["--target", "nan"], "--target: nan is not a finite number"),
    (["--target", "inf"], "--target: inf is not a finite number"),
    (["--target", "1e308"], "--target: 1e308 is not between"),
    (["--payload", "-5"], "--payload: -5 is not between 1 and 1e+09"),
    (["--payload", "0"], "--payload: 0 is not between"),
    (["--payload", "1e308"], "--payload: 1e308 is not between"),
    (["--alpha", "nan", "--collective", "allreduce"], "--alpha: nan is not a finite number"),
    (["--hotspot-target", "-1"], "--hotspot-target: -1 is not between 0 and"),
    (["--seed", "-1", "-T", "permutation"], "--seed: -1 is not between 0 and"),
    (["--seed", "-1"], "--seed: -1 is not between"),
])
def test_numeric_options_are_checked_exit_2(capsys, argv, msg):
    from fabriclab.cli.main import main
    rc = main(["model", "--system", "sci-2d", "--nodes", "4", "--no-plot", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and err.count("\n") == 1
