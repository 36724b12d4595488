"""A site's own names everywhere: the run's hosts matched to a network file's nodes by name
(verdicts/placement.py), a host the file does not have refused in one line before anything
launches, by every command that takes a network file; the verdicts naming an imported
cable by its name and direction; and an imported file planned as a testbed (switch
descriptions as namespaces, cables by their imported names)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from fabriclab.cli import main
from fabriclab.datafile import read_data_file
from fabriclab.errors import UsageError
from fabriclab.measure.launch import slurm_hosts
from fabriclab.measure.session import Launch, Site
from fabriclab.model.schedule_time import Network
from fabriclab.model.topologies.custom import CustomNetwork
from fabriclab.schema.records import MergedPoint, Summary
from fabriclab.schema.summaries import RankFigures
from fabriclab.testbed import cablecheck, coll_check, faults, netns, site as tsite, wiring
from fabriclab.testbed.validation import Site as ValidateSite
from fabriclab.tuning.prune import prune
from fabriclab.verdicts import congestion, pair_matrix, placement
from fabriclab.verdicts.coll_prediction import system

REPO = Path(__file__).resolve().parents[2]
FABRIC = str(REPO / "tests" / "data" / "imported" / "fabric.yaml")
TWO = str(REPO / "examples" / "testbeds" / "two-switches.yaml")
NODES = ["node001", "node002", "node003", "node004"]
LEAF07, SPINE = "MF0;leaf07:SX6036/U1", "MF0;spine02:CS7500/S01 spine of row 2, hall B"
CABLE = "leaf07 [17] -- spine02 [3]"


def _net() -> CustomNetwork:
    return CustomNetwork.from_dict(read_data_file(FABRIC, "network file"), where=FABRIC)


# ---- hosts matched by name -----------------------------------------------------------------

def test_hosts_are_nodes_by_name_in_any_order_and_by_their_short_names():
    assert placement.nodes_of(["node003", "node001.cluster.example", "nodeX", "node002"], NODES) == [2, 0, None, 1]
    assert placement.nodes_of(["node004"], ["node004.site", "node001.site"]) == [0]
    assert placement.nodes_of(["a.x"], ["a.y", "a.z"]) == [None]         # two nodes of that short name: none
    with pytest.raises(UsageError) as e:
        placement.require(["node001", "gpu17", "login2"], NODES + [f"node{i:03d}" for i in range(5, 40)], "f.yaml")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("host 'gpu17' (and 1 more) is not a node of the network file f.yaml")
    assert "node001, node002, node003, node004, ... (39 in all)" in msg


def _ran(tmp_path, argv: list, fake_core, capsys) -> tuple[int, str]:
    capsys.readouterr()
    rc = main([*argv, "--core", fake_core["core"], "--mpiexec", fake_core["mpiexec"], "-q"])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("cmd", [
    ["run", "message.shift", "-n", "4", "-L", "1"],
    ["run", "coll.allreduce", "-n", "4", "-L", "1"],
    ["congestion", "-n", "4"],
    ["check", "-n", "4"],
    ["tune", "allreduce", "-n", "4"],
])
@pytest.mark.parametrize("where", ["hosts", "hostfile", "slurm"])
def test_a_host_the_network_lacks_ends_the_command_in_one_line_before_anything_launches(
        tmp_path, fake_core, capsys, monkeypatch, cmd, where):
    """Every command that takes --network: run (the pair matrix, the collectives' prediction),
    congestion, check and tune; the hosts from --hosts, a hostfile or the Slurm allocation."""
    hosts = ["node002", "node001", "gpu17", "node004"]
    opts = {"hosts": ["--hosts", ",".join(hosts)], "hostfile": ["--hostfile", str(tmp_path / "hf")],
            "slurm": ["--launcher", "mpiexec"]}[where]
    (tmp_path / "hf").write_text("".join(f"{h}:1\n" for h in hosts))
    if where == "slurm":
        monkeypatch.setenv("SLURM_JOB_ID", "7")
        monkeypatch.setenv("SLURM_JOB_NODELIST", "node[001-002],gpu17,node004")
    else:
        monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    out = tmp_path / "out"
    rc, err = _ran(tmp_path, [*cmd, *opts, "--network", FABRIC, "-o", str(out)], fake_core, capsys)
    assert rc == 2 and not out.exists() and not list(tmp_path.glob("**/*.ndjson")), err
    (line,) = err.strip().splitlines()
    assert "host 'gpu17' is not a node of the network file" in line and "node001, node002" in line


def test_hosts_that_are_the_networks_nodes_pass_in_any_order(tmp_path, fake_core, capsys):
    rc, err = _ran(tmp_path, ["run", "message.shift", "-n", "4", "--hosts", "node004,node002,node003,node001",
                              "--network", FABRIC, "--dry-run"], fake_core, capsys)
    assert rc == 0, err


def test_slurm_host_lists_are_read_as_slurm_writes_them():
    """Expanded by ClusterShell's NodeSet (sorted, each once), refused in one line past
    the limit before a name is built."""
    assert slurm_hosts("node[001-003,007],login1") == ["login1", "node001", "node002", "node003", "node007"]
    assert slurm_hosts("r[1-2]-n[08-09]") == ["r1-n08", "r1-n09", "r2-n08", "r2-n09"]
    for bad in ("node[", "n[3-1]", "n[a-b]", "", "a,,b", "n[]"):
        with pytest.raises(UsageError, match="SLURM_JOB_NODELIST: .*hostlist"):
            slurm_hosts(bad)
    with pytest.raises(UsageError, match="more than 100,000 hosts: refused before expanding it"):
        slurm_hosts("n[0-99999999]")


def test_a_site_knows_its_hosts_by_name_and_a_testbed_by_its_hosts_names_not_addresses(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert Site().host_names(Launch(ranks=2)) is None                      # this machine alone
    assert Site().host_names(Launch(ranks=3, hosts="b,a,b")) == ["b", "a"]
    assert Site().rank_hosts(Launch(ranks=3, hosts="b,a,b")) == ["b", "a", "b"]
    assert Site().rank_hosts(Launch(ranks=4, hosts="b,a")) is None
    state = {"name": "imp", "hosts": NODES, "addresses": {h: f"10.77.0.{i + 1}" for i, h in enumerate(NODES)}}
    monkeypatch.setattr(tsite.netns, "load", lambda name: state)
    bed = tsite.TestbedSite("imp")
    assert bed.rank_hosts(Launch(ranks=3)) == NODES[:3] and bed.host_names(Launch(ranks=6)) == NODES
    assert bed.rank_hosts(Launch(ranks=2, hosts="node004,node001")) == ["node004", "node001"]
    # the tuner's pruning places them (a testbed's addresses would place nothing)
    names, ruled = prune("allreduce", ["ring", "recursive_doubling", "binomial"], [1 << 20],
                         bed.rank_hosts(Launch(ranks=4)), FABRIC, factor=1.0001)
    assert ruled and set(names) | set(ruled) == {"ring", "recursive_doubling", "binomial"}


def test_validate_on_real_hosts_matches_them_by_name_in_any_order():
    site = ValidateSite.of(FABRIC, "imp", ["node004", "node002.cluster", "node001", "node003"])
    assert site.hosts == {"node001": "node001", "node002": "node002.cluster", "node003": "node003",
                          "node004": "node004"}
    with pytest.raises(UsageError, match="host 'gpu17' is not a node of the network file"):
        ValidateSite.of(FABRIC, "imp", ["node004", "node002", "gpu17", "node003"])
    with pytest.raises(UsageError, match="'node003' is missing"):
        ValidateSite.of(FABRIC, "imp", ["node004", "node002", "node001"])
    # where none is a node of the file, the hosts stand for its nodes in its order, as before
    assert ValidateSite.of(TWO, "two", [f"x{i}" for i in range(8)]).hosts["h7"] == "x7"


# ---- the verdicts name the site's cables ---------------------------------------------------

def _shift(rate, hosts) -> list:
    """message.shift's merged points on the four nodes, rank r sending to r + k at rate(r, c)."""
    out = []
    for k in range(1, 4):
        ranks = [RankFigures(r, "both", hosts[r], None, rate(r, (r + k) % 4)) for r in range(4)]
        out.append(MergedPoint(bench="message.shift", size=1 << 18, active=k, bytes_per_op=1 << 18,
                               summary=Summary(median=1e-3), roles="b" * 4, ranks=ranks))
    return out


def test_the_pair_matrix_names_an_imported_cable_by_its_name_and_direction_with_hosts_by_their_names():
    # the hosts as MPI_Get_processor_name may say them, and not in the file's order
    hosts = ["node003.cluster", "node001.cluster", "node004.cluster", "node002.cluster"]
    net, where = Network(system(FABRIC)), np.array([2, 0, 3, 1])
    pred, _, limits = pair_matrix._predicted(net, where, 4)
    slow = {c for c, labs in limits.items() if any(lab.startswith(f"link {CABLE} (") for lab in labs)}
    assert len(slow) == 4
    (m,) = pair_matrix.matrices(_shift(lambda r, c: pred[r, c] * (0.4 if (r, c) in slow else 1.0), hosts),
                                hosts, FABRIC)
    assert m.predicted is not None and m.named == [f"link {CABLE} ({SPINE}→{LEAF07})"]
    assert f"cable link {CABLE} ({SPINE}→{LEAF07}): 4 of its 4 pairs low" in "\n".join(pair_matrix.lines([m]))


def test_congestion_names_the_imported_cables_victims_share_with_aggressors():
    net = Network(system(FABRIC))
    # victims node001 <-> node003, aggressors node002 -> node004 and back
    p = congestion.predict(net, [0, 2, 1, 3], "vvab", [1, 0, 3, 2], "alltoall")
    assert p is not None and p.shared and all(" -- spine02 [" in s and "→" in s for s in p.shared)


def test_validate_names_an_imported_cable_direction_as_the_model_does():
    """The cable-by-cable verdict and the collectives' busiest cable of `testbed validate`: the
    file's name and the direction, the model's own label (not just the two switches, which
    parallel cables share)."""
    net = _net()
    plan = wiring.make(net, "imp", FABRIC)
    cables = plan.to_dict()["cables"]
    rows = cablecheck.predicted(net, cables, {})
    k = next(i for i, c in enumerate(cables) if c["label"] == f"link {CABLE}")
    up = next(r for r in rows if r["cable"] == k and r["from"] == LEAF07)
    assert cablecheck.name(up) == f"link {CABLE} ({LEAF07}→{SPINE})" in Network(system(FABRIC)).labels
    down = {"cable": k, "from": SPINE, "to": LEAF07}
    assert coll_check._direction(cables, down) == f"link {CABLE} ({SPINE}→{LEAF07})"


# ---- an imported file as a testbed ---------------------------------------------------------

def test_an_imported_file_plans_as_a_testbed_with_the_sites_names_kept():
    plan = wiring.make(_net(), "imp", FABRIC)
    plan.check()
    assert plan.switches == [LEAF07, "MF0;leaf08:SX6036/U1", SPINE]        # the file's names, kept
    spaces = [plan.namespace(v) for v in plan.hosts + plan.switches]
    assert spaces[:4] == [f"fltb-imp-{h}" for h in NODES] and len(set(spaces)) == 7
    assert spaces[4] == "fltb-imp-MF0-leaf07-SX6036-U1" and spaces[6] == "fltb-imp-MF0-spine02-CS7500-S01-s"
    lines = netns.cable_lines(plan) + [x for v in plan.hosts + plan.switches
                                       for x in sum(netns.vertex_lines(plan, v), [])]
    assert all(netns.BATCH_LINE.fullmatch(x) for x in lines)
    state = {**plan.to_dict(), "namespaces": {v: plan.namespace(v) for v in plan.hosts + plan.switches}}
    k = faults.find(state, CABLE)
    c = state["cables"][k]
    assert (c["a"], c["b"], faults.cable_name(c)) == (LEAF07, SPINE, CABLE)
    assert faults.cable_name(state["cables"][k + 1]) == "leaf07 [18] -- spine02 [4]"   # parallel, its own name
    assert f"  {CABLE}: {LEAF07}:p2 <-> {SPINE}:p0" in netns.describe({**state, "agent": "a", "up_s": 0.1})
    assert json.loads(json.dumps(state))["cables"][k]["label"] == f"link {CABLE}"


def _crossed(plan, s: str, d: str) -> list[str]:
    """The cables a packet from s to d crosses, read from the routes the plan installs."""
    v, out = s, []
    while v != d:
        table = "" if v in plan.hosts else f" table {wiring.TABLE0 + plan.hosts.index(s)}"
        line = next(x for x in plan.routes[v] if x.startswith(f"{plan.addresses[d]}/32 ")
                    and (x.endswith(table) if table else " table " not in x))
        dev = re.search(r"dev (\S+)", line).group(1)
        cab = next(c for c in plan.cables if (c.a, c.a_if) == (v, dev) or (c.b, c.b_if) == (v, dev))
        out.append(cab.label)
        v = cab.b if cab.a == v else cab.a
    return out


def test_packets_take_the_parallel_cable_the_model_routes_them_over():
    net = _net()
    plan = wiring.make(net, "imp", FABRIC)
    for s in range(4):
        for d in range(4):
            if s != d:
                model = [f"link {net.link_names[net.channel_cable[c][0]]}" for c in net.router.route(s, d)]
                assert _crossed(plan, NODES[s], NODES[d]) == model
    assert "link leaf07 [17] -- spine02 [3]" in _crossed(plan, "node001", "node003")


def test_switch_namespaces_are_unique_and_a_bad_one_is_refused():
    ids = wiring.switch_ids(["h0"], ["a b", "a;b", "a-b", "x" * 60, ";;"])
    assert ids == {"a b": "a-b-1", "a;b": "a-b-2", "x" * 60: "x" * 24, ";;": "switch"}   # "a-b" is its own
    plan = wiring.make(_net(), "imp", FABRIC)
    plan.ids[SPINE] = "spine\n"
    with pytest.raises(UsageError, match="cannot be a host name"):
        plan.check()


def test_links_that_give_their_own_rate_need_no_default_rate():
    data = read_data_file(FABRIC, "network file")
    assert "default_rate_MBps" not in data and _net().source["format"] == "ibnetdiscover"
    plan = wiring.make(_net(), "imp", FABRIC)
    assert {round(c.rate_Bps / 1e6) for c in plan.cables} == {60, 10}
