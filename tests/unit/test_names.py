"""Names a user hands in (testbed names, host and switch names, link names)
match their patterns whole: a trailing newline, a NUL, spaces or a Unicode
look-alike is refused before anything is created, and nothing the plan sends
to `ip -batch` can carry a line of its own."""
import pytest
import yaml
from pathlib import Path

from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.model.topologies.custom import CustomNetwork
from fabriclab.testbed import netns, wiring as tplan

TWO = Path(__file__).resolve().parents[2] / "examples" / "testbeds" / "two-switches.yaml"

# Each is one character away from a good name: a trailing newline (`$` under re.match
# accepts it), a carriage return, NUL, tab, spaces, and look-alikes: Cyrillic а (U+0430),
# fullwidth ０ (U+FF10), superscript ² (a str.isdigit() digit), the Kelvin sign K (U+212A,
# [a-z] under re.IGNORECASE), dotless ı (U+0131), a zero-width space (U+200B).
SPOILED = ["{}\n", "{}\r", "{}\0", "{}\t", " {}", "{} ", "{} x", "{}\u0430", "{}\uff10", "{}\u00b2", "{}\u212a",
           "{}\u0131", "{}\u200b", "\n{}", "{}\n\n"]


@pytest.mark.parametrize("spoil", SPOILED)
def test_testbed_names_match_whole(spoil):
    assert tplan.check_name("probe1") == "probe1"
    with pytest.raises(UsageError, match="testbed name"):
        tplan.check_name(spoil.format("probe1"))


@pytest.mark.parametrize("spoil", SPOILED + ["{}_0", "{}.lan", "-{}"])
def test_host_names_match_whole(spoil):
    assert tplan.check_vertex("h0") == "h0"
    with pytest.raises(UsageError, match="cannot be a host name"):
        tplan.check_vertex(spoil.format("h0"), "net.yaml")


@pytest.mark.parametrize("name", [None, 7, b"probe1", "", "UPPER", "with-dash", "waytoolongname1"])
def test_testbed_names_that_are_no_names(name):
    with pytest.raises(UsageError, match="testbed name"):
        tplan.check_name(name)


def _two(**change) -> dict:
    data = yaml.safe_load(TWO.read_text())
    data.update(change)
    return data


@pytest.mark.parametrize("bad", ["h0\n", "h0\0", "h0\r", "\u200bh0", "h\u202e0", "h0\u2028", "h\u00a00", ""])
def test_model_refuses_control_characters_in_names(bad):
    """A newline or NUL in a node, switch or link name is refused when the file is read."""
    nodes = [bad] + [f"h{i}" for i in range(1, 8)]
    data = _two(nodes=nodes, links=[[bad, "s0"]] + _two()["links"][1:])
    with pytest.raises(UsageError, match="node name .* is empty or holds a character that does not print"):
        CustomNetwork.from_dict(data, where="x.yaml")
    with pytest.raises(UsageError, match="switch name"):
        CustomNetwork.from_dict(_two(switches=["s0", bad]), where="x.yaml")
    links = _two()["links"]
    links[-1]["name"] = bad
    with pytest.raises(UsageError, match=r"links\[8\]: link name"):
        CustomNetwork.from_dict(_two(links=links), where="x.yaml")


def test_model_keeps_names_the_testbed_refuses():
    """The model prints any readable name; only the testbed needs host names."""
    nodes = ["node 0", "h\u0430"] + [f"h{i}" for i in range(2, 8)]
    data = _two(nodes=nodes, links=[["node 0", "s0"], ["h\u0430", "s0"]] + _two()["links"][2:])
    net = CustomNetwork.from_dict(data, where="x.yaml")
    assert net.node_names[:2] == ["node 0", "h\u0430"]
    with pytest.raises(UsageError, match="'node 0' cannot be a host name"):
        tplan.make(net, "t", source="x.yaml")


def test_a_plan_is_checked_again_before_it_is_applied():
    """netns.up asks the plan to check itself: a plan built by hand with a bad name gets no further."""
    p = tplan.make(CustomNetwork.from_dict(_two(), where="x"), "t")
    p.check()
    p.hosts[0] = "h0\n"
    with pytest.raises(UsageError, match="cannot be a host name"):
        p.check()
    p.hosts[0], p.name = "h0", "t\n"
    with pytest.raises(UsageError, match="testbed name"):
        p.check()


@pytest.mark.parametrize("line", ["netns add fltb-t-h0\nnetns del x", "netns add a\0", "netns add 'a'",
                                  "netns add a # b", "netns add a\\", "netns add fltb-t-\u0430"])
def test_batch_input_refuses_what_a_name_could_smuggle(line, monkeypatch):
    ran = []
    monkeypatch.setattr(netns, "_run", lambda *a, **k: ran.append(a))
    with pytest.raises(UsageError, match="refusing to send"):
        netns.batch(["ip"], ["netns add fltb-t-h1", line], "netns add")
    assert ran == []                                  # nothing reached ip, not even the good line


def test_every_line_of_a_plan_passes_the_batch_check():
    """What up() sends for the examples: namespaces, cables, addresses, routes, rules, shaping."""
    for path in sorted(TWO.parent.glob("*.yaml")):
        p = tplan.make(CustomNetwork.from_dict(yaml.safe_load(path.read_text()), where=str(path)), "t")
        lines = [f"netns add {p.namespace(v)}" for v in p.hosts + p.switches] + netns.cable_lines(p)
        for v in p.hosts + p.switches:
            addresses, shaping = netns.vertex_lines(p, v)
            assert any("route add" in ln for ln in addresses) and shaping
            lines += addresses + shaping
        bad = [ln for ln in lines if not netns.BATCH_LINE.fullmatch(ln)]
        assert bad == [], path.stem


@pytest.mark.parametrize("name", ["", "probe1\n", "a b"])
def test_up_refuses_a_bad_or_empty_name_in_one_line(name, capsys, monkeypatch):
    """`--name ''` is refused, not replaced by the file's name; checked before root or the kernel."""
    monkeypatch.setattr(netns, "up", lambda *a, **k: pytest.fail("up() reached"))
    assert main(["testbed", "up", str(TWO), "--name", name]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"testbed name {name!r}" in err


@pytest.mark.parametrize("argv", [
    ["run", "--testbed", "", "message.pingpong"],
    ["run", "--testbed", "tb\n", "message.pingpong"],
    ["testbed", "validate", "examples/testbeds/ring.yaml", "--name", ""],
    ["testbed", "validate", "examples/testbeds/ring.yaml", "--name", "ring\n"],
])
def test_an_empty_or_newline_testbed_name_is_refused_everywhere(argv, capsys):
    from fabriclab.cli import main
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "testbed name" in err and len(err.strip().splitlines()) == 1
