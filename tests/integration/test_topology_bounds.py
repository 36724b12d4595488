"""The largest inputs the topology readers take, refused in one line within their bounds:
kept out of the unit tests for their seconds of CPU (each builds tens of megabytes)."""
import time
import tracemalloc

import pytest

from fabriclab.errors import UsageError
from fabriclab.topology import ibnet, slurm


def refused(read, text: str) -> str:
    """The one line a hostile input ends in, within 2 s of CPU and 300 MB more than the text."""
    t0 = time.process_time()
    with pytest.raises(UsageError) as e:
        read(text)
    assert time.process_time() - t0 < 2
    tracemalloc.start()
    try:
        with pytest.raises(UsageError):
            read(text)
        assert tracemalloc.get_traced_memory()[1] < 300 << 20
    finally:
        tracemalloc.stop()
    line = str(e.value)
    assert "\n" not in line, line
    return line


def test_ibnetdiscover_output_of_more_than_64_mib_or_1_5_million_lines():
    read = lambda text: ibnet.read(text, "fabric.txt")
    assert "larger than 64 MiB" in refused(read, "#" * ((64 << 20) + 1))
    assert "more than 1,500,000 lines" in refused(read, "\n" * 1_500_001)
    assert "no cables" in refused(read, "# a comment of a line\n" * 1_000_000)    # 22 MB of lines, each read


def test_a_slurm_file_of_10_mb_lines():
    read = lambda text: slurm.read(text, "topology.conf", rates_MBps=[100])
    assert "more than 100,000 node names" in refused(read, "SwitchName=s Nodes=" + ",".join(
        f"n{i}" for i in range(1_500_000)))
    assert "a name longer than 200" in refused(read, "SwitchName=s Nodes=" + "x" * 10_000_000)
    assert "more than 100,000 node names" in refused(read, "SwitchName=s Nodes=n[" + "1," * 5_000_000 + "2]")
