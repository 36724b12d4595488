"""Fuzzing `fabriclab model --topology-file FILE`: random mutations of the shipped
examples (examples/testbeds/*.yaml, a fixed seed) and every hostile case of
tests/support/hostile_networks.py. Each must end with exit 0 or 2, never an
exception, print one escaped error line or tables free of control characters,
inf and NaN, within 2 s of CPU and 200 MiB; some of what is accepted is drawn.

The bulk runs in this process (main() as the command line calls it), its peak
memory per case read from VmHWM after resetting it; a fresh `fabriclab`
process adds its interpreter and libraries, about 40 MiB, so in-process cases
are held to 160 MiB above what was resident before them. A handful run as
whole processes, measured as a user sees them (max RSS of the process)."""
import sys
from pathlib import Path

import hostile_networks as hn

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from _common import fabriclab_exe, measured  # noqa: E402  (bench/ holds scripts, not a package)

MUTATIONS = 120
DRAW_EVERY = 4
CPU_S, PROCESS_MIB, IN_PROCESS_MIB = 2.0, 200, 160


def test_mutated_examples_and_hostile_files_end_cleanly_in_bounds(tmp_path):
    cases = [(f"hostile: {k}", s, t) for k, (s, t) in hn.hostile_cases().items()]
    cases += [(f"mutation {i}", s, t) for i, (s, t) in enumerate(hn.mutations(hn.FUZZ_SEED, MUTATIONS))]
    failures, valid = [], 0
    for i, (name, suffix, text) in enumerate(cases):
        path = hn.write(tmp_path / f"case{i}{suffix}", text)
        rc, problem, cpu, mib = hn.run_in_process(path)
        valid += rc == 0
        if rc == 0 and valid % DRAW_EVERY == 1:         # some of what is accepted is drawn too (0.25 s each)
            rc, problem, cpu, mib = hn.run_in_process(path, tmp_path / "plots")
        if problem or cpu > CPU_S or mib > IN_PROCESS_MIB:
            failures.append(f"{name}: {problem} {cpu:.2f} s {mib:.0f} MiB")
    assert not failures, "\n".join(failures)
    assert 20 <= valid <= len(cases) - 200             # mutations reach the model, not only the reader


FRESH = ["alias bomb in name", "JSON nested 1,000,000 deep", "default_rate_MBps: 1.0e+308",
         "name name #1: '\\x1b[2J\\x1b[H'", "node name #0: 'a\\nb'"]


def test_a_handful_in_fresh_processes_as_a_user_runs_them(tmp_path):
    cases = hn.hostile_cases()
    files = [hn.write(tmp_path / f"fresh{i}{cases[k][0]}", cases[k][1]) for i, k in enumerate(FRESH)]
    files.append(hn.EXAMPLES / "ring.yaml")
    for f in files:
        m = measured([fabriclab_exe(), "model", "--topology-file", str(f), "--no-plot"], timeout=60)
        assert not hn.problem(m.rc, m.out, m.err) and "Traceback" not in m.err, (f, m.err[-500:])
        assert m.rc == (0 if f.parent == hn.EXAMPLES else 2)
        assert m.cpu_s < CPU_S and m.maxrss_MiB < PROCESS_MIB, (f.name, m.cpu_s, m.maxrss_MiB)
