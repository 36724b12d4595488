"""Diagnostics on hand-made point records and host readings."""

import dataclasses

import pytest

from fabriclab.analysis.diagnostics import Diagnostic, check_host, check_point, check_timer
from fabriclab.analysis.stats import summarize

TIGHT = [1e-6 * (1 + 0.0001 * (k % 7)) for k in range(100)]


def record(samples, stop="converged", validation=None):
    return {"type": "point", "bench": "pingpong", "size": 4096, "stride": 1,
            "bytes_per_op": 8192, "legs_per_op": 2, "warmup": 10, "batch": 20,
            "samples": samples, "stop": stop, "elapsed_s": 0.1,
            "validation": validation, "info": {}}


def codes(diags):
    return [d.code for d in diags]


def test_clean_point_has_no_diagnostics():
    r = record(TIGHT, validation={"checked_bytes": 8192, "errors": 0})
    assert check_point(r, summarize(TIGHT), 0.025) == []


def test_validation_failure_names_the_point():
    r = record(TIGHT, validation={"checked_bytes": 8192, "errors": 3})
    (d,) = check_point(r, summarize(TIGHT), 0.025)
    assert d.code == "validation-failed"
    assert (d.bench, d.size, d.stride) == ("pingpong", 4096, 1)
    assert "3 of 8192" in d.message
    assert "invalid" in d.advice


def test_time_cap():
    assert codes(check_point(record(TIGHT, stop="time_cap"), summarize(TIGHT), 0.025)) == ["time-cap"]


def test_unstable_point_threshold():
    wide = [1e-6 * (1 + 0.01 * (k % 21)) for k in range(100)]
    s = summarize(wide)
    assert codes(check_point(record(wide, stop="max_samples"), s, s.ci_rel / 2)) == ["unstable-point"]
    assert check_point(record(wide), s, s.ci_rel) == []  # at the target is converged
    d = check_point(record(wide), s, s.ci_rel / 2)[0]
    assert "--point-time" in d.advice


def test_too_few_samples():
    few = [1e-6] * 9
    assert codes(check_point(record(few), summarize(few), 0.025)) == ["too-few-samples"]
    assert check_point(record(few + [1e-6]), summarize(few + [1e-6]), 0.025) == []


def test_many_outliers():
    base = TIGHT[:85]
    noisy = base + [5e-6] * 15
    assert codes(check_point(record(noisy), summarize(noisy), 0.025)) == ["outliers"]
    ten_percent = TIGHT[:90] + [5e-6] * 10
    assert summarize(ten_percent).outliers == 10
    assert check_point(record(ten_percent), summarize(ten_percent), 0.025) == []


def test_check_point_rejects_bad_target():
    with pytest.raises(ValueError):
        check_point(record(TIGHT), summarize(TIGHT), 0.0)


def test_check_host():
    assert check_host(0.1, 16, 4) == []
    assert check_host(12.5, 16, 4) == []
    (d,) = check_host(12.6, 16, 4)
    assert d.code == "loaded-machine" and "12.60" in d.message
    assert codes(check_host(0.2, 4, 8)) == ["oversubscribed"]
    assert codes(check_host(1.0, 4, 8)) == ["oversubscribed", "loaded-machine"]
    for bad in [(-1.0, 4, 1), (float("nan"), 4, 1), (0.0, 0, 1), (0.0, 4, 0)]:
        with pytest.raises(ValueError):
            check_host(*bad)


def test_check_timer():
    assert check_timer(2e-8, 1e-9, 2e-5) == []
    assert codes(check_timer(2e-8, 1e-6, 2e-5)) == ["timer-resolution"]
    assert codes(check_timer(1e-6, 1e-9, 2e-5)) == ["timer-overhead"]
    assert codes(check_timer(1e-6, 1e-6, 0.0)) == ["timer-resolution", "timer-overhead"]
    with pytest.raises(ValueError):
        check_timer(-1e-9, 1e-9, 1e-5)


def test_diagnostic_round_trip_and_frozen():
    d = check_point(record(TIGHT, stop="time_cap"), summarize(TIGHT), 0.025)[0]
    assert Diagnostic.from_dict(d.to_dict()) == d
    host = check_host(8.0, 8, 2)[0]
    assert host.to_dict()["size"] is None
    assert Diagnostic.from_dict(host.to_dict()) == host
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.code = "other"
    with pytest.raises(ValueError):
        Diagnostic.from_dict({"code": "time-cap", "message": "m"})


def test_stacked_ranks_of_different_hosts():
    from fabriclab.analysis.diagnostics import STACKED_RANKS, stacked_ranks
    assert stacked_ranks(["a", "a"], ["0", "1"]) == []                  # one host, two cores
    assert stacked_ranks(["a", "b"], ["0-1", "0-1"]) == []              # not bound
    assert stacked_ranks(["a", "a"], ["0", "0"]) == []                  # one host: oversubscription, not this
    found = stacked_ranks(["h0", "h1", "h2"], ["0", "0", "1"])
    assert len(found) == 1 and found[0].code == STACKED_RANKS and "h0, h1" in found[0].message
