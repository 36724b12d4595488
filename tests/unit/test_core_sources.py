"""The core's sources against their map (csrc/README.md) and the registry:
every benchmark's kernel is where the map says, with the functions it names,
and every kernel file follows the one style (no kind codes, no macros that
build kernel tables)."""
import re
from pathlib import Path

import pytest

from fabriclab.suite.benchmarks import REGISTRY

CSRC = Path(__file__).resolve().parents[2] / "csrc"
FAMILIES = CSRC / "families"
ENTRY = re.compile(r'\{\.name = "([a-z0-9_.]+)",(.*?)\}', re.S)


def _map() -> list[tuple[str, str, list[str]]]:
    rows = []
    for line in (CSRC / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and "." in cells[0]:
            rows.append((cells[0].strip("`"), cells[1].strip("`"), re.findall(r"`(\w+)`", cells[2])))
    return rows


def _entries() -> dict[str, tuple[str, dict]]:
    out = {}
    for f in sorted(FAMILIES.glob("*.c")):
        for m in ENTRY.finditer(f.read_text()):
            assert m.group(1) not in out, f"{m.group(1)} has two kernels"
            out[m.group(1)] = (f.name, dict(re.findall(r"\.(\w+) = (\w+)", m.group(2))))
    return out


def test_the_map_lists_every_benchmark_once_in_registry_order():
    assert [name for name, _, _ in _map()] == list(REGISTRY)


@pytest.mark.parametrize("name,file,functions", _map())
def test_each_benchmark_is_where_the_map_says(name, file, functions):
    where, fields = _entries()[name]
    assert where == file
    assert functions == [fields[k] for k in ("init", "setup", "measure", "verify") if k in fields]
    assert fields.get("teardown"), f"{name} has no teardown"


def test_every_kernel_table_is_registered():
    registry, header = (CSRC / "registry.c").read_text(), (CSRC / "fl.h").read_text()
    for f in FAMILIES.glob("*.c"):
        for table in re.findall(r"const fl_kernel (fl_\w+_kernels)\[\]", f.read_text()):
            assert f"    {table}," in registry and f"extern const fl_kernel {table}[];" in header, table


@pytest.mark.parametrize("path", sorted(p.name for p in FAMILIES.iterdir() if p.suffix in (".c", ".h")))
def test_one_kernel_style(path):
    text = (FAMILIES / path).read_text()
    assert not re.search(r"\bkind\b", text), "a kind code: give the benchmark its own function or a named field"
    for macro in re.findall(r"#define \w+\(.*?\)(?:.*\\\n)*.*", text):
        assert "{.name" not in macro and "static" not in macro, f"a macro builds kernels: {macro[:60]}"


# ---- the include graph: the plumbing below, the kernels above --------------------------------
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _includes() -> dict[Path, set[Path]]:
    """Every source of csrc/ and the sources of csrc/ it includes ("..." includes,
    found beside the file, then in csrc/ as the build's -I finds them)."""
    out = {}
    for f in sorted(CSRC.rglob("*.[ch]")):
        found = set()
        for name in INCLUDE.findall(f.read_text()):
            target = next((p.resolve() for p in (f.parent / name, CSRC / name) if p.is_file()), None)
            if target is not None:        # fl_facts.h is generated at build time
                found.add(target)
        out[f.resolve()] = found
    return out


def _kernel_files() -> set[Path]:
    """The files of families/ that hold a table of kernels."""
    return {f.resolve() for f in FAMILIES.glob("*.c") if re.search(r"const fl_kernel fl_\w+_kernels\[\]", f.read_text())}


def _below_the_kernels(graph: dict[Path, set[Path]]) -> set[Path]:
    """The plumbing files (LEVEL_plumbing.c, LEVEL_plumbing.h) and every header they
    include, directly or through another."""
    todo = [f for f in graph if f.stem.endswith("_plumbing")]
    seen = set(todo)
    while todo:
        for g in graph[todo.pop()]:
            if g not in seen:
                seen.add(g)
                todo.append(g)
    return seen


def test_the_plumbing_includes_no_kernel_file_s_header():
    """A level's plumbing knows nothing of the kernels above it: neither a plumbing
    file nor a header it includes includes the header of a file with kernels."""
    graph, kernels = _includes(), _kernel_files()
    kernel_headers = {k.with_suffix(".h") for k in kernels}
    below = _below_the_kernels(graph)
    assert {f.stem for f in below if f.suffix == ".c"} >= {"fabric_plumbing", "ucx_plumbing", "tcp_plumbing"}
    bad = [f"{f.name} includes {g.name}" for f in sorted(below) for g in sorted(graph[f])
           if g in kernel_headers or g in kernels]
    assert not bad, bad


def test_shared_headers_include_no_kernel_file_s_header():
    """A header that no file of kernels owns (pair.h, via.h, congestion.h, the
    plumbing's) is shared below the kernels and includes none of theirs."""
    graph, kernels = _includes(), _kernel_files()
    kernel_headers = {k.with_suffix(".h") for k in kernels}
    shared = [f for f in graph if f.suffix == ".h" and f.parent == FAMILIES.resolve() and f not in kernel_headers]
    bad = [f"{f.name} includes {g.name}" for f in sorted(shared) for g in sorted(graph[f]) if g in kernel_headers]
    assert not bad, bad


def test_the_include_graph_has_no_cycle():
    """No file reaches itself through what it includes, a .c file and its own .h
    (same name) counting as one node: a header whose file includes a header
    that leads back to it makes a cycle too."""
    graph = _includes()
    node = {f: f.with_suffix("") for f in graph}
    edges: dict[Path, set[Path]] = {}
    for f, deps in graph.items():
        edges.setdefault(node[f], set()).update(node[g] for g in deps if node[g] != node[f])
    cycles, done, stack = [], set(), []

    def visit(n):
        if n in stack:
            cycles.append([p.name for p in stack[stack.index(n):] + [n]])
        elif n not in done:
            stack.append(n)
            for m in sorted(edges.get(n, ())):
                visit(m)
            stack.pop()
            done.add(n)

    for n in sorted(edges):
        visit(n)
    assert not cycles, cycles
