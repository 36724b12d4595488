"""bench/bench_fabric.py and its reference loops (bench/reference/), without
MPI: the sources are there and keep MPI out of their timed loops, the
script's arguments, the commands it builds, and its statistics on
synthetic numbers."""
import re
import sys
from pathlib import Path

import pytest

import docs  # noqa: E402  (tests/support)

from fabriclab.suite.benchmarks import REGISTRY

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import bench_fabric as bf  # noqa: E402  (bench/ holds scripts, not a package)

# The functions each loop runs between its two clock readings.
TIMED = {"fi_loop": ("wait_cq", "post_recv", "send_msg", "pingpong", "stream"),
         "ucp_loop": ("wait_req", "post_recv", "send_msg", "pingpong", "stream")}
CALLS = {"fi_loop": ("fi_tinject", "fi_tsend", "fi_trecv", "fi_cq_read"),
         "ucp_loop": ("ucp_tag_send_nbx", "ucp_tag_recv_nbx", "ucp_worker_progress")}
MPI_CALL = re.compile(r"\bMPI_(?!Abort\b)\w+\s*\(")


def _function(text: str, name: str) -> str:
    m = re.search(rf"^static \w+ \*?{name}\(.*?^\}}$", text, re.S | re.M)
    assert m, f"no function {name}"
    return m.group(0)


@pytest.mark.parametrize("loop", sorted(TIMED))
def test_reference_loops_exist_small_and_without_mpi_when_timed(loop):
    assert bf.LOOPS[{"fi_loop": "fabric", "ucp_loop": "ucx"}[loop]] == loop
    text = (bf.REF_DIR / f"{loop}.c").read_text()
    assert len(text.splitlines()) < 250
    for fn in TIMED[loop]:  # MPI_Abort on a failure only
        assert not MPI_CALL.findall(_function(text, fn)), f"{loop}.c: {fn} calls MPI"
    for call in CALLS[loop]:
        assert f"{call}(" in text


def test_pairs_name_registered_benchmarks_and_parameters():
    for pair in bf.PAIRS:
        for bench in ("pingpong", "stream"):
            args = bf.fl_args(pair, bench)
            facts = REGISTRY[args[0]]
            keys = {args[i + 1].split("=")[0] for i, a in enumerate(args) if a == "-p"}
            assert keys <= set(facts.params), f"{args[0]} has no parameter {keys - set(facts.params)}"
            assert facts.metric == ("latency" if bench == "pingpong" else "bandwidth")
    assert bf.fl_args(bf.PAIRS[0], "stream") == [
        "fabric.stream", "-p", "provider=shm", "-p", "window=64", "-p", "window_buffers=per-op",
        "-s", "65536,1048576,4194304"]
    assert bf.fl_args(bf.PAIRS[2], "pingpong") == ["ucx.pingpong", "-s", "0,8"]


def test_arguments_default_select_and_reject():
    opts = bf.parse_args([])
    assert opts.rounds == 3 and opts.pairs == list(bf.PAIRS) and not opts.reference_only
    opts = bf.parse_args(["--pairs", "ucx/tls=tcp, fabric/shm", "--rounds", "5", "--reference-only"])
    assert [p.name for p in opts.pairs] == ["ucx/tls=tcp", "fabric/shm"]
    assert opts.rounds == 5 and opts.reference_only
    for bad in (["--pairs", "fabric/verbs"], ["--pairs", ","], ["--rounds", "0"], ["--rounds", "x"]):
        with pytest.raises(SystemExit) as e:
            bf.parse_args(bad)
        assert e.value.code == 2


def test_reference_command_line_follows_the_loops_usage():
    shm, tcp = bf.PAIRS[0], bf.PAIRS[3]
    ref = bf.Reference(shm, "/x/fi_loop", ["mpiexec", "-n", "2"], {"A": "1"})
    assert ref.argv(("latency", 8), 1000, 5) == ["mpiexec", "-n", "2", "/x/fi_loop", "shm",
                                                 "pingpong", "8", "1000", "5"]
    assert ref.argv(("bandwidth", 65536), 3, 5)[4:] == ["shm", "stream", "65536", "64", "3", "5"]
    ucx = bf.Reference(tcp, "/x/ucp_loop", ["mpiexec"], {"A": "1"})
    assert ucx.env == {"A": "1", "UCX_TLS": "tcp"}
    assert ucx.argv(("latency", 0), 10, 1) == ["mpiexec", "/x/ucp_loop", "pingpong", "0", "10", "1"]


def test_calibration_sizes_repetitions_from_a_probe(monkeypatch):
    ref = bf.Reference(bf.PAIRS[0], "fi_loop", [], {})
    # 1 us one-way latency, 1 GB/s at every size
    monkeypatch.setattr(ref, "once", lambda pt, iters, reps: (1e-6 if pt[0] == "latency" else 1e9, {}))
    ref.calibrate()
    assert ref.iters[("latency", 8)] == 10                        # 20 us / (2 x 1 us), as a 20 us sample
    assert ref.iters[("bandwidth", 64 << 10)] == 1                # one window per repetition
    assert ref.iters[("bandwidth", 4 << 20)] == 1


def test_compare_takes_the_median_of_per_round_ratios():
    lat, bw = ("latency", 8), ("bandwidth", 1 << 20)
    fl = [{lat: 1.0, bw: 10.0}, {lat: 2.2, bw: 9.0}, {lat: 0.9, bw: 12.0}, {lat: 5.0}]
    ref = [{lat: 1.0, bw: 10.0}, {lat: 2.0, bw: 10.0}, {lat: 1.0, bw: 10.0}, {lat: 1.0, bw: 10.0}]
    out = bf.compare(fl, ref, points=(lat, bw))
    ratio, rounds = out[lat]
    assert rounds == pytest.approx([1.0, 1.1, 0.9, 5.0])
    assert ratio == pytest.approx(1.05)   # median of ratios; the ratio of medians would be 1.6 / 1.0
    ratio, rounds = out[bw]
    assert rounds == pytest.approx([1.0, 0.9, 1.2])  # the round without the point is left out
    assert ratio == pytest.approx(1.0)
    assert bf.compare(fl, [{}] * 4, points=(lat,)) == {}


def test_within_five_percent_either_way():
    assert bf.within(1.0) and bf.within(1.049) and bf.within(0.951)
    assert not bf.within(1.06) and not bf.within(0.94)


def test_fl_value_reads_the_points_median():
    from fabriclab.schema.records import Point, Summary

    def pt(bench, size, t, legs):
        return Point(bench=bench, size=size, bytes_per_op=legs * size, legs_per_op=legs, summary=Summary(t),
                     samples=[t])
    doc = docs.of([pt("fabric.pingpong", 0, 4e-7, 2), pt("fabric.pingpong", 8, 6e-7, 2),
                   pt("fabric.stream", 8, 1.6e-9, 1)])
    assert bf.fl_value(doc, "fabric.pingpong", ("latency", 8)) == pytest.approx(3e-7)
    assert bf.fl_value(doc, "fabric.stream", ("bandwidth", 8)) == pytest.approx(5e9)
    with pytest.raises(bf.c.BenchError):
        bf.fl_value(doc, "fabric.stream", ("bandwidth", 65536))


def test_a_size_misses_its_target_only_beyond_both_5_percent_and_the_floor():
    import _common as c
    assert not c.beyond(1.011, 0.010, 0.05)      # past a 1% floor, within 5%: met
    assert not c.beyond(0.80, 0.264, 0.05)       # past 5%, within a 26% floor: met
    assert c.beyond(1.091, 0.061, 0.05) and c.beyond(0.94, 0.0, 0.05)


def test_the_rule_over_arrays_judges_each_cell_as_beyond_does():
    import numpy as np
    import _common as c
    rng = np.random.default_rng(3)
    f, a, a2 = (np.exp(rng.normal(0, 0.08, (400, 5))) for _ in range(3))
    want = [c.beyond(float(np.median(f[i] / a[i])), c.aa_floor(list(a2[i] / a[i])), 0.05) for i in range(400)]
    assert list(c.rule_misses(f, a, a2, 0.05)) == want and 0 < sum(want) < 400


def test_an_identical_contender_misses_a_fifth_of_cells_at_3_rounds_and_few_at_the_default():
    # why the benches that judge cells run c.ROUNDS rounds by default: at 3 a bench of
    # 12 cells misses two or three with nothing to find
    import _common as c
    three, five, default = (c.chance_miss(n, draws=4000) for n in (3, 5, c.ROUNDS))
    assert three > 0.15 and three > five > default and default < 0.08 and c.ROUNDS >= 7


def test_the_closing_line_counts_the_cells_judged(capsys):
    import _common as c
    c._judged.update(rounds=0, cells=0, missed=0, tolerance=0.05)
    c.alternate([("a", lambda: 1.0), ("b", lambda: 1.0)], 3)
    c.floor_verdict(1.2, 0.01, 0.05, "x")
    c.beyond(1.0, 0.0, 0.05)
    capsys.readouterr()
    c.closing_line()
    line = capsys.readouterr().out
    assert line.startswith("1 of 2 cells beyond 5% and the A/A floor") and "with 3 rounds" in line


def test_a_launch_that_fails_once_runs_again_and_is_said_a_second_failure_ends_the_bench(capsys):
    import _common as c
    c._judged.update(rounds=0, cells=0, missed=0, tolerance=0.05, retried=0)
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 2:
            raise c.BenchError("exit code 9: osu_latency_mt\nKilled")
        return 1.0
    got = c.alternate([("osu", flaky), ("fabriclab", lambda: 2.0)], 3)
    assert got == {"osu": [1.0, 1.0, 1.0], "fabriclab": [2.0, 2.0, 2.0]} and len(calls) == 4
    c.closing_line()
    out = capsys.readouterr().out
    assert "RETRY osu: its launch failed (exit code 9: osu_latency_mt)" in out
    assert "1 launch(es) failed once and ran again" in out

    def dead():
        raise c.BenchError("exit code 1: gone")
    with pytest.raises(c.BenchError, match="gone"):
        c.alternate([("osu", dead)], 1)
    c._judged.update(retried=0)


def test_imbs_preloaded_buffers_start_on_a_page(tmp_path):
    """bench/imb_aligned.c, which bench_rate.py preloads into IMB-MPI1: every
    MPI_Alloc_mem block starts on a page, a free returns it, and MPI_SUCCESS (0)."""
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (cc) is needed: the core is built with one"
    (tmp_path / "driver.c").write_text(
        '#include <stdio.h>\n#include <stdint.h>\n'
        'int MPI_Alloc_mem(long, void *, void *); int MPI_Free_mem(void *);\n'
        'int main(void) { long sizes[] = {1, 24, 4096, 1 << 20};\n'
        '  for (int i = 0; i < 4; i++) { void *p = 0; int rc = MPI_Alloc_mem(sizes[i], 0, &p);\n'
        '    ((char *)p)[sizes[i] - 1] = 1;\n'
        '    printf("%d %lu\\n", rc, (unsigned long)((uintptr_t)p % 4096)); MPI_Free_mem(p); }\n'
        '  return 0; }\n')
    exe = tmp_path / "driver"
    subprocess.run([cc, "-O1", "-Wall", "-Werror", str(tmp_path / "driver.c"), str(BENCH / "imb_aligned.c"),
                    "-o", str(exe)], check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30, check=True).stdout
    assert out.split("\n")[:4] == ["0 0"] * 4


def test_ucx_perftest_runs_on_fabriclabs_ucx_only_when_built_for_its_version():
    import bench_atomics_below as ba
    # 1.20's ucx_info -v says what it was built for beside the library it loaded; 1.13's one version
    assert ba.built_for("# Library version: 1.13.1\n# Library path: /lib/libucs.so.0\n"
                        "# API headers version: 1.20.1\n# Git branch '', revision d8e50df\n") == "1.20.1"
    assert ba.built_for("# Version 1.13.1\n# Git branch '<unknown>', revision 0000000\n") == "1.13.1"
    assert ba.built_for("ucx_info: not found") is None
    # built for the level's version: its library files first; another (or unknown) version: its own
    assert ba.anchor_env("1.20.1", "/venv/lib/mpich", "1.20.1")["LD_LIBRARY_PATH"].split(":")[0] == "/venv/lib/mpich"
    assert ba.anchor_env("1.13.1", "/venv/lib/mpich", "1.20.1") is None
    assert ba.anchor_env(None, "/venv/lib/mpich", "1.20.1") is None
    # the client (the origin) on CPU 0 and the server on CPU 1, by ucx_perftest's own -c
    assert ba.pinned(0) == ["-c", "0"] and ba.pinned(1) == ["-c", "1"]


def test_ucx_atomic_follows_ucx_perftest_only_when_asked():
    # the clock read per op as ucx_perftest's loop reads ucs_get_time(), and its responder that reads
    # the word (ucx_atomic.c; test_below_mpi_atomics_rate_real.py runs each)
    clock, target = REGISTRY["ucx.atomic"].params["clock"], REGISTRY["ucx.atomic"].params["target"]
    assert clock.choices == ("loop", "per-op") and clock.default == "loop"
    assert target.choices == ("progress", "perftest") and target.default == "progress"
