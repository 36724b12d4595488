"""Slurm's topology.conf and topology.yaml read as network files and written back
(fabriclab/topology/slurm.py): hostlists, trees, blocks, the round trip, and
hostile input refused in one line."""

import json
import subprocess
import sys
import textwrap

import pytest

from fabriclab.errors import UsageError
from fabriclab.model.topologies import CustomNetwork
from fabriclab.topology import slurm

RATES = [100.0, 400.0]
TREE = """\
# Slurm's example (topology.conf(5)), with a core above it
SwitchName=s0 Nodes=dev[0-5]
SwitchName=s1 Nodes=dev[6-11] LinkSpeed=100
switchname=s2 nodes=dev[12-17]
SwitchName=s3 Switches=s[0-2]
SwitchName=s4 Nodes=dev[18-19]
SwitchName=core Switches=s3,s4   # two levels over s0-s2, one over s4
"""


def read(text, rates=RATES, cables=1, where="topology.conf"):
    return slurm.read(text, where, rates_MBps=rates, cables=cables)


def refused(text, *match, where="topology.conf"):
    with pytest.raises(UsageError) as e:
        read(text, where=where)
    line = str(e.value)
    assert "\n" not in line and line.startswith(where + ":"), line
    for m in match:
        assert m in line, line
    return line


def model(net):
    """The network as the model reads it (what a reader recorded left aside)."""
    return CustomNetwork.from_dict({k: v for k, v in net.items() if k != "source"}, where="t")


def tree_of(net):
    """(hosts of each switch, parent of each switch) of a network file's dict."""
    nodes = set(net["nodes"])
    hosts, parent = {}, {}
    for ln in net["links"]:
        a, b = (ln[0], ln[1]) if isinstance(ln, list) else (ln["a"], ln["b"])
        if a in nodes:
            hosts.setdefault(b, set()).add(a)
        else:
            assert a not in parent
            parent[a] = b
    return hosts, parent


# ---- hostlists ---------------------------------------------------------------------------------

def test_hostlists_with_several_brackets_and_padding():
    net = read("SwitchName=leaf07 Nodes=rack[1-2]n[01-03],node[001-002,130],gpu-[8-10]-ib,login\n"
               "SwitchName=x Nodes=a[0-1]b[00-01]c[7]\nSwitchName=top Switches=leaf07,x\n")
    assert net["nodes"] == ["gpu-8-ib", "gpu-9-ib", "gpu-10-ib", "login", "node001", "node002", "node130",
                            "rack1n01", "rack1n02", "rack1n03", "rack2n01", "rack2n02", "rack2n03",
                            "a0b00c7", "a0b01c7", "a1b00c7", "a1b01c7"]
    assert {"a": "rack2n03", "b": "leaf07", "rate_MBps": 100.0, "name": "rack2n03 -- leaf07"} in net["links"]


@pytest.mark.parametrize("expr,why", [
    ("n[5-1]", "a bracket holds numbers and ranges"),
    ("n[1-2,]", "a bracket holds numbers and ranges"),
    ("n[]", "a bracket holds numbers and ranges"),
    ("n[1-2", "'[' is not part of a hostlist"),
    ("n[01-100]", "padding length mismatch"),           # ClusterShell's own check
    ("@compute", "'@' is not part of a hostlist"),       # a ClusterShell group: never resolved
    ("n[1-9]!n3", "'!' is not part of a hostlist"),       # ClusterShell's set operators are not Slurm's
    ("n[1-9]&n3", "'&' is not part of a hostlist"),
    ("a,,b", "an empty name"),
    ("n[1-2]x[a]", "a bracket holds numbers"),
    ("n[1234567890123456789]", "up to 18 digits"),
])
def test_a_hostlist_that_is_not_slurms_is_refused(expr, why):
    refused(f"SwitchName=s Nodes={expr}", "line 1: hostlist", why)


# ---- topology/tree -------------------------------------------------------------------------------

def test_tree_conf_levels_rates_and_cables():
    net = read(TREE, rates=[100, 200, 300], cables=2, where="/etc/slurm/topology.conf")
    assert net["name"] == "topology.conf" and net["routing"] == "d-mod-k"
    assert net["switches"] == ["s0", "s1", "s2", "s3", "s4", "core"]
    assert len(net["nodes"]) == 20 and net["nodes"][:2] == ["dev0", "dev1"]
    hosts, parent = tree_of(net)
    assert hosts["s2"] == {f"dev{i}" for i in range(12, 18)}
    assert parent == {"s0": "s3", "s1": "s3", "s2": "s3", "s3": "core", "s4": "core"}
    by_name = {ln["name"]: ln for ln in net["links"]}
    # host cables rates[0]; s3 is level 1, core level 2 (Slurm's levels: leaves 0, one above the highest child)
    assert by_name["dev0 -- s0"] == {"a": "dev0", "b": "s0", "rate_MBps": 100, "name": "dev0 -- s0"}
    assert by_name["s1 -- s3"] == {"a": "s1", "b": "s3", "count": 2, "rate_MBps": 200, "name": "s1 -- s3"}
    assert by_name["s3 -- core"]["rate_MBps"] == 300 and by_name["s4 -- core"]["rate_MBps"] == 300
    assert net["source"] == {"format": "slurm", "read": "topology.conf", "plugin": "topology/tree",
                             "given": {"rates_MBps": [100.0, 200.0, 300.0], "cables": 2}}
    m = model(net)
    assert m.n_nodes == 20 and len(m.switch_names) == 6 and m.cables == 20 + 2 * 5


def test_the_last_rate_repeats_upward_and_continued_lines_are_read():
    net = read("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[3-4]\n"
               "SwitchName=m \\\n  Switches=a,b\nSwitchName=t Switches=m\r\n", rates=[10])
    assert {ln["rate_MBps"] for ln in net["links"]} == {10.0}
    assert tree_of(net)[1] == {"a": "m", "b": "m", "m": "t"}


def test_a_node_on_two_leaf_switches_is_kept_as_a_host_with_two_cables():
    """Slurm warns ("Multiple leaf switches contain nodes") and keeps it; so does fabriclab."""
    net = read("SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=n[3-5]\nSwitchName=t Switches=a,b\n")
    assert net["nodes"] == ["n1", "n2", "n3", "n4", "n5"]
    assert [ln["b"] for ln in net["links"] if ln["a"] == "n3"] == ["a", "b"]
    assert model(net).n_nodes == 5


def test_an_empty_leaf_switch_is_kept():
    net = read("SwitchName=a Nodes=n[1-2]\nSwitchName=spare\nSwitchName=t Switches=a,spare\n")
    assert net["switches"] == ["a", "spare", "t"] and tree_of(net)[1]["spare"] == "t"


@pytest.mark.parametrize("text,why", [
    ("SwitchName=a Switches=b\nSwitchName=b Switches=c\nSwitchName=c Switches=a\nSwitchName=d Nodes=n[1-2]",
     "switches 'a' -> 'b' -> 'c' -> 'a' form a cycle"),
    ("SwitchName=a Switches=a", "lists itself: a cycle"),
    ("SwitchName=l Nodes=n[1-2]\nSwitchName=p Switches=l\nSwitchName=q Switches=l\nSwitchName=t Switches=p,q",
     "line 3: switch 'l' is under 'p' and 'q'"),
    ("SwitchName=l Nodes=n1\nSwitchName=t Switches=l,x", "line 2: switch 't' lists 'x', which no line defines"),
    ("SwitchName=l Nodes=n1\nSwitchName=t Switches=n1", "lists 'n1', which no line defines as a switch"),
    ("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[3-4]", "no root: 2 switches have no switch above them"),
    ("SwitchName=a Nodes=n1 Switches=b\nSwitchName=b Nodes=n2", "both child switches and nodes"),
    ("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2", "line 2: switch 'a' is defined twice (first line 1)"),
    ("SwitchName=a Nodes=n1,a", "'a' is the name of a node and of a switch"),
    ("SwitchName=a Nodes=n1 Speed=9", "'Speed' is unknown"),
    ("SwitchName=a Nodes=n1 Nodes=n2", "given twice"),
    ("SwitchName=a Nodes=n1 LinkSpeed=fast", "LinkSpeed must be a whole number"),
    ("SwitchName=a Nodes=n1\nBlockName=b Nodes=n2", "line 2: a topology/block line in a topology/tree file"),
    ("SwitchName=a Nodes=n1\nRingName=r Nodes=n2", "line 2: 'RingName' is not a topology/tree"),
    ("SwitchName=a Nodes=n1\nInclude /etc/other.conf", "'Include' is not Key=Value"),
    ("SwitchName=" + "x" * 65 + " Nodes=n1", "1 to 64 letters"),
])
def test_what_slurm_refuses_or_fabriclab_cannot_model_is_one_line(text, why):
    refused(text, why)


def test_a_long_cycle_is_named_by_a_few_of_its_switches():
    refused("".join(f"SwitchName=s{i} Switches=s{(i + 1) % 3000}\n" for i in range(3000)),
            "switches 's0' -> 's1' -> 's2' -> ... -> 's2998' -> 's2999' -> 's0' form a cycle of 3,000 (Slurm: not a tree)")


# ---- topology/block --------------------------------------------------------------------------------

def test_block_conf_blocks_are_leaf_switches_under_one_top():
    net = read("BlockName=block1 Nodes=node[1-4]\nBlockName=block2 Nodes=node[5-8]\nBlockSizes=4,8\n",
               cables=4, where="blocks.conf")
    assert net["switches"] == ["block1", "block2", slurm.BLOCK_TOP]
    hosts, parent = tree_of(net)
    assert hosts["block2"] == {f"node{i}" for i in range(5, 9)}
    assert parent == {"block1": slurm.BLOCK_TOP, "block2": slurm.BLOCK_TOP}
    up = [ln for ln in net["links"] if ln["b"] == slurm.BLOCK_TOP]
    assert [(ln["count"], ln["rate_MBps"]) for ln in up] == [(4, 400.0), (4, 400.0)]
    assert net["source"]["plugin"] == "topology/block" and net["source"]["block_sizes"] == [4, 8]
    assert model(net).n_nodes == 8


def test_a_node_in_two_blocks_is_refused():
    refused("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-8]", "line 2: node 'n4' is in blocks 'b1' and 'b2'")
    refused("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,x", "line 2: BlockSizes must be 1 to 64 positive")


# ---- topology.yaml ---------------------------------------------------------------------------------

YAML = """\
# Slurm 25.05's example (topology.yaml(5)), with a tree of two levels
- topology: topo2
  cluster_default: False
  block:
    block_sizes:
      - 4
      - 16
    blocks:
    - block: b1
      nodes: node[01-04]
    - block: b2
      nodes: node[05-08]
- topology: topo1
  cluster_default: True
  tree:
    switches:
    - switch: sw_root
      children: s[1-2]
    - switch: s1
      nodes: node[01-04]
    - switch: s2
      nodes: node[05-08]
- topology: topo3
  flat: True
"""


def test_yaml_reads_the_cluster_default_topology():
    assert slurm.detect(YAML)
    net = read(YAML, where="topology.yaml")
    assert net["name"] == "topo1" and net["switches"] == ["sw_root", "s1", "s2"]
    assert tree_of(net)[1] == {"s1": "sw_root", "s2": "sw_root"}
    assert net["source"]["topology"] == "topo1" and net["source"]["read"] == "topology.yaml"
    assert model(net).n_nodes == 8


def test_yaml_block_and_the_first_topology_without_a_default():
    net = read(YAML.replace("True", "False", 1), where="topology.yaml")
    assert net["name"] == "topo2" and net["switches"] == ["b1", "b2", slurm.BLOCK_TOP]
    assert net["source"]["block_sizes"] == [4, 16]
    flat_default = "- topology: topo0\n  cluster_default: true\n  flat: true\n" + YAML.replace("True", "False", 1)
    assert read(flat_default, where="topology.yaml")["name"] == "topo2"       # a flat default has no switches


@pytest.mark.parametrize("text,why", [
    ("- topology: t\n  flat: true\n", "topology 't' has flat: fabriclab reads one tree or one block"),
    ("- topology: t\n  tree: {switches: [{switch: a, nodes: 'n[1-2]', speed: 3}]}\n", "unknown key 'speed'"),
    ("- topology: t\n  tree: {switches: [{switch: a, nodes: 'n[1-2]', children: b}]}\n", "both children and nodes"),
    ("- topology: t\n  tree: {switches: []}\n", "tree needs a list of 1 to"),
    ("- topology: t\n  tree: {switches: [{switch: a, nodes: [n1, n2]}]}\n", "a node hostlist must be non-empty text"),
    ("- topology: t\n  tree: {switches: [{switch: a, nodes: 'n[0-9999999]'}]}\n", "more than 100,000 node names"),
    ("- topology: t\n  tree: &x {switches: *x}\n", "alias"),                       # datafile.py: no aliases
])
def test_yaml_that_is_not_slurms_is_one_line(text, why):
    refused(text, why, where="topology.yaml")


# ---- export and the round trip ---------------------------------------------------------------------

def test_round_trip_export_then_read_gives_the_same_tree():
    net = read(TREE.replace("s3,s4", "s3,s4,s5") + "SwitchName=s5 Nodes=dev[20-21],dev07\n", cables=3)
    text = slurm.export(net)
    assert "SwitchName=s0 Nodes=dev[0-5]" in text and text.endswith("SwitchName=core Switches=s[3-5]\n")
    back = read(text, cables=3)
    assert sorted(back["nodes"]) == sorted(net["nodes"]) and sorted(back["switches"]) == sorted(net["switches"])
    assert tree_of(back) == tree_of(net)
    assert sorted(json.dumps(x, sort_keys=True) for x in back["links"]) == \
        sorted(json.dumps(x, sort_keys=True) for x in net["links"])


def test_export_reads_counts_short_links_and_names_as_the_model_does():
    net = {"name": "two leaves", "nodes": 4, "switches": ["leaf1", "leaf2", "spine"], "default_rate_MBps": 100,
           "links": [["n0", "leaf1"], {"a": "leaf1", "b": "n1"}, ["n2", "leaf2"], ["n3", "leaf2"],
                     {"a": "leaf1", "b": "spine", "count": 2, "name": "up1"}, ["spine", "leaf2"]]}
    text = slurm.export(net)
    assert text.splitlines()[1:] == ["SwitchName=leaf1 Nodes=n[0-1]", "SwitchName=leaf2 Nodes=n[2-3]",
                                     "SwitchName=spine Switches=leaf[1-2]"]
    assert "two leaves" in text.splitlines()[0]


def test_a_fat_tree_is_written_as_its_spanning_tree_naming_what_is_left_out():
    leaves = [f"leaf{i}" for i in range(4)]
    links = [[f"n{4 * i + j}", leaf] for i, leaf in enumerate(leaves) for j in range(4)]
    links += [{"a": leaf, "b": sp, "count": 2} for leaf in leaves for sp in ("spine0", "spine1")]
    text = slurm.export({"nodes": 16, "switches": leaves + ["spine0", "spine1"], "default_rate_MBps": 10,
                         "links": links})
    # the spines tie: the last listed is the root, as topology.conf lists its root last
    assert "SwitchName=spine1 Switches=leaf[0-3]" in text and "SwitchName=spine0" not in text
    assert "4 cables and the switch spine0 are left out" in text
    assert [ln for ln in text.splitlines() if ln.startswith("#   ")] == [f"#   leaf{i} -- spine0" for i in range(4)]
    back = read(text)
    assert len(back["nodes"]) == 16 and back["switches"] == leaves + ["spine1"]


def test_a_switch_without_cables_is_named_as_left_out():
    text = slurm.export({"nodes": 2, "switches": ["leaf", "spare"], "default_rate_MBps": 1,
                         "links": [["n0", "leaf"], ["n1", "leaf"]]})
    assert text.splitlines()[1:] == ["# Slurm's tree keeps one parent per switch: 0 cables and the switch spare "
                                     "are left out:", "SwitchName=leaf Nodes=n[0-1]"]


def test_export_roots_a_tree_at_its_centre():
    """A network file keeps no direction: the root is the switch with the fewest hops to the
    farthest leaf switch, here 'core' and not the 'top' the file was read with."""
    net = read(TREE + "SwitchName=s5 Nodes=dev[20-21]\nSwitchName=top Switches=core,s5\n")
    back = read(slurm.export(net))
    assert tree_of(net)[1]["core"] == "top"
    assert tree_of(back)[1] == {"s0": "s3", "s1": "s3", "s2": "s3", "s3": "core", "s4": "core", "top": "core",
                                "s5": "top"}
    assert tree_of(back)[0] == tree_of(net)[0]


@pytest.mark.parametrize("net,why", [
    ({"nodes": 4, "switches": 2, "default_rate_MBps": 1,          # a switch ring: hosts on both, no switch above
      "links": [["n0", "s0"], ["n1", "s0"], ["n2", "s1"], ["n3", "s1"], ["s0", "s1"]]},
     "network file: hosts hang from 2 switches that no switch joins from above ('s0', 's1')"),
    ({"nodes": 3, "default_rate_MBps": 1, "transit_nodes": True, "links": [["n0", "n1"], ["n1", "n2"]]},
     "cable n0 -- n1 joins two hosts"),
    ({"nodes": ["a b", "c"], "switches": 1, "default_rate_MBps": 1, "links": [["a b", "s0"], ["c", "s0"]]},
     "node name 'a b' cannot stand in a Slurm hostlist"),
    ({"nodes": 2, "switches": ["s" * 65], "default_rate_MBps": 1, "links": [["n0", "s" * 65], ["n1", "s" * 65]]},
     "1 to 64 letters"),
    ({"nodes": 2, "links": [["n0", "s9"]]}, "unknown endpoint 's9'"),   # the model's own reading
])
def test_export_refuses_what_slurm_cannot_hold_in_one_line(net, why):
    with pytest.raises(UsageError) as e:
        slurm.export(net)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_dragonfly_is_refused():
    groups = [[f"g{g}r{r}" for r in range(2)] for g in range(3)]
    links = [[f"h{g}{r}", groups[g][r]] for g in range(3) for r in range(2)]
    links += [[grp[0], grp[1]] for grp in groups] + [["g0r1", "g1r0"], ["g1r1", "g2r0"], ["g2r1", "g0r0"]]
    with pytest.raises(UsageError, match="hosts hang from 6 switches that no switch joins"):
        slurm.export({"nodes": [f"h{g}{r}" for g in range(3) for r in range(2)], "default_rate_MBps": 1,
                      "switches": [s for grp in groups for s in grp], "links": links})


# ---- hostile input ---------------------------------------------------------------------------------

def test_detect_tells_slurm_from_other_formats():
    assert slurm.detect(TREE) and slurm.detect("\n# c\nBlockName=b Nodes=n1\n") and slurm.detect(YAML)
    others = ["nodes: 4\nlinks: [[n0, s0]]\n", "vendid=0x2c9\nSwitch 36 \"S-0002c90200401234\"\n",
              '{"nodes": 2}', "", "# only a comment\n", "NodeName=n1 CPUs=4\n"]
    for text in others:
        assert not slurm.detect(text)
    refused(others[1], "not a Slurm topology.conf")


@pytest.mark.parametrize("char", ["\x1b[31m", "\x00", "\x7f", "\x9b"])
def test_control_characters_are_refused_naming_the_line(char):
    refused(f"SwitchName=a Nodes=n[1-2]\nSwitchName=b{char} Nodes=n3\n", "line 2: a control character")


@pytest.mark.bounds
def test_the_limit_counts_every_hostlist_of_the_file():
    refused("SwitchName=a Nodes=n[1-60000]\nSwitchName=b Nodes=m[1-60000]\nSwitchName=t Switches=a,b",
            "line 2: hostlist 'm[1-60000]' stands for more than the 40,000 node names left of the model's "
            "limit of 100,000")
    assert len(read("SwitchName=a Nodes=n[1-50000]\nSwitchName=b Nodes=m[1-50000]\n"
                    "SwitchName=t Switches=a,b")["nodes"]) == 100_000


HOSTILE = """
import resource, sys
from fabriclab.errors import UsageError
from fabriclab.topology import slurm
try:
    slurm.read(sys.stdin.read(), "big.conf", rates_MBps=[100])
except UsageError as e:
    print(f"fabriclab: error: {e}", file=sys.stderr)
    use = resource.getrusage(resource.RUSAGE_SELF)           # the whole process, its start included
    # peak MiB of this process's own memory: ru_maxrss would count the forking test runner's pages
    hwm = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    print(use.ru_utime + use.ru_stime, hwm / 1024)            # CPU seconds, peak MiB
    sys.exit(e.exit_code)
"""


@pytest.mark.bounds
@pytest.mark.parametrize("expr", ["node[0-999999999999999]", "r[0-99999]n[0-99999]c[0-99999]",
                                  "a[0-99999],b[0-99999]", "n[" + ",".join(["0-999999999"] * 1000) + "]"])
def test_a_hostlist_of_billions_of_names_ends_in_one_line_fast_and_small(expr):
    """Within 2 s of CPU and 300 MB (CPU time, so that a loaded machine does not fail it)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(HOSTILE)], input=f"SwitchName=s Nodes={expr}\n",
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "stands for more than 100,000 node names, the model's limit: refused" in p.stderr, p.stderr
    cpu_s, rss_mib = map(float, p.stdout.split())
    assert cpu_s < 2 and rss_mib < 300, p.stdout


def test_rates_and_cables_are_checked():
    for rates, why in [([], "1 to 32 rates"), ([0], "greater than 0"), ([1e12], "1 B/s to 1 PB/s"),
                       ("100", "1 to 32 rates"), ([float("nan")], "finite")]:
        with pytest.raises(UsageError, match=why):
            read(TREE, rates=rates)
    with pytest.raises(UsageError, match="cables must be a positive integer"):
        read(TREE, cables=0)
