"""Fuzzing `fabriclab model --topology-file FILE` as a user runs it: a handful of
the hostile cases of tests/support/hostile_networks.py and a shipped example,
each in a fresh `fabriclab` process, must end with exit 0 or 2, never an
exception, within 2 s of CPU and 200 MiB (max RSS of the process).

The bulk, every hostile case and random mutations of the shipped examples,
runs in the test process: test_hostile_files.py's
test_mutated_examples_and_hostile_files_end_cleanly_in_bounds."""
import sys
from pathlib import Path

import hostile_networks as hn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _common import fabriclab_exe, measured  # noqa: E402  (bench/ holds scripts, not a package)

CPU_S, PROCESS_MIB = 2.0, 200


# the cases whose harm would show in a whole process (memory, recursion, float overflow); the
# escaping of names is checked in process with every other case (test_hostile_files.py)
FRESH = ["alias bomb in name", "JSON nested 1,000,000 deep", "default_rate_MBps: 1.0e+308"]


def test_a_handful_in_fresh_processes_as_a_user_runs_them(tmp_path):
    cases = hn.hostile_cases()
    files = [hn.write(tmp_path / f"fresh{i}{cases[k][0]}", cases[k][1]) for i, k in enumerate(FRESH)]
    files.append(hn.EXAMPLES / "ring.yaml")
    for f in files:
        m = measured([fabriclab_exe(), "model", "--topology-file", str(f), "--no-plot"], timeout=60)
        assert not hn.problem(m.rc, m.out, m.err) and "Traceback" not in m.err, (f, m.err[-500:])
        assert m.rc == (0 if f.parent == hn.EXAMPLES else 2)
        assert m.cpu_s < CPU_S and m.maxrss_MiB < PROCESS_MIB, (f.name, m.cpu_s, m.maxrss_MiB)
