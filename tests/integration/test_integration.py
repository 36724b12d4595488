"""Two real ranks under MPICH and under Open MPI, every level at small sizes.

Each level runs once per MPI (conftest.py's level_runs), read here and by the
tests of the levels below MPI. A missing MPI is a failure here, never a skip:
`make test` installs both."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.measure import build, mpi
from fabriclab.suite.benchmarks import LEVELS, REGISTRY
from fabriclab.cli import main
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import run  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration


def _check_points(doc: dict) -> None:
    for p in docs.points(doc):
        assert all(0 < s < 10 for s in p["samples"]), p["bench"]
        assert p["summary"]["n"] == len(p["samples"]) >= 1
        if p["bytes_per_op"] > 0:
            assert p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0, p
        for r in p.get("ranks", []):
            if r["median_s"] is not None:  # a passive target times nothing
                assert 0 < r["median_s"] < 10 and r["bandwidth_Bps"] is not None, (p["bench"], r)
                # an app on one rank sends nothing to another
                moved = p["rank_sent_bytes"][r["rank"]] or p["rank_recv_bytes"][r["rank"]]
                assert p["size"] == 0 or not moved or r["bandwidth_Bps"] > 0, (p["bench"], r)


@pytest.mark.parametrize("level", list(LEVELS))
def test_level_validates_under_both_mpis(flavour, level, level_runs):
    """Every benchmark of a level that runs on 2 ranks (patterns with their 2-rank layouts); the
    congestion benchmarks, which take 4, left out with a note (test_congestion_real.py runs them)."""
    name, _ = flavour
    doc = level_runs(name, level)
    assert name.replace("mpich", "MPICH").replace("openmpi", "Open MPI") in doc["header"]["mpi"]["library"]
    pts = docs.points(doc)
    benches = {p["bench"] for p in pts}
    expected = {b for b in REGISTRY if b.startswith(level + ".") and REGISTRY[b].min_ranks <= 2}
    skipped = {r["bench"] for r in doc["records"] if r["kind"] == "skip"}
    assert benches | skipped == expected
    _check_points(doc)
    assert len(doc["header"]["hosts"]) == 2
    assert doc["header"]["placement"]["hosts"]


def test_zero_and_one_byte_transfers(flavour, tmp_path):
    doc = run(tmp_path / "zero.json", "message.pingpong", "message.stream", "message.bibw",
               "deposit.put_lat", "deposit.get_bw", "tcp.rr_poll", "tcp.rr_epoll", "-s", "0,1", mpi=flavour[0])
    assert len(docs.points(doc)) == 14
    _check_points(doc)


PATTERNS = ["message.bibw", "message.hotspot", "message.saturation", "message.alltoall", "message.bisection",
            "deposit.put_bibw", "deposit.hotspot_put", "deposit.hotspot_get"]


def test_patterns_at_four_ranks(flavour, tmp_path):
    doc = run(tmp_path / "p4.json", *PATTERNS, "-n", "4", "-s", "8,4K", "-p", "variant=collective,pairwise",
              mpi=flavour[0])
    pts = docs.points(doc)
    assert {p["bench"] for p in pts} == set(PATTERNS)
    _check_points(doc)
    placed = doc["header"]["placement"]
    assert sum(h["ranks"] for h in placed["hosts"].values()) == 4
    hot = [p for p in pts if p["bench"] == "message.hotspot" and p["size"] == 4096]
    assert [p["active"] for p in hot] == [1, 2, 3]
    for p in hot:
        assert p["roles"] == "t" + "s" * p["active"] + "i" * (3 - p["active"])
        assert p["fairness"]["n"] == p["active"] and 0 < p["fairness"]["jain"] <= 1
        assert p["aggregate_bandwidth_Bps"] > 0
    sat = [p for p in pts if p["bench"] == "message.saturation"]
    assert sorted({p["active"] for p in sat}) == [1, 2] and all(p["message_rate_per_s"] > 0 for p in sat)
    a2a = {p["variant"] for p in pts if p["bench"] == "message.alltoall"}
    assert a2a == {"", "variant=pairwise"}
    for p in pts:
        if p["bench"] == "message.alltoall":
            assert p["bytes_per_op"] == 4 * 3 * p["size"]  # every rank sends SIZE to each of 3 others


def test_alltoall_window_of_exchanges_at_four_ranks(flavour, tmp_path):
    """variant=concurrent, window=4: four exchanges posted at once, each still one op; the whole window's
    data validated (every block of every distinct array the window used, on every rank)."""
    doc = run(tmp_path / "a2a.json", "message.alltoall", "-n", "4", "-s", "8,64K",
              "-p", "variant=concurrent", "-p", "window=4", mpi=flavour[0])
    pts = docs.points(doc)
    assert sorted(p["size"] for p in pts) == [8, 65536]
    _check_points(doc)
    for p in pts:
        assert p["variant"] == "variant=concurrent,window=4" and p["bytes_per_op"] == 4 * 3 * p["size"]
        assert p["info"]["window"] == 4 and p["info"]["variant"] == "concurrent"
        arrays = min(4, p["info"]["arrays"])
        assert p["validation"]["checked_bytes"] == 4 * 3 * p["size"] * arrays


def test_alltoall_fill_grows_the_window_at_small_sizes(flavour, tmp_path):
    """fill=256: at least 256 bytes per flow per wait, so 32 exchanges of 8 bytes and one of 64 KiB."""
    doc = run(tmp_path / "fill.json", "message.alltoall", "-n", "4", "-s", "8,64K",
              "-p", "variant=concurrent", "-p", "fill=256", mpi=flavour[0])
    _check_points(doc)
    assert {p["size"]: p["info"]["window"] for p in docs.points(doc)} == {8: 32, 65536: 1}


def test_three_launches_record_launches_and_placement(flavour, tmp_path):
    _, home = flavour
    out = tmp_path / "l3.json"
    assert main(["run", "message.pingpong", "message.stream", "-s", "0,4K", "--mpi-home", home, "-q", "-o",
                 str(out), "--point-time", "0.05", "--min-samples", "5", "-L", "3", "--seed", "11"]) == 0
    doc = docs.read(out)
    pts = docs.points(doc)
    assert sorted(p["launch"] for p in pts) == [0] * 4 + [1] * 4 + [2] * 4
    starts = [r for r in doc["records"] if r["kind"] == "launch"]
    ends = [r for r in doc["records"] if r["kind"] == "launch_end"]
    assert len(starts) == len(ends) == 6 and {r["launch"] for r in starts} == {0, 1, 2}
    for r in starts:  # bound by default: each rank on a core of its own
        hello = r["hello"]
        assert len(hello["affinity"]) == len(hello["cpu_start"]) == 2
        assert len(set(hello["affinity"])) == 2 and all("-" not in a and "," not in a for a in hello["affinity"])
    assert all(len(r["cpu_end"]) == 2 and r["noise"]["loadavg_1min"][0] is not None for r in ends)
    assert doc["header"]["launcher"]["binding"] == "core"
    for m in doc["merged"]:
        assert [x["launch"] for x in m["launches"]] == [0, 1, 2]
        assert m["summary"]["ci_low"] <= m["summary"]["median"] <= m["summary"]["ci_high"]
        assert m["spread"]["max_min_ratio"] >= 1


def test_core_has_a_kernel_for_every_fact(flavour):
    _, home = flavour
    core = build.ensure_core(mpi.discover(home=home))
    out = subprocess.run([core.path, "--list"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    listed = [json.loads(line) for line in out.stdout.splitlines()]
    assert [d["name"] for d in listed] == list(REGISTRY)  # no kernel without facts either
    for d in listed:
        b = REGISTRY[d["name"]]
        assert d["kernel"] and d["facts"], d["name"]
        assert (d["summary"], d["params"], d["min_ranks"], d["legs"], d["concurrent"], d["even_ranks"]) == (
            b.summary, b.params_spec, b.min_ranks, b.legs, b.concurrent, b.even_ranks)
        assert tuple(d["axes"]) == b.axes and d["pattern"] == (b.pattern is not None)


def test_suffixed_parameter_reaches_the_core_as_an_integer(flavour, tmp_path):
    """-p window=1KiB: Python sends window=1024, the core runs windows of 1024."""
    doc = run(tmp_path / "w.json", "message.stream", "-s", "8,4K", "-p", "window=1KiB", mpi=flavour[0])
    hello = next(r["hello"] for r in doc["records"] if r["kind"] == "launch")
    assert hello["options"]["params"]["window"] == "1024"
    pts = docs.points(doc)
    assert len(pts) == 2 and all(p["info"]["window"] == 1024 and p["variant"] == "window=1024" for p in pts)
    _check_points(doc)


@pytest.mark.parametrize("bench,extra,msg", [
    ("message.stream", ["--param", "window=1K"], "param window=1K is not a decimal integer in 1..1048576"),
    ("message.stream", ["--param", "window=0"], "param window=0 is not a decimal integer in 1..1048576"),
    ("message.stream", ["--param", "completion=maybe"], "param completion=maybe is not one of wait|test"),
    ("message.stream", ["--sizes", "1K"], "--sizes: expected comma-separated integers"),
    ("message.stream", ["--param", "windw=8"], "has no param 'windw'"),
    ("message.alltoall", ["--param", "window=2", "--param", "variant=pairwise"],
     "param window=2 applies only with variant=concurrent"),
])
def test_core_refuses_what_python_never_sends(bench, extra, msg):
    """The core's own check, driven by the generated rules: one error line, exit 2. The check
    (csrc/opts.c) runs before MPI is touched and is the same under every MPI: MPICH's core only."""
    core = build.ensure_core(mpi.discover(home=mpi_home("mpich")))
    out = subprocess.run([core.path, bench, "--sizes", "8", *extra], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                                          "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert out.returncode == 2, out.stdout + out.stderr
    line = json.loads(out.stdout.splitlines()[-1])
    assert line["type"] == "error" and msg in line["message"]


def test_interrupted_run_keeps_a_valid_document(tmp_path):
    home = mpi_home("mpich")
    out = tmp_path / "int.json"
    cmd = [sys.executable, "-m", "fabriclab.cli", "run", "message.pingpong", "message.stream",
           "-s", "0:4M:x2", "--point-time", "0.3", "--mpi-home", home, "-q", "-o", str(out), "-L", "1"]
    # SIGINT at its default in the run, even when the tests were started in the background
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    stream = out.with_suffix(".ndjson")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if stream.exists() and stream.read_text().count('"kind":"point"') >= 3:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    doc = docs.read(out)
    assert doc["footer"]["status"] == "interrupted"
    assert len(docs.points(doc)) >= 3
    assert doc["footer"]["points"] == len(docs.points(doc))
    assert docs.read(stream)["footer"]["status"] == "interrupted"


def test_tcp_interface_selection_and_recorded_options(tmp_path, capsys):
    home = mpi_home("mpich")
    out = tmp_path / "lo.json"
    assert main(["run", "tcp.rr_poll", "-s", "64", "-p", "iface=lo", "-p", "sndbuf=256K", "--mpi-home", home,
                 "-q", "-o", str(out), "--point-time", "0.05"]) == 0
    info = docs.points(docs.read(out))[0]["info"]
    assert "127.0.0.1" in json.dumps(info)
    assert main(["run", "tcp.rr_poll", "-s", "64", "-p", "iface=nosuch0", "--mpi-home", home, "-q",
                 "-o", str(tmp_path / "bad.json"), "-t", "30"]) == 1
    assert "nosuch0" in capsys.readouterr().err


def test_doctor_reports_a_working_setup(flavour, capsys):
    _, home = flavour
    assert main(["doctor", "--mpi-home", home]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "0 errors in 8192 bytes" in out
