"""Sockets across the emulated testbed against the model (docs/sockets.md, "On the
testbed: loss and shares against the model"): two hosts joined through two switches by
one 20 MB/s trunk. udp.stream at 1.5x the trunk's rate reports the loss model/sockets.py
predicts for that cable (over the sample's seconds, the trunk's queue filling first), and
tcp.stream's 4 parallel streams share the trunk as max-min says. One run under each MPI."""
import os
from pathlib import Path

import pytest

from fabriclab import schema
from fabriclab.cli import main
from fabriclab.model import sockets
from fabriclab.report.curves import RunView
from fabriclab.report.socket_views import jain, socket_figures
from fabriclab.testbed import netns
from mpihome import mpi_home  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
TRUNK_MBPS = 20
NET = f"""name: two hosts across one trunk
nodes: [h0, h1]
switches: [s0, s1]
routing: d-mod-k
default_rate_MBps: 60
links:
  - [h0, s0]
  - [h1, s1]
  - {{a: s0, b: s1, rate_MBps: {TRUNK_MBPS}, name: trunk}}
"""
BED = f"sk{os.getpid() % 100000}"
# One sample of a few seconds: the loss of a run that starts with the trunk's queue empty.
ONE_SAMPLE = ["-L", "1", "--min-samples", "1", "--max-samples", "1", "--warmup", "100", "-q"]


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the testbed tests need root (CI runs as root)")
    path = tmp_path_factory.mktemp("net") / "trunk.yaml"
    path.write_text(NET)
    main(["testbed", "down", BED])
    assert main(["testbed", "up", str(path), "--name", BED]) == 0
    yield sockets.network(str(path))
    assert main(["testbed", "down", BED]) == 0


def _one(path: Path):
    doc = schema.load(path)
    (p,) = doc.points
    (s,) = socket_figures(RunView.of("run", doc)).values()
    return p, s


def _stolen(path: Path) -> float:
    """The largest share of CPU time the hypervisor stole in a launch of the run (its findings)."""
    analysed = schema.load(path).analysed
    return float(analysed[1]["noise"].get("steal_max", 0.0)) if analysed else 0.0


DATAGRAM = 8000    # bytes: one frame of the testbed's 9000-byte MTU
ATTEMPTS = 4       # runs of the UDP loss test while a missed run's launch lost over 5% to steal


def test_udp_above_the_trunk_loses_what_the_model_predicts(bed, tmp_path):
    rate = int(1.5 * TRUNK_MBPS * 1e6 * 8)            # bits/s: 1.5 x the trunk
    queue = max(netns.QUEUE_BYTES, TRUNK_MBPS * 1e6 * netns.QUEUE_S)
    mtu = netns.load(BED)["mtu"]
    # A run that misses while its launch lost more than 5% of its CPU time to the hypervisor runs
    # again, up to ATTEMPTS runs: with a quarter stolen, loss read 1.13-1.25 times the prediction,
    # twice in a row once (docs/sockets.md). The retry is taken on that measured condition only,
    # and the assertion names the steal.
    for attempt in range(1, ATTEMPTS + 1):
        out = tmp_path / f"udp{attempt}.json"
        # rcvbuf: the receiving socket holds a second of datagrams, so a rank descheduled on a busy
        # machine drops none itself (the trunk is to drop them)
        # one sample of 8 s: the loss moves by 2.4 times the trunk's shortfall of its rate (3 at 4 s),
        # and this VM's trunk carried 0-3% short of it from run to run (docs/sockets.md)
        assert main(["run", "udp.stream", "--testbed", BED, "--hosts", "h0,h1", "-n", "2", "-s", str(DATAGRAM),
                     "-p", f"rate={rate}", "-p", "rcvbuf=8388608", "--sample-time", "8", "--point-time", "32",
                     *ONE_SAMPLE, "-o", str(out)]) == 0
        p, s = _one(out)
        seconds = sum(p.samples) * p.batch
        sent_Bps = p.bandwidth_Bps                       # what the sender offered, as it kept its pace
        assert 0.9 * 1.5 * TRUNK_MBPS * 1e6 <= sent_Bps <= 1.05 * 1.5 * TRUNK_MBPS * 1e6
        # the offer on the trunk: each 8000-byte datagram is 8042 bytes of the shaper's
        model = sockets.udp_loss(bed, "h0", "h1", sent_Bps, datagram=DATAGRAM, mtu=mtu, frame=netns.FRAME_BYTES)
        wire = sent_Bps * (DATAGRAM + 42) / DATAGRAM
        assert model.cable == "link trunk (s0\u2192s1)" and model.loss == pytest.approx(1 - 20e6 / wire)
        # the sample starts with the trunk's queue empty: the previous call's end went to the
        # receiver over MPI through the same queue, behind the datagrams (docs/sockets.md)
        predicted = model.loss_over(seconds, queue)
        stolen = _stolen(out)
        if s.loss_fraction == pytest.approx(predicted, rel=0.10) or attempt == ATTEMPTS or stolen <= 0.05:
            break
        print(f"loss {s.loss_fraction:.4f} against {predicted:.4f} with {stolen:.1%} stolen: once more")
    assert s.loss_fraction == pytest.approx(predicted, rel=0.10), (s, predicted, seconds, f"stolen {stolen:.1%}")


def test_parallel_tcp_streams_share_the_trunk_max_min(bed, tmp_path):
    out = tmp_path / "tcp.json"
    # sndbuf=rcvbuf=256K: each stream keeps at most its window in the trunk's FIFO, so the FIFO
    # parts the trunk by window, equally. With autotuned windows the streams fill the trunk's
    # 0.5 s queue and only TCP's losses part it, some twenty round trips in 10 s: streams read
    # 0.72-1.29 of their share over five samples of 2 s (docs/sockets.md). A stream's rate is
    # its bytes over all five samples (analysis/streams.py).
    assert main(["run", "tcp.stream", "--testbed", BED, "--hosts", "h0,h1", "-n", "2", "-s", "64K",
                 "-p", "streams=4", "-p", "sndbuf=256K", "-p", "rcvbuf=256K", "--sample-time", "2",
                 "--point-time", "22", "--mpi-home", mpi_home("openmpi"),
                 *ONE_SAMPLE, "--min-samples", "5", "--max-samples", "5", "-o", str(out)]) == 0
    _, s = _one(out)
    shares = sockets.shares(bed, [("h0", "h1", None)] * 4)
    assert {f.cable for f in shares} == {"link trunk (s0\u2192s1)"}
    assert len(s.stream_Bps) == 4
    # the trunk carries the sum of the max-min shares; its streams come out equal
    assert sum(s.stream_Bps) == pytest.approx(sum(f.share_Bps for f in shares), rel=0.10)
    assert jain(s.stream_Bps) >= 0.98
    # each stream near its share: the testbed queues a pair of hosts' packets in one FIFO, which
    # parts the trunk by what each stream keeps in it (docs/sockets.md)
    for got, f in zip(s.stream_Bps, shares):
        assert got == pytest.approx(f.share_Bps, rel=0.10), (s.stream_Bps, f.share_Bps)
