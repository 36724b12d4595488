"""The tree's architecture, checked: wings depend downward only, no module
imports another that imports it back (function-level imports included), every
wing says what it owns, and the commands that must start fast do not load
numpy or matplotlib."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "src" / "fabriclab"

# What each wing may import. Base modules (errors, units, schema, outputs, the package
# itself) are open to all.
BASE = {"errors", "units", "schema", "outputs", ""}
ALLOWED = {
    "analysis": set(),
    "model": set(),
    "measure": {"analysis"},
    "report": {"analysis", "measure"},
    "studies": {"model"},
    "testbed": {"analysis", "measure", "model"},
    "cli": {"analysis", "measure", "model", "report", "studies", "testbed"},
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """fabriclab modules imported anywhere in a file, as dotted names below fabriclab."""
    tree = ast.parse(path.read_text())
    me = _module_name(path).split(".") if _module_name(path) else []
    package = me if path.name == "__init__.py" else me[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                mod = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.startswith("fabriclab"):
                mod = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:  # `from . import stats` names a module
                cand = PKG.joinpath(*mod, alias.name)
                out.add(".".join(mod + [alias.name]) if cand.with_suffix(".py").exists() or cand.is_dir()
                        else ".".join(mod))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fabriclab."):
                    out.add(alias.name.split(".", 1)[1])
    return out


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PKG.rglob("*.py")}


def test_wings_depend_downward_only():
    bad = []
    for mod, deps in _graph().items():
        wing = mod.split(".")[0]
        if wing not in ALLOWED:
            continue
        for d in deps:
            other = d.split(".")[0]
            if other != wing and other not in BASE and other not in ALLOWED[wing]:
                bad.append(f"{mod} imports {d}")
    assert not bad, bad


def test_no_import_circles():
    g = _graph()
    g = {m: {d for d in deps if d in g and d != m} for m, deps in g.items()}
    # a package's __init__ importing its own modules is not a circle
    for m in g:
        g[m] = {d for d in g[m] if not (d.startswith(m + ".") or m.startswith(d + ".") and _is_pkg(d))}
    seen, stack, cycles = set(), [], []

    def visit(m):
        if m in stack:
            cycles.append(stack[stack.index(m):] + [m])
            return
        if m in seen:
            return
        seen.add(m)
        stack.append(m)
        for d in sorted(g[m]):
            visit(d)
        stack.pop()

    for m in sorted(g):
        visit(m)
    assert not cycles, cycles


def _is_pkg(name: str) -> bool:
    return PKG.joinpath(*name.split(".")).is_dir()


@pytest.mark.parametrize("wing", sorted(ALLOWED))
def test_every_wing_says_what_it_owns(wing):
    doc = ast.get_docstring(ast.parse((PKG / wing / "__init__.py").read_text()))
    assert doc and len(doc.splitlines()[0]) > 20


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["run", "--help"], ["model", "--help"], ["import", "--help"]])
def test_fast_commands_load_nothing_heavy(argv):
    code = ("import sys; from fabriclab.cli import main; main(sys.argv[1:]); "
            "print(','.join(m for m in ('numpy', 'matplotlib', 'yaml', 'fabriclab.model.catalog') "
            "if m in sys.modules), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert p.stderr.strip().splitlines()[-1:] in ([], [""]), p.stderr
