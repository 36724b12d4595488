"""Kernel counters: the point's rank_counters read and checked, and the figures derived by kind."""
import pytest

from fabriclab.analysis import counters
from fabriclab.schema.records import Point, RecordError

KINDS = {"sent": "sum", "received": "sum", "jitter_s": "level"}


def _record(rc, samples=(1e-3, 1e-3)) -> dict:
    return {"bench": "udp.stream", "size": 1000, "bytes_per_op": 1000, "summary": {"median": 1e-3},
            "samples": list(samples), "rank_counters": rc}


def test_counters_survive_a_round_trip():
    rc = [{"sent.0": [0, 10, 25]}, {"received.0": [0, 9, 24], "jitter_s.0": [0, 1e-6, 2e-6]}]
    p = Point.from_dict(_record(rc))
    assert Point.from_dict(p.to_dict()).rank_counters == rc


@pytest.mark.parametrize("bad", [
    [{"sent": [0, 1]}],                        # n + 1 = 3 values wanted
    [{"sent": [0, 1, float("nan")]}],
    [{"sent": [0, 1, "2"]}],
    ["sent"],
    {"sent": [0, 1, 2]},
])
def test_wrong_counters_are_refused_when_read(bad):
    with pytest.raises(RecordError, match="rank_counters"):
        Point.from_dict(_record(bad))


def test_a_point_without_counters_writes_none():
    rec = _record(None)
    del rec["rank_counters"]
    assert "rank_counters" not in Point.from_dict(rec).to_dict()


def test_sum_counters_give_growth_and_levels_give_the_value_after_each_sample():
    rc = [None, {"received.1": [5, 15, 40], "jitter_s.1": [0.0, 2e-6, 3e-6]}]
    assert counters.rank_samples(rc, KINDS) == [None, {"received.1": [10, 25], "jitter_s.1": [2e-6, 3e-6]}]
    assert counters.rank_totals(rc, KINDS) == [None, {"received.1": 35, "jitter_s.1": 3e-6}]


def test_a_counter_without_a_kind_is_an_error():
    assert counters.base_name("received.12") == "received" and counters.base_name("a.b") == "a.b"
    with pytest.raises(ValueError, match="lost"):
        counters.kind_of("lost.0", KINDS)


def test_launches_pool_their_samples_in_order():
    a = Point.from_dict(_record([{"sent": [0, 4, 8]}, None]))
    b = Point.from_dict(_record([{"sent": [100, 101, 103]}, None]))
    assert counters.pooled([a, b], KINDS) == [{"sent": [4, 4, 1, 2]}, None]
    assert counters.launch_totals([a, b], KINDS) == [{"sent": [8, 3]}, None]
    assert list(counters.by_key([a, b]).values()) == [[a, b]]


def test_every_declared_counter_has_a_kind():
    from fabriclab.suite.benchmarks import REGISTRY
    declared = {b.name: b.counters for b in REGISTRY.values() if b.counters}
    assert {"udp.stream", "udp.rr"} <= set(declared)
    assert all(k in counters.KINDS for c in declared.values() for k in c.values()), declared
