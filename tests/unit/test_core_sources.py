"""The core's sources against their map (csrc/README.md) and the registry:
every benchmark's kernel is where the map says, with the functions it names,
and every kernel file follows the one style (no kind codes, no macros that
build kernel tables)."""
import re
from pathlib import Path

import pytest

from fabriclab.measure.benchmarks import REGISTRY

CSRC = Path(__file__).resolve().parents[2] / "csrc"
FAMILIES = CSRC / "families"
ENTRY = re.compile(r'\{\.name = "([a-z_.]+)",(.*?)\}', re.S)


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
