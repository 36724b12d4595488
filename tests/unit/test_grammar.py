"""One grammar for every value a user types: Python puts sizes, strides,
counts and parameters in canonical form before it builds the core's argv, and
refuses what it cannot, before anything is built or launched. The fake core
refuses what the real core refuses (anything but plain decimal integers and
the parameter rules' values) and records what it received in its hello."""
import contextlib
import io
import json
import re

import pytest

import docs  # noqa: E402  (tests/support)
from fabriclab import schema
from fabriclab.cli import main
from fabriclab.errors import UsageError
from fabriclab.measure import build as core_build
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.facts import Param, choice, integer, text
from fabriclab.measure.plan import Sampling, build
from fabriclab.measure.protocol import job_argv


def _run(fake, tmp_path, *argv):
    out = tmp_path / "r.json"
    rc = main(["run", "--core", fake["core"], "--mpiexec", fake["mpiexec"], "-o", str(out), "-q", "-L", "1",
               *argv])
    return rc, (docs.read(out) if out.exists() else None)


def _hellos(doc) -> dict:
    """The options each launch's core received, by benchmark."""
    return {r["hello"]["bench"]: r["hello"]["options"] for r in doc["records"] if r["kind"] == "launch"}


# ---- each kind of value, through the CLI and the fake core

def test_suffixed_parameter_reaches_the_core_as_a_decimal_integer(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "message.stream", "-s", "8", "-p", "window=1KiB")
    assert rc == 0
    assert _hellos(doc)["message.stream"]["params"]["window"] == "1024"
    (p,) = docs.points(doc)
    assert p["params"]["window"] == "1024" and p["variant"] == "window=1024"


def test_sizes_with_every_spelling_of_a_suffix(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "message.pingpong", "-s", "1k,1KiB,2K,1M,0:8:x4")
    assert rc == 0
    assert _hellos(doc)["message.pingpong"]["sizes"] == [0, 1, 4, 1024, 2048, 1 << 20]


def test_strides_and_connection_counts_with_suffixes(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "memory.strided_load", "message.conns", "-s", "64K",
                   "--strides", "1,1K", "--conns", "1,1K")
    assert rc == 0
    hello = _hellos(doc)
    assert hello["memory.strided_load"]["strides"] == [1, 1024]
    assert hello["message.conns"]["conns"] == [1, 1024]


def test_active_counts(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "message.hotspot", "-n", "4", "-s", "8", "--active", "1,3")
    assert rc == 0
    assert sorted(p["active"] for p in docs.points(doc)) == [1, 3]


def test_choice_text_and_size_parameters(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "tcp.stream", "-s", "64", "-p", "iface=lo", "-p", "burst=1M",
                   "-p", "sndbuf=256KiB", "-p", "nodelay=0")
    assert rc == 0
    params = _hellos(doc)["tcp.stream"]["params"]
    assert params["iface"] == "lo" and params["burst"] == "1048576" and params["sndbuf"] == "262144"
    assert params["nodelay"] == "0"
    rc, doc = _run(fake_core, tmp_path, "message.pingpong", "-s", "8", "-p", "completion=test")
    assert rc == 0 and _hellos(doc)["message.pingpong"]["params"]["completion"] == "test"


def test_spellings_of_one_value_are_one_variant(fake_core, tmp_path):
    rc, doc = _run(fake_core, tmp_path, "message.stream", "-s", "8", "-p", "window=1K,1024,1KiB,64")
    assert rc == 0
    assert sorted(p["variant"] for p in docs.points(doc)) == ["", "window=1024"]


# ---- refused before anything is built or launched

@pytest.fixture
def nothing_built_or_launched(tmp_path, monkeypatch):
    """A launcher that leaves a mark, and a core build that must not happen."""
    mark = tmp_path / "launched"
    launcher = tmp_path / "mpiexec"
    launcher.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    launcher.chmod(0o755)

    def no_build(*a, **k):
        raise AssertionError("the core was built for input that should have been refused")
    monkeypatch.setattr(core_build, "ensure_core", no_build)
    yield str(launcher)
    assert not mark.exists(), "a launch happened for input that should have been refused"


@pytest.mark.parametrize("argv,msg", [
    (["message.stream", "-p", "window=1KB"], "window takes an integer 1..1048576, not '1KB': suffixes are binary"),
    (["message.stream", "-p", "window=2M"], "window must be 1..1048576, not 2M (= 2097152)"),
    (["message.stream", "-p", "window=0"], "window must be 1..1048576"),
    (["message.stream", "-p", "window=1.5K"], "takes an integer"),
    (["message.stream", "-p", "completion=TEST"], "completion must be one of wait, test"),
    (["tcp.stream", "-p", "nodelay=2"], "nodelay must be 0..1"),
    (["tcp.stream", "-p", "sndbuf=4G"], "sndbuf must be 0..2147483647"),
    (["message.bisection", "-n", "4", "-p", "seed=-1"], "seed takes an integer"),
    (["message.pingpong", "-s", "4KB"], "ambiguous size '4KB'"),
    (["message.pingpong", "-s", "64B"], "bytes are a plain integer"),
    (["message.pingpong", "-s", "4 K"], "malformed size"),
    (["message.pingpong", "-s", "9999999T"], "too large"),
    (["memory.strided_load", "--strides", "1,2kb"], "ambiguous stride"),
    (["message.conns", "--conns", "1KB"], "ambiguous connection count"),
    (["message.hotspot", "-n", "4", "--active", "1MB"], "ambiguous active count"),
    (["message.alltoall", "-n", "4", "-p", "window=4"],
     "message.alltoall: parameter window=4 applies only with variant=concurrent, not variant=collective"),
    (["message.alltoall", "-n", "4", "-p", "window=4", "-p", "variant=concurrent,pairwise"],
     "window=4 applies only with variant=concurrent, not variant=pairwise"),
    (["app.transpose", "-n", "4", "-p", "sync=none"],
     "app.transpose: parameter sync=none applies only with exchange=pairwise, not exchange=collective"),
    (["app.sort", "-n", "4", "-p", "exchange=pairwise", "-p", "sync=later"], "sync must be one of barrier, none"),
    (["message.alltoall", "-n", "4", "-p", "window=8K", "-p", "variant=concurrent"], "window must be 1..4096"),
])
def test_refused_before_build_or_launch(argv, msg, nothing_built_or_launched, tmp_path, capsys):
    rc = main(["run", *argv, "--mpiexec", nothing_built_or_launched, "-o", str(tmp_path / "r.json"), "-q"])
    assert rc == 2
    err = capsys.readouterr().err
    assert msg in err and err.startswith("fabriclab: error:") and err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()


# ---- the plan and the core's argv

def test_core_argv_holds_only_decimal_integers_and_listed_choices():
    plan = build(["deposit.put_bw", "tcp.scatter"], "1K,8", None, ["window=2K", "sync=fence", "segments=1K",
                                                                   "rcvbuf=1M"], Sampling(), False)
    put, scatter = plan.jobs
    argv = job_argv("core", put, plan.sampling, False)
    assert argv[argv.index("--sizes") + 1] == "8,1024"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--param"] == ["window=2048", "sync=fence"]
    assert scatter.params == {"segments": "1024", "rcvbuf": "1048576"}
    with pytest.raises(UsageError, match="segments must be 1..1024"):
        build(["tcp.scatter"], "8", None, ["segments=0"], Sampling(), False)


def test_every_default_is_in_canonical_form():
    for b in REGISTRY.values():
        for key, value in b.defaults.items():
            assert b.canonical(key, value) == value, (b.name, key)
    assert REGISTRY["tcp.stream"].defaults["burst"] == str(32 << 20)
    assert str(REGISTRY["tcp.stream"].params["burst"]) == "32M"  # `fabriclab list` shows it as written


@pytest.mark.parametrize("param,value,want", [
    (integer(64, 1, 1 << 20), "1KiB", "1024"), (integer(64, 1, 1 << 20), "0064", "64"),
    (integer(0, 0, 10), "1k", None), (choice("a", "b"), "b", "b"), (choice("a", "b"), "A", None),
    (text(), "eth0", "eth0"),
])
def test_param_canonical_forms(param: Param, value, want):
    if want is None:
        with pytest.raises(UsageError):
            param.canonical(value, "p")
    else:
        assert param.canonical(value, "p") == want


def _generated_rules(header: str) -> dict:
    """{array name: {key: {field: value}}} read back from fl_facts.h's parameter rule arrays."""
    out = {}
    for name, body in re.findall(r"fl_param_rule (fl_params_\w+)\[\] = \{(.*?)\n\};", header, re.S):
        rules = {}
        for entry in re.findall(r"\{(\.key = \".*?)\},", body):
            fields = dict(re.findall(r'\.(\w+) = ("[^"]*"|INT64_C\(-?\d+\)|\d+)', entry))
            key = json.loads(fields.pop("key"))
            rules[key] = {k: json.loads(v) if v.startswith('"') else int(re.sub(r"INT64_C\((.*)\)", r"\1", v))
                          for k, v in fields.items()}
        out[name] = rules
    return out


def test_generated_rules_match_the_registry():
    """fl_facts.h carries every parameter's rule, read back from the C text: choices, or an integer range."""
    rules = _generated_rules(core_build.facts_header())
    for b in REGISTRY.values():
        got = rules[f"fl_params_{b.name.replace('.', '_')}"]
        assert set(got) == set(b.params), b.name
        for key, p in b.params.items():
            r = got[key]
            assert r.pop("dflt") == p.core_default, (b.name, key)
            only = {"only_key": p.only[0], "only_value": p.only[1]} if p.only else {}
            assert {k: r.pop(k) for k in list(r) if k.startswith("only_")} == only, (b.name, key)
            if p.choices:
                assert r == {"choices": "|".join(p.choices)}, (b.name, key)
            elif p.integer:
                assert r == {"integer": 1, "lo": p.lo, "hi": p.hi}, (b.name, key)
            else:
                assert r == {}, (b.name, key)
    assert "burst=33554432" in REGISTRY["tcp.stream"].params_spec  # the core's listing: canonical
    assert '.only_key = "variant", .only_value = "concurrent"' in core_build.facts_header()  # alltoall's window


def test_every_condition_names_a_choice_of_the_same_benchmark():
    """A parameter's `only` is (another parameter of its benchmark, one of that one's choices)."""
    conditions = [(b, p.only) for b in REGISTRY.values() for p in b.params.values() if p.only]
    assert conditions and all(key in b.params and value in b.params[key].choices for b, (key, value) in conditions)


def test_fake_core_refuses_what_the_real_core_refuses():
    # The fake core's program (its main: what it prints and returns) in this
    # process: an interpreter per refusal would cost more than the refusals.
    import fakecore   # tests/fakes, on the path from fakebuild
    for bench, extra in [("message.stream", x) for x in (
            ["--param", "window=1K"], ["--sizes", "1K"], ["--param", "window=0"], ["--param", "x=1"],
            ["--param", "completion=maybe"])] + [("message.alltoall", ["--param", "window=2"])]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = fakecore.main([bench, "--sizes", "8", *extra])
        assert rc == 2 and json.loads(out.getvalue())["type"] == "error", (extra, out.getvalue())
