"""The machine check on this machine: `doctor --machine`, `--tune` and
`--reset` on the real /sys (root), `--tune` as an unprivileged user, the
short form a run records, and the A/A self-test."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.host import probes, tune

pytestmark = pytest.mark.integration

EXE = str(Path(sys.executable).with_name("fabriclab"))
THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _fabriclab(*argv, timeout=120, user=None):
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
    return subprocess.run([*prefix, EXE, *argv], capture_output=True, text=True, timeout=timeout)


def test_machine_check_here_names_every_probe():
    p = _fabriclab("doctor", "--machine")
    assert p.returncode == 0, p.stderr
    names = [line.split()[1] for line in p.stdout.splitlines() if re.match(r"(ok  |--  |WARN|\?\? ) ", line)]
    assert names == [name for name, _ in probes.PROBES]
    assert re.search(r"\d+ of 11 findings may disturb timings; \d+ settings --tune would change", p.stdout)


def _thp() -> str:
    return re.search(r"\[(\w+)\]", THP_ENABLED.read_text()).group(1)


def test_tune_and_reset_round_trip_on_this_machine():
    """THP set to `always` first, so --tune has something to change here; the
    machine's own setting is put back whatever happens."""
    assert not tune.tuned(), f"{tune.STATE} exists: a --tune not yet reset"
    original = _thp()
    try:
        THP_ENABLED.write_text("always")
        refused = _fabriclab("doctor", "--tune", user=65534)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"fabriclab: error: --tune needs root; it would change: {THP_ENABLED} -> madvise"]
        assert _thp() == "always" and not tune.tuned()
        done = _fabriclab("doctor", "--tune")
        assert done.returncode == 0, done.stderr
        assert f"set {THP_ENABLED}: always -> madvise" in done.stdout and _thp() == "madvise" and tune.tuned()
        assert "tuned by `fabriclab doctor --tune`" in _fabriclab("doctor", "--machine").stdout
        undone = _fabriclab("doctor", "--reset")
        assert undone.returncode == 0 and f"restored {THP_ENABLED}: madvise -> always" in undone.stdout
        assert _thp() == "always" and not tune.tuned()
    finally:
        THP_ENABLED.write_text(original)
        tune.STATE.unlink(missing_ok=True)


def test_a_run_records_the_check_and_says_it_in_one_line(tmp_path):
    out = tmp_path / "r.json"
    p = _fabriclab("run", "message.pingpong", "-s", "8", "-L", "1", "--point-time", "0.05", "-o", str(out))
    assert p.returncode == 0, p.stderr
    lines = [x for x in p.stderr.splitlines() if "machine check:" in x]
    assert len(lines) == 1 and lines[0].startswith("fabriclab: machine check: ")
    machine = docs.read(out)["header"]["machine"]
    assert [f["name"] for f in machine["findings"]] == [name for name, _ in probes.PROBES]
    assert machine["window_s"] == 0.25 and 0 < machine["probe_s"] < 2 and machine["tuned"] is False
    quiet = _fabriclab("run", "message.pingpong", "-s", "8", "-L", "1", "--point-time", "0.05", "-q",
                       "-o", str(tmp_path / "q.json"))
    assert quiet.returncode == 0 and "machine check" not in quiet.stderr


def test_aa_reports_a_false_verdict_rate():
    p = _fabriclab("doctor", "--aa", timeout=300)
    assert p.returncode == 0, p.stderr
    m = re.search(r"false verdicts: (\d+) of (\d+) points \((\d+)%", p.stdout)
    assert m, p.stdout
    wrong, total, pct = map(int, m.groups())
    assert total == 12 and 0 <= wrong <= total and 0 <= pct <= 100
    assert re.search(r"between-launch spread .*: median \d+\.\d\dx, 90th percentile \d+\.\d\dx", p.stdout)
