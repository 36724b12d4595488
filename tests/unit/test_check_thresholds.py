"""The check's thresholds (acceptance/thresholds.py): the defaults, a file over them, flags over
both, every value checked and a file that does not parse refused in one line, exit 2, before
anything runs; and how the verdicts print (acceptance/check.py lines)."""
import json

import pytest

from fabriclab.acceptance import thresholds as th
from fabriclab.acceptance.check import FAIL, PASS, REPORTED, Attempt, Check, Outcome, lines
from fabriclab.cli import main
from fabriclab.errors import UsageError


def test_the_defaults_check_and_sizes_become_bytes():
    t = th.check(th.merged({}))
    assert t["attempts"] == 3 and t["tests"] == ["cabling", "pairs", "congestion", "collectives"]
    assert t["pairs"]["size"] == 256 << 10 and t["collectives"]["size"] == 1 << 20


def test_a_file_lays_its_keys_over_the_defaults(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("attempts: 5\npairs: {drop: 0.4}\ncollectives: {ops: [allreduce, bcast], size: 64K}\n")
    t = th.load(str(f))
    assert t["attempts"] == 5 and t["pairs"] == {"size": 256 << 10, "window": 4, "drop": 0.4}
    assert t["collectives"]["ops"] == ["allreduce", "bcast"] and t["collectives"]["size"] == 64 << 10
    j = tmp_path / "t.json"
    j.write_text(json.dumps({"tests": ["pairs"], "congestion": {"max_impact": 2}}))
    assert th.load(str(j))["tests"] == ["pairs"]


@pytest.mark.parametrize("text, says", [
    ("attempts: [1\n", "not valid YAML: line 2"),
    ("- 1\n- 2\n", "must be a mapping"),
    ("speed: 3\n", "speed: unknown key"),
    ("attempts: 0\n", "attempts: must be an integer in 1..20"),
    ("attempts: true\n", "attempts: must be an integer"),
    ("tests: [pairs, pairs]\n", "distinct tests"),
    ("tests: [pingpong]\n", "tests: must be one of"),
    ("pairs: {size: huge}\n", "pairs.size: must be a size"),
    ("pairs: {colour: red}\n", "pairs: unknown key 'colour'"),
    ("pairs: 3\n", "pairs: must be a mapping"),
    ("congestion: {victim: pingpong}\n", "congestion.victim: unknown victim test 'pingpong'"),
    ("congestion: {victim: [1]}\n", "congestion.victim: unknown victim test"),
    ("congestion: {tolerance: -1}\n", "congestion.tolerance"),
    ("collectives: {ops: [barrier]}\n", "collectives.ops: must be one of"),
    ("collectives: {ops: []}\n", "collectives.ops: must be a list"),
])
def test_a_bad_file_is_one_line(tmp_path, text, says):
    f = tmp_path / "t.yaml"
    f.write_text(text)
    with pytest.raises(UsageError, match=says.replace("[", r"\[").replace("(", r"\(")):
        th.load(str(f))


@pytest.mark.parametrize("argv, says", [
    (["--thresholds", "/dev/zero"], "not a file"),
    (["--thresholds", "NOFILE"], "cannot read the thresholds file"),
    (["--attempts", "0"], "--attempts: 0 is not between 1 and 20"),
    (["--timeout", "nan"], "-t/--timeout: nan is not a finite number"),
    (["--timeout", "1e300"], "-t/--timeout: 1e300 is not between 0.001 and 1e+06"),
    (["--tests", "pairs,flood"], "tests: must be one of"),
    (["--baseline", "NOFILE"], "NOFILE"),
])
def test_bad_input_ends_in_one_line_and_exit_2_before_anything_runs(argv, says, tmp_path, capsys):
    assert main(["check", "-n", "4", "-o", str(tmp_path / "c"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert not (tmp_path / "c").exists()


def test_a_benchmark_named_as_the_victim_is_checked_with_the_run_before_anything_runs(tmp_path, capsys):
    (t := tmp_path / "t.yaml").write_text("tests: [congestion]\ncongestion: {victim: message.hotspot}\n")
    assert main(["check", "-n", "4", "-o", str(tmp_path / "c"), "--thresholds", str(t)]) == 2
    err = capsys.readouterr().err.strip()
    assert "'message.hotspot' cannot be a victim test" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "c").exists()


def test_the_verdicts_print_one_line_per_failing_item():
    outs = [Outcome("pairs", FAIL, [Attempt(FAIL, ["cable x: 3 of the 3 pairs it limits low"], ["pairs: 3 low"],
                                            "p.json", named=["x"])] * 3),
            Outcome("congestion", REPORTED, [Attempt(REPORTED, [], ["impact 1.2"], "c.json")]),
            Outcome("collectives", PASS, [Attempt(FAIL, ["slow"], [], "a"), Attempt(PASS, [], ["fine"], "b")])]
    text = lines(outs)
    assert text[0] == "FAIL     pairs (3 attempts)" and "PASS     collectives (2 attempts)" in text
    assert text[-2:] == ["check FAILED: 1 failing item", "FAIL pairs: cable x: 3 of the 3 pairs it limits low"]
    assert lines(outs[1:])[-1] == "check passed"


def test_a_collective_slowed_by_a_named_cable_says_so():
    slow = "coll.allreduce at 1M: 1.7x"
    outs = [Outcome("pairs", FAIL, [Attempt(FAIL, ["cable t"], [], "p", named=["link t"])]),
            Outcome("collectives", FAIL, [Attempt(FAIL, [slow], [], "c", bottlenecks={slow: "link t"})])]
    Check._explain(outs)
    assert outs[1].last.items == [f"{slow} (its bottleneck, link t, is a cable named above)"]
    other = [Outcome("pairs", FAIL, [Attempt(FAIL, ["cable h"], [], "p", named=["link h"])]),
             Outcome("collectives", FAIL, [Attempt(FAIL, [slow], [], "c", bottlenecks={slow: "link t"})])]
    Check._explain(other)
    assert other[1].last.items == [f"{slow} (its ranks' traffic crosses link h, named above)"]


def test_check_json_of_a_check_that_stopped_early_does_not_pass():
    from fabriclab.acceptance.check import to_dict
    done = [Outcome("pairs", PASS, [Attempt(PASS, [], ["fine"], "p.json")])]
    assert to_dict(done, {})["passed"] is True and "ended" not in to_dict(done, {})
    stopped = to_dict(done, {}, "interrupted")
    assert stopped["passed"] is False and stopped["ended"] == "interrupted" and len(stopped["tests"]) == 1
