"""A network file in `fabriclab report`: its facts (topology/facts.py), the section
"The network" (report/network.py), bounded for a large fat tree, and the command
taking a network file among its inputs."""
import json
import re
import time

import pytest
import yaml

from fabriclab.cli import main
from fabriclab.report import figures, network
from fabriclab.topology import facts, show

from htmlcheck import check_html  # noqa: E402  (tests/support)


def fabric() -> dict:
    """Two leaves of two hosts under one spine: leaf0 by two cables with ports (one of them
    degraded), leaf1 by one link of count 2; a spare switch cabled to nothing."""
    return {
        "name": "site", "nodes": ["h0", "h1", "h2", "h3"], "switches": ["leaf0", "leaf1", "spine", "spare"],
        "default_rate_MBps": 25000,
        "source": {"format": "ibnetdiscover", "read": "fabric.txt"},
        "links": [
            {"a": "h0", "b": "leaf0", "ports": [1, 1]},
            {"a": "h1", "b": "leaf0", "ports": [1, 2], "rate_MBps": 12500, "degraded": "2X, both ends 4X"},
            ["h2", "leaf1"], ["h3", "leaf1"],
            {"a": "leaf0", "b": "spine", "ports": [17, 3], "name": "leaf0 [17] -- spine [3]"},
            {"a": "leaf0", "b": "spine", "ports": [18, 4], "rate_MBps": 12500, "name": "uplink-b",
             "degraded": "4X EDR, both ends 4X HDR"},
            {"a": "leaf1", "b": "spine", "count": 2, "name": "trunk1"},
        ]}


def test_facts_are_show_s_rows_and_the_switches_by_level():
    f = facts.facts(fabric(), "site.yaml")
    lines = show.summary(fabric(), "site.yaml")
    assert [h for h, _ in f["summary"]] == [ln[:8].strip() for ln in lines]
    assert [" ".join(t.split()) for _, t in f["summary"]] == [" ".join(ln[10:].split()) for ln in lines]
    assert [(lv["level"], [s["name"] for s in lv["switches"]]) for lv in f["levels"]] == \
        [(1, ["leaf0", "leaf1"]), (2, ["spine"]), (None, ["spare"])]
    assert f["levels"][0]["switches"][0] == {"name": "leaf0", "hosts": 2, "degraded_to_hosts": 1}
    assert sorted((ln["a"], ln["b"], ln["rate_MBps"], ln["count"], ln["degraded"]) for ln in f["links"]) == [
        ("leaf0", "spine", 12500.0, 1, True), ("leaf0", "spine", 25000.0, 1, False),
        ("leaf1", "spine", 25000.0, 2, False)]
    up = f["degraded"][1]
    assert (up["name"], up["ends"], up["ports"], up["reason"]) == \
        ("uplink-b", ["leaf0", "spine"], [18, 4], "4X EDR, both ends 4X HDR")
    assert up["label"] == "leaf0 [18] -- spine [4] (uplink-b)"
    json.dumps(f)                                  # plain data, as the report takes it


def test_the_section_names_every_switch_the_degraded_cables_and_the_parallel_counts():
    page = "\n".join(network.section([facts.facts(fabric(), "site.yaml")]))
    problems, figs = check_html(page)
    assert problems == [] and [f["id"] for f in figs] == ["fig-network"] and figs[0]["drawn"] > 10
    svg = page[page.index("<svg"):page.index("</svg>")]
    for name in ("leaf0", "leaf1", "spine", "spare"):
        assert f">{name}</text>" in svg
    assert "\u00d72</text>" in svg                                       # leaf1 -- spine: one link of 2
    assert len(re.findall(r'<line class="cable"[^>]*stroke="#b00020"', svg)) == 1    # the degraded uplink
    assert "2 hosts</text>" in svg and "1 degraded</text>" in svg        # leaf0's hosts, one cable slow
    caption = page[page.index("<figcaption>"):page.index("</figcaption>")]
    assert "leaf0 [18] -- spine [4] (uplink-b)" in caption and "h0" not in svg
    table = page[page.rindex("<table>"):]
    assert "<td>uplink-b</td><td>leaf0 -- spine</td><td>18 -- 4</td>" in table
    assert "4X EDR, both ends 4X HDR" in table and "<td>1 -- 2</td>" in table


def fat_tree(hosts_per_leaf=40, leaves=250, pod=10, cores=100) -> dict:
    """A network file of 10,000 hosts: pods of `pod` leaves and `pod` aggregation switches, every
    leaf two cables to every aggregation switch of its pod, aggregation switch j of each pod one
    to each of `cores / pod` cores; leaf0's cables to agg0 degraded."""
    hosts = [f"h{i}" for i in range(hosts_per_leaf * leaves)]
    leaf, agg = [f"leaf{i}" for i in range(leaves)], [f"agg{i}" for i in range(leaves)]
    core = [f"core{i}" for i in range(cores)]
    links = [[h, leaf[i // hosts_per_leaf]] for i, h in enumerate(hosts)]
    links += [{"a": leaf[i], "b": agg[i // pod * pod + j], "count": 2} for i in range(leaves) for j in range(pod)]
    per = cores // pod
    links += [{"a": agg[i], "b": core[i % pod * per + k], "rate_MBps": 50000} for i in range(leaves)
              for k in range(per)]
    links[len(hosts)].update(rate_MBps=12500, degraded="2X, both ends 4X")
    return {"name": "fat", "nodes": hosts, "switches": leaf + agg + core, "default_rate_MBps": 25000,
            "links": links}


@pytest.mark.bounds
def test_a_fat_tree_of_10000_hosts_draws_bounded_in_cpu_time():
    data = fat_tree()
    start = time.process_time()
    f = facts.facts(data, "fat.yaml")            # read and checked by the model, as the command does
    page = "\n".join(network.section([f]))
    spent = time.process_time() - start
    assert spent < 2.5, spent                     # the bound is 5 s; it takes about a third of one
    assert len(page) < 300_000 and page.count('<g class="switch">') == 3 * network.MAX_BOXES
    assert "+235 more</text>" in page and "+85 more</text>" in page    # leaves and aggs; cores
    assert "40 hosts</text>" in page and "9,400 hosts</text>" in page   # a leaf; the leaves of the rest
    assert len(re.findall(r'<line class="cable"[^>]*stroke="#b00020"', page)) == 1
    assert check_html(page)[0] == []


def test_validation_bars_name_a_cable_as_the_model_does():
    rows = [{"from": "leaf0", "to": "spine", "label": "link trunk, cable 2 of 2", "ratio": 0.5,
             "predicted_util": 1.0}, {"from": "h0", "to": "leaf0", "label": "", "ratio": 1.0, "predicted_util": 0.9}]
    v = {"per_size": [{"size": 1 << 20}], "cables": [{"size": 1 << 20, "cables": rows}]}
    (fig,) = figures._validation_cables(v, "", "")
    assert [c for c, _ in fig.bars] == ["link trunk, cable 2 of 2 (leaf0\u2192spine)", "h0->leaf0"]


def test_report_takes_a_network_file_among_its_inputs(tmp_path, capsys):
    osu = tmp_path / "osu.txt"
    osu.write_text("# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)\n1   1.50\n2   1.60\n")
    assert main(["import", str(osu), "--from", "osu", "-o", str(tmp_path / "run.json")]) == 0
    (tmp_path / "net.json").write_text(json.dumps(fabric()))
    (tmp_path / "net.yaml").write_text(yaml.safe_dump(fabric()))
    out = tmp_path / "r.html"
    for net in ("net.json", "net.yaml"):
        assert main(["report", str(tmp_path / "run.json"), str(tmp_path / net), "-o", str(out)]) == 0
        text = out.read_text()
        assert '<h2 id="network">The network</h2>' in text and '<a href="#network">' in text
        assert 'id="fig-network"' in text and check_html(text)[0] == []
    bad = fabric()
    bad["links"].append(["h0", "nowhere"])
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run.json"), str(tmp_path / "bad.yaml"), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.yaml" in err and "nowhere" in err and len(err.splitlines()) == 1
    assert main(["report", str(tmp_path / "net.yaml"), "-o", str(out)]) == 2
    assert "beside a network file" in capsys.readouterr().err
