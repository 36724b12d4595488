"""`fabriclab topology import|show|diff|export` through main(): the real readers, the
written file loading in the model, and hostile input ending in one line, exit 2,
nothing written."""

import pytest
import yaml

from fabriclab.cli import main
from fabriclab.model.topologies import load_network_file

# ibnetdiscover's topology of two leaves under one spine; leaf07's second cable to the
# spine runs EDR where both ends run HDR on their other cables.
IBNET = """\
# Topology file: generated on Sun Nov 29 12:00:00 2026
vendid=0x2c9
devid=0xd2f0
switchguid=0x2c90300a1b2c0(2c90300a1b2c0)
Switch  36 "S-0002c90300a1b2c0"   # "MF0;leaf07:MQM8700/U1" enhanced port 0 lid 3 lmc 0
[1]     "H-0002c90300ffee10"[1](2c90300ffee11)   # "node12 mlx5_0" lid 41 4xHDR
[2]     "H-0002c90300ffee20"[1](2c90300ffee21)   # "node13 mlx5_0" lid 42 4xHDR
[17]    "S-0002c90300a1b300"[3]   # "MF0;spine02:MQM8700/U1" lid 5 4xHDR
[18]    "S-0002c90300a1b300"[4]   # "MF0;spine02:MQM8700/U1" lid 5 4xEDR

vendid=0x2c9
devid=0xd2f0
switchguid=0x2c90300a1b300(2c90300a1b300)
Switch  36 "S-0002c90300a1b300"   # "MF0;spine02:MQM8700/U1" enhanced port 0 lid 5 lmc 0
[3]     "S-0002c90300a1b2c0"[17]   # "MF0;leaf07:MQM8700/U1" lid 3 4xHDR
[4]     "S-0002c90300a1b2c0"[18]   # "MF0;leaf07:MQM8700/U1" lid 3 4xEDR
[5]     "S-0002c90300a1b400"[1]   # "MF0;leaf08:MQM8700/U1" lid 6 4xHDR

vendid=0x2c9
devid=0xd2f0
switchguid=0x2c90300a1b400(2c90300a1b400)
Switch  36 "S-0002c90300a1b400"   # "MF0;leaf08:MQM8700/U1" enhanced port 0 lid 6 lmc 0
[1]     "S-0002c90300a1b300"[5]   # "MF0;spine02:MQM8700/U1" lid 5 4xHDR
[2]     "H-0002c90300ffee30"[1](2c90300ffee31)   # "node14 mlx5_0" lid 43 4xHDR
""" + "".join(f"""
vendid=0x2c9
devid=0x101b
caguid=0x2c90300ffee{h}0
Ca      1 "H-0002c90300ffee{h}0"    # "node{n} mlx5_0"
[1](2c90300ffee{h}1)  "S-0002c90300a1b{sw}"[{p}]   # lid 4{h} lmc 0 "MF0;{leaf}:MQM8700/U1" lid 3 4xHDR
""" for h, n, sw, p, leaf in (("1", 12, "2c0", 1, "leaf07"), ("2", 13, "2c0", 2, "leaf07"),
                              ("3", 14, "400", 2, "leaf08")))

SLURM = """\
# topology.conf
SwitchName=s0 Nodes=n[0-3]
SwitchName=s1 Nodes=n[4-7]
SwitchName=top Switches=s[0-1]
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "fabric.txt").write_text(IBNET)
    (tmp_path / "topology.conf").write_text(SLURM)
    return tmp_path


def one_line_error(capsys, rc: int, what: str) -> str:
    out = capsys.readouterr()
    assert rc == 2, out
    err = out.err.strip()
    assert err.startswith("fabriclab: error: ") and "\n" not in err and "Traceback" not in out.err, err
    assert what in err, err
    return err


def test_import_ibnetdiscover_writes_a_file_the_model_loads(files, capsys):
    out = files / "fabric.yaml"
    assert main(["topology", "import", str(files / "fabric.txt"), "-o", str(out)]) == 0
    assert "3 hosts, 3 switches, 6 cables (1 degraded)" in capsys.readouterr().err
    net = load_network_file(str(out))
    assert net.node_names == ["node12", "node13", "node14"]
    assert net.source["format"] == "ibnetdiscover" and net.source["read"] == "fabric.txt"
    bad = net.degraded_cables()
    assert [(c["name"], c["ports"], c["rate_MBps"]) for c in bad] == [("leaf07 [18] -- spine02 [4]", (18, 4), 12500)]
    assert len(out.read_text().splitlines()) == 7 + 6            # a comment, six top keys, a line per cable
    assert main(["topology", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "leaf07 [18] -- spine02 [4]  12500 MB/s (100 Gb/s): " in shown and "leaf07 -- spine02  2 cables" in shown


def test_import_to_stdout_with_a_hosts_map(files, capsys):
    (files / "map.yaml").write_text('"node12 mlx5_0": alpha\n0x0002c90300ffee20: beta\n')
    assert main(["topology", "import", str(files / "fabric.txt"), "--hosts", str(files / "map.yaml")]) == 0
    data = yaml.safe_load(capsys.readouterr().out)
    assert data["nodes"] == ["alpha", "beta", "node14"]
    assert data["source"]["given"] == {"hosts": "map.yaml"}


def test_import_slurm_needs_rates_and_records_them(files, capsys):
    conf = str(files / "topology.conf")
    one_line_error(capsys, main(["topology", "import", conf]), "a Slurm topology keeps no rates: give --rate")
    out = files / "slurm.yaml"
    assert main(["topology", "import", conf, "--rate", "12500", "25000", "--cables", "2", "-o", str(out)]) == 0
    assert "8 hosts, 3 switches, 12 cables (0 degraded)" in capsys.readouterr().err
    net = load_network_file(str(out))
    assert net.n_nodes == 8 and net.cables == 8 + 2 * 2
    assert net.source["given"] == {"rates_MBps": [12500.0, 25000.0], "cables": 2}
    one_line_error(capsys, main(["topology", "import", conf, "--hosts", conf]), "--hosts maps InfiniBand")
    one_line_error(capsys, main(["topology", "import", str(files / "fabric.txt"), "--rate", "1"]),
                   "--rate and --cables are for a Slurm topology")


def test_export_slurm_round_trip(files, capsys):
    net_yaml, conf = files / "slurm.yaml", files / "again.conf"
    assert main(["topology", "import", str(files / "topology.conf"), "--rate", "100", "-o", str(net_yaml)]) == 0
    assert main(["topology", "export", str(net_yaml), "--to", "slurm", "-o", str(conf)]) == 0
    text = conf.read_text()
    assert "SwitchName=s0 Nodes=n[0-3]" in text and "SwitchName=top Switches=s[0-1]" in text
    assert main(["topology", "export", str(net_yaml), "--to", "slurm"]) == 0
    assert capsys.readouterr().out == text
    one_line_error(capsys, main(["topology", "export", str(net_yaml), "--to", "slurm", "-o", str(conf)]),
                   "it exists; --force replaces it")
    assert main(["topology", "export", str(net_yaml), "--to", "slurm", "-o", str(conf), "--force"]) == 0


def test_diff_exit_codes(files, capsys):
    a, b = files / "a.yaml", files / "b.yaml"
    assert main(["topology", "import", str(files / "fabric.txt"), "-o", str(a)]) == 0
    assert main(["topology", "diff", str(a), str(a)]) == 0
    assert capsys.readouterr().out == ""
    b.write_text(a.read_text().replace('"rate_MBps": 12500.0', '"rate_MBps": 25000.0'))
    assert main(["topology", "diff", str(a), str(b)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "~ cable leaf07 [18] -- spine02 [4]  rate 12500 MB/s (100 Gb/s) -> 25000 MB/s (200 Gb/s)"]
    one_line_error(capsys, main(["topology", "diff", str(a), str(files / "nothing.yaml")]), "nothing.yaml")


def test_the_reader_s_output_is_checked_before_writing(files, capsys, monkeypatch):
    """A reader that returns what the model refuses: one line, exit 2, nothing written."""
    from fabriclab.topology import ibnet
    monkeypatch.setattr(ibnet, "read", lambda text, where, hosts=None, hosts_where=None: {
        "nodes": ["a", "b"], "links": [{"a": "a", "b": "b", "rate_MBps": 1, "ports": [0, 1]}]})
    out = files / "out.yaml"
    one_line_error(capsys, main(["topology", "import", str(files / "fabric.txt"), "-o", str(out)]),
                   "fabric.txt (as imported): links[0]: ports[0] must be a port number from 1 to 255")
    assert not out.exists()


HOSTILE = [
    ("network.yaml", "nodes: 2\nlinks: [[n0, n1]]\ndefault_rate_MBps: 1\n", "neither ibnetdiscover output nor"),
    ("osu.txt", "# OSU MPI Latency Test v5.8\n# Size          Latency (us)\n0                       1.10\n",
     "neither ibnetdiscover output nor"),
    ("long.txt", "a" * (10 << 20), "line 1 is longer than 1,048,576 characters"),
    ("escape.txt", "SwitchName=s0 Nodes=n[0-1]\x1b[2J\n", "line 1: a control character ('\\x1b')"),
    ("nul.txt", "# Topology file: generated\n\x00\n", "line 2: a control character ('\\x00')"),
    ("latin1.txt", b"SwitchName=s\xe9 Nodes=n0\n", "not UTF-8 text"),
    ("empty.txt", "", "neither ibnetdiscover output nor"),
]


@pytest.mark.parametrize("name,content,what", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_input_is_one_line_and_nothing_written(tmp_path, capsys, name, content, what):
    f = tmp_path / name
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = tmp_path / "out.yaml"
    one_line_error(capsys, main(["topology", "import", str(f), "-o", str(out)]), what)
    assert not out.exists()


def test_missing_file_directory_and_bad_options(files, capsys):
    out = files / "out.yaml"
    for argv, what in ((["import", str(files / "absent.txt")], "No such file"),
                       (["import", str(files)], "it is a directory"),
                       (["import", str(files / "fabric.txt"), "--from", "lldp"], "invalid choice"),
                       (["import", str(files / "fabric.txt"), "--from", "slurm", "--rate", "0"], "--rate"),
                       (["import", str(files / "fabric.txt"), "--from", "slurm", "--rate", "1"], "topology.conf"),
                       (["import", str(files / "fabric.txt"), "-o", str(files)], "it is a directory"),
                       (["show", str(files / "fabric.txt")], "fabric.txt"),
                       (["show", str(files)], "it is a directory"),
                       (["export", str(files / "fabric.txt"), "--to", "ucx"], "invalid choice")):
        one_line_error(capsys, main(["topology", *argv] + (["-o", str(out)] if argv[0] == "import"
                                                           and "-o" not in argv else [])), what)
        assert not out.exists()


@pytest.mark.parametrize("content,what", [
    ('nodes: 2\nswitches: ["s\\e[2J"]\nlinks: [[n0, s0], [n1, s0]]\ndefault_rate_MBps: 1\n',
     "switch name 's\\x1b[2J' is empty or holds a character that does not print"),
    ("nodes: 2\nlinks: [[n0, n1]]\nname: " + "x" * (10 << 20) + "\n", "is longer than 200 characters"),
    ("- a\n- b\n", "the top level must be a mapping"),
    (IBNET, "not valid YAML"),
], ids=["escape", "10MB-line", "a-list", "ibnetdiscover-text"])
def test_show_and_diff_refuse_a_bad_network_file_in_one_line(tmp_path, capsys, content, what):
    bad, good = tmp_path / "bad.yaml", tmp_path / "good.yaml"
    bad.write_text(content)
    good.write_text("nodes: 2\nlinks: [[n0, n1]]\ndefault_rate_MBps: 1\n")
    one_line_error(capsys, main(["topology", "show", str(bad)]), what)
    one_line_error(capsys, main(["topology", "diff", str(good), str(bad)]), what)
    one_line_error(capsys, main(["topology", "export", str(bad), "--to", "slurm", "-o", str(tmp_path / "t.conf")]),
                   "")
    assert not (tmp_path / "t.conf").exists()


def test_two_outputs_of_one_fabric_compare_equal(tmp_path, capsys):
    """ibnetdiscover's topology and its -p ports report of one fabric (tests/data/ibnetdiscover):
    the same cables, ports and rates, so diff finds nothing; show lists its degraded cables."""
    from pathlib import Path
    data = Path(__file__).parents[2] / "data" / "ibnetdiscover"
    a, b = tmp_path / "topology.yaml", tmp_path / "ports.yaml"
    assert main(["topology", "import", str(data / "small.topology.txt"), "-o", str(a)]) == 0
    assert main(["topology", "import", str(data / "small.ports.txt"), "--from", "ibnetdiscover", "-o", str(b)]) == 0
    capsys.readouterr()
    assert main(["topology", "diff", str(a), str(b)]) == 0
    assert main(["topology", "show", str(b)]) == 0
    shown = capsys.readouterr().out
    assert "2 cables below what both ends support" in shown and "leaf01 -- spine01  3 cables" in shown
