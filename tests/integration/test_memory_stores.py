"""The copies of the word loops on the real core: under stores=auto each point records the copy a
trial on its own slots picked, the copies' trial rates and glibc memcpy's threshold;
the stores param and strided stores override the trial; the streaming loop still delivers every
byte, tails that are not whole vectors or whole pages included."""
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
# Two blocks of four pages for the streaming loop's body, three 128-byte turns and three words of tail.
TAILS = str(2 * 4 * 4096 + 3 * 128 + 24)


def _points(tmp_path, name: str, *argv: str) -> list[dict]:
    out = tmp_path / f"{name}.json"
    assert main(["run", *argv, "-o", str(out), *ONE_RANK]) == 0
    doc = docs.read(out)
    pts = docs.points(doc)
    for p in pts:
        assert p["validation"]["errors"] == 0, p
        assert p["validation"]["checked_bytes"] == p["bytes_per_op"] > 0, p
    return pts


def test_auto_records_the_trial_and_glibc_threshold(tmp_path):
    pts = _points(tmp_path, "auto", "memory.copy", "memory.memcpy", "-s", f"16K,{TAILS}")
    libc = {p["size"]: p["info"] for p in pts if p["bench"] == "memory.memcpy"}
    for p in (p for p in pts if p["bench"] == "memory.copy"):
        mine = p["info"]
        assert mine["memcpy_nt_threshold"] == libc[p["size"]]["nt_threshold"]
        assert mine["memcpy_nt_threshold_from"] == libc[p["size"]]["nt_threshold_from"]
        assert mine["memcpy_rep_movsb_threshold"] == libc[p["size"]]["rep_movsb_threshold"]
        assert mine["memcpy_rep_movsb_stop_threshold"] == libc[p["size"]]["rep_movsb_stop_threshold"]
        if not X86:
            assert (mine["stores"], mine["stores_from"]) == ("normal", "no non-temporal stores outside x86-64")
            continue
        assert mine["stores_from"] == "trial"
        rates = mine["trial_Bps"]
        assert "streaming loop" in rates and len(rates) >= 2 and all(r > 0 for r in rates.values())
        assert mine["copy"] in rates and mine["trial_rounds"] >= 5
        assert mine["stores"] == ("nt" if mine["copy"] == "streaming loop" else "normal")
        assert libc[p["size"]]["nt_threshold"] > 0
        assert libc[p["size"]]["nt_threshold_from"] in ("ld.so --list-diagnostics", "ld.so --list-tunables", "sysconf")


def _erms() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " erms" in line for line in f)
    except OSError:
        return False


@pytest.mark.skipif(not (X86 and _erms()), reason="rep movsb is a fast copy with ERMS only")
def test_rep_movsb_runs_where_glibc_uses_it(tmp_path, monkeypatch):
    """From glibc's x86_rep_movsb_threshold up to below its non-temporal threshold, as ld.so reads them;
    the copy glibc's memcpy would run is rep movsb only below its stop threshold, the vector loop beyond."""
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.cpu.x86_non_temporal_threshold=1048576")
    pts = _points(tmp_path, "rep", "memory.copy", "-s", "1K,16K,768K,2M")
    for p in pts:
        info = p["info"]
        assert info["memcpy_nt_threshold"] == 1048576 and info["memcpy_rep_movsb_threshold"] > 0
        expected = info["memcpy_rep_movsb_threshold"] <= p["size"] < info["memcpy_nt_threshold"]
        assert ("rep movsb" in info["trial_Bps"]) == expected, p
        stop = info["memcpy_rep_movsb_stop_threshold"] or info["memcpy_nt_threshold"]
        libc = ({"streaming loop"} if p["size"] >= info["memcpy_nt_threshold"]
                else {"rep movsb"} if expected and p["size"] < stop else {"vector loop", "word loop"})
        assert info["trial_libc_copy"] in libc, p


@pytest.mark.skipif(not X86, reason="non-temporal stores exist on x86-64 only")
def test_streaming_stores_validate_and_strided_stores_keep_the_caches(tmp_path):
    """Strided stores keep the caches under auto (partial write-combined lines); stores=nt streams them."""
    pts = _points(tmp_path, "nt", *WORD_LOOPS, "-s", TAILS, "--strides", "1,3", "-p", "stores=nt")
    assert {(p["bench"], p["stride"]): (p["info"]["stores"], p["info"]["stores_from"]) for p in pts} == {
        (b, s): ("nt", "stores param") for b in WORD_LOOPS for s in ((1,) if b == "memory.copy" else (1, 3))}
    assert [p["info"]["copy"] for p in pts if p["bench"] == "memory.copy"] == ["streaming loop"]
    assert all(p["bytes_per_op"] == int(TAILS) for p in pts)
    auto = _points(tmp_path, "auto", "memory.strided_store", "-s", TAILS, "--strides", "1,3")
    info = {p["stride"]: p["info"] for p in auto}
    assert (info[3]["stores"], info[3]["stores_from"]) == ("normal", "strided stores")
    assert info[1]["stores_from"] == "trial" and "copy" not in info[1]


@pytest.mark.skipif(not X86, reason="non-temporal stores exist on x86-64 only")
@pytest.mark.parametrize("stores, size", [("nt", "16392"), ("normal", TAILS)])
def test_the_stores_param_overrides_the_trial(tmp_path, stores, size):
    [p] = _points(tmp_path, stores, "memory.copy", "-s", size, "-p", f"stores={stores}")
    assert (p["info"]["stores"], p["info"]["stores_from"]) == (stores, "stores param")
    rates = p["info"].get("trial_Bps")
    if stores == "nt":  # one streaming copy: nothing to try
        assert rates is None and p["info"]["copy"] == "streaming loop"
    else:  # a trial among the normal copies, where the CPU has more than one (`rep movsb` with ERMS)
        assert p["info"]["copy"] != "streaming loop"
        assert rates is None or ("streaming loop" not in rates and p["info"]["copy"] in rates)
