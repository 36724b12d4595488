"""`topology show`'s summary and `topology diff`'s changes, as pure functions on
network-file content."""

import copy

import pytest

from fabriclab.errors import UsageError
from fabriclab.topology import show
from fabriclab.topology.cables import label
from fabriclab.topology.diff import changes


def fabric() -> dict:
    """Two leaves of two hosts under one spine: leaf0 by two cables with ports (one of
    them degraded), leaf1 by one link of count 2; a spare switch cabled to nothing."""
    return {
        "name": "site", "nodes": ["h0", "h1", "h2", "h3"], "switches": ["leaf0", "leaf1", "spine", "spare"],
        "default_rate_MBps": 25000,
        "source": {"format": "ibnetdiscover", "read": "fabric.txt", "given": {"hosts": "map.yaml"}},
        "links": [
            {"a": "h0", "b": "leaf0", "ports": [1, 1]}, {"a": "h1", "b": "leaf0", "ports": [1, 2]},
            ["h2", "leaf1"], ["h3", "leaf1"],
            {"a": "leaf0", "b": "spine", "ports": [17, 3], "name": "leaf0 [17] -- spine [3]"},
            {"a": "leaf0", "b": "spine", "ports": [18, 4], "rate_MBps": 12500, "name": "leaf0 [18] -- spine [4]",
             "degraded": "4X EDR, both ends 4X HDR"},
            {"a": "leaf1", "b": "spine", "count": 2, "name": "trunk1"},
        ]}


def rows(lines: list) -> dict:
    """Heading -> its lines' texts (continuation lines under the last heading)."""
    out, head = {}, None
    for ln in lines:
        h, text = ln[:10].strip(), ln[10:]
        head = h or head
        out.setdefault(head, []).append(text)
    return out


def test_summary_lists_every_section():
    lines = show.summary(fabric(), "site.yaml")
    assert all(ln[8:10] == "  " and ln[10] != " " for ln in lines)      # one aligned column after the headings
    r = rows(lines)
    assert r["network"] == ["site (site.yaml)"]
    assert r["source"] == ["ibnetdiscover, read from fabric.txt; given: hosts=map.yaml"]
    assert r["hosts"] == ["4"] and r["switches"] == ["4"]
    assert r["cables"] == ["8 (4 to hosts, 4 between switches)"]
    assert r["by rate"] == ["25000 MB/s (200 Gb/s)  7", "12500 MB/s (100 Gb/s)  1"]
    assert r["levels"] == ["1:               2 switches  leaf0, leaf1", "2:               1 switch    spine",
                           "no host reached: 1 switch    spare"]
    assert r["parallel"][0] == "2 pairs of switches with more than one cable: 2 pairs of 2"
    assert sorted(r["parallel"][1:]) == ["leaf0 -- spine  2 cables", "leaf1 -- spine  2 cables"]
    assert r["degraded"] == ["1 cable below what both ends support",
                             "leaf0 [18] -- spine [4]  12500 MB/s (100 Gb/s): 4X EDR, both ends 4X HDR"]


def test_summary_of_a_file_written_by_hand():
    d = fabric()
    del d["source"]
    for ln in d["links"]:
        if isinstance(ln, dict):
            ln.pop("degraded", None)
    r = rows(show.summary(d, "x.yaml"))
    assert r["source"] == ["not recorded (a file written by hand)"]
    assert r["degraded"] == ["none flagged"]


def test_long_sections_are_cut_and_counted():
    n = show.LISTED + 5
    d = {"nodes": ["h0", "h1"], "switches": [f"s{i}" for i in range(n + 1)], "default_rate_MBps": 1,
         "links": [["h0", "s0"], ["h1", "s0"]] + [{"a": "s0", "b": f"s{i}", "count": 2} for i in range(1, n + 1)]}
    r = rows(show.summary(d, "x.yaml"))
    assert r["parallel"][0].startswith(f"{n} pairs of switches") and r["parallel"][-1] == "and 5 more pairs"
    assert len(r["parallel"]) == 1 + show.LISTED + 1
    assert r["levels"][1].endswith("s1, s2, s3, s4, s5, s6 and 19 more")


def test_levels_by_distance_from_hosts():
    d = {"nodes": ["a", "b"], "switches": ["l", "m", "top"], "default_rate_MBps": 1,
         "links": [["a", "l"], ["b", "l"], ["l", "m"], ["m", "top"], ["top", "l"]]}
    assert show.levels(show.read(d, "x")) == {"l": 1, "m": 2, "top": 2}


def test_label_names_ports_and_a_name_of_its_own():
    c = {"ends": ("leaf0", "spine"), "ports": (17, None), "name": "uplink A"}
    assert label(c) == "leaf0 [17] -- spine (uplink A)"
    assert label({"ends": ("a", "b"), "ports": None, "name": "a-b"}) == "a -- b"


def test_diff_of_the_same_is_empty_whatever_the_order():
    d = fabric()
    e = copy.deepcopy(d)
    e["links"].reverse()
    ln = e["links"][2]                                    # leaf0 [17] -- spine [3], ends swapped
    ln["a"], ln["b"], ln["ports"] = ln["b"], ln["a"], ln["ports"][::-1]
    assert changes(d, d) == [] and changes(d, e) == []


def test_diff_names_each_change_on_one_line():
    old, new = fabric(), fabric()
    new["nodes"] = ["h0", "h1", "h2", "h9"]
    new["switches"] = ["leaf0", "leaf1", "spine"]
    new["links"][3] = ["h9", "leaf1"]
    new["links"][1]["ports"] = [1, 5]                      # moved to another port: removed and added
    del new["links"][5]["degraded"]
    new["links"][5]["rate_MBps"] = 25000                   # the degraded cable mended
    new["links"][6]["count"] = 1                           # one of trunk1's two cables gone
    new["links"].append({"a": "leaf1", "b": "spine", "rate_MBps": 100})
    out = changes(old, new, "old.yaml", "new.yaml")
    assert out == [
        "- host h3", "+ host h9", "- switch spare",
        "- cable h1 [1] -- leaf0 [2]  25000 MB/s (200 Gb/s)",
        "- cable h3 -- leaf1  25000 MB/s (200 Gb/s)",
        "- cable leaf1 -- spine (trunk1)  25000 MB/s (200 Gb/s)",
        "+ cable h1 [1] -- leaf0 [5]  25000 MB/s (200 Gb/s)",
        "+ cable h9 -- leaf1  25000 MB/s (200 Gb/s)",
        "+ cable leaf1 -- spine  100 MB/s (0.8 Gb/s)",
        "~ cable leaf0 [18] -- spine [4]  rate 12500 MB/s (100 Gb/s) -> 25000 MB/s (200 Gb/s)",
        "~ cable leaf0 [18] -- spine [4]  no longer degraded (was: 4X EDR, both ends 4X HDR)",
    ]
    back = changes(new, old)
    assert "~ cable leaf0 [18] -- spine [4]  degraded: 4X EDR, both ends 4X HDR" in back
    assert len(back) == len(out)


def test_separate_links_and_count_compare_equal_without_ports():
    old, new = fabric(), fabric()
    new["links"][6:7] = [{"a": "spine", "b": "leaf1", "name": "trunk1"}, {"a": "leaf1", "b": "spine", "name": "trunk1"}]
    assert changes(old, new) == []


def test_a_bad_file_is_one_line_naming_it():
    bad = fabric()
    bad["links"][0]["ports"] = [1, 0]
    with pytest.raises(UsageError, match=r"^new.yaml: links\[0\]: ports\[1\] must be a port number"):
        changes(fabric(), bad, "old.yaml", "new.yaml")
    with pytest.raises(UsageError, match=r"^x.yaml: the top level must be a mapping"):
        show.summary(["not", "a", "network"], "x.yaml")
