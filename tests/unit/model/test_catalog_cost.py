"""Catalog data discipline, calibration parsing, and the cost model."""

import pytest
import yaml

from fabriclab.errors import UsageError
from fabriclab.model import catalog
from fabriclab.model.calibration import Calibration, load_file, parse_flags
from fabriclab.model.catalog import system, system_names, technologies
from fabriclab.model.cost import network_cost, price_list
from fabriclab.model.evaluate import cheapest, evaluate
from fabriclab.model.resources import MB

SEED_TECH = {"sci-d33x", "myrinet-m2l", "quadrics-qsnet", "giganet-clan", "cray-t3d", "fibre-channel-1g",
             "atm-oc3", "fast-ethernet", "gigabit-ethernet"}
NOW_TECH = {"infiniband-hdr", "infiniband-ndr", "infiniband-xdr", "roce-100g", "roce-200g", "roce-400g",
            "hpe-slingshot", "pcie-gen4", "pcie-gen5", "pcie-gen6", "nvlink4", "nvlink5"}


def test_catalog_covers_the_issue():
    assert SEED_TECH | NOW_TECH <= set(technologies())


def test_every_number_has_source_and_date():
    for t in technologies().values():
        for r in t.resources.values():
            for v in (r.gross, r.payload, r.overhead, r.route_bytes_per_switch, r.efficiency_value, r.measured):
                if v is not None:
                    assert v.source.strip() and v.date.strip()
    for item, p in price_list().items():
        assert p.source and p.date and "example" in p.source, item


def test_nvlink_generations_match_their_switches():
    """HGX H100: NVLink 4 through third-generation NVSwitch; NVL72: NVLink 5 through the NVLink
    Switch, which is the fourth generation of NVSwitch (NVIDIA's NVLink page)."""
    t = technologies()
    assert "third-generation NVSwitch" in t["nvlink4"].name
    assert "fourth-generation NVSwitch" in t["nvlink5"].name and "NVLink Switch" in t["nvlink5"].name
    assert "fourth-generation NVSwitch" in t["nvlink5"].switch_ports.source
    text = (catalog.DATA / "technologies.yaml").read_text() + (catalog.DATA / "systems.yaml").read_text()
    assert "fifth-generation NVSwitch" not in text


def test_seed_numbers_cite_the_seed():
    sci = technologies()["sci-d33x"].resources
    assert "seed 001 Table 1" in sci["link"].gross.source
    assert "seed 001 §3.2" in sci["adapter_bus"].measured.source


def test_bare_numbers_are_refused(tmp_path):
    bad = tmp_path / "t.yaml"
    bad.write_text(yaml.safe_dump({"schema": 1, "technologies": {"x": {"name": "x", "resources": {
        "link": {"gross_MBps": 100}}}}}))
    with pytest.raises(UsageError, match=r"\{value, source, date\}"):
        catalog.technologies(str(bad))
    bad.write_text(yaml.safe_dump({"schema": 2}))
    with pytest.raises(UsageError, match="schema: 1"):
        catalog.technologies(str(bad))


def test_all_named_systems_build_somewhere():
    for k in system_names():
        s = system(k)
        built = [n for n in (4, 8, 16, 64, 1000) if s.build(n) is not None]
        assert built, k


def test_calibration_parsing(tmp_path):
    c = parse_flags(["link=390", "sci-d33x.adapter_bus=360", "catalog"])
    sci = technologies()["sci-d33x"]
    got = c.for_tech(sci)
    assert got["link"] == 390 * MB and got["adapter_bus"] == 360 * MB
    myr = parse_flags(["link=150", "catalog"]).for_tech(technologies()["myrinet-m2l"])
    assert myr["link"] == 150 * MB          # a common value beats the catalog measurement
    with pytest.raises(UsageError, match="exceeds its gross rate 160 MB/s"):
        c.for_tech(technologies()["myrinet-m2l"])     # 390 MB/s on a 160 MB/s Myrinet link
    # a common key applies only to technologies that have the resource
    assert "adapter_bus" not in parse_flags(["adapter_bus=100"]).for_tech(technologies()["quadrics-qsnet"])
    f = tmp_path / "c.json"
    f.write_text('{"myrinet-m2l": {"link": 144}, "host_bus": 300}')
    m = load_file(str(f))
    assert m.for_tech(technologies()["myrinet-m2l"]) == {"link": 144 * MB, "host_bus": 300 * MB}
    assert not Calibration()
    for bad in (["x"], ["link=abc"], ["link=0"], ["link=inf"], ["link=nan"]):
        with pytest.raises(UsageError):
            parse_flags(bad)


def test_cost_counts_parts():
    s = system("myrinet-clos64")
    t = s.build(100)
    c = network_cost(s, t)
    p = price_list()
    # 100 adapters, two Clos64 enclosures, 100 node cables + 64 box-to-box cables
    assert c.total == pytest.approx(100 * p["myrinet-nic"].value + 2 * p["myrinet-clos64"].value
                                    + 164 * p["myrinet-cable"].value)
    s2 = system("sci-2d")
    c2 = network_cost(s2, s2.build(16))
    assert c2.parts["cable"][0] == 32 and c2.parts["adapter"][0] == 16
    assert network_cost(system("t3d-torus"), system("t3d-torus").build(8)) is None


def test_cost_per_mbps_and_cheapest():
    pt = evaluate(system("sci-2d"), 9, Calibration(use_catalog=True))
    assert pt.cost_per_mbps == pytest.approx(pt.cost / (9 * 144))
    rows = cheapest([system(k) for k in ("sci-ring", "sci-2d", "myrinet-clos64")], 9, 140,
                    Calibration(use_catalog=True))
    assert [r[1].key for r in rows] == ["sci-2d", "myrinet-clos64"]      # the ring gives 86.7 MB/s only
    assert rows[0][0] < rows[1][0]


def test_user_price_file_overrides(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump({"schema": 1, "items": {"sci-cable": {"value": 0, "source": "free", "date": "2024"}}}))
    p = price_list(str(f))
    assert p["sci-cable"].value == 0 and p["sci-adapter-2d"].value > 0


def test_t3d_processor_to_network_limits_sending_only():
    # seed 000 §III.D: 125 MB/s from the processor into the network; stores into a node run at
    # network speed, so the annex is full duplex and small tori give 125 MB/s per node
    t3d = technologies()["cray-t3d"]
    assert t3d.resources["host_bus"].duplex == "full"
    p = evaluate(system("t3d-torus"), 8)
    assert p.per_node == pytest.approx(125 * MB)
    assert "transmit" in p.bottleneck
