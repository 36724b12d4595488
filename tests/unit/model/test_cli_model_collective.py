"""`fabriclab model --collective OP` in-process: the prediction against the closed
form on one switch, bus bandwidth as the coll level reports it, the fastest
algorithm by size, the plot, and bad input in one line (exit 2 through main)."""

import json

import pytest
import yaml

from fabriclab.cli import main

ALPHA, GAMMA = 3e-6, 5e-10


def _star(tmp_path, n: int = 8, rate: float = 1000.0):
    f = tmp_path / "star.yaml"
    f.write_text(yaml.safe_dump({"name": "star", "nodes": [f"h{i}" for i in range(n)], "switches": ["s"],
                                 "default_rate_MBps": rate, "links": [[f"h{i}", "s"] for i in range(n)]}))
    return f


def test_json_gives_each_algorithm_the_closed_form_and_bus_bandwidth(run_cli, tmp_path):
    f = _star(tmp_path)
    rc, out = run_cli("model", "--collective", "allreduce", "--topology-file", str(f), "--sizes", "64K,8M",
                      "--alpha", str(ALPHA), "--gamma", str(GAMMA), "-f", "json", "--no-plot")
    doc = json.loads(out)
    assert rc == 0 and doc["costs_from"] == {"alpha": "given", "gamma": "given"}
    (p,) = doc["predictions"]
    assert p["question"]["algorithms"] == ["ring", "recursive_doubling", "rabenseifner"]
    ring = {pt["size"]: pt for pt in p["points"] if pt["algorithm"] == "ring"}
    beta = 1000e6       # one switch, links without a packet format: every flow gets its link's rate
    n, size = 8, 8 << 20
    want = 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * size / beta + (n - 1) / n * size * GAMMA
    assert ring[size]["seconds"] == pytest.approx(want, rel=1e-9) and ring[size]["steps"] == 2 * (n - 1)
    assert ring[size]["algbw_Bps"] == pytest.approx(size / want)
    assert ring[size]["busbw_Bps"] == pytest.approx(size / want * 2 * (n - 1) / n)
    assert ring[size]["bottleneck"].startswith("link")
    # the leads name the fastest algorithm of each run of sizes, as the points have it
    for lead in p["leads"]:
        at = [pt for pt in p["points"] if pt["size"] == lead["first"]]
        assert min(at, key=lambda pt: pt["seconds"])["algorithm"] == lead["algorithm"]


def test_table_names_the_fastest_and_draws_the_plot(run_cli, tmp_path):
    rc, out = run_cli("model", "--collective", "allreduce", "--system", "ib-ndr-fattree", "--nodes", "16,64",
                      "-s", "8,4M", "--output", str(tmp_path))
    assert rc == 0 and "16 nodes, 16 ranks" in out and "64 nodes, 64 ranks" in out
    assert "(alpha and gamma assumed: calibrate them, `fabriclab calibrate RUN.json --collectives`)" in out
    # small vectors: few steps win (alpha); large: Rabenseifner moves the ring's bytes in log steps
    assert "Fastest (sizes in bytes): recursive_doubling at 8; rabenseifner at 4M." in out
    assert (tmp_path / "model-allreduce.png").stat().st_size > 1000


def test_ranks_per_node_and_placement_reach_the_prediction(run_cli, tmp_path):
    f = _star(tmp_path, 4)
    args = ("model", "--collective", "allgather", "--algorithm", "ring", "--topology-file", str(f), "-s", "1M",
            "-f", "json", "--no-plot", "--per-node", "2")
    block = json.loads(run_cli(*args)[1])["predictions"][0]["points"][0]
    cyclic = json.loads(run_cli(*args, "--placement", "cyclic")[1])["predictions"][0]["points"][0]
    assert block["ranks"] == cyclic["ranks"] == 8
    # by block, half the ring's hops stay on a node; cyclic, every hop crosses the switch
    assert cyclic["seconds"] > block["seconds"]


@pytest.mark.parametrize("extra,msg", [
    (["--algorithm", "ring,fastest"], "allreduce has no algorithm 'fastest' in the model"),
    (["--cost"], "--cost belongs to the traffic-pattern model"),
    (["--traffic", "hotspot"], "--traffic belongs to the traffic-pattern model"),
    (["--alpha", "nan"], "--alpha: nan is not a finite number"),
    (["--gamma", "-1"], "--gamma: -1 is not between 0 and 1"),
    (["--per-node", "0"], "--per-node: 0 is not between 1 and"),
    (["--sizes", "1:2:3:4"], "malformed size range"),
    (["--nodes", "4096", "--sizes", "1:1G:+1"], "more than"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, extra, msg):
    assert main(["model", "--collective", "allreduce", "--no-plot", *extra]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1


def test_an_unknown_operation_and_a_file_at_another_size_are_one_line(capsys, tmp_path):
    assert main(["model", "--collective", "barrier", "--no-plot"]) == 2
    assert "no schedules for 'barrier'" in capsys.readouterr().err
    f = _star(tmp_path, 4)
    assert main(["model", "--collective", "bcast", "--topology-file", str(f), "--nodes", "8", "--no-plot"]) == 2
    assert "has 4 nodes; --nodes cannot change a network file's size" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes: [a, b]\nlinks: [[a, c]]\n")
    assert main(["model", "--collective", "bcast", "--topology-file", str(bad), "--no-plot"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize("extra", [["-s", "8"], ["--algorithm", "ring"], ["-a", "1e-6"], ["--per-node", "2"],
                                   ["--placement", "cyclic"], ["--gamma", "0"]])
def test_the_collective_options_need_collective(capsys, extra):
    assert main(["model", "--system", "sci-2d", "--nodes", "4", "--no-plot", *extra]) == 2
    assert "belongs to --collective OP" in capsys.readouterr().err


def test_alpha_and_gamma_come_from_a_calibration_file_unless_given(run_cli, tmp_path):
    f, cal = _star(tmp_path, 4), tmp_path / "cal.yaml"
    cal.write_text("alpha_s: {value: 5.0e-6, source: run}\ngamma_s_per_byte: 1.0e-9\n")
    args = ("model", "--collective", "allreduce", "--algorithm", "recursive_doubling", "--topology-file", str(f),
            "-s", "1M", "-f", "json", "--no-plot", "-C", str(cal))
    doc = json.loads(run_cli(*args)[1])
    t = doc["predictions"][0]["points"][0]["seconds"]
    assert doc["costs_from"] == {"alpha": "calibrated", "gamma": "calibrated"}
    assert t == pytest.approx(2 * (5e-6 + (1 << 20) / 1000e6 + (1 << 20) * 1e-9))
    doc = json.loads(run_cli(*args, "--gamma", "0")[1])
    assert doc["costs_from"] == {"alpha": "calibrated", "gamma": "given"}
    assert doc["predictions"][0]["points"][0]["seconds"] == pytest.approx(2 * (5e-6 + (1 << 20) / 1000e6))


@pytest.mark.parametrize("text", ["alpha_s: 0\n", "alpha_s: 2\n", "gamma_s_per_byte: {value: x}\n",
                                  "gamma_s_per_byte: .nan\n", "alpha_s: true\n"])
def test_a_bad_cost_in_a_calibration_file_is_one_line(capsys, tmp_path, text):
    cal = tmp_path / "cal.yaml"
    cal.write_text(text)
    assert main(["model", "--collective", "allreduce", "--no-plot", "-C", str(cal)]) == 2
    err = capsys.readouterr().err
    assert "must be seconds above 0 and at most 1" in err and len(err.strip().splitlines()) == 1


def test_node_counts_the_system_has_no_configuration_of_are_refused(capsys):
    assert main(["model", "--collective", "allreduce", "--nodes", "100000", "--no-plot"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "no configuration of 100,000 nodes" in err


def test_the_plot_folder_is_checked_before_any_table_is_printed(capsys):
    assert main(["model", "--collective", "allreduce", "--nodes", "4", "--output", "/dev/full"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "/dev/full" in err
