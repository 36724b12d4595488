"""A point between two runs from their launch medians (analysis/history.py): the ratio,
its bootstrap interval, and the verdict that needs the factor and significance."""

import math

import pytest

from fabriclab.analysis.history import Verdict, ratio_verdict, verdict

BASE = [1.00e-6, 1.01e-6, 0.99e-6, 1.005e-6, 0.995e-6]


def scaled(xs, r):
    return [x * r for x in xs]


def test_slower_faster_and_same():
    v = ratio_verdict(BASE, scaled(BASE, 1.2))
    assert v.verdict == "slower" and v.ci_low > 1.05 and v.ci_low <= v.ratio <= v.ci_high
    assert v.ratio == pytest.approx(1.2)
    v = ratio_verdict(BASE, scaled(BASE, 0.8))
    assert v.verdict == "faster" and v.ci_high < 1 / 1.05 and v.ratio == pytest.approx(0.8)
    v = ratio_verdict(BASE, scaled(BASE[::-1], 1.01))
    assert v.verdict == "same" and v.ratio == pytest.approx(1.01)
    # the factor holds both ways in logs: faster is below 1 / 1.05 = 0.9524, so 0.951 is faster
    v = ratio_verdict([1e-6, 1e-6], [0.951e-6, 0.951e-6])
    assert v.verdict == "faster" and v.ci_low == v.ci_high == pytest.approx(0.951)
    assert ratio_verdict([1e-6, 1e-6], [0.953e-6, 0.953e-6]).verdict == "same"


def test_a_large_change_within_the_launches_scatter_is_noise():
    base = [1.0e-6, 1.3e-6, 0.8e-6, 1.1e-6, 0.9e-6]
    new = [1.1e-6, 1.5e-6, 0.85e-6, 1.2e-6, 1.0e-6]
    v = ratio_verdict(base, new)
    assert v.ratio == pytest.approx(1.1 / 1.0) and v.verdict == "noise"
    assert v.ci_low < 1.05 < v.ratio < v.ci_high
    # the same ratio from quiet launches is significant
    assert ratio_verdict(BASE, scaled(BASE, 1.1)).verdict == "slower"


def test_one_launch_a_side():
    v = ratio_verdict([2e-6], [3e-6])
    assert v.verdict == "no-interval" and v.ratio == pytest.approx(1.5)
    assert math.isnan(v.ci_low) and math.isnan(v.ci_high)
    # one side of one launch: the interval is the other side's launches alone (compare's rule)
    v = ratio_verdict([1e-6], scaled(BASE, 1.3))
    assert v.verdict == "slower" and v.ci_low == pytest.approx(1.3 * 0.99, rel=1e-9) and v.ratio == pytest.approx(1.3)
    v = ratio_verdict(BASE, [1e-6])
    assert v.verdict == "same" and v.ci_low > 0.99 and v.ci_high < 1.011


def test_the_verdict_rule_at_its_edges():
    assert verdict(1.2, 1.05, 1.3, 1.05) == "noise"     # an interval touching the factor is not beyond it
    assert verdict(1.2, 1.0501, 1.3, 1.05) == "slower"
    assert verdict(1.05, 1.0, 1.1, 1.05) == "same"
    assert verdict(0.9, 0.8, 1 / 1.05, 1.05) == "noise"
    assert verdict(0.9, 0.8, 0.95, 1.05) == "faster"
    assert verdict(1.5, math.nan, math.nan, 1.05) == "no-interval"
    assert ratio_verdict(BASE, scaled(BASE, 1.2), factor=1.5).verdict == "same"


def test_seeded():
    base = [1e-6 * (1 + 0.013 * i) for i in range(12)]
    new = [1.07e-6 * (1 + 0.011 * ((5 * i) % 12)) for i in range(12)]
    assert ratio_verdict(base, new, seed=4) == ratio_verdict(base, new, seed=4)
    assert ratio_verdict(base, new, seed=4) != ratio_verdict(base, new, seed=5)
    assert isinstance(ratio_verdict(base, new), Verdict)


@pytest.mark.parametrize("base, new, kw", [
    ([], BASE, {}),
    (BASE, [], {}),
    (BASE, [1e-6, math.nan], {}),
    (BASE, [1e-6, 0.0], {}),
    ([-1e-6, 1e-6], BASE, {}),
    (BASE, [[1e-6]], {}),
    (BASE, ["a"], {}),
    (BASE, BASE, {"factor": 1.0}),
    (BASE, BASE, {"factor": 0.9}),
    (BASE, BASE, {"confidence": 1.0}),
])
def test_bad_input_is_refused(base, new, kw):
    with pytest.raises(ValueError):
        ratio_verdict(base, new, **kw)
