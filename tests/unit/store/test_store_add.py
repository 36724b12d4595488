"""A document's rows added in one transaction: every table filled and tied by ids, the same
document skipped, a refused one leaving the store as it was, values stored verbatim (never
spliced into SQL)."""
import pytest

import store_rows  # noqa: E402  (tests/support)
from fabriclab.errors import UsageError
from fabriclab.store import tables
from fabriclab.store.add import AddResult, add
from fabriclab.store.backend import open_store


@pytest.fixture
def store(tmp_path):
    with open_store(str(tmp_path / "s.sqlite")) as s:
        yield s


def counts(store) -> dict:
    return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in tables.TABLES if t != "meta"}


def test_every_table_filled_and_tied(store):
    assert add(store, store_rows.rows(0, points=4, samples=5)) == AddResult(1, True, 4)
    assert add(store, store_rows.rows(1, points=3)) == AddResult(2, True, 3)
    assert counts(store) == {"runs": 2, "versions": 4, "points": 7, "launches": 21, "samples": 20, "tails": 42,
                             "pairs": 4, "impacts": 2, "checks": 2, "findings": 2}
    # each child row on its own point: point j of run 1 has launches median*(0.99, 1, 1.01)
    got = store.query("SELECT p.run_id, p.size, l.launch, l.median, p.median FROM launches l "
                      "JOIN points p ON p.id = l.point_id ORDER BY p.id, l.launch")
    assert [(r, s, k) for r, s, k, _, _ in got[:4]] == [(1, 1, 0), (1, 1, 1), (1, 1, 2), (1, 2, 0)]
    assert all(lm == pytest.approx(m * (1 + (k - 1) / 100)) for _, _, k, lm, m in got)
    assert store.query("SELECT COUNT(*) FROM samples s JOIN points p ON p.id = s.point_id WHERE p.run_id = 1") == [(20,)]
    assert store.query("SELECT DISTINCT run_id FROM pairs ORDER BY run_id") == [(1,), (2,)]


def test_the_same_document_is_skipped_with_a_note(store):
    add(store, store_rows.rows(0, points=4))
    before = counts(store)
    again = add(store, store_rows.rows(0, points=4, source="/elsewhere/run0.json"))
    assert (again.run_pk, again.added, again.points) == (1, False, 4)
    assert again.note == "already stored as run run-c1-000000: skipped"
    assert counts(store) == before


def test_a_uid_stored_from_another_document_is_refused(store):
    add(store, store_rows.rows(0, points=2))
    before = counts(store)
    with pytest.raises(UsageError, match="run run-c1-000000 is stored already from another document"):
        add(store, store_rows.rows(0, points=2, digest="sha256:other"))
    assert counts(store) == before


def test_a_refused_add_leaves_the_store_unchanged(store):
    add(store, store_rows.rows(0, points=2))
    before = counts(store)
    bad = store_rows.rows(1, points=100)
    bad.points[-1]["children"]["tails"][-1]["value"] = None       # the very last row: NOT NULL
    with pytest.raises(UsageError) as e:
        add(store, bad)
    assert str(e.value) == "cannot add /data/c1/run1.json: NOT NULL constraint failed: tails.value"
    assert counts(store) == before
    add(store, store_rows.rows(1, points=100))                      # nothing of it was left behind
    assert counts(store)["points"] == 102


@pytest.mark.parametrize("where", ["run", "point", "child", "children", "filled"])
def test_a_key_that_is_no_column_is_an_error_not_a_null(store, where):
    r = store_rows.rows(0, points=2)
    if where == "run":
        r.run["clustre"] = "x"
    elif where == "point":
        r.points[1]["sise"] = 8
    elif where == "child":
        r.points[1]["children"]["launches"][0]["medain"] = 1.0
    elif where == "children":
        r.points[1]["children"]["tail"] = []
    else:
        r.pairs[0]["run_id"] = 99
    with pytest.raises(ValueError, match="keys that are not its columns"):
        add(store, r)
    assert counts(store)["runs"] == 0


HOSTILE = "it's \"quoted\" '; DROP TABLE runs; -- ? %s %(x)s \\ \x01 ünï"


def test_values_are_stored_verbatim_never_as_sql(store):
    r = store_rows.rows(0, points=1, uid=HOSTILE, cluster=HOSTILE, source=HOSTILE, hosts=HOSTILE)
    r.points[0]["params"] = HOSTILE
    r.findings[0]["item"] = HOSTILE
    add(store, r)
    assert store.tables() == set(tables.TABLES)
    assert store.query("SELECT uid, cluster, source, hosts FROM runs") == [(HOSTILE,) * 4]
    assert store.query("SELECT params FROM points") == [(HOSTILE,)]
    assert store.query("SELECT item FROM findings") == [(HOSTILE,)]
    assert store.query("SELECT uid FROM runs WHERE cluster = ?", (HOSTILE,)) == [(HOSTILE,)]


def test_whole_floats_in_integer_columns_are_integers(store):
    r = store_rows.rows(0, points=1)
    r.points[0].update(size=8.0, launches=3.0)
    r.run["nranks"] = 4.0
    add(store, r)
    assert store.query("SELECT size, launches, typeof(size) FROM points") == [(8, 3, "integer")]
    assert store.query("SELECT nranks FROM runs") == [(4,)]


def test_added_s_is_the_time_of_adding_when_not_given(store):
    import time
    r = store_rows.rows(0, points=1)
    del r.run["added_s"]
    t = time.time()
    add(store, r)
    (added,), = store.query("SELECT added_s FROM runs")
    assert t - 1 <= added <= time.time() + 1
