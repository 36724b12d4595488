"""Atomics and the message rate over several endpoints at the levels below MPI
(fabric.atomic, ucx.atomic, fabric.msg_rate, ucx.msg_rate): their parameter
rules, the sizes the atomics refuse before a launch, the provider an atomic
runs on, what each point holds, and the figures a message-rate point derives
under perftest's ib_send_bw -q rule."""
from pathlib import Path

import pytest

from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.measure import fabrics
from fabriclab.report import tables
from fabriclab.report.rows import Row
from fabriclab.schema.records import MergedPoint, Point, Summary
from fabriclab.suite import footprint as fp
from fabriclab.suite.benchmarks import REGISTRY

PROBES = Path(__file__).resolve().parents[1] / "data" / "probes"
ATOMICS = ("fabric.atomic", "ucx.atomic")
RATES = ("fabric.msg_rate", "ucx.msg_rate")


def test_the_atomic_ops_are_the_anchors_names():
    assert REGISTRY["fabric.atomic"].params["op"].choices == ("add", "fetch_add", "cswap")
    assert REGISTRY["ucx.atomic"].params["op"].choices == ("add", "fadd", "swap", "cswap")
    # the word UCP allocates (ucx_perftest's buffers: device atomics) by default, or the program's page
    assert REGISTRY["ucx.atomic"].params["memory"].choices == ("ucx", "program")
    with pytest.raises(UsageError, match="op must be one of add, fetch_add, cswap, not 'fadd'"):
        REGISTRY["fabric.atomic"].canonical("op", "fadd")
    assert REGISTRY["fabric.atomic"].caps == ("atomic",) and REGISTRY["fabric.msg_rate"].caps == ("msg",)
    assert all(REGISTRY[b].sizes == "8" and REGISTRY[b].metric == "latency" for b in ATOMICS)


@pytest.mark.parametrize("bench", RATES)
def test_endpoints_take_one_to_64_in_the_size_grammar(bench):
    b = REGISTRY[bench]
    assert b.defaults["endpoints"] == "1" and b.canonical("endpoints", "16") == "16"
    for bad in ("0", "65", "1K"):
        with pytest.raises(UsageError, match="endpoints"):
            b.canonical("endpoints", bad)


@pytest.mark.parametrize("bench", RATES)
def test_a_window_on_every_endpoint_takes_a_buffer_each_under_per_op(bench):
    b = REGISTRY[bench]
    assert b.params["window_buffers"].default == "shared" and b.own_buffers({}) == 1
    assert b.own_buffers({"endpoints": "4", "window_buffers": "per-op"}) == 4 * 64
    assert b.own_buffers({"endpoints": "2", "window": "8", "window_buffers": "per-op"}) == 16


@pytest.mark.parametrize("bench", ATOMICS)
def test_an_atomic_refuses_any_size_but_8_before_a_launch(bench, fake_core, tmp_path, capsys):
    assert REGISTRY[bench].footprint.limit(fp.At(size=8)) is None
    assert "8-byte word" in REGISTRY[bench].footprint.limit(fp.At(size=16))
    rc = main(["run", bench, "-s", "16", "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"],
               "-n", "2", "-q", "-o", str(tmp_path / "r.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "size 8 only" in err[0]
    assert not (tmp_path / "r.ndjson").exists()


def test_an_atomic_runs_on_a_provider_that_offers_fi_atomic():
    offer = fabrics.parse("fabric", (PROBES / "fabric.ndjson").read_text().splitlines())
    assert fabrics.choose(offer, "rdm", ("atomic",), one_host=True).provider == "shm"
    # across hosts tcp (listed first) has no FI_ATOMIC: the first answer that has it
    assert fabrics.choose(offer, "rdm", ("atomic",), one_host=False).provider == "udp;ofi_rxd"
    # named, a provider without it is kept: the kernel skips the point with the reason
    assert fabrics.choose(offer, "rdm", ("atomic",), requested="tcp").provider == "tcp"
    none = fabrics.Offer("fabric", offer.library, tuple(a for a in offer.answers if "atomic" not in a.caps))
    with pytest.raises(UsageError, match="no libfabric provider here offers rdm endpoints with FI_ATOMIC"):
        fabrics.choose(none, "rdm", ("atomic",))


def test_what_the_points_hold():
    """The kernels' fl_alloc pages (fabric_atomic.c, ucx_atomic.c, fabric_rate.c, ucx_rate.c)."""
    page = fp.PAGE
    at = fp.At(size=8, nranks=2)
    assert [REGISTRY["fabric.atomic"].footprint.allocated(r, at) for r in "sri"] == [3 * page, 3 * page, 2 * page]
    assert [REGISTRY["ucx.atomic"].footprint.allocated(r, at) for r in "sri"] == [3 * page, 2 * page, page]
    one = fp.At(size=4096, buffers=1, nranks=2, params={"endpoints": "1", "window": "64"})
    four = fp.At(size=4096, buffers=1, nranks=2, params={"endpoints": "4", "window": "64"})
    rate = REGISTRY["ucx.msg_rate"].footprint
    # the state, a page each of handles, 65 then 257 requests, the region: as the core reported them
    assert rate.allocated("s", one) == 5 * page and rate.allocated("s", four) == 5 * page
    warm = fp.At(size=8, buffers=8192, nranks=2, params={"endpoints": "1", "window": "64"})
    assert rate.allocated("s", warm) == 81920
    assert REGISTRY["fabric.msg_rate"].footprint.allocated("s", warm) == 102400
    fab = REGISTRY["fabric.msg_rate"].footprint
    # four endpoints: three more endpoint sets (control buffer, address table) and 192 more contexts
    assert fab.allocated("s", four) - fab.allocated("s", one) == 3 * 2 * page + 3 * page
    assert fab.allocated("s", one) - fab.allocated("i", one) == page      # the region


def _rate_point(size: int, median: float, messages=1) -> Point:
    info = {"endpoints": 4, "window": 64} | ({"messages_per_op": messages} if messages else {})
    return Point(bench="fabric.msg_rate", size=size, bytes_per_op=size, summary=Summary(median=median),
                 samples=[median], info=info, params={"endpoints": "4"})


def test_a_rate_point_derives_perftests_bw_and_msgrate():
    """perftest (perftest_resources.c, print_report_bw): BW = size x messages / (last completion - first
    post), MsgRate = messages / that time; a sample is the time per message of whole windows of Q x W."""
    messages, elapsed, size = 4 * 64 * 100, 3.2e-3, 64
    p = _rate_point(size, elapsed / messages)
    assert p.message_rate_per_s == pytest.approx(messages / elapsed, rel=1e-12)
    assert p.bandwidth_Bps * 8 / 1e9 == pytest.approx(size * messages * 8 / elapsed / 1e9, rel=1e-12)
    d = p.to_dict()
    assert d["message_rate_per_s"] == pytest.approx(messages / elapsed) and "roles" not in d
    back = Point.from_dict(d)
    assert back.message_rate_per_s == pytest.approx(p.message_rate_per_s)
    # a point whose kernel records no messages per op has no rate of its own
    assert _rate_point(size, 1e-7, messages=None).message_rate_per_s is None
    assert "message_rate_per_s" not in _rate_point(size, 1e-7, messages=None).to_dict()
    assert _rate_point(size, 1e-7, messages=True).message_rate_per_s is None


def test_the_table_shows_gbits_and_mmsgs():
    merged = MergedPoint(**{f: getattr(_rate_point(64, 1e-8), f) for f in Point.__dataclass_fields__})
    row = Row.of(merged)
    cols = tables._Columns.of([row])
    assert cols.rate and cols.head()[-4:-2] == ["Gb/s", "Mmsg/s"]
    assert tables._cells(row, cols)[-4:-2] == [f"{64 / 1e-8 * 8 / 1e9:.3f}", "100.000"]
    # a point whose kernel records no messages per op keeps the plain table
    plain = MergedPoint(**{f: getattr(_rate_point(64, 1e-8, messages=None), f) for f in Point.__dataclass_fields__})
    assert not tables._Columns.of([Row.of(plain)]).rate
