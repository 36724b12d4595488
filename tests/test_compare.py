import json
import math

import numpy as np
import pytest

from fabriclab.analysis import stats
from fabriclab.cli import main
from fabriclab.analysis.compare import compare
from fabriclab.errors import UsageError
from fabriclab.measure.runner import derive
from fabriclab.schema import document, write_document


def _doc(points):
    recs = []
    for (bench, size), samples in points.items():
        rec = {"bench": bench, "size": size, "stride": 1, "bytes_per_op": size, "legs_per_op": 1,
               "samples": list(samples)}
        derive(rec)
        recs.append({"kind": "point", **rec})
    return document({"kind": "header"}, recs, {"status": "complete"})


def test_mann_whitney_known_value():
    # Fully separated samples of 5: U = 0; normal approximation with continuity
    # correction gives z = 12 / sqrt(22.9167) and p = 0.01219.
    u, p = stats.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 0 and p == pytest.approx(0.012186, abs=1e-5)
    u, p = stats.mann_whitney([1, 2, 3], [1, 2, 3])
    assert u == 4.5 and p == pytest.approx(1.0)
    assert stats.mann_whitney([2, 2, 2], [2, 2, 2])[1] == 1.0  # all tied: no evidence


def test_ratio_ci_brackets_the_true_ratio():
    rng = np.random.default_rng(1)
    base = 1e-6 * (1 + rng.exponential(0.05, 200))
    lo, hi = stats.median_ratio_ci(base, base * 1.10)
    assert lo < 1.10 < hi and lo > 1.0


def test_verdicts():
    rng = np.random.default_rng(2)
    base = {("message.pingpong", 8): 1e-6 * (1 + rng.exponential(0.02, 60)),
            ("message.pingpong", 64): 2e-6 * (1 + rng.exponential(0.02, 60)),
            ("message.pingpong", 512): 3e-6 * (1 + rng.exponential(0.02, 60))}
    new = {("message.pingpong", 8): base[("message.pingpong", 8)] * 1.2,
           ("message.pingpong", 64): 2e-6 * (1 + rng.exponential(0.02, 60)),
           ("message.pingpong", 4096): [5e-6] * 10}
    by = {(c.bench, c.size): c for c in compare(_doc(base), _doc(new))}
    assert by[("message.pingpong", 8)].verdict == "slower"
    assert by[("message.pingpong", 8)].ratio == pytest.approx(1.2)
    assert by[("message.pingpong", 64)].verdict == "same"
    assert by[("message.pingpong", 512)].verdict == "only-in-base"
    assert by[("message.pingpong", 4096)].verdict == "only-in-new"
    assert math.isnan(by[("message.pingpong", 4096)].p_value)
    faster = compare(_doc(new), _doc(base))
    assert next(c for c in faster if c.size == 8).verdict == "faster"


def test_threshold_hides_trivial_significant_changes():
    base = {("memory.copy", 4096): np.linspace(1.0, 1.01, 200) * 1e-6}
    new = {("memory.copy", 4096): np.linspace(1.0, 1.01, 200) * 1.01e-6}
    assert compare(_doc(base), _doc(new), threshold=0.02)[0].verdict == "same"
    assert compare(_doc(base), _doc(new), threshold=0.0)[0].verdict == "slower"
    with pytest.raises(UsageError):
        compare(_doc(base), _doc(new), alpha=2)


def test_compare_cli_and_fail_on_slower(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_document(_doc({("message.pingpong", 8): [1e-6, 1.01e-6, 1.02e-6] * 10}), a)
    write_document(_doc({("message.pingpong", 8): [2e-6, 2.01e-6, 2.02e-6] * 10}), b)
    assert main(["compare", str(a), str(b)]) == 0
    assert "1 slower" in capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--fail-on-slower"]) == 1
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["verdict"] == "slower" and rows[0]["ratio"] == pytest.approx(2.0, rel=0.01)
    assert main(["compare", str(a), "/nonexistent.json"]) == 2
