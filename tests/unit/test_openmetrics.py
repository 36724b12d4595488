"""`fabriclab history export`'s OpenMetrics text, read back by Prometheus's own parser:
values and labels round-trip (hostile label values too), no NaN, a unit on the
families that end in one, `# EOF` last."""
import math

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from fabriclab.report.openmetrics import CheckResult, Key, Latest, Regression, escape_label, exposition

HOSTILE = 'a"b\\c\nd \u00e9\u2603 {x="1"} \\n # EOF\r'
T0 = 1.76e9


def _families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _samples(fam) -> dict:
    """labels (without cluster) as a frozenset -> value."""
    return {frozenset((k, v) for k, v in s.labels.items() if k != "cluster"): s.value for s in fam.samples}


def test_points_round_trip_with_their_labels_and_units():
    key = Key("coll.allreduce", "rabenseifner", 262144, 1, 1, 4, "algorithm=rabenseifner")
    text = exposition([Latest(key, 1.25e-4, 1.2e-4, 1.31e-4, T0), Latest(Key("message.pingpong", size=8), 2e-6,
                                                                          started_s=T0 + 60)], [], "c1")
    fams = _families(text)
    assert text.endswith("# EOF\n") and "nan" not in text.lower()
    pts = fams["fabriclab_point_seconds"]
    assert pts.type == "gauge" and pts.unit == "seconds" and pts.documentation
    got = {(s.labels["bench"], s.labels["stat"]): s for s in pts.samples}
    assert got[("coll.allreduce", "median")].value == 1.25e-4
    assert got[("coll.allreduce", "ci_high")].value == 1.31e-4
    assert got[("coll.allreduce", "median")].labels == {
        "cluster": "c1", "bench": "coll.allreduce", "variant": "rabenseifner", "size": "262144", "stride": "1",
        "conns": "1", "active": "4", "params": "algorithm=rabenseifner", "stat": "median"}
    # a missing interval is left out, not written NaN; all ranks: active ""
    assert {s.labels["stat"] for s in pts.samples if s.labels["bench"] == "message.pingpong"} == {"median"}
    assert got[("message.pingpong", "median")].labels["active"] == ""
    runs = fams["fabriclab_run_timestamp_seconds"]
    assert runs.unit == "seconds" and [(s.labels, s.value) for s in runs.samples] == [
        ({"cluster": "c1", "kind": "run"}, T0 + 60)]


def test_nan_values_are_left_out_and_only_times_per_op_exported():
    text = exposition([Latest(Key("a"), 1e-6, float("nan"), None, float("nan")),
                       Latest(Key("b"), 5e9, unit="B/s")], [], "c")
    fams = _families(text)
    assert [s.labels["stat"] for s in fams["fabriclab_point_seconds"].samples] == ["median"]
    assert "fabriclab_run_timestamp_seconds" not in fams and "nan" not in text.lower()


def test_the_latest_of_a_series_given_twice_wins():
    k = Key("a")
    text = exposition([Latest(k, 3.0, started_s=T0 + 10), Latest(k, 1.0, started_s=T0), Latest(k, 2.0)], [], "c")
    assert [s.value for s in _families(text)["fabriclab_point_seconds"].samples] == [3.0]


@pytest.mark.parametrize("value", [HOSTILE, "\\", '"', "\n", "\\\"", "\u00ff\U0001f600", "", " "])
def test_hostile_label_values_round_trip(value):
    reg = Regression(value, Key(value, value, params=value), 1.2, 1.1, 1.3, run=value)
    text = exposition([Latest(Key(value, value, params=value), 1e-6, 0.9e-6, 1.1e-6, T0)],
                      [CheckResult(value, False, T0), reg], value)
    fams = _families(text)
    assert all(s.labels["cluster"] == value for f in fams.values() for s in f.samples)
    point = fams["fabriclab_point_seconds"].samples[0]
    assert point.labels["bench"] == point.labels["variant"] == point.labels["params"] == value
    assert [(s.labels["test"], s.value) for s in fams["fabriclab_check_passed"].samples] == [(value, 0)]
    assert [s.labels["item"] for s in fams["fabriclab_regression"].samples] == [value]
    ratio = {s.labels["stat"]: s for s in fams["fabriclab_change_ratio"].samples}
    assert ratio["ratio"].value == 1.2 and ratio["ratio"].labels["run"] == value and ratio["ci_low"].value == 1.1


def test_escaping_is_the_formats_three_escapes_only():
    assert escape_label('a\\b"c\nd\re\u00e9') == 'a\\\\b\\"c\\nd\re\u00e9'
    assert escape_label("\ud800x") == "?x"          # a lone surrogate cannot be UTF-8


def test_checks_regressions_and_changes():
    key = Key("message.pingpong", size=8)
    verdicts = [CheckResult("pingpong-latency", True, T0), CheckResult("bisection", False, T0),
                CheckResult("pingpong-latency", False, T0 - 99),          # an older run's verdict: superseded
                Regression("message.pingpong||8|1|1||", key, 1.18, 1.12, 1.25, run="r42"),
                Regression("pair|1048576|n1>n2"),                          # no series labels, no ratio
                Regression("impact|a|b|8", ratio=float("nan"))]
    fams = _families(exposition([], verdicts, "c"))
    assert _samples(fams["fabriclab_check_passed"]) == {frozenset({("test", "pingpong-latency")}): 1,
                                                        frozenset({("test", "bisection")}): 0}
    items = {s.labels["item"]: s for s in fams["fabriclab_regression"].samples}
    assert set(items) == {"message.pingpong||8|1|1||", "pair|1048576|n1>n2", "impact|a|b|8"}
    assert all(s.value == 1 for s in items.values())
    assert items["message.pingpong||8|1|1||"].labels["bench"] == "message.pingpong"
    change = fams["fabriclab_change_ratio"]
    assert change.unit == "ratio"
    assert {s.labels["stat"]: s.value for s in change.samples} == {"ratio": 1.18, "ci_low": 1.12, "ci_high": 1.25}
    assert {s.labels["item"] for s in change.samples} == {"message.pingpong||8|1|1||"}
    runs = _families(exposition([], verdicts, "c"))["fabriclab_run_timestamp_seconds"]
    assert [(s.labels["kind"], s.value) for s in runs.samples] == [("check", T0)]


def test_every_family_once_typed_with_help_and_infinities_spelled_as_the_format_says():
    text = exposition([Latest(Key("a"), math.inf, started_s=T0)], [CheckResult("t", True)], "c")
    lines = text.splitlines()
    assert lines[-1] == "# EOF" and lines.count("# EOF") == 1
    for name in ("fabriclab_point_seconds", "fabriclab_check_passed", "fabriclab_run_timestamp_seconds"):
        assert sum(ln.startswith(f"# TYPE {name} ") for ln in lines) == 1
        assert sum(ln.startswith(f"# HELP {name} ") for ln in lines) == 1
    assert 'stat="median"} +Inf' in text
    assert _families(text)["fabriclab_point_seconds"].samples[0].value == math.inf


def test_an_empty_export_is_valid():
    assert exposition([], [], "c") == "# EOF\n"
    assert list(text_string_to_metric_families("# EOF\n")) == []


def test_a_stranger_among_the_verdicts_is_refused():
    with pytest.raises(TypeError):
        exposition([], ["passed"], "c")
