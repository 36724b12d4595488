"""ibnetdiscover's output read into a network file's dict (fabriclab.topology.ibnet).

The recorded outputs in tests/data/ibnetdiscover/ are the real ibnetdiscover's, run
on ibsim serving small.net (two managed switches joined by three parallel cables,
one trained at 1x SDR; node01 with a two-port adapter and a second adapter; node04
trained at EDR where everything else runs HDR): its topology, -f and -p outputs.
Larger fabrics are written in the same format by support/ibsim.py.
"""

import re
import time
import tracemalloc
from pathlib import Path

import pytest

import ibsim  # noqa: E402  (tests/support)
from fabriclab.errors import UsageError
from fabriclab.model.loads import solve
from fabriclab.model.topologies import CustomNetwork
from fabriclab.topology import ibnet, ibrates

DATA = Path(__file__).resolve().parents[2] / "data" / "ibnetdiscover"
MODES = ("topology", "full", "ports")
HDR, EDR = ibrates.rate_MBps("4X", "HDR"), ibrates.rate_MBps("4X", "EDR")


def recorded(mode: str) -> str:
    return (DATA / f"small.{mode}.txt").read_text()


def imported(mode: str, hosts=None) -> dict:
    return ibnet.read(recorded(mode), f"small.{mode}.txt", hosts)


def model_of(d: dict) -> CustomNetwork:
    """The model's network of an imported dict, without the cable facts."""
    links = [{k: v for k, v in ln.items() if k not in ("ports", "guids", "degraded")} for ln in d["links"]]
    return CustomNetwork.from_dict({**{k: v for k, v in d.items() if k != "source"}, "links": links})


def by_name(d: dict) -> dict:
    return {ln["name"]: ln for ln in d["links"]}


# ---- what is read -----------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_hosts_switches_and_every_cable_once(mode):
    d = imported(mode)
    assert d["source"] == {"format": "ibnetdiscover", "read": f"small.{mode}.txt"}
    assert d["nodes"] == ["node01", "node02", "node03", "node04"]
    assert d["switches"] == ["leaf01", "spine01"]               # MF0;leaf01:MQM8700/U1
    links = by_name(d)
    assert list(links) == [
        "node01 mlx5_0 [1] -- leaf01 [1]", "node01 mlx5_0 [2] -- leaf01 [2]", "node01 mlx5_1 [1] -- leaf01 [3]",
        "node02 [1] -- leaf01 [4]", "node03 [1] -- spine01 [1]", "node04 [1] -- spine01 [2]",
        "leaf01 [33] -- spine01 [33]", "leaf01 [34] -- spine01 [34]", "leaf01 [35] -- spine01 [35]"]
    assert [ln["rate_MBps"] for ln in d["links"]] == [HDR] * 5 + [EDR, HDR, HDR, ibrates.rate_MBps("1X", "SDR")]
    trunk = links["leaf01 [34] -- spine01 [34]"]
    assert trunk["ports"] == [34, 34] and trunk["guids"] == ["0x0000000000200000", "0x0000000000200001"]
    # one host, three cables: two ports of one adapter and a second adapter, told apart by GUID
    node01 = [ln for ln in d["links"] if ln["a"] == "node01"]
    assert [ln["guids"][0] for ln in node01] == ["0x0000000000100001", "0x0000000000100002", "0x0000000000100004"]
    assert [ln["ports"] for ln in node01] == [[None, 1], [2, 2], [None, 3]]    # two adapters' port 1


@pytest.mark.parametrize("mode", MODES)
def test_cables_below_what_both_ends_run_are_flagged(mode):
    flagged = {ln["name"]: ln["degraded"] for ln in imported(mode)["links"] if "degraded" in ln}
    assert flagged == {
        "node04 [1] -- spine01 [2]": "speed EDR, where both ends run HDR on other cables",
        "leaf01 [35] -- spine01 [35]": "width 1X, where both ends run 4X on other cables; "
                                       "speed SDR, where both ends run HDR on other cables"}


def test_the_three_outputs_read_alike():
    topo, full, ports = (imported(m) for m in MODES)
    strip = lambda d: {k: v for k, v in d.items() if k not in ("source", "name")}
    assert strip(topo) == strip(full) == strip(ports)


def test_the_model_reads_the_import():
    d = imported("topology")
    r = solve(model_of(d), None)
    assert r.per_node > 0 and "spine01" in r.bottleneck.label


def test_the_model_reads_the_import_with_its_cable_facts():
    t = CustomNetwork.from_dict(imported("ports"))
    assert [c["name"] for c in t.degraded_cables()] == ["node04 [1] -- spine01 [2]", "leaf01 [35] -- spine01 [35]"]


def test_the_written_format_reads_back():
    """support/ibsim.topology_text, the format the large cases are written in (checked against the
    real ibnetdiscover in tests/integration/test_ibsim_import.py)."""
    net = ibsim.fat_tree(leaves=2, per_leaf=3, spines=2, parallel=2)
    for pr in (False, True):
        d = ibnet.read(ibsim.topology_text(net, pr), "gen")
        assert d["nodes"] == [f"h{i}" for i in range(6)] and d["switches"] == ["leaf0", "leaf1", "spine0", "spine1"]
        assert len(d["links"]) == 6 + 8 and not any("degraded" in ln for ln in d["links"])
        assert sorted({ln["rate_MBps"] for ln in d["links"]}) == [EDR, HDR]


# ---- names -------------------------------------------------------------------------------------
def test_a_hosts_map_names_by_guid_port_guid_or_description():
    hosts = {0x100005: "n2",                             # a node GUID, as YAML reads 0x... (an integer)
             "0x000000000010000a": "n4",                 # a port GUID
             "node03 mlx5_0": "n3",                      # a description
             "MF0;spine01:MQM8700/U1": "core"}
    d = imported("topology", hosts)
    assert d["nodes"] == ["n2", "n3", "n4", "node01"] and d["switches"] == ["core", "leaf01"]
    assert by_name(d)["n4 [1] -- core [2]"]["guids"][0] == "0x000000000010000a"
    # the -p report prints no adapter's node GUID, only its ports' GUIDs
    d = imported("ports", hosts)
    assert d["nodes"] == ["n3", "n4", "node01", "node02"] and d["switches"] == ["core", "leaf01"]
    assert "n2" in imported("ports", {"0x100006": "n2"})["nodes"]


@pytest.mark.parametrize("hosts", [[1, 2], {"0x1": ""}, {"0x1": "a\nb"}, {"0x1": "x" * 201}, {3.5: "a"},
                                   {"0x1": ["a"]}, {"": "a"}, {"0xzz": "a"}, {"0x12345678901234567": "a"}])
def test_a_bad_hosts_map_is_one_line(hosts):
    refused(recorded("topology"), hosts)


def test_a_hosts_map_error_names_the_map_and_a_guid_in_hex():
    e = refused(recorded("topology"), {0x100000: ""}, hosts_where="names.yaml")
    assert e.startswith("names.yaml: hosts[0x0000000000100000]: a name is 1 to")
    assert "begins as a GUID but is not one" in refused(recorded("topology"), {"0xG1": "n"})


def test_switches_of_one_description_are_told_apart_by_guid():
    text = recorded("topology").replace("MF0;spine01:MQM8700/U1", "MF0;leaf01:MQM8700/U1")
    d = ibnet.read(text, "t")
    assert d["switches"] == ["leaf01 0x0000000000200000", "leaf01 0x0000000000200001"]


def test_a_name_for_a_host_and_a_switch_is_refused():
    e = refused(recorded("topology"), {"node02 mlx5_0": "leaf01"})
    assert "'leaf01' names both an adapter and a switch" in e


# ---- detection ---------------------------------------------------------------------------------
def test_detect():
    assert all(ibnet.detect(recorded(m)) for m in MODES)
    assert not ibnet.detect("name: net\nnodes: 4\nlinks: [[n0, s0]]\n")
    assert not ibnet.detect("# OSU MPI Bandwidth Test v7.1\n# Size      Bandwidth (MB/s)\n1   2.5\n")
    assert not ibnet.detect("")
    # any number of comments before the first line of the output; 200 lines of anything else are enough
    assert ibnet.detect("# site fabric, nightly\n" * 5000 + "\n" + recorded("topology").split("\n", 3)[3])
    assert not ibnet.detect("x\n" * 250 + recorded("topology").split("\n", 3)[3])
    t0 = time.process_time()
    assert not ibnet.detect("SW 0 1 0x1 4x SDR - SW 0 2 0x2 ( '" + "' - '" * 13000)    # 64 KiB of one line
    assert time.process_time() - t0 < 0.5


# ---- hostile files: one line, exit 2, within 2 s and 300 MB ------------------------------------
def refused(text: str, hosts=None, hosts_where=None) -> str:
    """The one line a hostile input ends in, checked for its form, its CPU time (untraced: a loaded
    machine's other processes do not count) and its peak memory (traced, a second time)."""
    t0 = time.process_time()
    with pytest.raises(UsageError) as e:
        ibnet.read(text, "fabric.txt", hosts, hosts_where=hosts_where)
    elapsed = time.process_time() - t0
    tracemalloc.start()
    try:
        with pytest.raises(UsageError):
            ibnet.read(text, "fabric.txt", hosts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(e.value)
    assert e.value.exit_code == 2 and "\n" not in msg and msg.isprintable() and len(msg) < 400, msg
    assert msg.startswith(f"{hosts_where or 'fabric.txt'}: ")
    assert elapsed < 2 and peak < 300 << 20, (elapsed, peak)
    return msg


def _lines(mode="topology"):
    return recorded(mode).splitlines(keepends=True)


def test_a_truncated_file():
    lines = _lines()
    cut = next(i for i, ln in enumerate(lines) if '"node02 mlx5_0"' in ln and ln.startswith("Ca"))
    assert "which the file does not describe" in refused("".join(lines[:cut - 4]))
    text = recorded("topology")
    assert "not ibnetdiscover output" in refused(text[:text.index("lid 0 4xHDR") + 8])   # mid-line
    ports = _lines("ports")
    assert "records no cable" in refused("".join(ports[:len(ports) // 2]))


def test_a_cable_whose_ends_disagree_names_both():
    text = recorded("topology").replace('[33]\t"S-0000000000200000"[33]', '[33]\t"S-0000000000200000"[34]', 1)
    msg = refused(text)
    assert re.search(r"0x0+200001 \[33\] leads to 0x0+200000 \[34\], but 0x0+200000 \[34\] leads to "
                     r"0x0+200001 \[34\]", msg), msg
    text = recorded("topology").replace('"node03 mlx5_0" lid 0 4xHDR', '"node03 mlx5_0" lid 0 4xEDR', 1)
    assert "runs 4X EDR but its far end" in refused(text)


def test_duplicate_guids():
    text = recorded("topology")
    block = text[text.index("vendid=0x0\ndevid=0x0\nsysimgguid=0x100009"):]
    block = block[:block.index("\n\n") + 2]
    assert "is described twice" in refused(text + "\n" + block)
    ports = recorded("ports").replace("( 'node03 mlx5_0' - ", "( 'node09 mlx5_0' - ", 1)
    assert "GUID 0x0000000000100008 is CA 'node09 mlx5_0'" in refused(ports) or "GUID" in refused(ports)
    line = next(ln for ln in _lines("ports") if " - " in ln)
    assert "listed twice" in refused(recorded("ports") + line)


@pytest.mark.parametrize("text", [
    "", "# only comments\n#\n", "name: net\nnodes: 4\nswitches: 1\nlinks: [[n0, s0]]\n",
    '{"nodes": 4, "links": []}', "# OSU MPI Bandwidth Test v7.1\n1   2.5\n", "\x00\x01\x02" * 100,
    "Switch 36 S-0000000000200000 # leaf\n"])
def test_a_file_of_another_format(text):
    refused(text)


def test_control_characters_and_long_descriptions():
    text = recorded("topology").replace('# "node02 mlx5_0"\n', '# "node02\x1b[31m mlx5_0"\n', 1)
    msg = refused(text)
    assert "\\x1b" in msg and "\x1b" not in msg
    msg = refused(recorded("topology").replace('# "node02 mlx5_0"\n', '# "' + "x" * (10 << 20) + '"\n', 1))
    assert "longer than 4,096 characters" in msg
    refused(recorded("topology").replace('# "node02 mlx5_0"\n', '# "' + "x" * 300 + '"\n', 1))
    refused(recorded("ports").replace("'node02 mlx5_0'", "'node02\u202emlx5_0'"))
    refused(recorded("topology").replace('# "node02 mlx5_0"\n', '# ""\n', 1))        # no host name


@pytest.mark.parametrize("old, new", [
    ('Switch\t36 "S-0000000000200001"', 'Switch\t99999999 "S-0000000000200001"'),
    ('Switch\t36 "S-0000000000200001"', 'Switch\t0 "S-0000000000200001"'),
    ('[35]\t"S-0000000000200000"[35]', '[99]\t"S-0000000000200000"[35]'),
    ('[35]\t"S-0000000000200000"[35]', '[35]\t"S-0000000000200000"[999999999]'),
    ('[35]\t"S-0000000000200000"[35]', '[35]\t"S-00000000000000000000000200000"[35]'),
    ('lid 0 1xSDR', 'lid 0 99xSDR'), ('lid 0 1xSDR', 'lid 0 1xZDR'),
    ('Ca\t1 "H-0000000000100009"', 'Ca\t1 "S-0000000000100009"'),
])
def test_absurd_counts_and_fields(old, new):
    text = recorded("topology")
    assert old in text
    refused(text.replace(old, new, 1))


def test_more_switches_and_adapters_than_the_model_takes(monkeypatch):
    monkeypatch.setattr(ibnet, "MAX_NODES", 3)
    monkeypatch.setattr(ibnet, "MAX_SWITCHES", 1)
    assert "more than 4 switches and adapters" in refused(recorded("topology"))
    assert "more than 4 switches and adapters" in refused(recorded("ports"))


# ---- speed -------------------------------------------------------------------------------------
@pytest.mark.bounds
@pytest.mark.parametrize("hosts, seconds", [(1_000, 2)])
def test_large_fabrics(hosts, seconds):
    """Both outputs within the time (CPU), the read's memory traced (10,000 hosts: the integration
    tests, in a process of their own)."""
    net = ibsim.fat_tree(leaves=hosts // 40, per_leaf=40, spines=20 if hosts > 1000 else 10,
                         parallel=1 if hosts > 1000 else 2)
    for pr in (True, False):
        text = ibsim.topology_text(net, pr)
        t0 = time.process_time()
        d = ibnet.read(text, "big")
        assert time.process_time() - t0 < seconds
        assert len(d["nodes"]) == hosts and not any("degraded" in ln for ln in d["links"])
    tracemalloc.start()
    try:
        ibnet.read(text, "big")
        assert tracemalloc.get_traced_memory()[1] < 100 << 20
    finally:
        tracemalloc.stop()
