import json
import math

import numpy as np
import pytest

from fabriclab.cli import main
from fabriclab.analysis.compare import compare
from fabriclab.errors import UsageError
from fabriclab.measure.runner import derive
import docs  # noqa: E402  (tests/support)


def _doc(points):
    """A run document; a point's samples may be one list (one launch) or a list of launches."""
    recs = []
    for (bench, size), samples in points.items():
        sets = samples if isinstance(samples, tuple) else (samples,)
        for k, launch in enumerate(sets):
            rec = {"bench": bench, "size": size, "stride": 1, "bytes_per_op": size, "legs_per_op": 1,
                   "samples": list(launch), "launch": k}
            recs.append(derive(rec))
    return docs.of(recs)


def _launches(rng, median, k=5, n=100, between=0.1, within=0.02):
    """k launches of n samples: each launch's median drawn with `between` spread."""
    return tuple(median * np.exp(rng.normal(0, between)) * np.exp(rng.normal(0, within, n)) for _ in range(k))


def test_aa_documents_come_out_same():
    rng = np.random.default_rng(5)
    calls = []
    for trial in range(20):
        base = {("message.pingpong", s): _launches(rng, 1e-6 * (1 + s / 1e3)) for s in (8, 64, 512, 4096)}
        new = {("message.pingpong", s): _launches(rng, 1e-6 * (1 + s / 1e3)) for s in (8, 64, 512, 4096)}
        calls += [c.verdict for c in compare(_doc(base), _doc(new))]
    assert calls.count("same") >= 0.95 * len(calls)


def test_ab_shift_with_launch_noise_is_detected():
    rng = np.random.default_rng(6)
    calls = []
    for trial in range(20):
        base = {("message.stream", 4096): _launches(rng, 2e-6, between=0.02)}
        new = {("message.stream", 4096): _launches(rng, 2.2e-6, between=0.02)}
        c = compare(_doc(base), _doc(new))[0]
        assert (c.base_launches, c.new_launches) == (5, 5)
        calls.append(c.verdict)
    assert calls.count("slower") >= 18


def test_single_launch_runs_say_their_verdicts_ignore_launches():
    from fabriclab.report.changes import format_changes
    base = _doc({("message.pingpong", 8): [1e-6, 1.01e-6] * 20})
    new = _doc({("message.pingpong", 8): [1e-6, 1.01e-6] * 20})
    text = format_changes(compare(base, new), "table", "a", "b")
    assert "ignore launch-to-launch variation" in text


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
    assert math.isnan(by[("message.pingpong", 4096)].ratio)
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
    _doc({("message.pingpong", 8): [1e-6, 1.01e-6, 1.02e-6] * 10}).write(a)
    _doc({("message.pingpong", 8): [2e-6, 2.01e-6, 2.02e-6] * 10}).write(b)
    assert main(["compare", str(a), str(b)]) == 0
    assert "1 slower" in capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--fail-on-slower"]) == 1
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["verdict"] == "slower" and rows[0]["ratio"] == pytest.approx(2.0, rel=0.01)
    assert main(["compare", str(a), "/nonexistent.json"]) == 2


@pytest.mark.parametrize("status", ["interrupted", "failed", "incomplete"])
def test_compare_says_when_a_side_did_not_finish(tmp_path, capsys, status):
    """Points a run never reached are missing from the comparison: a side that did not finish is
    named, once, on stderr (the table and the machine formats stay as they are)."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _doc({("message.pingpong", 8): [1e-6, 1.01e-6] * 10}).write(a)
    rec = derive({"bench": "message.pingpong", "size": 8, "stride": 1, "bytes_per_op": 8, "legs_per_op": 1,
                  "samples": [1e-6, 1.01e-6] * 10, "launch": 0})
    docs.of([rec], status=status).write(b)
    assert main(["compare", str(a), str(b), "-f", "json"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err.strip().splitlines() == [
        f"fabriclab: note: {b} is {status}: compared on the 1 points it completed"]
    assert main(["compare", str(a), str(a)]) == 0 and "note" not in capsys.readouterr().err


def test_compare_notes_points_moved_through_other_buffer_layouts(tmp_path, capsys):
    """A warm window from one buffer a side and from a buffer per op are other figures under one key
    (a run of a fabriclab whose default was per-op against a newer one): compare says so, once."""
    def run(path, buffers):
        recs = [derive({"bench": "message.stream", "size": s, "stride": 1, "bytes_per_op": 64 * s, "legs_per_op": 1,
                        "samples": [1e-5, 1.01e-5] * 10, "launch": 0, "buffers": buffers}) for s in (65536, 8)]
        docs.of(recs).write(path)
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    run(a, 64), run(b, 1), run(c, 64)
    assert main(["compare", str(a), str(b), "-f", "json"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fabriclab: note: 2 point(s) were measured with other buffers") \
        and "[64] against [1]" in err[0], err
    assert main(["compare", str(a), str(c)]) == 0 and "note" not in capsys.readouterr().err
