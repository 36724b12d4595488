"""The readers on a small history (store_rows.history): runs filtered and in time order, a
figure's series with its launch medians, the series keys, a baseline by uid or date, a run's
points, the pairs over runs, the events between runs; and series(key) reading its index."""
import re

import pytest

import store_rows  # noqa: E402  (tests/support)
from fabriclab.errors import UsageError
from fabriclab.store import queries as q
from fabriclab.store.add import add
from fabriclab.store.backend import open_store
from store_rows import T0, key

H = 3600


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with open_store(str(tmp_path_factory.mktemp("q") / "s.sqlite")) as s:
        store_rows.history(s, add)
        yield s


def uids(rows):
    return [r.uid if hasattr(r, "uid") else r.run_uid for r in rows]


def test_runs_in_time_order_and_filtered(store):
    c1 = [f"run-c1-00000{i}" for i in range(7)]
    assert uids(q.runs(store, cluster="c1")) == c1[:4] + ["check-c1"] + c1[4:]
    assert uids(q.runs(store, cluster="c2")) == ["run-c2-000000", "run-c2-000002", "run-c2-000001"]
    assert uids(q.runs(store, cluster="c1", kind="check")) == ["check-c1"]
    assert uids(q.runs(store, bench="coll.allreduce")) == uids(q.runs(store, cluster="c2"))
    assert uids(q.runs(store, cluster="c1", kind="run", since=T0 + 2 * H, until=T0 + 4 * H)) == c1[2:5]
    assert len(q.runs(store)) == 11 and q.runs(store, cluster="none") == []
    day = q.runs(store, since="2026-05-28", until="2026-05-28")     # T0 is 20:26 UTC: up to 3.5 h later that day
    assert uids(day) == ["run-c1-000000", "run-c2-000000", "run-c1-000001", "run-c1-000002", "run-c2-000002",
                         "run-c1-000003", "check-c1"]
    assert uids(q.runs(store, cluster="c1", since="2026-05-29T00:00:00+00:00", kind="run")) == c1[4:]
    row = q.runs(store, cluster="c1")[0]
    assert (row.id, row.kind, row.hosts, row.mpi_version, row.started_s) == (1, "run", "n1,n2", "4.2", T0)


def test_a_bad_date_is_one_line():
    with pytest.raises(UsageError, match=r"'yesterday' is not a date \(YYYY-MM-DD\) or an ISO-8601 time"):
        q.runs(None, since="yesterday")


def test_a_series_in_time_order_with_launch_medians(store):
    s = q.series(store, key("message.pingpong", "", 4))
    assert uids(s) == [f"run-c1-00000{i}" for i in range(7)]
    first = s[0]
    assert first.median == pytest.approx(3e-6) and first.unit == "s" and first.started_s == T0
    assert first.launch_medians == pytest.approx([3e-6 * 0.99, 3e-6, 3e-6 * 1.01])
    assert (first.ci_low, first.ci_high) == pytest.approx((3e-6 * 0.99, 3e-6 * 1.01))
    assert s[6].median == pytest.approx(3e-6 * 1.006)
    assert q.series(store, key("message.pingpong", "", 4), cluster="c2") == []
    assert uids(q.series(store, key("coll.allreduce", "", 2), cluster="c2")) == uids(q.runs(store, cluster="c2"))
    assert q.series(store, "no|such|key") == []


def test_series_keys_sorted_by_bench_and_cluster(store):
    pingpong = sorted(key("message.pingpong", "", 2 ** j) for j in range(6))
    allreduce = sorted(key("coll.allreduce", "", 2 ** j) for j in range(3))
    assert q.series_keys(store) == sorted(pingpong + allreduce)
    assert q.series_keys(store, bench="message.pingpong") == pingpong
    assert q.series_keys(store, bench="coll") == []                # a bench is a whole name
    assert q.series_keys(store, cluster="c2") == allreduce
    assert q.series_keys(store, bench="message.pingpong", cluster="c2") == []


def test_the_baseline_by_uid_or_by_date(store):
    assert q.baseline_run(store, "run-c1-000004").uid == "run-c1-000004"
    assert q.baseline_run(store, "2026-05-28", cluster="c1").uid == "check-c1"        # last that day
    assert q.baseline_run(store, "2026-05-28T21:30:00Z", cluster="c1").uid == "run-c1-000001"
    assert q.baseline_run(store, "2026-05-28T21:30:00Z", cluster="c2").uid == "run-c2-000000"
    with pytest.raises(UsageError, match="no run on or before 2020-01-01"):
        q.baseline_run(store, "2020-01-01")
    with pytest.raises(UsageError, match="'nope' is neither a run uid in the store nor a date"):
        q.baseline_run(store, "nope")


def test_a_run_s_points_with_launches_and_tails(store):
    pk = q.baseline_run(store, "run-c1-000002").id
    pts = q.points_of(store, pk)
    assert [p.size for p in pts] == [1, 2, 4, 8, 16, 32] and {p.run_id for p in pts} == {pk}
    p = pts[2]
    assert (p.series, p.bench, p.unit, p.launches, p.cache) == (key("message.pingpong", "", 4), "message.pingpong",
                                                                "s", 3, "warm")
    assert p.launch_medians == pytest.approx([p.median * 0.99, p.median, p.median * 1.01])
    assert list(p.tails) == [50, 90, 99, 99.9, 99.99, 100] and p.tails[100] == pytest.approx(2 * p.median)
    assert q.points_of(store, q.baseline_run(store, "check-c1").id) == []


def test_pairs_over_runs(store):
    got = q.pairs_series(store, "c1", 1 << 20)
    assert len(got) == 16 and [(g.src, g.dst) for g in got[:2]] == [(0, 1), (1, 0)]
    assert got[0] == q.PairRow("run-c1-000000", T0, 0, 1, "n1", "n2", 1e10, 1.2e10, "leaf1-spine1")
    assert uids(got)[::2] == uids(q.runs(store, cluster="c1"))
    assert q.pairs_series(store, "c1", 8) == []


def test_events_name_what_changed_between_runs(store):
    assert q.events(store, "c1") == [
        q.Event(T0 + 2 * H, "run-c1-000002", "MPI 4.2 -> 5.0"),
        q.Event(T0 + 3 * H, "run-c1-000003", "libfabric 1.18 -> 1.20"),
        q.Event(T0 + 4 * H, "run-c1-000004", "network file changed"),
        q.Event(T0 + 5 * H, "run-c1-000005", "fabriclab 0.3.0 -> 0.4.0"),
        q.Event(T0 + 6 * H, "run-c1-000006", "network file site.yaml -> site2.yaml")]
    assert q.events(store, "c2") == []


class Explained:
    """A store whose every query is also explained (SQLite's EXPLAIN QUERY PLAN)."""

    def __init__(self, store):
        self.store, self.plans = store, []

    def query(self, sql, params=()):
        self.plans.append(" | ".join(r[-1] for r in self.store.query("EXPLAIN QUERY PLAN " + sql, params)))
        return self.store.query(sql, params)


@pytest.mark.parametrize("cluster", [None, "c1"])
def test_a_series_is_read_from_its_indexes_alone(store, cluster):
    e = Explained(store)
    q.series(e, key("message.pingpong", "", 4), cluster=cluster)
    assert len(e.plans) == 2
    for plan in e.plans:       # no points or launches row read: a series' points lie a page apart there
        assert "USING COVERING INDEX points_series (series=?)" in plan and "SCAN" not in plan.replace("SCAN CONSTANT", ""), plan
    assert "USING COVERING INDEX launches_point (point_id=?)" in e.plans[1], e.plans[1]


def test_a_series_without_its_launches_is_one_read(store):
    e = Explained(store)
    lean = q.series(e, key("message.pingpong", "", 4), cluster="c1", launches=False)
    full = q.series(store, key("message.pingpong", "", 4), cluster="c1")
    assert len(e.plans) == 1 and "launches" not in e.plans[0]
    assert lean == [p._replace(launch_medians=[]) for p in full] and all(p.launch_medians for p in full)


def test_a_series_read_for_its_last_runs_has_their_launches_only(store):
    full = q.series(store, key("message.pingpong", "", 4), cluster="c1")
    recent = q.series(store, key("message.pingpong", "", 4), cluster="c1", last=2)
    assert len(full) > 2 and recent[-2:] == full[-2:]
    assert recent[:-2] == [p._replace(launch_medians=[]) for p in full[:-2]]
    assert q.series(store, key("message.pingpong", "", 4), cluster="c1", last=len(full)) == full


def test_series_keys_skip_through_the_index(store):
    e = Explained(store)
    q.series_keys(e, bench="message.pingpong")
    assert "SCAN" not in e.plans[0].replace("SCAN k", "").replace("SCAN CONSTANT", ""), e.plans[0]
