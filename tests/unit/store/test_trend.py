"""store/trend.py: sixty runs of four hosts on two switches, the trunk slowed from run 40 on: the
pairs across it step at run 40 and name the trunk (from the runs' own pair-matrix findings, else
from the cable that limits them), the 4-rank collective steps with them and takes that cause, the
pairs within a switch and the 2-rank collective do not step, and the regressions are the slower
steps still in effect."""
import numpy as np
import pytest

import store_rows  # noqa: E402  (tests/support)
from fabriclab.store import trend
from fabriclab.store.add import add
from fabriclab.store.backend import open_store

HOSTS = ["h0", "h1", "h2", "h3"]            # h0, h1 on s0; h2, h3 on s1
AT, RUNS = 39, 60                           # the first slow run (0-based): night 40


def _across(a: str, b: str) -> bool:
    return (a in ("h0", "h1")) != (b in ("h0", "h1"))


def _run(i: int, rng, named: bool) -> store_rows.Rows:
    slow = i >= AT
    r = store_rows.rows(i, points=0, cluster="tb")
    noise = lambda: float(np.exp(rng.normal(0, 0.02)))  # noqa: E731
    r.pairs = [{"size": 65536, "src": s, "dst": d, "src_host": HOSTS[s], "dst_host": HOSTS[d],
                "bandwidth": (5e6 if _across(HOSTS[s], HOSTS[d]) and slow else 10e6) * noise(), "expected": 10e6,
                "cable": ("link trunk (s0→s1)" if s < d else "link trunk (s1→s0)") if _across(HOSTS[s], HOSTS[d])
                else f"link {HOSTS[s]} ({HOSTS[s]}→s)"}
               for s in range(4) for d in range(4) if s != d]
    r.findings = [{"test": "pairs", "item": "link trunk (s0→s1) at 65536 B: 4 of its 4 pairs low",
                   "cable": "link trunk (s0→s1)", "host": None}] if named and slow else []
    for active, crosses in ((2, False), (4, True)):
        p = store_rows.point(i, 0, bench="coll.allreduce")
        median = 0.02 * (1.8 if crosses and slow else 1.0) * noise()
        p.update(series=store_rows.key("coll.allreduce", "", 262144, active=active), size=262144, active=active,
                 median=median, ci_low=median * 0.98, ci_high=median * 1.02)
        p["children"]["launches"] = [{"launch": k, "median": median * noise(), "n": 10} for k in range(3)]
        r.points.append(p)
    return r


@pytest.fixture(scope="module", params=[True, False], ids=["named-by-the-runs", "by-the-limiting-cable"])
def found(request, tmp_path_factory):
    rng = np.random.default_rng(7)
    with open_store(str(tmp_path_factory.mktemp("t") / "s.sqlite")) as store:
        for i in range(RUNS):
            add(store, _run(i, rng, request.param))
        yield trend.steps(store, "tb")


def test_the_pairs_across_the_trunk_step_at_night_40_named_for_it(found):
    pairs = [s for s in found if s.series.startswith("pair|")]
    across = {f"pair|65536|{a}>{b}" for a in HOSTS for b in HOSTS if a != b and _across(a, b)}
    assert {s.series for s in pairs} == across          # one step each, none within a switch
    assert len(pairs) == len(across)
    for s in pairs:
        assert abs(s.change.index - AT) <= 1 and s.change.ratio == pytest.approx(2.0, rel=0.1)
        assert s.cause == "link trunk" and s.last and s.slower


def test_the_collective_across_the_trunk_steps_with_them_and_takes_their_cause(found):
    colls = [s for s in found if s.series.startswith("coll.")]
    assert [s.series for s in colls] == [store_rows.key("coll.allreduce", "", 262144, active=4)]
    (s,) = colls
    assert abs(s.change.index - AT) <= 1 and s.change.ci_low > 1.5 and s.cause == "link trunk"
    assert s.title == "coll.allreduce 256K, 4 ranks"


def test_regressions_are_the_slower_steps_still_in_effect(found):
    bad = trend.regressions(found, 1.05)
    assert {s.series for s in bad} == {s.series for s in found}
    assert trend.regressions(found, 2.5) == []          # none is 2.5 times slower


def test_titles_read_as_people_name_the_figure():
    assert trend.title("pair|65536|h0>h2") == "pair h0 -> h2 at 64K"
    assert trend.title(store_rows.key("coll.allreduce", "ring", 1024, active=4, params="algorithm=ring")) \
        == "coll.allreduce [ring] 1K, 4 ranks"          # the variant names the params that differ
    assert trend.title(store_rows.key("coll.allreduce", "", 1024, params="dtype=float;sync=barrier")) \
        == "coll.allreduce 1K"                           # no variant: every param at its default
    assert trend.title("not|a|key") == "not|a|key"


def test_a_shift_step_is_named_as_its_distance():
    assert trend.title(store_rows.key("message.shift", "", 65536, active=3)) == "message.shift 64K, step 3"


def test_steps_are_sought_among_each_series_last_runs(tmp_path):
    """--last N: the step at night 40 is found, at its index in the whole series, among the last 30
    runs; among the last 15 there is none to find."""
    rng = np.random.default_rng(3)
    with open_store(str(tmp_path / "s.sqlite")) as store:
        for i in range(RUNS):
            r = _run(i, rng, named=False)
            r.pairs = []
            add(store, r)
        key = store_rows.key("coll.allreduce", "", 262144, active=4)
        (whole,) = trend.steps(store, "tb", last=0)
        (recent,) = trend.steps(store, "tb", last=30)
        assert whole.series == recent.series == key and whole.change.index == recent.change.index
        assert abs(recent.change.index - AT) <= 1 and recent.runs == RUNS
        assert trend.steps(store, "tb", last=15) == []
