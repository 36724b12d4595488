"""The stores of the word copies on the real core: each point records the kind it used and both
thresholds (its own, a quarter of the last-level cache the header lists, and glibc memcpy's),
and the non-temporal copies still deliver every byte, tails that are not whole vectors included."""
import platform

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from realrun import FAST  # noqa: E402  (tests/support)

pytestmark = pytest.mark.integration
ONE_RANK = ["-n", "1", "--validate", *FAST]
X86 = platform.machine() in ("x86_64", "AMD64")
WORD_LOOPS = ["memory.copy", "memory.strided_store", "memory.strided_load"]


def _points(tmp_path, name: str, *argv: str) -> list[dict]:
    out = tmp_path / f"{name}.json"
    assert main(["run", *argv, "-o", str(out), *ONE_RANK]) == 0
    doc = docs.read(out)
    pts = docs.points(doc)
    for p in pts:
        assert p["validation"]["errors"] == 0, p
        assert p["validation"]["checked_bytes"] == p["bytes_per_op"] > 0, p
    return doc, pts


def test_small_copies_store_normally_and_record_both_thresholds(tmp_path):
    doc, pts = _points(tmp_path, "small", "memory.copy", "memory.memcpy", "-s", "16K")
    info = {p["bench"]: p["info"] for p in pts}
    mine, libc = info["memory.copy"], info["memory.memcpy"]
    assert mine["stores"] == "normal"
    assert mine["memcpy_nt_threshold"] == libc["nt_threshold"]
    if X86:
        llc = max(doc["header"]["host"]["caches"].values())
        assert mine["nt_threshold_from"] == "sysfs last-level cache / 4"
        assert mine["nt_threshold"] == llc // 4 > 16 * 1024
        assert libc["nt_threshold"] > 0 and libc["nt_threshold_from"] in ("ld.so --list-tunables", "sysconf")
    else:
        assert mine["nt_threshold"] is None and "note" in mine


@pytest.mark.skipif(not X86, reason="non-temporal stores exist on x86-64 only")
def test_above_the_threshold_contiguous_stores_stream_and_validate(tmp_path):
    """Strided stores keep the caches under auto (partial write-combined lines); stores=nt streams them."""
    _, small = _points(tmp_path, "probe", "memory.copy", "-s", "16K")
    size = small[0]["info"]["nt_threshold"] + 24  # 3 words past a whole number of vectors: the tail
    _, pts = _points(tmp_path, "large", *WORD_LOOPS, "-s", str(size), "--strides", "1,3")
    stores = {(p["bench"], p["stride"]): p["info"]["stores"] for p in pts}
    assert stores == {("memory.copy", 1): "nt", ("memory.strided_load", 1): "nt", ("memory.strided_load", 3): "nt",
                      ("memory.strided_store", 1): "nt", ("memory.strided_store", 3): "normal"}
    assert all(p["bytes_per_op"] == size for p in pts)
    _, forced = _points(tmp_path, "forced", "memory.strided_store", "-s", str(size), "--strides", "3",
                        "-p", "stores=nt")
    assert [p["info"]["stores"] for p in forced] == ["nt"]


@pytest.mark.skipif(not X86, reason="non-temporal stores exist on x86-64 only")
@pytest.mark.parametrize("stores, size, kind", [("nt", "16392", "nt"), ("normal", "16M", "normal")])
def test_the_stores_param_overrides_the_threshold(tmp_path, stores, size, kind):
    _, pts = _points(tmp_path, stores, "memory.copy", "-s", size, "-p", f"stores={stores}")
    assert [p["info"]["stores"] for p in pts] == [kind]
