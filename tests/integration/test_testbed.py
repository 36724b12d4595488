"""The emulated testbed for real (root, which CI has): up and down, runs
across it under MPICH and Open MPI with the cables' counters showing the
bytes crossed, a cut cable mid-run, a killed `up` cleaned by `down`, the
model's validation loop, and bad input.

Every shipped example is validated once (`validations`), and every check of
that validation reads the one run. Testbed names carry this process's id, so
that two test sessions on one machine never take each other's testbeds."""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.analysis import merge
from fabriclab.cli import main
from fabriclab.measure import coll_algorithms, shm
from fabriclab.verdicts import coll_prediction, pair_matrix
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.testbed import netns
from mpihome import mpi_home  # noqa: E402  (tests/support)
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
TWO = str(REPO / "examples" / "testbeds" / "two-switches.yaml")
TAG = str(os.getpid() % 100000)
BED = f"it{TAG}"                 # the shared testbed of this module (testbed names: 1-12 letters and digits)


def name(prefix: str) -> str:
    """A testbed name of this session."""
    return f"{prefix}{TAG}"


@pytest.fixture(scope="module")
def bed():
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (CI runs as root)")
    main(["testbed", "down", BED])
    t0 = time.monotonic()
    assert main(["testbed", "up", TWO, "--name", BED]) == 0
    up_s = time.monotonic() - t0
    yield {"state": netns.load(BED), "up_s": up_s}
    t0 = time.monotonic()
    assert main(["testbed", "down", BED]) == 0
    assert time.monotonic() - t0 < 3
    assert netns.namespaces(BED) == [] and not netns.state_dir(BED).exists()


def test_up_makes_the_hosts(bed):
    st = bed["state"]
    assert bed["up_s"] < 15
    assert st["hosts"] == [f"h{i}" for i in range(8)] and st["switches"] == ["s0", "s1"]
    assert sorted(netns.namespaces(BED)) == sorted(st["namespaces"].values())
    out = subprocess.run(netns.exec_argv(st, "h4", ["hostname"]), capture_output=True, text=True)
    assert out.stdout.strip() == "h4"
    routes = subprocess.run(["ip", "-n", st["namespaces"]["s0"], "route", "show", "table", "1000"],
                            capture_output=True, text=True).stdout
    assert "10.77.0.5 via 10.78.0.1 dev p4" in routes   # h0 -> h4 leaves s0 over the trunk
    tcp = subprocess.run(netns.exec_argv(st, "h4", ["sysctl", "-n", "net.ipv4.tcp_congestion_control",
                                                    "net.ipv4.tcp_slow_start_after_idle",
                                                    "net.ipv4.tcp_rmem"]),
                         capture_output=True, text=True).stdout.split()
    assert tcp == ["cubic", "0", "4096", "8388608", "33554432"]   # the hosts' TCP, whatever the machine's (netns.py)
    mtu = subprocess.run(netns.exec_argv(st, "h4", ["cat", "/sys/class/net/eth0/mtu"]), capture_output=True, text=True)
    assert mtu.stdout.strip() == str(st["mtu"]) == str(netns.frame_mtu([c["rate_MBps"] * 1e6 for c in st["cables"]]))


@pytest.mark.parametrize("mpi", ["mpich", "openmpi"])
def test_run_across_the_testbed(bed, tmp_path, mpi):
    home = ["--mpi-home", mpi_home("openmpi")] if mpi == "openmpi" else []
    out = tmp_path / "r.json"
    assert main(["run", "message.pingpong", "--testbed", BED, "--hosts", "h0,h4", "-n", "2", "-s", "8,256K",
                 "--validate", *home, "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    assert doc["header"]["hosts"] == ["h0", "h4"]
    assert doc["header"]["launcher"]["transport"] == "tcp over eth0"
    ends = [r for r in doc["records"] if r["kind"] == "launch_end"]
    payload = sum(len(p["samples"]) * p["batch"] * p["bytes_per_op"] for p in docs.points(doc))
    assert ends and sum(e["wire_bytes"] for e in ends) >= payload > 0     # every payload byte crossed a cable
    assert ends[0]["counters"]["h4"]["rx_bytes"] > 0 and ends[0]["counters"]["h2"]["tx_bytes"] < 10_000
    assert not any(d["code"] == "fabric-bypassed" for d in doc["records"] if d["kind"] == "diagnostic")
    assert all(p["validation"]["errors"] == 0 for p in docs.points(doc))


@pytest.mark.parametrize("mpi", ["mpich", "openmpi"])
def test_the_levels_below_mpi_cross_the_testbed(bed, tmp_path, mpi):
    """libfabric's tcp provider and UCX's tcp transport, chosen because it is a testbed, move every
    payload byte over the emulated cables."""
    home = ["--mpi-home", mpi_home("openmpi")] if mpi == "openmpi" else []
    out = tmp_path / "r.json"
    assert main(["run", "fabric.stream", "fabric.pingpong", "ucx.stream", "--testbed", BED, "--hosts", "h0,h4",
                 "-n", "2", "-s", "256K", "--validate", *home, "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    levels = doc["header"]["levels"]
    assert {j["provider"] for j in levels["fabric"]["jobs"]} == {"tcp"}
    assert {j["tls"] for j in levels["ucx"]["jobs"]} == {"tcp+self"}
    pts = docs.points(doc)
    assert {p["bench"] for p in pts} == {"fabric.stream", "fabric.pingpong", "ucx.stream"}
    assert all(p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0 for p in pts)
    assert all(p["info"]["provider"] == "tcp" for p in pts if p["bench"].startswith("fabric."))
    for bench in ("fabric.stream", "ucx.stream"):
        ends = [r for r in doc["records"] if r["kind"] == "launch_end" and r["bench"] == bench]
        payload = sum(len(p["samples"]) * p["batch"] * p["bytes_per_op"] for p in pts if p["bench"] == bench)
        assert ends and sum(e["wire_bytes"] for e in ends) >= payload > 0, bench
    assert not any(d["code"] == "fabric-bypassed" for d in doc["records"] if d["kind"] == "diagnostic")


def test_congestion_across_the_trunk_meets_the_model(bed, tmp_path, capsys):
    """Victims h1 and h4 (the split of seed 3) stream across the 20 MB/s trunk while six
    aggressors run all-to-all: the model gives every one of the 10 flows (connections) on each
    trunk direction 20/10 MB/s, a 10x slower victim (tests/unit/test_congestion.py works it by
    hand). Measured here 9.6-9.9x; the bound leaves room for a busy machine."""
    from fabriclab.verdicts import congestion as judged
    out = tmp_path / "c.json"
    assert main(["congestion", "--victim", "bandwidth", "--testbed", BED, "-n", "8", "--split", "3",
                 "--draws", "1", "-L", "2", "--point-time", "0.3", "-q", "-o", str(out)]) == 0
    doc = schema.load(out)
    (m,) = judged.impacts(doc.points, doc.header.hosts, doc.header.network)
    assert [doc.header.hosts[r] for r, x in enumerate(doc.points[0].roles) if x == "v"] == ["h1", "h4"]
    assert m.predicted.impact == pytest.approx(10, rel=1e-6) and "trunk" in m.predicted.bottleneck
    assert 0.75 < m.median[0] / m.predicted.impact < 1.3, m
    assert "shared with the aggressors: link trunk" in capsys.readouterr().out


def test_saturation_across_the_trunk(bed, tmp_path):
    out = tmp_path / "s.json"
    assert main(["run", "message.saturation", "--testbed", BED, "--hosts", "h0,h1,h4,h5", "-n", "4",
                 "-s", "64K", "-p", "window=8", "-o", str(out), *FAST, "--point-time", "1"]) == 0
    doc = docs.read(out)
    agg = {p["active"]: p["aggregate_bandwidth_Bps"] for p in doc["merged"]}
    # A second per point: a 64 KiB message takes 3.3 ms on the trunk, and one TCP stall in a
    # fifth of a second's few samples halves the figure.
    # The 20 MB/s trunk caps the pairs together: tbf lets through about 96% of its rate, and
    # since the pairs start every sample together (a barrier), their bytes over the slowest
    # pair's time cannot read above it; the floor leaves room for a hypervisor that takes a
    # fifth of a CPU (up to 19% seen in CI).
    assert set(agg) == {1, 2} and all(8e6 < v < 20.4e6 for v in agg.values())
    trunk = sum(e["counters"]["h0"]["tx_bytes"] + e["counters"]["h1"]["tx_bytes"]
                for e in doc["records"] if e["kind"] == "launch_end")
    assert trunk > 0


def test_the_apps_cross_the_testbed_and_meet_the_model(bed, tmp_path):
    """The transpose and the sort on four hosts, two on each side of the trunk: every element checked,
    every byte a rank sends to another crossing the cables, and each exchange phase beside the time the
    network file's model predicts for it."""
    out = tmp_path / "apps.json"
    assert main(["run", "app.transpose", "app.sort", "--testbed", BED, "--hosts", "h0,h1,h4,h5", "-n", "4",
                 "-s", "256", "--active", "4", "--validate", "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    pts = docs.points(doc)
    assert {p["bench"] for p in pts} == {"app.transpose", "app.sort"}
    assert all(p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0 for p in pts)
    for p in pts:
        ends = [r for r in doc["records"] if r["kind"] == "launch_end" and r["bench"] == p["bench"]]
        sent = len(p["samples"]) * p["batch"] * sum(p["rank_sent_bytes"])
        assert sum(e["wire_bytes"] for e in ends) >= sent > 0, p["bench"]
    model = doc["exchange_model"]
    assert model["network"].endswith("two-switches.yaml")
    rows = {r["bench"]: r for r in model["rows"]}
    assert set(rows) == {"app.transpose", "app.sort"}
    for r in rows.values():
        assert r["predicted_s"] > 0 and r["measured_s"] > 0 and "trunk" in r["bottleneck"]
        assert abs(r["ratio"] - r["measured_s"] / r["predicted_s"]) < 1e-9


@pytest.fixture(scope="module")
def cut_bed():
    """A two-switch testbed whose cables the tests cut: each test cuts a cable of its own
    and runs on hosts that the others' cuts leave joined (h0, h4 across the trunk; h5, h6
    on s1; h2, h3 on s0), so one testbed serves them in any order."""
    cut = name("cut")
    assert main(["testbed", "up", TWO, "--name", cut]) == 0
    try:
        yield netns.load(cut)
    finally:      # MPICH's proxies still try to reach the hosts beyond a cut: down ends them
        main(["testbed", "down", cut])


def _cable(st: dict, a: str, b: str) -> dict:
    return next(c for c in st["cables"] if {c["a"], c["b"]} == {a, b})


def test_a_cut_cable_ends_the_run_and_names_the_rank(cut_bed, tmp_path):
    st = cut_bed
    # Built and started once first, so that the cut falls in the measurement, not the build.
    assert main(["run", "message.pingpong", "--testbed", st["name"], "--hosts", "h5,h6", "-n", "2", "-s", "8",
                 "-o", str(tmp_path / "warm.json"), *FAST]) == 0
    threading_cut = subprocess.Popen(["sh", "-c", f"sleep 3; ip -n {st['namespaces']['h6']} link set eth0 down"])
    out = tmp_path / "c.json"
    t0, shm_before = time.monotonic(), set(shm.entries())
    rc = main(["run", "message.pingpong", "--testbed", st["name"], "--hosts", "h5,h6", "-n", "2", "-s", "1K:4M:x2",
               "--point-time", "1", "-t", "5", "-L", "1", "-q", "-o", str(out)])
    threading_cut.wait()
    assert rc == 1 and time.monotonic() - t0 < 60
    doc = docs.read(out.with_suffix(".ndjson"))
    err = doc["footer"]["error"]
    assert "message.pingpong" in err and "at size" in err and "phase: measuring" in err
    assert "Rank 1 on h6 stopped answering" in err
    assert len(docs.points(doc)) >= 1                                      # completed points kept
    left = [h for h in ("h5", "h6") if subprocess.run(["ip", "netns", "pids", st["namespaces"][h]],
                                                     capture_output=True, text=True).stdout.strip()]
    assert left == []                                                        # no process left behind
    # nor a file in /dev/shm: the ranks in the namespaces outlive the launcher's group until the
    # testbed's cleanup, and their files are removed after it
    assert set(shm.entries()) - shm_before == set()


def test_a_cut_trunk_names_the_cable_and_the_ranks_whose_routes_cross_it(cut_bed, tmp_path):
    """A cable between the switches cut mid-run: every cable is checked, not only the hosts' own."""
    st = cut_bed
    trunk = _cable(st, "s0", "s1")
    assert main(["run", "message.stream", "--testbed", st["name"], "--hosts", "h0,h4", "-n", "2", "-s", "8",
                 "-o", str(tmp_path / "warm.json"), *FAST]) == 0
    cut = subprocess.Popen(["sh", "-c", f"sleep 3; ip -n {st['namespaces'][trunk['a']]} link set "
                                        f"{trunk['a_if']} down"])
    out = tmp_path / "t.json"
    t0, shm_before = time.monotonic(), set(shm.entries())
    rc = main(["run", "message.stream", "--testbed", st["name"], "--hosts", "h0,h4", "-n", "2", "-s", "1K:4M:x2",
               "--point-time", "1", "-t", "5", "-L", "3", "-q", "-o", str(out)])
    cut.wait()
    assert rc == 1 and time.monotonic() - t0 < 90
    err = docs.read(out.with_suffix(".ndjson"))["footer"]["error"]
    assert "message.stream" in err and "phase: measuring" in err
    assert ("Ranks 0, 1 on h0, h4 stopped answering: their routes cross cable s0:p4 <-> s1:p4 (link trunk), "
            "which is down") in err
    assert set(shm.entries()) - shm_before == set()


def test_the_counters_watch_names_the_host_it_cannot_reach(cut_bed):
    """--counters' watch (a real cluster's: no routes, no cable states) with a host's cable cut at its
    switch, read through the launcher as on a cluster: the host beyond the cut does not answer, and it
    says so."""
    from fabriclab.measure import counters, mpi
    from fabriclab.measure.session import Launch
    from fabriclab.testbed.site import TestbedSite
    st = cut_bed
    spec = TestbedSite(st["name"]).spec(Launch(ranks=2, hosts="h2,h3", launcher="mpiexec"),
                                        mpi.discover(None, None, None, need_compiler=False))
    watch = counters.CounterWatch(spec)
    assert sorted(watch.before()) == ["h2", "h3"]
    h3 = _cable(st, "h3", "s0")
    end = ("a", "a_if") if h3["a"] == "s0" else ("b", "b_if")
    subprocess.run(["ip", "-n", st["namespaces"]["s0"], "link", "set", h3[end[1]], "down"], check=True)
    t0 = time.monotonic()
    said = watch.stopped(["h2", "h3"]).split("; ")
    assert said[0] == "Rank 1 on h3 stopped answering: h3 did not answer the counter read"
    # h2, whose peer is gone, may also have fallen quiet by then: said, never as not answering
    assert all(part.startswith("Rank 0 on h2: eth0 on h2 stopped counting") for part in said[1:]), said
    assert time.monotonic() - t0 < 2 * counters.CHECK_TIMEOUT + counters.QUIET_S + 10


def _machine(names: tuple) -> dict:
    """What a testbed of these names could leave behind: namespaces, state directories, and the
    links of this namespace (other testbeds, up at the same time, are left out)."""
    run = lambda *argv: subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    mine = lambda x: any(x == n or x.startswith(f"{netns.PREFIX}-{n}") for n in names)
    state = [p.name for p in netns.STATE.iterdir() if mine(p.name)] if netns.STATE.is_dir() else []
    return {"netns": [ln for ln in run("ip", "netns", "list").splitlines() if mine(ln.split()[0])],
            "state": state, "links": sorted(ln.split(":")[1].strip() for ln in run("ip", "-o", "link").splitlines())}


def test_names_with_a_newline_leave_nothing(tmp_path, capsys):
    """A trailing newline in the testbed name or in a host name of the file: one line, exit 2, and no
    namespace, veth, bridge or state created (the newline never reaches `ip -batch`)."""
    net = tmp_path / "nl.yaml"
    net.write_text(Path(TWO).read_text().replace("nodes: [h0,", 'nodes: ["h0\\n",').replace("[h0, s0]",
                                                                                              '["h0\\n", s0]'))
    alike = tmp_path / "alike.yaml"      # a Cyrillic а: a name for the model, no host name
    alike.write_text(Path(TWO).read_text().replace("h1", "h\u0430"))
    names = ("probe1", "probe1\n", "nl", "alike", "twoswitches")
    before = _machine(names)
    for argv, msg in ((["testbed", "up", TWO, "--name", "probe1\n"], "testbed name 'probe1\\n'"),
                      (["testbed", "up", TWO, "--name", ""], "testbed name ''"),
                      (["testbed", "up", str(net), "--name", "nl"], "node name 'h0\\n'"),
                      (["testbed", "up", str(alike), "--name", "alike"], "'h\u0430' cannot be a host name")):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and msg in err
    assert _machine(names) == before and before["netns"] == before["state"] == []


def test_down_cleans_a_killed_up():
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    p = subprocess.Popen([sys.executable, "-m", "fabriclab.cli", "testbed", "up", TWO, "--name", "killed"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 20
    while not netns.namespaces("killed") and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.005)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    assert main(["testbed", "down", "killed"]) == 0
    assert main(["testbed", "down", "killed"]) == 0                           # idempotent
    assert netns.namespaces("killed") == [] and not netns.state_dir("killed").exists()


EXAMPLES = sorted((REPO / "examples" / "testbeds").glob("*.yaml"))
# The all-to-all sizes each example is validated at: the two-switch example is also read
# against seed 001's numbers (test_validate_the_model_on_the_two_switch_example) at two sizes.
SIZES = {"two-switches": "64K,256K"}
# Each step of a validation here is one launch of at most a second and 3 samples a point, not
# the procedure's three launches of up to three seconds and 10 samples (on the dragonfly's 3 MB/s
# global cable one saturation op of 4 pairs takes 1.4 s, a 16-host all-to-all op 1.5 s): the
# checks are the procedure's and the cables', end to end; how close the calibrated model comes is
# bench/bench_testbed.py's (docs/testbed.md).
# The two-switch example keeps the procedure's launches and samples, each point at most POINT_S:
# its checks read each rate's 95% interval against the trunk's 20 MB/s, and one launch's
# interval, which leaves out the launch-to-launch spread, can end just above it (20.004 MB/s
# once); the calibrating steps' 3 s points only narrow the interval these checks read.
POINT_S, SAMPLES, LAUNCHES = 1.0, 3, 1
FULL_SAMPLING = {"two-switches"}
# The examples whose validation measures the collectives too (the others' take about 20 s more
# each; bench/bench_testbed.py measures every example's).
COLLECTIVES = {"two-switches"}


def _validate(argv: list[str], full_sampling: bool = False) -> tuple[int, str]:
    """`fabriclab testbed validate ...` in this process, each step's run at POINT_S and SAMPLES
    a point and LAUNCHES launches (through the procedure's one run function,
    testbed/validation.py's `run`), or with `full_sampling` the procedure's samples and
    launches, at most POINT_S a point: (exit code, what it printed)."""
    from fabriclab.testbed import validation
    full = validation.run

    def run(request, say=lambda line: None):
        s = request.sampling
        if full_sampling:
            return full(replace(request, sampling=replace(s, point_time=min(s.point_time, POINT_S))), say)
        sampling = replace(s, point_time=min(s.point_time, POINT_S), min_samples=min(s.min_samples, SAMPLES))
        return full(replace(request, sampling=sampling, launches=LAUNCHES), say)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setattr(validation, "run", run)
        rc = main(["testbed", "validate", *argv])
    return rc, out.getvalue()


@pytest.fixture(scope="module")
def validations(tmp_path_factory):
    """validations(stem): the validation of examples/testbeds/STEM.yaml, run once for every
    test that reads it: {"rc", "text", "v": its validation block, "down": its testbed removed}."""
    done: dict = {}

    def get(stem: str) -> dict:
        if stem not in done:
            out = tmp_path_factory.mktemp(stem) / "v.json"
            bed = name(f"v{[f.stem for f in EXAMPLES].index(stem)}")
            rc, text = _validate([str(REPO / "examples" / "testbeds" / f"{stem}.yaml"), "--name", bed,
                                  "-s", SIZES.get(stem, "64K"), "-o", str(out)]
                                 + ([] if stem in COLLECTIVES else ["--no-collectives"]), stem in FULL_SAMPLING)
            done[stem] = {"rc": rc, "text": text, "v": json.loads(out.read_text())["validation"],
                          "down": netns.namespaces(bed) == []}
        return done[stem]
    return get


def test_validate_the_model_on_the_two_switch_example(validations):
    got = validations("two-switches")
    v, rc, text = got["v"], got["rc"], got["text"]
    assert v["bottleneck"] == "link trunk (s0→s1)" and len(v["pairs"]) == 4
    # at most the 20 MB/s trunk per direction, within each rate's own 95% interval; the floor is
    # loose on purpose: with the hypervisor taking a fifth of a CPU the interval's low end fell to 9.9 MB/s
    assert v["saturation"]["ci_Bps"][0] <= 20e6 and v["bidirectional"]["ci_Bps"][0] <= 20e6
    # the pairs start each sample together, so all their bytes over the slowest one's time is a
    # rate the trunk carried: never above it (free-running pairs read 21.4 MB/s here)
    assert v["saturation"]["rate_Bps"] <= 20.4e6
    assert 7e6 < v["saturation"]["rate_Bps"] and 7e6 < v["bidirectional"]["rate_Bps"]
    assert v["predicted_Bps"] == pytest.approx(7 / 16 * v["calibrated_rate_Bps"])   # seed 001 Eq. 4-5
    assert [r["size"] for r in v["per_size"]] == [65536, 262144]
    top = v["per_size"][-1]
    assert 0.5 < top["ratio"] < 1.5 and rc == (0 if top["verdict"] == "agrees" else 1)
    assert "calibrated prediction" in text and got["down"]    # brought up, brought down
    # the collectives at 256K: each algorithm against its schedule's time on the calibrated trunk
    colls = {(r["bench"], r["algorithm"]): r for r in v["collectives"]}
    assert set(colls) == {("coll.allreduce", a) for a in ("ring", "recursive_doubling", "rabenseifner")} | {
        ("coll.bcast", "binomial"), ("coll.allgather", "ring")}
    # a shared machine only slows an op, so the floor is the model's and the ceiling the machine's: quiet,
    # these read 0.95-1.01 (docs/testbed.md); beside one busy process alone, 1.09-1.62 (the ring 1.62 and
    # Rabenseifner's 1.50 the highest: each of their 14 and 6 steps waits for a CPU), and with more work on
    # the 2 cores (load average 4-12) and one busy process, 1.06-2.11 in two runs
    for r in colls.values():
        assert r["size"] == 262144 and r["as"] == "the library's" and 0.7 < r["ratio"] < 2.5, r
        # the trunk is the costliest step's bottleneck; the cable the model keeps busiest over the op is
        # the one measured busiest (the binomial bcast's root cable carries three sends in the time the
        # trunk carries one: a tie, which counts)
        assert r["bottleneck"].startswith("link trunk") and r["busiest_agrees"], r
    assert v["collective_costs"]["from"] == {"alpha": "measured", "gamma": "measured"}
    assert "bottleneck (model); busiest cable (model, measured)" in text


@pytest.mark.parametrize("example", EXAMPLES, ids=[f.stem for f in EXAMPLES])
def test_validate_every_example_cable_by_cable(example, validations):
    """Each shipped network validates to the end, with every cable direction predicted
    and measured, and the emulation's own check (the 5% target is bench/bench_testbed.py's)."""
    got = validations(example.stem)
    v, rc, text = got["v"], got["rc"], got["text"]
    sizes = [65536, 262144] if example.stem in SIZES else [65536]
    assert [c["size"] for c in v["cables"]] == sizes                 # the cables read at every size
    size = v["cables"][-1]                                           # the verdict's size
    plan_cables = {(c["cable"], c["from"]) for c in size["cables"]}
    assert size["size"] == sizes[-1] and len(plan_cables) == len(size["cables"])       # every direction once
    saturated = [c for c in size["cables"] if c["predicted_util"] >= 0.99]
    assert saturated and max(c["predicted_util"] for c in size["cables"]) == pytest.approx(1.0)
    # the directions the model loads carried traffic; its bottleneck class is among the saturated ones
    assert all(c["measured_util"] > 0.05 for c in size["cables"] if c["predicted_util"] > 0.2)
    assert all(c["p90_util"] < 1.5 for c in size["cables"])                # no cable above its rate
    assert any(c["label"].startswith(v["bottleneck"].split(" (")[0]) for c in saturated)
    assert isinstance(v["emulation"]["faithful"], bool) and (v["emulation"]["faithful"] == (not v["emulation"]["reasons"]))
    assert any(f"{c['label']} ({c['from']}→{c['to']})" in v["explanation"] for c in saturated)
    top = v["per_size"][-1]
    assert rc == (0 if top["verdict"] == "agrees" else 1) and "cables:" in text and "emulation:" in text
    assert got["down"]


def _stream(out: Path) -> float:
    """message.stream's bandwidth at 1 MiB from h0 to h4, across the trunk."""
    assert main(["run", "message.stream", "--testbed", BED, "--hosts", "h0,h4", "-n", "2", "-s", "1M",
                 "-o", str(out), *FAST, "--point-time", "0.5"]) == 0
    return docs.read(out)["merged"][0]["bandwidth_Bps"]


def test_a_degraded_trunk_carries_its_new_rate_and_restore_puts_it_back(bed, tmp_path, capsys):
    assert main(["testbed", "degrade", BED, "trunk", "10"]) == 0
    try:
        trunk = next(c for c in netns.load(BED)["cables"] if c["label"] == "link trunk")
        assert trunk["shaped_MBps"] == 10 and trunk["rate_MBps"] == 20      # the file's rate kept
        main(["testbed", "show", BED])
        assert "degraded to 10 MB/s" in capsys.readouterr().out
        slow = _stream(tmp_path / "slow.json")
    finally:
        assert main(["testbed", "restore", BED]) == 0
    assert "shaped_MBps" not in next(c for c in netns.load(BED)["cables"] if c["label"] == "link trunk")
    fast = _stream(tmp_path / "fast.json")
    # tbf passes about 96-99% of its rate; a busy machine takes some of it from both runs alike
    assert 8e6 < slow < 10.2e6 and 0.4 < slow / fast < 0.6, (slow, fast)


def _pairs(path, capsys) -> list:
    """message.shift at every step on the eight hosts, validated; the matrix and what it names."""
    assert main(["run", "message.shift", "--testbed", BED, "-n", "8", "-s", "256K", "-p", "window=4", "--validate",
                 "-o", str(path), *FAST, "--point-time", "0.3"]) == 0
    d = schema.load(path)
    assert sorted(p.active for p in merge.merged(d)) == list(range(1, 8))
    assert all(p.validation["errors"] == 0 and p.validation["checked_bytes"] > 0 for p in merge.merged(d))
    assert all(p.info["waiting"] == ("sleep" if 8 > os.cpu_count() else "spin") for p in merge.merged(d))
    (m,) = pair_matrix.matrices(merge.merged(d), d.header.hosts, d.header.network)
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    assert "against the model's rate on the run's network" in capsys.readouterr().out
    return m


def test_the_pair_matrix_names_a_degraded_trunk_and_nothing_when_healthy(bed, tmp_path, capsys):
    """Every ordered pair of the two switches against the model's rate of its flow: healthy,
    nothing is named; with the trunk at half its rate, both of its directions and nothing else
    (each limits 16 pairs, all read at about half their share)."""
    m = _pairs(tmp_path / "healthy.json", capsys)
    off = ~np.eye(8, dtype=bool)
    assert (m.bandwidth[off] > 0).all() and (m.predicted[off] > 0).all() and m.named == [], m.named
    assert main(["testbed", "degrade", BED, "trunk", "10"]) == 0
    try:
        m = _pairs(tmp_path / "degraded.json", capsys)
    finally:
        assert main(["testbed", "restore", BED]) == 0
    assert sorted(m.named) == ["link trunk (s0→s1)", "link trunk (s1→s0)"], m.named


def test_check_passes_the_healthy_testbed_and_names_a_degraded_trunk(bed, tmp_path, capsys):
    """fabriclab check on the two switches: healthy, every test passes (the collectives within two
    attempts, below); with the trunk at half its rate, the pair matrix names both of its directions
    and nothing else, and the allreduce across it fails with the trunk as its bottleneck."""
    assert main(["check", "--testbed", BED, "-n", "8", "-q", "-o", str(tmp_path / "ok")]) == 0
    done = json.loads((tmp_path / "ok" / "check.json").read_text())
    assert done["passed"] and [(t["test"], t["verdict"]) for t in done["tests"]] == [
        ("pairs", "pass"), ("congestion", "pass"), ("collectives", "pass")]
    # the collectives may take more than one of the check's three attempts on a shared machine: with other
    # work on the 2 cores (load average 4-12) and one more busy process, the 1 MiB allreduce read 1.39x the
    # model's (over the 1.25x limit), then 1.28x, a pass, in one run, and 1.22x at its first in another;
    # on a slow host (8 ranks on 2 cores, nothing else running) it passed at its third, 1.21x
    tries = {t["test"]: len(t["attempts"]) for t in done["tests"]}
    assert tries["pairs"] == tries["congestion"] == 1 and tries["collectives"] <= 3
    assert (tmp_path / "ok" / "report.html").stat().st_size > 10_000
    capsys.readouterr()
    assert main(["testbed", "degrade", BED, "trunk", "10"]) == 0
    try:
        rc = main(["check", "--testbed", BED, "-n", "8", "-q", "--attempts", "1", "--tests", "pairs,collectives",
                   "-o", str(tmp_path / "bad")])
    finally:
        assert main(["testbed", "restore", BED]) == 0
    out = capsys.readouterr().out
    failing = [ln for ln in out.split("check FAILED: ")[1].splitlines()[1:] if ln.startswith("FAIL ")]
    assert rc == 1 and failing[:2] == ["FAIL pairs: cable link trunk (s0→s1): 16 of the 16 pairs it limits low",
                                       "FAIL pairs: cable link trunk (s1→s0): 16 of the 16 pairs it limits low"]
    assert len(failing) == 3 and "is a cable named above" in failing[2] and "coll.allreduce" in failing[2]


@pytest.mark.parametrize("argv,msg", [
    (["testbed", "degrade", BED, "nocable", "5"], "has no cable 'nocable'"),
    (["testbed", "degrade", BED, "trunk", "0"], "a rate must be from 2e-05 to 8589.93 MB/s"),
    (["testbed", "degrade", BED, "trunk", "fast"], "a rate is a number of MB/s"),
    (["testbed", "restore", BED, "h0-h7"], "has no cable 'h0-h7'"),
    (["testbed", "exec", BED, "h99", "--", "true"], "has no host 'h99'"),
    (["testbed", "up", TWO, "--name", BED], "already up"),
    (["testbed", "up", TWO, "--name", "Bad_Name"], "testbed name"),
    (["testbed", "show", "nosuch"], "no testbed 'nosuch' is up"),
    (["run", "message.pingpong", "--testbed", BED, "--hosts", "h0,h99", "-q"], "has no host 'h99'"),
])
def test_bad_input(bed, capsys, argv, msg):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and msg in err


def test_bad_networks_leave_nothing(tmp_path, capsys):
    star = tmp_path / "star.yaml"
    star.write_text("nodes: 3\nswitches: 1\ndefault_rate_MBps: 10\nlinks: [[n0, s0], [n1, s0], [n2, s0]]\n")
    zero = tmp_path / "zero.yaml"
    zero.write_text("nodes: 2\nswitches: 1\nlinks: [{a: n0, b: s0, rate_MBps: 0}, {a: n1, b: s0, rate_MBps: 5}]\n")
    for argv, msg in ((["testbed", "validate", str(star), "--name", "star"], "no cable joins two switches"),
                      (["testbed", "up", str(zero), "--name", "zero"], "rate_MBps must be greater than 0")):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and msg in err
    assert netns.namespaces("star") == [] and netns.namespaces("zero") == []


def test_not_root_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["testbed", "up", TWO, "--name", "x"]) == 2
    assert "needs root" in capsys.readouterr().err


def test_counters_on_one_host_see_the_bypass(tmp_path):
    """--counters through the launcher: two ranks on one host move nothing on any interface."""
    out = tmp_path / "c.json"
    assert main(["run", "message.stream", "-s", "1M", "--counters", "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    ends = [r for r in doc["records"] if r["kind"] == "launch_end"]
    assert ends and all(set(e["counters"]) == {doc["header"]["hosts"][0]} for e in ends)
    assert any(d["code"] == "fabric-bypassed" for d in doc["records"] if d["kind"] == "diagnostic")


def test_alltoall_schedules_move_the_right_bytes(tmp_path):
    """The library's, the pairwise and the all-at-once all-to-all, validated byte by byte."""
    out = tmp_path / "a.json"
    assert main(["run", "message.alltoall", "-p", "variant=collective,pairwise,concurrent", "-n", "4", "-s", "8,64K",
                 "--validate", "--bind", "none", "-o", str(out), *FAST]) == 0
    pts = docs.points(docs.read(out))
    assert {p["variant"] for p in pts} == {"", "variant=pairwise", "variant=concurrent"}   # "": the default
    assert all(p["validation"]["errors"] == 0 and p["validation"]["checked_bytes"] > 0 for p in pts)


def test_validate_on_real_hosts_without_a_testbed(tmp_path):
    """--hosts: the file's nodes stand for real hosts (here all this machine): no namespace is made,
    the runs go to those hosts with --counters (their interfaces read around every launch), and
    the disagreement is named. The hosts' cables are
    made barely faster than the trunk (21 MB/s), so that once the trunk is calibrated at what shared
    memory carries, they bound the prediction far below what shared memory moves, however busy the
    machine."""
    net = tmp_path / "two-switches.yaml"
    net.write_text(Path(TWO).read_text().replace("default_rate_MBps: 60", "default_rate_MBps: 21"))
    out = tmp_path / "real.json"
    rc, text = _validate([str(net), "--hosts", ",".join(["localhost"] * 8), "-s", "16K", "-o", str(out),
                          "--no-collectives"])
    v = json.loads(out.read_text())["validation"]
    assert v["bottleneck"] == "link trunk (s0→s1)"
    assert v["testbed"] is None and v["hosts"]["h7"] == "localhost" and netns.namespaces("twoswitches") == []
    sat = docs.read(v["saturation"]["run"])                 # its header records the command as typed
    assert sat["header"]["argv"][:3] == ["fabriclab", "testbed", "validate"]
    assert "--hosts" in sat["header"]["argv"] and "--testbed" not in sat["header"]["argv"]
    assert sat["header"]["launcher"]["agent"] is None and sat["header"]["launcher"]["hosts"] == ["localhost"] * 8
    ends = [r for r in sat["records"] if r["kind"] == "launch_end"]   # --counters: read through the launcher
    assert ends and all(e["fabric"] == "the hosts' network interfaces" and e["counters"] for e in ends)
    assert rc == 1 and "disagrees by" in text     # shared memory is no 20 MB/s trunk
    assert main(["testbed", "validate", TWO, "--hosts", "a,b"]) == 2


COLL_OPS = ("coll.allreduce", "coll.bcast", "coll.allgather", "coll.reduce_scatter")
# What the MPI-level suites print, each by its anchor's rule (the neighbourhood collectives run with `coll`).
SUITES = ("message.mbw_mr", "message.uniband", "message.biband", "message.stencil2d", "message.ring",
          "message.cross_pingpong", "message.latency_mt", "message.mt_uniband", "deposit.fop", "deposit.cas",
          "deposit.acc", "deposit.get_acc")


@pytest.mark.parametrize("mpi", ["mpich", "openmpi"])
def test_the_suites_benchmarks_cross_the_testbed_and_meet_their_models(bed, tmp_path, mpi):
    """Message rate, halo, HPCC's ring and pairs, threads and atomics on four hosts, two each
    side of the trunk, validated; the message-rate and stencil points beside the model of the
    testbed's network (their rate_model and halo_model rows, the trunk named)."""
    home = ["--mpi-home", mpi_home("openmpi")] if mpi == "openmpi" else []
    out = tmp_path / "s.json"
    assert main(["run", *SUITES, "--testbed", BED, "--hosts", "h0,h1,h4,h5", "-n", "4", "-s", "8",
                 "--validate", *home, "-o", str(out), *FAST]) == 0
    doc = docs.read(out)
    pts = docs.points(doc)
    assert {p["bench"] for p in pts} == set(SUITES)
    assert all(p["validation"]["errors"] == 0 for p in pts)
    rates = {r["bench"]: r for r in doc["rate_model"]["rows"]}
    assert set(rates) == {"message.mbw_mr", "message.uniband", "message.biband"}
    assert all(r["predicted_Bps"] > 0 and "trunk" in r["bottleneck"] for r in rates.values())
    (halo,) = doc["halo_model"]["rows"]
    assert halo["bench"] == "message.stencil2d" and halo["predicted_s"] > 0


@pytest.mark.parametrize("mpi", ["mpich", "openmpi"])
def test_every_collective_crosses_the_testbed_on_four_hosts(bed, tmp_path, mpi):
    """Every operation on four hosts, two each side of the trunk, validated; under MPICH also
    every algorithm of allreduce, bcast, allgather and reduce_scatter, each read back through
    MPI_T as the one asked for."""
    home = ["--mpi-home", mpi_home("openmpi")] if mpi == "openmpi" else []
    out, algos = tmp_path / "c.json", tmp_path / "a.json"
    assert main(["run", "coll", "--testbed", BED, "--hosts", "h0,h1,h4,h5", "-n", "4", "--active", "4",
                 "-s", "64", "--validate", *home, "-o", str(out), *FAST]) == 0
    pts = docs.points(docs.read(out))
    assert {p["bench"] for p in pts} == {b for b in REGISTRY if b.startswith("coll.")}
    assert all(p["active"] == 4 for p in pts)
    assert all(p["validation"]["errors"] == 0 for p in pts)
    # each operation the model has, beside its time on the testbed's network file
    model = docs.read(out)["coll_model"]
    assert {r["bench"] for r in model["rows"]} == {b for b in REGISTRY if coll_prediction.modelled(b)}
    assert all(r["predicted_s"] > 0 and r["bottleneck"] and r["active"] == 4 for r in model["rows"])
    if mpi == "openmpi":
        return
    assert main(["run", *COLL_OPS, "--testbed", BED, "--hosts", "h0,h1,h4,h5", "-n", "4", "--active", "4",
                 "-s", "4K", "-p", "algorithm=all", "--validate", "-o", str(algos), *FAST]) == 0
    doc = docs.read(algos)
    pts = docs.points(doc)
    assert all(p["validation"]["errors"] == 0 and p["info"]["algorithm_in_force"] == p["params"]["algorithm"]
               and p["info"]["algorithm_control"] == f"MPIR_CVAR_{p['bench'][5:].upper()}_INTRA_ALGORITHM"
               for p in pts)
    # every name the library lists for the blocking form (its probe, `fabriclab list`) gave a point
    core = doc["header"]["core"]["path"]
    controls = coll_algorithms.probe(core)
    for bench in COLL_OPS:
        names = controls[(REGISTRY[bench].coll.call, "blocking")].names
        assert sorted(p["params"]["algorithm"] for p in pts if p["bench"] == bench) == sorted(names)
    assert {j["bench"] for j in doc["header"]["levels"]["coll"]["jobs"]} == set(COLL_OPS)
