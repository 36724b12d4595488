"""Hostile network files and random mutations of the shipped examples.

`fabriclab model --topology-file FILE` must end every one of them with exit 0
or 2 (one line), within bounded time and memory, printing nothing that splits
a row or drives the terminal. Used by tests/unit/model/test_hostile_files.py,
tests/integration/test_fuzz_network_files.py and bench/bench_hostile_networks.py.

Each case is (file suffix, file text or bytes)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import re
import time
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "testbeds"
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
NOT_FINITE = re.compile(r"\binf\b|\bnan\b|Infinity|NaN")

# Two hosts on one switch, prices inline: every kind of field a network file has.
SMALL = {
    "name": "small", "nodes": ["h0", "h1"], "switches": ["s0"], "routing": "d-mod-k",
    "default_rate_MBps": 100, "packet": {"payload_B": 4096, "overhead_B": 64},
    "prices": {"cable": {"value": 30, "source": "quote", "date": "2024"}, "switch": "myrinet-switch16",
               "adapter": "myrinet-nic"},
    "links": [["h0", "s0"], {"a": "h1", "b": "s0", "count": 2, "rate_MBps": 50, "efficiency": 0.9,
                             "name": "up"}],
}

# Where an alias bomb goes: a path into SMALL (mapping keys and list indices).
BOMB_FIELDS = {
    "name": ("name",), "routing": ("routing",), "default_rate_MBps": ("default_rate_MBps",),
    "nodes": ("nodes",), "switches": ("switches",), "endpoint": ("links", 0, 0),
    "count": ("links", 1, "count"), "rate": ("links", 1, "rate_MBps"), "link name": ("links", 1, "name"),
    "price": ("prices", "cable", "value"), "price source": ("prices", "cable", "source"),
    "payload": ("packet", "payload_B"),
}

# Every number a network file holds, by its path in SMALL.
NUMBER_FIELDS = {
    "default_rate_MBps": ("default_rate_MBps",), "rate_MBps": ("links", 1, "rate_MBps"),
    "efficiency": ("links", 1, "efficiency"), "payload_B": ("packet", "payload_B"),
    "overhead_B": ("packet", "overhead_B"), "count": ("links", 1, "count"),
    "price": ("prices", "cable", "value"),
}

# Every name a network file holds; endpoints are set with the node they name.
NAME_FIELDS = {
    "name": ("name",), "node": ("nodes", 0), "switch": ("switches", 0), "link name": ("links", 1, "name"),
    "endpoint": ("links", 0, 0), "price item": ("prices", "switch"), "price source": ("prices", "cable", "source"),
}

FUZZ_SEED = 15                   # the fuzz test's and the bench's mutations
BAD_NUMBERS = ("1.0e+308", "1.0e-320", "-1.0", ".nan", ".inf", "-.inf", "0", "1.0e+30")
BAD_NAMES = ("a\nb", "\x1b[2J\x1b[H", "\u202eevil", "zero\u200bwidth", "nul\x00", "", "x" * 5000, "tab\there")
NOT_SCALARS = ([1, 2], {"a": 1}, [[["deep"]]], None, True)


def with_value(path: tuple, value, data: dict = SMALL) -> dict:
    """A copy of data with the value at path replaced."""
    d = copy.deepcopy(data)
    at = d
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    return d


def dump(data, kind: str = "yaml") -> str:
    return json.dumps(data) if kind == "json" else yaml.safe_dump(data, default_flow_style=None, allow_unicode=True)


def alias_bomb(path: tuple) -> str:
    """SMALL with a "billion laughs" in the field at path: nine levels of nine aliases,
    about 430 bytes that stand for 9^9 values."""
    levels = ["&a1 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(2, 10):
        levels.append(f"&a{i} [" + ", ".join([levels[-1]] + [f"*a{i - 1}"] * 8) + "]")
    marker = "BOMB_HERE"
    return dump(with_value(path, marker)).replace(marker, levels[-1], 1)


def deep_json(levels: int = 1_000_000) -> str:
    return "[" * levels + "]" * levels


def hostile_cases() -> dict:
    """name -> (suffix, text) for every hostile case."""
    cases = {f"alias bomb in {k}": (".yaml", alias_bomb(p)) for k, p in BOMB_FIELDS.items()}
    cases["anchor without alias"] = (".yaml", dump(SMALL).replace("name: small", "name: &x small"))
    cases["JSON nested 1,000,000 deep"] = (".json", deep_json())
    cases["YAML flow nested 1,000,000 deep"] = (".yaml", deep_json())
    cases["YAML block nested 100,000 deep"] = (".yaml", "- " * 100_000 + "x\n")
    cases["YAML mapping nested 40 deep in links"] = (
        ".yaml", dump(with_value(("links", 0), json.loads('{"a":' * 40 + '1' + '}' * 40))))
    for field, path in NUMBER_FIELDS.items():
        for bad in BAD_NUMBERS:
            cases[f"{field}: {bad}"] = (".yaml", dump(with_value(path, "NUMBER")).replace("NUMBER", bad))
    cases["default_rate_MBps: 1e-320 (JSON)"] = (".json", dump(SMALL, "json").replace('"default_rate_MBps": 100',
                                                                                     '"default_rate_MBps": 1e-320'))
    cases["default_rate_MBps: 1e400 (JSON)"] = (".json", dump(SMALL, "json").replace('"default_rate_MBps": 100',
                                                                                    '"default_rate_MBps": 1e400'))
    cases["count of 5,000 digits"] = (".yaml", dump(SMALL).replace("count: 2", "count: " + "9" * 5000))
    for field, path in NAME_FIELDS.items():
        for i, bad in enumerate(BAD_NAMES):
            data = with_value(path, bad)
            if field == "node":
                data = with_value(("links", 0, 0), bad, data)
            cases[f"{field} name #{i}: {bad[:12]!r}"] = (".yaml", dump(data))
    for field, path in BOMB_FIELDS.items():
        for i, bad in enumerate(NOT_SCALARS):
            cases[f"{field} is {type(bad).__name__} #{i}"] = (".yaml", dump(with_value(path, bad)))
    cases["keys of mixed types"] = (".json", json.dumps({**SMALL, "1": 2}).replace('"1": 2', '"1": 2, "2": 3'))
    cases["keys of mixed types (YAML)"] = (".yaml", dump(SMALL) + "1: 2\n2.5: 3\nnull: 4\n")
    cases["a list as a mapping key"] = (".yaml", dump(SMALL) + "? [1]\n: 3\n")
    cases["Python object tag"] = (".yaml", "name: !!python/object/apply:os.system [echo hi]\n" + dump(SMALL))
    cases["two documents"] = (".yaml", dump(SMALL) + "---\n" + dump(SMALL))
    cases["not UTF-8"] = (".yaml", dump(SMALL).replace("small", "sm\udcffall").encode("utf-8", "surrogateescape"))
    return cases


def mutations(seed: int, n: int) -> list:
    """n random mutations of the shipped examples (deterministic for a seed): a value
    replaced by a hostile one, a key or entry removed, added or duplicated, a subtree
    swapped, or the text itself cut, spliced or broken."""
    rng = random.Random(seed)
    texts = [p.read_text() for p in sorted(EXAMPLES.glob("*.yaml"))]
    out = []
    for _ in range(n):
        text = rng.choice(texts)
        if rng.random() < 0.3:
            out.append((".yaml", _mutate_text(rng, text)))
        else:
            data = _mutate_data(rng, yaml.safe_load(text))
            kind = rng.choice(("yaml", "yaml", "json"))
            out.append(("." + kind, dump(data, kind)))
    return out


_VALUES = (1.0e308, 1e-320, -1, 0, float("nan"), float("inf"), True, None, "", "x\ny", "\x1b[2J", "\u202e",
           "a" * 300, 10 ** 30, [], {}, [1, [2, [3]]], {"a": {"b": 1}}, "1e3", 2 ** 63, 0.5, 7, "h0", "s0",
           "ecmp", "half", ["h0", "h1"], {"a": "h0", "b": "s0"}, "$\\undefinedcommand$", "a$b$c")
_TOKENS = (":", "- ", "[", "]", "{", "}", "&a ", "*a", "!!str ", "!!binary ", "\t", "'", '"', "\n", "? ", "|",
           "#", "\x1b", "\u202e", "1e400", "---\n", ",", "%YAML 1.1\n", "\\", "<<: ")


def _slots(data) -> list:
    """Every (container, key) of a parsed document, depth first."""
    out, stack = [], [data]
    while stack:
        c = stack.pop()
        keys = list(c) if isinstance(c, dict) else range(len(c))
        for k in keys:
            out.append((c, k))
            if isinstance(c[k], (dict, list)):
                stack.append(c[k])
    return out


def _mutate_data(rng: random.Random, data):
    for _ in range(rng.randint(1, 3)):
        slots = _slots(data)
        if not slots:
            return rng.choice(_VALUES)
        c, k = rng.choice(slots)
        op = rng.randrange(5)
        if op == 0:
            c[k] = copy.deepcopy(rng.choice(_VALUES))
        elif op == 1:
            del c[k]
        elif op == 2 and isinstance(c, dict):
            c[rng.choice(("colour", "count", "rate_MBps", 1, "duplex", "transit_nodes"))] = rng.choice(_VALUES)
        elif op == 2:
            c.insert(k, copy.deepcopy(c[k]))
        elif op == 3:                                   # two scalars change places
            leaves = [(c2, k2) for c2, k2 in slots if not isinstance(c2[k2], (dict, list))]
            (c1, k1), (c2, k2) = rng.choice(leaves), rng.choice(leaves)
            c1[k1], c2[k2] = c2[k2], c1[k1]
        elif rng.random() < 0.25:                      # one object thrice: YAML writes anchors and aliases
            c[k] = [copy.deepcopy(c[k])] * rng.randint(2, 4)
        else:
            c[k] = [copy.deepcopy(c[k]) for _ in range(rng.randint(2, 4))]
    return data


def _mutate_text(rng: random.Random, text: str) -> str:
    i = rng.randrange(len(text))
    op = rng.randrange(4)
    if op == 0:
        return text[:i] + text[i + rng.randint(1, 20):]
    if op == 1:
        return text[:i] + rng.choice(_TOKENS) + text[i:]
    if op == 2:
        return text[:i]
    lines = text.splitlines(keepends=True)
    j = rng.randrange(len(lines))
    return "".join(lines[:j] + [lines[j]] * rng.randint(2, 5) + lines[j:])


# ---------------------------------------------------------------- running them
def write(path: Path, text) -> Path:
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def problem(rc: int, out: str, err: str) -> str:
    """What is wrong with how a run ended, or '': exit 0 or 2, one error line, nothing
    printed that drives the terminal or splits a line, no inf or NaN in the results."""
    if rc not in (0, 2):
        return f"exit {rc}"
    if CONTROL.search(out) or CONTROL.search(err) or NOT_FINITE.search(out):
        return f"a control character, inf or NaN printed: {(out + err)[:200]!r}"
    if rc == 2 and (err.count("\n") != 1 or not err.startswith("fabriclab: error: ")):
        return f"not one error line: {err[:200]!r}"
    return ""


def _mib(field: str) -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1)) / 1024


def answer_in_process(path: Path, plots: Path | None = None) -> tuple:
    """`fabriclab model --topology-file path` through main() in this process, its plot in
    `plots` or none (--no-plot): (exit code, stdout, stderr, CPU seconds, peak MiB above the
    resident set before). The peak is VmHWM after resetting it to VmRSS
    (/proc/self/clear_refs, 5; Linux 4.0)."""
    from fabriclab.cli.main import main
    Path("/proc/self/clear_refs").write_text("5")
    before = _mib("VmRSS")
    out, err = io.StringIO(), io.StringIO()
    t0 = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["model", "--topology-file", str(path), *(["--output", str(plots)] if plots else ["--no-plot"])])
    cpu = time.process_time() - t0
    return rc, out.getvalue(), err.getvalue(), cpu, _mib("VmHWM") - before


def run_in_process(path: Path, plots: Path | None = None) -> tuple:
    """answer_in_process, judged: (exit code, problem or '', CPU seconds, peak MiB)."""
    rc, out, err, cpu, mib = answer_in_process(path, plots)
    return rc, problem(rc, out, err), cpu, mib
