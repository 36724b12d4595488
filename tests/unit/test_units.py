import pytest

from fabriclab.errors import UsageError
from fabriclab.units import fmt_bytes, fmt_rate, fmt_time, parse_size, parse_sizes, parse_strides


def test_suffixes_are_binary():
    assert parse_size("4K") == 4096
    assert parse_size("1M") == 1 << 20
    assert parse_size("2g") == 2 << 30
    assert parse_size("8KiB") == 8192
    assert parse_size("8kib") == 8192
    assert parse_size("3T") == 3 << 40
    assert parse_size("17") == 17


@pytest.mark.parametrize("bad,msg", [("4KB", "ambiguous"), ("4kB", "ambiguous"), ("4B", "plain integer"),
                                     ("4iB", "malformed"), ("4 K", "malformed"), ("1.5K", "malformed"),
                                     ("4P", "malformed"), ("-4", "malformed"), ("8388608T", "too large"),
                                     ("9" * 5000, "too large"), ("0" * 30 + "17K", "")])
def test_one_grammar_refuses_the_rest(bad, msg):
    if not msg:                                   # leading zeros read as the number they pad
        assert parse_size(bad) == 17 << 10
        return
    with pytest.raises(UsageError, match=msg) as e:
        parse_size(bad)
    assert len(str(e.value)) < 200               # a digit bomb is named in a line, not echoed


def test_geometric_sweep_from_zero():
    assert parse_sizes("0:16:x2") == [0, 1, 2, 4, 8, 16]
    assert parse_sizes("1:4M:x2")[-1] == 4 << 20
    assert len(parse_sizes("0:4M:x2")) == 24


def test_default_factor_and_lists_merge_sorted():
    assert parse_sizes("1:8") == [1, 2, 4, 8]
    assert parse_sizes("64,1:4:x2,2") == [1, 2, 4, 64]


def test_arithmetic_sweep():
    assert parse_sizes("0:4K:+1K") == [0, 1024, 2048, 3072, 4096]


def test_non_integer_factor_still_progresses():
    vals = parse_sizes("1:10:x1.5")
    assert vals == sorted(set(vals)) and vals[0] == 1 and vals[-1] <= 10 and len(vals) >= 5


@pytest.mark.parametrize("bad", ["", "abc", "4X", "1:", "8:1", "1:8:x1", "1:8:x0.5", "1:8:/2",
                                 "1:8:+0", "1,,2", "1:2:3:4", "-4", "8:64M:xnan", "8:64M:xinf", "8:64M:x1e308"])
def test_malformed_ranges_raise_usage_error(bad):
    with pytest.raises(UsageError):
        parse_sizes(bad)


def test_too_many_points_refused():
    with pytest.raises(UsageError):
        parse_sizes("0:1G:+1")


def test_stride_zero_refused():
    with pytest.raises(UsageError, match="stride 0"):
        parse_strides("0:8:x2")
    assert parse_strides("1:64:x2") == [1, 2, 4, 8, 16, 32, 64]


def test_formatting_keeps_units():
    assert fmt_bytes(4096) == "4K" and fmt_bytes(1536) == "1.5K" and fmt_bytes(3) == "3"
    assert fmt_time(2.5e-6) == "2.5 us" and fmt_time(0.002) == "2 ms"
    assert fmt_rate(126e6) == "126 MB/s" and fmt_rate(1.2e10) == "12 GB/s"
