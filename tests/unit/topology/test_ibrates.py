"""InfiniBand widths and speeds: each lane's data rate after its line code, and the tokens
ibnetdiscover prints."""

import pytest
import yaml

from fabriclab.errors import UsageError
from fabriclab.model import catalog
from fabriclab.topology import ibrates


@pytest.mark.parametrize("width, speed, MBps", [
    ("1X", "SDR", 250), ("4X", "SDR", 1000), ("4X", "DDR", 2000), ("4X", "QDR", 4000),
    ("4X", "FDR10", 5000), ("4X", "FDR", 4 * 14.0625 * 64 / 66 * 125), ("4X", "EDR", 12500),
    ("4X", "HDR", 25000), ("2X", "NDR", 25000), ("4X", "NDR", 50000), ("4X", "XDR", 100000),
    ("12X", "QDR", 12000), ("8X", "HDR", 50000)])
def test_rates_after_line_coding(width, speed, MBps):
    assert ibrates.rate_MBps(width, speed) == pytest.approx(MBps, rel=1e-12)


def test_every_speed_names_its_source_and_loses_what_its_code_costs():
    for name, (signal, data, source) in ibrates.SPEEDS.items():
        assert source and ("IBTA" in source or "Mellanox" in source), name
        assert 0.8 <= data / signal < 1, name         # 8b/10b, 64b/66b, RS-FEC 16/17
    # HDR on: 544/514 x 257/256 of signalling per bit of data
    assert ibrates.lane_Gbps("HDR") == pytest.approx(53.125 * 514 / 544 * 256 / 257)


def test_the_catalog_s_infiniband_links_agree():
    techs = yaml.safe_load((catalog.DATA / "technologies.yaml").read_text())
    techs = techs.get("technologies", techs)
    for speed in ("HDR", "NDR"):
        gross = techs[f"infiniband-{speed.lower()}"]["resources"]["link"]["gross_MBps"]["value"]
        assert gross == ibrates.rate_MBps("4X", speed)


@pytest.mark.parametrize("token, parsed", [
    ("4xHDR", ("4X", "HDR")), ("4x HDR", ("4X", "HDR")), ("12xFDR", ("12X", "FDR")), ("1xSDR", ("1X", "SDR")),
    ("2xNDR", ("2X", "NDR")), ("4xFDR10", ("4X", "FDR10")), ("8xEDR", ("8X", "EDR"))])
def test_ibnetdiscover_tokens(token, parsed):
    assert ibrates.parse_active(token) == parsed


def test_a_bare_speed_and_width():
    assert ibrates.parse_speed("FDR10") == "FDR10" and ibrates.parse_width("12x") == "12X"


@pytest.mark.parametrize("token", ["4xQQR", "3xHDR", "HDR", "4x", "", "4x\x1b[31mHDR", "9" * 1000 + "xSDR"])
def test_unknown_tokens_are_one_line(token):
    with pytest.raises(UsageError) as e:
        ibrates.parse_active(token)
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value) and len(str(e.value)) < 200
