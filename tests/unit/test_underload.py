"""Latency under load (udp.underload) and sockperf's output: the parameter rules
before launch, the import of sockperf's printed summaries and --full-log (real
outputs of sockperf 3.7 on 127.0.0.1, tests/data/imports/sockperf), and
sockperf's percentile rule read off a per-op histogram."""
from pathlib import Path

import pytest

from fabriclab import imports
from fabriclab.analysis.underload import hist_quantiles, of_point
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.imports import sockperf

DATA = Path(__file__).parents[1] / "data" / "imports" / "sockperf"


@pytest.mark.parametrize("args,says", [
    (["-p", "mps=0"], "mps"), (["-p", "mps=20M"], "mps"), (["-p", "reply_every=0"], "reply_every"),
    (["-s", "65508"], "a datagram carries at most 65507 bytes")])
def test_a_rate_or_size_no_socket_takes_is_one_line_before_launch(args, says, fake_core, tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["run", "udp.underload", "-s", "64", "-L", "1", "-o", str(out), "--core", fake_core["core"],
               "--mpiexec", fake_core["mpiexec"], *args])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and says in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def _one(name):
    doc = imports.load(DATA / name, "sockperf")
    assert len(doc.points) == 1
    return doc.points[0]


def test_under_load_is_the_rate_of_messages_sent_with_the_replies_latencies_beside():
    p = _one("ul_udp_m64.txt")
    assert (p.bench, p.variant, p.size, p.legs_per_op) == ("udp.underload", "", 64, 1)
    assert p.median_s == pytest.approx(0.499 / 5201)            # [Valid Duration] RunTime / SentMessages
    u = of_point(p)
    assert u.source == "sockperf" and u.rate == pytest.approx(5201 / 0.499)
    assert u.mean_s == pytest.approx(842.602e-6) and (u.replies, u.lost) == (47, 6)
    assert u.quantiles["p50"] == pytest.approx(36.972e-6) and u.quantiles["p99.999"] == pytest.approx(27048.634e-6)
    assert u.min_s == pytest.approx(6.704e-6)


def test_a_full_log_names_its_settings_and_its_observations_give_the_printed_percentiles():
    p = _one("ul_udp_fulllog.csv")
    assert (p.bench, p.variant, p.size) == ("udp.underload", "mps=5000,reply_every=50", 256)
    u = p.info["underload"]
    xs = sorted(u["full_log_s"])
    assert len(xs) == u["observations"] == 52
    for q, printed in u["quantiles_s"].items():   # printPercentiles' index rule on the logged RTT/2
        assert sockperf.quantile(xs, float(q)) == pytest.approx(printed, abs=2e-9), q


def _log(cut=None, row=None, first="") -> str:
    """The recorded full log, with its last rows cut, a row replaced, or a line put first."""
    lines = (DATA / "ul_udp_fulllog.csv").read_text().splitlines()
    rows = [i for i, ln in enumerate(lines) if ln[:1].isdigit()]
    if row is not None:
        lines[rows[5]] = row
    if cut is not None:
        del lines[rows[-cut]:rows[-1] + 1]
    return first + "\n".join(lines) + "\n"


@pytest.mark.parametrize("text,says", [
    (_log(cut=30), "the --full-log holds 22 observations of the 52 its summary counts (cut short?)"),
    (_log(row="5, 2.4, 2.5, -91.3"), "a negative latency (-91.3 usec)"),
    (_log(row="5, 2.4, 2.5, nan"), "'5, 2.4, 2.5, nan' is not a row of the --full-log"),
    (_log(first="sockperf ul -i 10.0.0.1 --mps 0\n"), "--mps 0 is not at least 1"),
    (_log(first="sockperf ul -i 10.0.0.1 --reply-every 0\n"), "--reply-every 0 is not at least 1")])
def test_a_full_log_cut_short_or_altered_is_one_line(text, says):
    with pytest.raises(UsageError) as e:
        sockperf.parse(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_full_log_ends_at_its_rule_so_what_follows_is_read_as_sockperf_s():
    """A line after the log's closing rule (an interrupted run's), and a second log after the first."""
    log = _log()
    assert len(sockperf.parse(log + "sockperf: Test end (interrupted by signal 2)\n").figures) == 1
    two = sockperf.parse(log + log.replace("--msg-size=256", "--msg-size=512"))
    assert [f.size for f in two.figures] == [256, 512]
    assert len(two.figures[1].info["underload"]["full_log_s"]) == 52
    # a ping-pong's full log writes --mps=max as (int)UINT32_MAX
    assert sockperf._options(" --mps=-1 --msg-size=64", "l") == {"mps": None, "msg_size": 64}


def test_a_bare_full_log_is_read_as_udp_and_says_so(tmp_path, capsys):
    """A --full-log does not say UDP or TCP: sockperf's default is taken and the import says it;
    the command written before it settles it."""
    assert main(["import", str(DATA / "ul_udp_fulllog.csv"), "--from", "sockperf", "-o", str(tmp_path / "u.json")]) == 0
    err = capsys.readouterr().err
    assert "read as UDP, sockperf's default: the file does not say" in err and len(err.strip().splitlines()) == 1
    from fabriclab import schema
    assert "read as UDP" in schema.load(tmp_path / "u.json").header.imported["notes"][0]
    got = sockperf.parse(_log(first="sockperf ul --tcp -i 10.0.0.1 -m 256\n"))
    assert [f.bench for f in got.figures] == ["tcp.underload"] and got.notes == []


@pytest.mark.parametrize("name,bench,size,p50_us", [("pp_udp_m32.txt", "udp.rr", 32, 18.827),
                                                    ("pp_tcp_m64.txt", "tcp.rr_block", 64, 8.567)])
def test_ping_pong_is_a_round_trip_of_twice_the_printed_median(name, bench, size, p50_us):
    p = _one(name)
    assert (p.bench, p.size, p.legs_per_op, p.bytes_per_op) == (bench, size, 2, 2 * size)
    assert p.median_s == pytest.approx(2 * p50_us * 1e-6)


def test_throughput_is_one_message_per_op_at_the_printed_rate_and_its_note_s_size():
    p = _one("tp_udp_default.txt")
    assert (p.bench, p.size) == ("udp.stream", 14)
    assert p.median_s == pytest.approx(1 / 18220)


def test_stdout_without_the_size_asks_for_the_full_log_in_one_line(tmp_path, capsys):
    rc = main(["import", str(DATA / "ul_udp_bare_stdout.txt"), "--from", "sockperf", "-o", str(tmp_path / "o.json")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "--full-log" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("text,says", [
    ("hello\nworld\n", "not sockperf's output"),
    ("sockperf: Summary: Latency is 1.0 usec\n" + "x" * 5000 + "\n", "5,000 characters"),
    ("$ sockperf ul -m 64\nsockperf: Summary: Latency is 1.0 usec\x07\n", "control character"),
    ("$ sockperf ul -m 99999999999999999999\nsockperf: Summary: Latency is 1.0 usec\n", "whole number"),
    ("$ sockperf ul -m 64\nsockperf: Summary: Latency is 1.0 usec\n---> <MAX> observation = 5\n"
     "---> percentile 50.000 = 9\n---> <MIN> observation = 1\n", "not in order")])
def test_hostile_input_ends_in_one_line(text, says, tmp_path, capsys):
    f = tmp_path / "sp.txt"
    f.write_text(text)
    rc = main(["import", str(f), "--from", "sockperf", "-o", str(tmp_path / "o.json")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and says in err and len(err.splitlines()) == 1, err


def test_concatenated_tests_are_one_point_each():
    text = (DATA / "pp_udp_m32.txt").read_text() + (DATA / "ul_udp_m64.txt").read_text()
    got = sockperf.parse(text)
    assert [f.bench for f in got.figures] == ["udp.rr", "udp.underload"]


def test_histogram_percentiles_follow_sockperf_s_rank_rule():
    """Nine replies: sockperf's 25th percentile is the 2nd (int(0.5 + 2.25)); a ceiling rule's the 3rd."""
    h = {"base_s": 1e-9, "error": 0.01, "buckets": 2800,
         "ranks": [{"rank": 0, "n": 9, "min_s": 2e-9, "max_s": 1e-8, "buckets": [[100, 2], [200, 7]]}]}
    q = hist_quantiles(h)
    assert q["p25"] == pytest.approx(1e-9 * 1.01 ** 100.5) and q["p75"] == pytest.approx(1e-9 * 1.01 ** 200.5)
    assert q["n"] == 9 and q["min"] == 2e-9


def test_the_percentile_rule_refuses_a_rank_below_the_first():
    with pytest.raises(ValueError):
        sockperf.quantile([1.0], 25.0)
    with pytest.raises(UsageError):
        sockperf.parse("nothing here")


def test_under_load_over_tcp_is_tcp_underload():
    p = _one("ul_tcp_m64.txt")
    assert (p.bench, p.size, p.variant) == ("tcp.underload", 64, "")
    assert p.info["underload"]["protocol"] == "TCP" and p.median_s == pytest.approx(0.534 / 5301)
    assert p.info["underload"]["quantiles_s"]["50"] == pytest.approx(23.334e-6)


def test_a_number_beyond_any_run_is_one_line():
    with pytest.raises(UsageError, match="beyond any run"):
        sockperf.parse("$ sockperf ul -m 64\nsockperf: Summary: Latency is " + "9" * 400 + ".0 usec\n")


def test_a_run_s_point_takes_its_rate_from_the_samples_and_its_mean_from_the_counters(fake_core, tmp_path):
    """The fake core's counters grow by 4 a sample on rank 0 (fakecore.counters): the mean is
    latency_s over back, 1 s; lost its growth."""
    from fabriclab.schema import load
    out = tmp_path / "r.json"
    assert main(["run", "udp.underload", "-s", "64", "-L", "1", "-q", "-o", str(out), "--core", fake_core["core"],
                 "--mpiexec", fake_core["mpiexec"]]) == 0
    (p,) = load(out).points
    u = of_point(p)
    assert u.source == "fabriclab" and u.rate == pytest.approx(len(p.samples) / sum(p.samples))
    assert u.mean_s == pytest.approx(1.0) and u.lost == u.replies == 4 * len(p.samples) and u.quantiles == {}
