"""Threads per rank (docs/threads.md): the benchmarks' parameters and their bound, the figures
the anchors print, the thread level the core records in the header and refuses below, the
facts and footprints of csrc/families/message_mt.c, and the thread-scaling view."""
import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.measure import build
from fabriclab.measure.runner import derive
from fabriclab.suite import threads
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At

LAT, UNI, BI, UX = (REGISTRY[b] for b in ("message.latency_mt", "message.mt_uniband", "message.mt_biband",
                                           "ucx.mt_pingpong"))


def point(bench, size: int, bytes_per_op: int, t_op: float):
    """A point as the core prints it: five samples of t_op seconds per op."""
    return derive({"bench": bench.name, "size": size, "bytes_per_op": bytes_per_op, "legs_per_op": bench.legs,
                   "concurrent": bench.concurrent, "warmup": 1, "batch": 1, "samples": [t_op] * 5,
                   "stop": "converged", "elapsed_s": 0.01, "validation": None, "info": {}})


def run_args(fake, tmp_path, *extra):
    return ["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(tmp_path / "r.json"),
            "-q", "-L", "1", *extra]


def test_osu_defaults_one_sender_two_receivers_and_imb_window_64():
    assert LAT.defaults == {"senders": "1", "receivers": "2", "clock": "loop"}   # osu_util.c: -t's defaults
    assert UNI.defaults["window"] == BI.defaults["window"] == "64"   # IMB-MT's window_size
    assert UX.defaults["thread_mode"] == "single"    # ucx_perftest -M's default
    assert all(b.threads for b in (LAT, UNI, BI, UX))
    assert not any(b.threads for b in REGISTRY.values() if b not in (LAT, UNI, BI, UX))


@pytest.mark.parametrize("value", ["0", "128", "two"])
def test_thread_counts_outside_osus_range_are_refused(value):
    with pytest.raises(UsageError, match="senders"):
        LAT.canonical("senders", value)


def test_threads_per_rank_is_the_larger_side():
    assert threads.per_rank(LAT, {}) == 2
    assert threads.per_rank(LAT, {"senders": "5", "receivers": "3"}) == 5
    assert threads.per_rank(UNI, {"threads": "7"}) == 7
    assert threads.per_rank(REGISTRY["message.pingpong"], {}) == 1


def test_more_threads_than_the_factor_allows_is_refused_in_one_line():
    threads.check(UNI, {"threads": str(threads.CPU_FACTOR * 2)}, 2)
    with pytest.raises(UsageError) as e:
        threads.check(UNI, {"threads": str(threads.CPU_FACTOR * 2 + 1)}, 2)
    assert "\n" not in str(e.value) and "9 threads per rank" in str(e.value)


def test_the_cli_refuses_too_many_threads_before_launching(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    rc = main(run_args(fake_core, tmp_path, "message.latency_mt", "-s", "8", "-p", "senders=4,9"))
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "message.latency_mt: 9 threads per rank" in err[0]
    assert not (tmp_path / "r.json").exists()


def test_latency_is_osus_sender_round_trip_over_two():
    """osu_latency_mt prints t_total / (2 x iterations / S): a sender thread's round trip over two.
    An op here is a round trip on every sender thread at once, so the point's time per op over
    its two legs is that figure, and its bytes are every thread's both ways."""
    s, size, t_op = 3, 4096, 8e-6
    p = point(LAT, size, 2 * s * size, t_op)
    assert p.latency_s == pytest.approx(t_op / 2)
    assert p.bandwidth_Bps == pytest.approx(2 * s * size / t_op)


@pytest.mark.parametrize("bench,both", [(UNI, False), (BI, True)])
def test_bandwidth_is_imb_mts_cumulative_rate(bench, both):
    """IMB-MT: size / T x (ranks x T / 2) / t_max with t_max the slowest thread's time per
    message over the window (BiBand's halved): here an op is a message per thread (both ways)."""
    t, size, window, t_window = 4, 65536, 64, 1e-3
    time_max = t_window / window / (2 if both else 1)
    imb = size * t / t * (2 * t / 2) / time_max
    p = point(bench, size, (2 if both else 1) * t * size, t_window / window)
    assert p.bandwidth_Bps == pytest.approx(imb)


def test_the_core_is_built_with_the_thread_fact():
    text = build.facts_header()
    line = next(ln for ln in text.splitlines() if '.name = "message.latency_mt"' in ln)
    assert ".threads = 1" in line
    line = next(ln for ln in text.splitlines() if '.name = "message.pingpong"' in ln)
    assert ".threads = 0" in line


def test_the_header_records_the_thread_level_asked_and_granted(fake_core, tmp_path):
    assert main(run_args(fake_core, tmp_path, "message.mt_uniband", "-s", "8,1K", "--validate")) == 0
    doc = docs.read(tmp_path / "r.json")
    assert doc["header"]["mpi"]["thread_level"] == {"required": "MULTIPLE", "provided": "MULTIPLE"}
    (tmp_path / "r.json").unlink()
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "8")) == 0
    assert docs.read(tmp_path / "r.json")["header"]["mpi"]["thread_level"] == {"required": "SINGLE",
                                                                              "provided": "SINGLE"}


def test_a_lower_grant_ends_the_run_as_bad_input(fake_core, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKECORE_THREADS", "SERIALIZED")
    assert main(run_args(fake_core, tmp_path, "message.latency_mt", "-s", "8")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["fabriclab: error: message.latency_mt: runs several threads per rank and needs "
                   "MPI_THREAD_MULTIPLE; this MPI granted MPI_THREAD_SERIALIZED"]
    # the other benchmarks keep MPI_Init's level and run under the same MPI
    assert main(run_args(fake_core, tmp_path, "message.pingpong", "-s", "8", "-o", str(tmp_path / "p.json"))) == 0


def test_footprints_are_what_the_kernel_held():
    """rank_alloc_bytes of real MPICH runs (2 ranks, one buffer): the pool's page, a page of
    thread entries, each thread's two regions (and IMB-MT's 2 x window requests)."""
    at = At(8, params={**LAT.defaults, "senders": "2", "receivers": "3"})
    assert [LAT.footprint.allocated(r, at) for r in "sr"] == [24576, 32768]
    at = At(70000, params={**LAT.defaults, "senders": "2", "receivers": "3"})
    assert [LAT.footprint.allocated(r, at) for r in "sr"] == [303104, 450560]
    at = At(70000, params={**BI.defaults, "threads": "2", "window": "8"})
    assert [BI.footprint.allocated(r, at) for r in "sr"] == [311296, 311296]
    # ucx_mt.c: the state, the thread entries, one mapped region per side for every thread's slots
    at = At(70000, 1, params={**UX.defaults, "threads": "3"})
    assert [UX.footprint.allocated(r, at) for r in "sri"] == [434176, 434176, 4096]
    at = At(8, 8192, params={**UX.defaults, "threads": "3"})
    assert UX.footprint.allocated("s", at) == 401408


def test_the_view_draws_the_figure_against_threads(fake_core, tmp_path):
    assert main(run_args(fake_core, tmp_path, "message.mt_uniband", "-s", "8,1K", "-p", "threads=1,2,4")) == 0
    page = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "r.json"), "-o", str(page)]) == 0
    text = page.read_text()
    assert "message.mt_uniband: bandwidth vs threads per rank" in text
