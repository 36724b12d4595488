"""ibnetdiscover's output of a simulated fabric, imported: the real tools, end to end.

Every shipped example network and a generated fat tree of 1,024 hosts is written as
an ibsim fabric (support/ibsim.py), served by ibsim, discovered by the real
ibnetdiscover (its topology and its -p ports report) and read back by
fabriclab.topology.ibnet: the same hosts, switches, cables (parallel ones counted,
port by port) and rates (all scaled by one factor to InfiniBand widths x speeds),
and the model's all-to-all per-node bandwidth scaled by that factor. A port set
to `w=1 s=1` trains its cable at 1x SDR, and the import flags it degraded.
ibsim-utils and infiniband-diags come with `make debs`.
"""

from collections import Counter
from pathlib import Path

import pytest
import yaml

import ibsim  # noqa: E402  (tests/support)
from fabriclab.model.loads import solve
from fabriclab.model.topologies import CustomNetwork
from fabriclab.topology import ibnet, ibrates

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.y*ml") if "links" in yaml.safe_load(p.read_text()))
MODES = {"topology": (), "ports": ("-p",)}


NETWORKS = {p.stem: (lambda p=p: yaml.safe_load(p.read_text())) for p in EXAMPLES}
NETWORKS["fat-tree-1024"] = ibsim.fat_tree


def model_of(d: dict) -> CustomNetwork:
    """The model's network of an imported dict, without the cable facts."""
    links = [{k: v for k, v in ln.items() if k not in ("ports", "guids", "degraded")} for ln in d["links"]]
    return CustomNetwork.from_dict({**{k: v for k, v in d.items() if k != "source"}, "links": links})


def expected_flags(cables: list) -> set:
    """The cables (a, a port, b, b port) whose width or speed is below what both ends run on
    other cables (a single-cable end: the other cables of its kind), from what ibsim was given."""
    lanes = [ibrates.WIDTHS[c[4]] for c in cables]
    lane = [ibrates.lane_Gbps(c[5]) for c in cables]
    at: dict = {}
    for i, c in enumerate(cables):
        for v in (c[0], c[2]):
            at.setdefault(v, set()).add(i)
    kind = {v: v.startswith("h") for v in at}
    of_kind = {k: {i for v in at if kind[v] == k for i in at[v]} for k in (True, False)}

    def best(i, v, values):
        others = (at[v] - {i}) or (of_kind[kind[v]] - {i})
        return max((values[j] for j in others), default=None)

    out = set()
    for i, c in enumerate(cables):
        for values in (lanes, lane):
            ends = [best(i, c[0], values), best(i, c[2], values)]
            if None not in ends and values[i] < min(ends):
                out.add(c[:4])
    return out


def discovered(net: dict, tmp_path, mode: str, degrade=()) -> tuple[dict, float, list]:
    text, k, cables = ibsim.net_text(net, degrade)
    netfile = tmp_path / "fabric.net"
    netfile.write_text(text)
    with ibsim.IbSim(netfile) as sim:
        out = sim.discover(*MODES[mode])
    assert ibnet.detect(out)
    return ibnet.read(out, str(tmp_path / "ibnetdiscover.txt")), k, cables


def cable_key(a, pa, b, pb):
    return (a, pa, b, pb) if (a, pa) < (b, pb) else (b, pb, a, pa)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_the_import_of_a_simulated_fabric_is_the_network_it_came_from(name, mode, tmp_path):
    net = NETWORKS[name]()
    d, k, cables = discovered(net, tmp_path, mode)
    hosts, switches, given = ibsim.expand(net)
    assert d["source"] == {"format": "ibnetdiscover", "read": "ibnetdiscover.txt"}
    assert sorted(d["nodes"]) == sorted(hosts) and sorted(d["switches"]) == sorted(switches)
    # every cable once, parallel ones counted, port by port, at k times its rate
    got = Counter((cable_key(ln["a"], ln["ports"][0], ln["b"], ln["ports"][1]), round(ln["rate_MBps"], 6))
                  for ln in d["links"])
    want = Counter((cable_key(*c[:4]), round(r * k, 6)) for c, (_, _, r) in zip(cables, given))
    assert got == want
    assert Counter(frozenset((ln["a"], ln["b"])) for ln in d["links"]) == \
        Counter(frozenset((a, b)) for a, b, _ in given)
    assert all(g.startswith("0x") and len(g) == 18 for ln in d["links"] for g in ln["guids"])
    flagged = {cable_key(ln["a"], ln["ports"][0], ln["b"], ln["ports"][1]) for ln in d["links"] if "degraded" in ln}
    assert flagged == {cable_key(*c) for c in expected_flags(cables)}
    if name == "fat-tree-1024":
        assert k == 1 and not flagged and len(d["links"]) == 1024 + 32 * 8 * 2
    # the model's all-to-all on the import is the original's, times k
    want_bw = solve(CustomNetwork.from_dict(net), None).per_node
    assert solve(model_of(d), None).per_node == pytest.approx(k * want_bw, rel=1e-9)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_cable_trained_at_1x_sdr_is_flagged_degraded(mode, tmp_path):
    net = yaml.safe_load((ROOT / "examples/testbeds/fat-tree-16.yaml").read_text())
    _, _, given = ibsim.expand(net)
    host_cable, trunk = 5, next(i for i, (a, b, _) in enumerate(given) if not a.startswith("h"))
    d, k, cables = discovered(net, tmp_path, mode, degrade=(host_cable, trunk))
    by_key = {cable_key(ln["a"], ln["ports"][0], ln["b"], ln["ports"][1]): ln for ln in d["links"]}
    for i in (host_cable, trunk):
        ln = by_key[cable_key(*cables[i][:4])]
        assert ln["rate_MBps"] == ibrates.rate_MBps("1X", "SDR")
        assert "width 1X" in ln["degraded"] and "speed SDR" in ln["degraded"], ln
    assert {key for key, ln in by_key.items() if "degraded" in ln} == {cable_key(*cables[i][:4])
                                                                       for i in (host_cable, trunk)}


def test_ibsim_is_gone_after_the_fixture(tmp_path):
    text, _, _ = ibsim.net_text(yaml.safe_load((ROOT / "examples/testbeds/two-switches.yaml").read_text()))
    (tmp_path / "f.net").write_text(text)
    with ibsim.IbSim(tmp_path / "f.net") as sim:
        sim.discover()
        proc = sim.proc
    assert proc.poll() is not None


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_written_format_is_the_real_tool_s(mode, tmp_path):
    """support/ibsim.topology_text (the unit tests' and the benchmark's large fabrics) reads as the real
    ibnetdiscover's output of the same fabric does, GUIDs aside."""
    net = ibsim.fat_tree(leaves=4, per_leaf=5, spines=3, parallel=2)
    real, _, _ = discovered(net, tmp_path, mode)
    written = ibnet.read(ibsim.topology_text(net, mode == "ports"), str(tmp_path / "ibnetdiscover.txt"))
    no_guids = lambda d: {**d, "links": [{k: v for k, v in ln.items() if k != "guids"} for ln in d["links"]]}
    assert no_guids(written) == no_guids(real) and len(real["links"]) == 20 + 24


READ_BIG = ("import sys, time\nfrom fabriclab.topology import ibnet\ntext = open(sys.argv[1]).read()\n"
            "t0 = time.process_time()\nd = ibnet.read(text, 'big')\n"
            "hwm = next(int(ln.split()[1]) for ln in open('/proc/self/status') if ln.startswith('VmHWM:'))\n"
            "print(time.process_time() - t0, hwm / 1024, len(d['nodes']))\n")


def test_a_10000_host_fabric_reads_within_20_s_and_1_gb(tmp_path):
    """Both outputs, each in a process of its own: CPU seconds of the read (a loaded machine
    does not stretch them) and the process's own peak memory."""
    import subprocess
    import sys
    net = ibsim.fat_tree(leaves=250, per_leaf=40, spines=20, parallel=1)
    for ports in (True, False):
        f = tmp_path / f"big-{ports}.txt"
        f.write_text(ibsim.topology_text(net, ports))
        out = subprocess.run([sys.executable, "-c", READ_BIG, str(f)], capture_output=True, text=True,
                             timeout=120, check=True).stdout.split()
        assert float(out[0]) < 20 and float(out[1]) < 1024 and out[2] == "10000", out
