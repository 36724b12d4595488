"""Hostile network files, one kind at a time: each is refused with one line that
names the field and shows the value escaped and short (exit 2), before anything
is built from it; what is accepted prints no control character, inf or 0.0.
The cases live in tests/support/hostile_networks.py, shared with
bench/bench_hostile_networks.py.

Every case of hostile_cases() runs once (`hostile`), in this process as the
command line calls main(), with its CPU time and peak memory: the tests of
each kind read its answer, and the fuzz test below holds every one of them,
and random mutations of the shipped examples, to the bounds. A fresh
`fabriclab` process adds its interpreter and libraries, about 40 MiB, so
in-process cases are held to 160 MiB above what was resident before them; a
handful run as whole processes in tests/integration/test_fuzz_network_files.py."""
import json
import os
import re

import numpy as np
import pytest
import yaml

import hostile_networks as hn
from oneparser import one_parser  # noqa: E402  (tests/support)
from fabriclab.cli.main import main
from fabriclab.cli.model import _fmt
from fabriclab.cli.model_common import table as _table
from fabriclab.errors import UsageError
from fabriclab import datafile
from fabriclab.datafile import MAX_DEPTH
from fabriclab.model import switchroutes
from fabriclab.model.topologies import CustomNetwork

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


MUTATIONS = 120
DRAW_EVERY = 8
CPU_S, IN_PROCESS_MIB = 2.0, 160


@pytest.fixture(scope="module")
def cases():
    """name -> (suffix, text) of every hostile case."""
    return hn.hostile_cases()


@pytest.fixture(scope="module")
def hostile(cases, tmp_path_factory):
    """name -> (exit code, stdout, stderr, CPU seconds, peak MiB) of every hostile case."""
    folder = tmp_path_factory.mktemp("hostile")
    with one_parser():
        return {name: hn.answer_in_process(hn.write(folder / f"case{i}{suffix}", text))
                for i, (name, (suffix, text)) in enumerate(cases.items())}


def _answer(hostile, name: str) -> tuple:
    """(rc, stdout, stderr) of a hostile case, checked as `model` checks its runs."""
    rc, out, err, _, _ = hostile[name]
    assert not CONTROL.search(out) and not CONTROL.search(err)
    if rc == 2:
        assert err.startswith("fabriclab: error: ") and err.count("\n") == 1 and not out
    return rc, out, err


@pytest.fixture
def model(tmp_path, capsys):
    """Run `fabriclab model --topology-file FILE --no-plot` on a file's text: (rc, stdout, stderr)."""
    def run(text, suffix=".yaml", *extra, name="net"):
        f = tmp_path / f"{name}{suffix}"
        f.write_bytes(text if isinstance(text, bytes) else text.encode())
        rc = main(["model", "--topology-file", str(f), "--no-plot", *extra])
        out, err = capsys.readouterr()
        assert not CONTROL.search(out) and not CONTROL.search(err)
        if rc == 2:
            assert err.startswith("fabriclab: error: ") and err.count("\n") == 1 and not out
        return rc, out, err
    return run


def _read(tmp_path, text: str, suffix: str = ".yaml"):
    f = tmp_path / f"data{suffix}"
    f.write_text(text)
    return datafile.read_data_file(f, "network file")


# ---------------------------------------------------------------- aliases
@pytest.mark.parametrize("field", hn.BOMB_FIELDS)
def test_an_alias_bomb_in_any_field_is_refused_at_its_first_anchor(cases, hostile, field):
    text = hn.alias_bomb(hn.BOMB_FIELDS[field])
    bomb = text[text.index("&a9"):text.index("*a8]") + 4]
    assert 400 <= len(bomb) <= 450                     # 9^9 values in about 430 bytes
    assert cases[f"alias bomb in {field}"] == (".yaml", text)
    rc, _, err = _answer(hostile, f"alias bomb in {field}")
    assert rc == 2 and "YAML anchors and aliases (&a9, *a9) are not accepted" in err


@pytest.mark.parametrize("text", ["- &x 1\n- *x\n", "a: &x {b: 1}\n", "[&y 1]"])
def test_anchors_are_refused_even_where_harmless(tmp_path, text):
    with pytest.raises(UsageError, match="line 1: YAML anchors and aliases"):
        _read(tmp_path, text)


# ---------------------------------------------------------------- nesting and size
def test_json_nested_a_million_levels_is_one_line(hostile):
    rc, _, err = _answer(hostile, "JSON nested 1,000,000 deep")
    assert rc == 2 and f"nested more than {MAX_DEPTH} levels deep" in err and "Recursion" not in err


@pytest.mark.parametrize("case,msg", [("YAML flow nested 1,000,000 deep", "exceeded maximum nesting depth"),
                                      ("YAML block nested 100,000 deep", f"nested more than {MAX_DEPTH} levels deep")])
def test_yaml_nested_deep_is_one_line(hostile, case, msg):
    rc, _, err = _answer(hostile, case)
    assert rc == 2 and msg in err


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_the_depth_limit_is_the_same_for_json_and_yaml(tmp_path, suffix):
    assert _read(tmp_path, "[" * MAX_DEPTH + "]" * MAX_DEPTH, suffix) is not None
    with pytest.raises(UsageError, match="nested more than"):
        _read(tmp_path, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), suffix)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_more_values_than_the_limit_are_refused(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr(datafile, "MAX_VALUES", 100)
    assert len(_read(tmp_path, json.dumps(list(range(99))), suffix)) == 99
    with pytest.raises(UsageError, match="more than 100 values"):
        _read(tmp_path, json.dumps({"a": list(range(99))}), suffix)


def test_a_file_beyond_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(datafile, "MAX_FILE_BYTES", 1 << 20)
    f = tmp_path / "big.yaml"
    with open(f, "wb") as out:
        out.truncate((1 << 20) + 1)                    # sparse: nothing to read, only its size
    with pytest.raises(UsageError, match="larger than 1 MiB"):
        datafile.read_data_file(f, "network file")


def test_what_is_no_regular_file_is_refused_unread(tmp_path):
    """A device has no size and never ends, a pipe waits for a writer that never comes."""
    fifo = tmp_path / "net.yaml"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a device"), (fifo, "a pipe"), (tmp_path, "a directory")):
        with pytest.raises(UsageError, match=f"network file {path}: it is {kind}, not a file"):
            datafile.read_data_file(path, "network file")


def test_yaml_is_read_as_the_safe_loader_reads_it(tmp_path):
    files = sorted(hn.EXAMPLES.glob("*.yaml")) + sorted((datafile.Path(datafile.__file__).parent / "model" / "data").glob("*"))
    for f in files:
        assert datafile.read_data_file(f, "x") == yaml.safe_load(f.read_text()), f
    text = ("a: [1, 0x1f, 1_000, 1:20, .inf, 1.0e-3, ~, yes, 'q', \"x\\ty\", 2024-01-02, !!str 5, !!binary aGk=]\n"
            "b: {c: {d: []}, e: {}}\n? f\n")
    assert _read(tmp_path, text) == yaml.safe_load(text)


@pytest.mark.parametrize("text,msg", [
    ("a: !!python/object/apply:os.system [true]", "YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
    ("a: !!set {1, 2}", "YAML tag 'tag:yaml.org,2002:set'"),
    ("a: !custom 1", "YAML tag '!custom'"),
    ("<<: {a: 1}", "YAML tag 'tag:yaml.org,2002:merge'"),
    ("a: 1\n---\nb: 2", "line 2: more than one YAML document"),
    ("? [1, 2]\n: 3", "a mapping key must be a scalar, got a list of 2 entries"),
    ("a: " + "9" * 5000, "an integer of more than 4,300 digits"),
    ("default_rate_MBps: 10\nnodes: 2\ndefault_rate_MBps: 20", "line 3: the key 'default_rate_MBps' appears twice"),
    ("links:\n  - {a: n0, b: s0, a: n1}", "the key 'a' appears twice in one mapping"),
])
def test_what_a_network_file_cannot_need_is_refused(tmp_path, text, msg):
    with pytest.raises(UsageError) as e:
        _read(tmp_path, text)
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_a_json_key_given_twice_is_refused(tmp_path):
    """The json module keeps the last of two; the file means one of them, so neither is taken."""
    f = tmp_path / "n.json"
    f.write_text('{"nodes": 2, "default_rate_MBps": 10, "links": [{"a": "n0", "b": "n1"}], "default_rate_MBps": 20}')
    with pytest.raises(UsageError, match="not valid JSON: the key 'default_rate_MBps' appears twice in one object"):
        datafile.read_data_file(f, "x")
    f.write_text('{"a": {"b": 1}, "c": {"b": 2}}')      # the same key in two objects is no repeat
    assert datafile.read_data_file(f, "x") == {"a": {"b": 1}, "c": {"b": 2}}


# ---------------------------------------------------------------- numbers
ZERO_ALLOWED = {"overhead_B", "price"}


@pytest.mark.parametrize("bad", hn.BAD_NUMBERS)
@pytest.mark.parametrize("field", hn.NUMBER_FIELDS)
def test_every_number_is_bounded_to_its_physical_range(hostile, field, bad):
    rc, out, err = _answer(hostile, f"{field}: {bad}")
    if field in ZERO_ALLOWED and bad in ("0", "1.0e-320"):
        assert rc == 0
        return
    assert rc == 2 and field.split("_")[0].replace("price", "value") in err
    assert "must be" in err and (field == "count" or " from " in err)


@pytest.mark.parametrize("text", ['{"nodes": 2, "default_rate_MBps": 1e-320, "links": [["n0", "n1"]]}',
                                  '{"nodes": 2, "default_rate_MBps": 1e400, "links": [["n0", "n1"]]}'])
def test_json_rates_out_of_range_are_refused(model, text):
    rc, _, err = model(text, ".json")
    assert rc == 2 and "default_rate_MBps must be" in err and "1e-06 to 1e+09 MB/s" in err


def test_the_ends_of_the_ranges_print_no_zero_and_no_infinity(model):
    data = hn.with_value(("links", 1), {"a": "h1", "b": "s0", "rate_MBps": 1e-6, "efficiency": 1e-6})
    data = hn.with_value(("default_rate_MBps",), 1e9, data)
    rc, out, _ = model(hn.dump(data), ".yaml", "--cost")
    assert rc == 0
    assert not re.search(r"\binf\b|\bnan\b|(?<![\d.])0\.0(?!\d)", out), out
    assert "1e-12" in out                              # 1 B/s × 1e-6: three significant digits, not 0.0
    rc, out, _ = model(hn.dump(data), ".yaml", "--format", "json")
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert doc["systems"][0]["points"][0]["per_node_bytes_per_s"] == pytest.approx(1e-6)


def test_figures_print_with_significant_digits_where_fixed_ones_would_read_zero():
    assert (_fmt(4e-11), _fmt(0.04), _fmt(0.05), _fmt(1234.56)) == ("4e-11", "0.04", "0.1", "1,234.6")
    assert (_fmt(2.5e21, 2), _fmt(0.0), _fmt(None), _fmt(float("inf"))) == ("2.5e+21", "0.0", "-", "inf")


@pytest.mark.parametrize("rate", ["1e308", "1e-320"])
def test_calibrated_rates_are_held_to_the_same_range(model, tmp_path, rate):
    rc, _, err = model(hn.dump(hn.SMALL), ".yaml", "-c", f"link={rate}")
    assert rc == 2 and "a measured rate must be from 1e-06 to 1e+09 MB/s" in err
    cal = tmp_path / "cal.yaml"
    cal.write_text(f"link: {float(rate)!r}\n")
    rc, _, err = model(hn.dump(hn.SMALL), ".yaml", "--calibration-file", str(cal))
    assert rc == 2 and "a measured rate must be" in err


def test_a_price_list_number_beyond_1e12_is_refused(model, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("schema: 1\nitems:\n  myrinet-nic: {value: 1.0e+308, source: q, date: '2024'}\n")
    rc, _, err = model(hn.dump(hn.SMALL), ".yaml", "--cost", "--prices", str(prices))
    assert rc == 2 and "at most 1e+12, got 1e+308" in err


@pytest.mark.parametrize("text,says", [
    ("items:\n  myrinet-nic: {value: 5.0e+11, source: q, date: '2024'}", "value must be from 0 to 1e+09 dollars"),
    ("currency: EUR\nitems:\n  myrinet-nic: {value: 5, source: q, date: '2024'}", "currency 'EUR'"),
    ("items:\n  myrinet-nicc: {value: 5, source: q, date: '2024'}", "item 'myrinet-nicc' is not one the catalog"),
])
def test_a_price_list_holds_catalog_items_in_dollars_within_a_price_s_range(model, tmp_path, text, says):
    prices = tmp_path / "prices.yaml"
    prices.write_text("schema: 1\n" + text + "\n")
    rc, _, err = model(hn.dump(hn.SMALL), ".yaml", "--cost", "--prices", str(prices))
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1, err


# ---------------------------------------------------------------- names
@pytest.mark.parametrize("bad", hn.BAD_NAMES)
@pytest.mark.parametrize("field", hn.NAME_FIELDS)
def test_names_that_do_not_print_are_refused_naming_the_field(hostile, field, bad):
    rc, _, err = _answer(hostile, f"{field} name #{hn.BAD_NAMES.index(bad)}: {bad[:12]!r}")
    assert rc == 2 and (field.replace("price ", "") + " ") in err
    assert len(err) < 300                             # a 5,000-character name is cut short
    assert "is empty or holds a character that does not print" in err or "longer than 200" in err


@pytest.mark.parametrize("name", ["$\\undefinedcommand$", "$x^{$", "cost: $5 or $6", "a\\b"])
def test_names_that_matplotlib_would_parse_are_drawn_as_they_are(tmp_path, capsys, name):
    f = tmp_path / "net.yaml"
    f.write_text(hn.dump(hn.with_value(("name",), name)))
    assert main(["model", "--topology-file", str(f), "--output", str(tmp_path / "plots")]) == 0
    out = capsys.readouterr().out
    assert f"Best per-node bandwidth: {name} best" in out and (tmp_path / "plots" / "model.png").stat().st_size > 0


def test_tables_never_split_a_row_or_emit_a_terminal_sequence():
    text = _table([["evil\nrow\x1b[2J", 1], ["ok", 2]], ["system", "N"])
    assert len(text.splitlines()) == 4 and "\x1b" not in text and "evil\\x0arow\\x1b[2J" in text


def test_a_file_name_with_control_characters_prints_escaped(model):
    rc, out, _ = model(hn.dump({k: v for k, v in hn.SMALL.items() if k != "name"}), name="evil\x1b[2J\nname")
    assert rc == 0 and "evil\\x1b[2J\\x0aname [file:" in out


def test_error_lines_are_one_line_whatever_they_quote(tmp_path, capsys):
    assert main(["model", "--topology-file", str(tmp_path / "no\nsuch\x1b[2J.yaml"), "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "no\\x0asuch\\x1b[2J.yaml" in err


# ---------------------------------------------------------------- types
# Every field with every value not of its kind, but a list of names where one belongs.
NOT_SCALAR_CASES = [(f, v) for f in hn.BOMB_FIELDS for v in hn.NOT_SCALARS
                    if not (f in ("nodes", "switches") and isinstance(v, list))]


@pytest.mark.parametrize("field,bad", NOT_SCALAR_CASES, ids=[f"{f}-{type(v).__name__}" for f, v in NOT_SCALAR_CASES])
def test_a_collection_where_a_scalar_belongs_is_named_not_printed(hostile, field, bad):
    rc, _, err = _answer(hostile, f"{field} is {type(bad).__name__} #{hn.NOT_SCALARS.index(bad)}")
    assert rc == 2 and "deep" not in err and "'a': 1" not in err


def test_keys_of_mixed_types_are_named_without_sorting_them(hostile):
    rc, _, err = _answer(hostile, "keys of mixed types (YAML)")
    assert rc == 2 and "unknown key 1 (known:" in err


# ---------------------------------------------------------------- the flow limit
def test_the_dmodk_flow_limit_says_the_limit_and_why(monkeypatch):
    monkeypatch.setattr(switchroutes, "MAX_GROUPS", 50)
    data = {"nodes": 16, "switches": 6, "default_rate_MBps": 1,
            "links": [[f"n{i}", f"s{i // 4}"] for i in range(16)] + [[f"s{l}", f"s{4 + s}"] for l in range(4)
                                                                    for s in range(2)]}
    net = CustomNetwork.from_dict(data, where="net.yaml")
    with pytest.raises(UsageError) as e:
        net.alltoall_resource_loads()
    text = str(e.value)
    assert "4 groups × 16 destinations make 64 flows, more than 50" in text
    assert "about 10 s of routing" in text and "folded-clos" in text


# ---------------------------------------------------------------- every case, in bounds
@pytest.mark.bounds
def test_mutated_examples_and_hostile_files_end_cleanly_in_bounds(hostile, tmp_path):
    """Every hostile case and random mutations of the shipped examples (a fixed seed) end with
    exit 0 or 2, never an exception, print one escaped error line or tables free of control
    characters, inf and NaN, within 2 s of CPU and 160 MiB; some of what is accepted is drawn."""
    failures, valid = [], 0
    for name, (rc, out, err, cpu, mib) in hostile.items():
        valid += rc == 0
        problem = hn.problem(rc, out, err)
        if problem or cpu > CPU_S or mib > IN_PROCESS_MIB:
            failures.append(f"hostile: {name}: {problem} {cpu:.2f} s {mib:.0f} MiB")
    with one_parser():
        for i, (suffix, text) in enumerate(hn.mutations(hn.FUZZ_SEED, MUTATIONS)):
            path = hn.write(tmp_path / f"case{i}{suffix}", text)
            rc, problem, cpu, mib = hn.run_in_process(path)
            valid += rc == 0
            if rc == 0 and valid % DRAW_EVERY == 1:     # some of what is accepted is drawn too (0.25 s each)
                rc, problem, cpu, mib = hn.run_in_process(path, tmp_path / "plots")
            if problem or cpu > CPU_S or mib > IN_PROCESS_MIB:
                failures.append(f"mutation {i}: {problem} {cpu:.2f} s {mib:.0f} MiB")
    assert not failures, "\n".join(failures)
    assert 20 <= valid <= len(hostile) + MUTATIONS - 200    # mutations reach the model, not only the reader


def test_a_deep_network_is_refused_by_its_routing_s_levels_not_only_its_visits(tmp_path):
    """A line of switches is small but every table's search is as deep as the line: 1,000 of
    them, 999 levels deep, would take minutes; refused in one line before any is built."""
    from fabriclab.model import routing
    n = 1000
    links = [[f"n{i}", f"s{i}"] for i in range(n)] + [[f"s{i}", f"s{i + 1}"] for i in range(n - 1)]
    net = CustomNetwork.from_dict({"nodes": n, "switches": n, "default_rate_MBps": 100, "links": links}, "line")
    with pytest.raises(UsageError, match=r"1,000 routing tables of 2,998 vertices and channels, 999 hops deep"):
        net.alltoall_resource_loads()
    assert routing.depth(*_line_graph(5)) == 4


def _line_graph(n: int) -> tuple:
    """(into_ptr, into_src, expand) of a line of n vertices, both ways."""
    src = np.array([i for i in range(n - 1)] + [i + 1 for i in range(n - 1)])
    dst = np.array([i + 1 for i in range(n - 1)] + [i for i in range(n - 1)])
    from fabriclab.model.routing import csr
    ptr, order = csr(dst, n)
    return ptr, src[order], np.ones(n, bool)
