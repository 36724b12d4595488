"""The seed studies as recipes: what each runs (checked without MPI), its
findings on fixed run documents, and `fabriclab study` end to end on the fake core."""
import json

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.cli import study as cli_study
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.studies.recipe import (FAILS, HOLDS, MEASUREMENTS, MODEL, MODEL_HOLDS, UNJUDGED, UNMEASURED,
                                      VERDICTS_ON, Finding, Runs, Step)
from fabriclab.studies.reference import load
from fabriclab.studies.registry import STUDIES

from fakebuild import run_study  # noqa: E402  (tests/support is on the path)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_step_is_a_valid_run(name):
    s = STUDIES[name]
    assert len({st.name for st in s.steps}) == len(s.steps) and s.seconds > 0
    for st in s.steps:
        argv = cli_study._argv(st, [])
        cli_study._check(argv)                                  # run's own parser accepts it
        benches = [a for a in st.args if "." in a and not a[0].isdigit() and a in REGISTRY]
        assert benches, st.name
        assert all(not a.startswith(tuple(b.split(".")[0] + "." for b in REGISTRY)) or a in REGISTRY
                   for a in st.args if "=" not in a), st.name


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_without_runs_every_finding_on_measurements_is_unmeasured_and_every_figure_empty(name, seed_model_once):
    s, ref, runs = STUDIES[name], load(name), Runs()
    found = s.findings(runs, ref)
    measured = [f for f in found if f.judged_on == MEASUREMENTS]
    assert measured and all(f.verdict == UNMEASURED and f.because and f.published for f in measured)
    # judged on the model alone (seed 001's projections): judged here too, with what the model computes
    assert all(f.verdict in VERDICTS_ON[MODEL] and f.model and f.published for f in found if f.judged_on == MODEL)
    assert len({f.id for f in found}) == len(found)
    assert all(not any(y is not None for ser in fig.series if not ser.dashed for y in ser.y)
               for fig in s.figures(runs, ref))


def test_a_verdict_must_be_one_of_the_three_of_what_it_is_judged_on():
    with pytest.raises(ValueError):
        Finding("x", "claim", "where", "published", verdict="maybe")
    with pytest.raises(ValueError):                      # "here" is this machine's runs, not the model
        Finding("x", "claim", "where", "published", verdict=HOLDS, judged_on=MODEL)
    with pytest.raises(ValueError):
        Finding("x", "claim", "where", "published", judged_on="guess")
    assert Finding("x", "c", "w", "p").verdict == UNMEASURED
    assert Finding("x", "c", "w", "p", judged_on=MODEL).verdict == UNJUDGED
    f = Finding("x", "c", "w", "p", judged_on=MODEL).judged("444.7 MB/s", True)
    assert (f.verdict, f.model, f.measured) == (MODEL_HOLDS, "444.7 MB/s", "")
    assert Finding("x", "c", "w", "p").judged("2.0x", False, "why").to_dict()["judged_on"] == MEASUREMENTS


@pytest.fixture(scope="module")
def studied(fake_core_module, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "hv"
    rc = run_study("hellwagner-via", fake_core_module, out)
    return rc, out


def test_a_study_run_writes_every_run_and_its_report(studied):
    rc, out = studied
    assert rc == 0
    s = STUDIES["hellwagner-via"]
    for st in s.steps:
        assert docs.read(out / f"{st.name}.json")["footer"]["status"] == "complete"
    manifest = json.loads((out / "study.json").read_text())
    assert [x["step"] for x in manifest["steps"]] == [st.name for st in s.steps]
    assert {f["id"] for f in manifest["findings"]} == {"hv-1", "hv-2", "hv-3", "hv-4"}
    html = (out / "report.html").read_text()
    assert html.count("<figure") == 4 and 'id="published"' in html
    assert "84.7" in html                                          # Table 1's blocking round trip, drawn


def _runs(out, scale: dict = {}) -> Runs:
    """The study's documents, with the samples of (step, bench, param=value) scaled."""
    runs = Runs()
    for st in STUDIES["hellwagner-via"].steps:
        doc = docs.read(out / f"{st.name}.json")       # new dicts on every read: ours to change
        for (step, bench, where), k in scale.items():
            if step != st.name:
                continue
            key, value = where.split("=")
            doc.pop("merged")
            for r in doc["records"]:
                if r["kind"] == "point" and r["bench"] == bench and str(r["params"].get(key)) == value:
                    r["samples"] = [x * k for x in r["samples"]]
        runs.docs[st.name] = docs.typed(doc)
    return runs


def test_findings_on_fixed_documents_hold_or_not_by_the_numbers(studied):
    _, out = studied
    s, ref = STUDIES["hellwagner-via"], load("hellwagner-via")
    by = {f.id: f for f in s.findings(_runs(out), ref)}
    # the fake core times every benchmark alike: equal throughputs hold, a 1x blocking cost does not
    assert by["hv-1"].verdict == HOLDS and "ratio 1.00" in by["hv-1"].measured
    assert by["hv-2"].verdict == FAILS and "1.0x" in by["hv-2"].because
    slower = _runs(out, {("latency", "fabric.pingpong", "completion=block"): 5.0,
                         ("throughput", "fabric.put_bw", "provider=shm"): 2.0})
    by = {f.id: f for f in s.findings(slower, ref)}
    assert by["hv-2"].verdict == HOLDS and "5.0x" in by["hv-2"].measured
    assert by["hv-1"].verdict == FAILS and "ratio 0.50" in by["hv-1"].measured


def test_a_skipped_step_leaves_its_findings_unmeasured_with_the_reason(studied):
    _, out = studied
    runs = _runs(out)
    del runs.docs["connections"]
    runs.skipped["connections"] = "needs 2 hosts"
    by = {f.id: f for f in STUDIES["hellwagner-via"].findings(runs, load("hellwagner-via"))}
    assert by["hv-3"].verdict == UNMEASURED and by["hv-3"].because == "needs 2 hosts"


def test_list_and_show(capsys):
    assert main(["study", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in STUDIES)
    assert main(["study", "show", "hellwagner-via"]) == 0
    out = capsys.readouterr().out
    assert "fabriclab run fabric.pingpong" in out and "hv-4" in out and "84.7 us blocking" in out


def test_needs_a_launch_cannot_meet_are_skipped_with_a_reason(tmp_path):
    two = Step("x", ("message.pingpong",), "a figure", hosts=2)
    assert cli_study._skip_reason(two, 1).startswith("needs 2 hosts and the launch names 1")
    assert cli_study._skip_reason(two, cli_study._hosts_given(["--hosts", "a,b,a"])) == ""
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# nodes\nn1:2\nn2 slots=2\n\n")
    assert cli_study._hosts_given(["--hostfile", str(hostfile)]) == 2


@pytest.mark.parametrize("argv,msg", [
    (["study", "show", "nosuch"], "no study 'nosuch'"),
    (["study", "run", "nosuch"], "no study 'nosuch'"),
    (["study", "run", "hellwagner-via", "--bogus"], "unrecognized arguments: --bogus"),
    (["study", "run", "hellwagner-via", "-n", "many"], "-n"),
    (["study", "run", "hellwagner-via", "--hostfile", "/nonexistent/hosts"], "hostfile /nonexistent/hosts"),
])
def test_bad_input_is_one_line_and_launches_nothing(argv, msg, capsys, tmp_path):
    assert main([*argv, "-o", str(tmp_path / "out")] if argv[1] == "run" else argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_study_folder_that_cannot_be_one_is_one_line_before_anything_runs(capsys, tmp_path):
    """An existing file, a device, a path under a file: refused as `run -o` refuses them."""
    (tmp_path / "f").write_text("x")
    for out, says in ((tmp_path / "f", "it is not a directory"), ("/dev/null", "it is not a directory"),
                      (tmp_path / "f" / "sub", "is not a directory")):
        assert main(["study", "run", "hellwagner-via", "-o", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"fabriclab: error: cannot create study folder {out}: " + err[0].split(": ", 3)[-1]]
        assert says in err[0]
    assert (tmp_path / "f").read_text() == "x"


def test_the_users_ranks_reach_only_the_steps_that_grow_with_them():
    pair = Step("p", ("message.pingpong",), "a pair")
    grows = Step("h", ("message.hotspot",), "a hotspot", ranks=4, scales=True)
    p = cli_study._check(cli_study._argv(pair, ["-n", "8"]))
    h = cli_study._check(cli_study._argv(grows, ["-n", "8"]))
    assert (p.ranks, h.ranks) == (2, 8)
    assert cli_study._check(cli_study._argv(grows, [])).ranks == 4


def test_a_step_that_does_not_fit_in_memory_is_refused_before_the_first_step_runs(fake_core, tmp_path, capsys):
    """kurmann-stricker's transpose at 1 MiB would need terabytes: refused at once, one line,
    no step run and no folder made (not after the steps before it measured)."""
    from fakebuild import run_study
    out = tmp_path / "ks"
    assert run_study("kurmann-stricker", fake_core, out, "-s", "256,1M") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "app.transpose at 1M" in err[0] and "more than the" in err[0], err
    assert not out.exists()
