"""The tree's architecture, checked: wings depend downward only, no module
imports another that imports it back (function-level imports included), every
wing says what it owns, and the commands that must start fast do not load
numpy or matplotlib.

Each source file is read and parsed once for all the checks (`_parsed`)."""
import ast
import contextlib
import functools
import gc
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "src" / "fabriclab"


@contextlib.contextmanager
def _collector_off():
    """Trees hold no cycles, so the collector has nothing to free while they are built; left
    on, it scans every node made so far again and again (most of the parse's time)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@functools.lru_cache(maxsize=None)
def _parsed(path: Path) -> ast.Module:
    with _collector_off():
        return ast.parse(path.read_text())


@functools.lru_cache(maxsize=None)
def _by_type(path: Path) -> dict:
    """Every node of a source file (ast.walk's order, breadth first), grouped by class, so a
    check reads only the kinds of node it looks at."""
    nodes, groups = [_parsed(path)], {}
    with _collector_off():
        for node in nodes:  # the list grows as it is read
            groups.setdefault(type(node), []).append(node)
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    nodes.append(value)
                elif isinstance(value, list):
                    nodes.extend(v for v in value if isinstance(v, ast.AST))
    return groups


@pytest.fixture(scope="module", autouse=True)
def _trees_for_this_module_only():
    """The trees are let go once this module's tests ran: held, they would slow every
    later collection of the worker that runs the next test file."""
    yield
    for cached in (_parsed, _by_type, _import_graph):
        cached.cache_clear()


def _of(path: Path, *types) -> list:
    """A file's nodes of these classes."""
    groups = _by_type(path)
    return [n for t in types for n in groups.get(t, ())]


# What each wing may import. Base modules (errors, units, schema, inputs, outputs, datafile, the
# package itself) are open to all, and import only each other.
BASE = {"errors", "units", "schema", "outputs", "inputs", "datafile", "hostlists", ""}
ALLOWED = {
    "analysis": set(),
    "model": set(),
    "suite": set(),
    "host": set(),
    "imports": {"suite"},
    "topology": {"model"},
    "verdicts": {"analysis", "model", "suite"},
    "measure": {"analysis", "model", "suite", "host", "verdicts"},
    "report": {"analysis", "suite", "verdicts"},
    "studies": {"analysis", "measure", "model", "report", "suite", "verdicts"},
    "testbed": {"analysis", "measure", "model", "suite", "host", "verdicts"},
    "tuning": {"analysis", "measure", "model", "suite", "verdicts"},
    "acceptance": {"analysis", "measure", "model", "suite", "verdicts", "topology"},
    "store": {"analysis", "model", "suite", "verdicts", "imports"},
    "cli": {"analysis", "measure", "model", "report", "studies", "testbed", "tuning", "acceptance", "suite",
            "host", "imports", "verdicts", "topology", "store"},
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """fabriclab modules imported anywhere in a file, as dotted names below fabriclab."""
    me = _module_name(path).split(".") if _module_name(path) else []
    package = me if path.name == "__init__.py" else me[:-1]
    out = set()
    for node in _of(path, ast.ImportFrom, ast.Import):
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


@functools.lru_cache(maxsize=None)
def _import_graph() -> tuple:
    return tuple((_module_name(p), frozenset(_imports(p))) for p in PKG.rglob("*.py"))


def _graph() -> dict[str, set[str]]:
    return {m: set(deps) for m, deps in _import_graph()}


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


@pytest.mark.parametrize("base", sorted(BASE - {""}))
def test_base_modules_import_only_base_modules(base):
    """The base lies below every wing: a base module imports no wing, not even in a
    function (the schema's document holds records; the statistics that merge its
    points are analysis's, which keeps what it computes on the document)."""
    bad = sorted(f"{mod} imports {d}" for mod, deps in _graph().items() if mod.split(".")[0] == base
                 for d in deps if d.split(".")[0] not in BASE)
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
    doc = ast.get_docstring(_parsed(PKG / wing / "__init__.py"))
    assert doc and len(doc.splitlines()[0]) > 20


FAST_COMMANDS = [["--help"], ["list"], ["run", "--help"], ["model", "--help"], ["import", "--help"]]


@pytest.fixture(scope="module")
def heavy_after():
    """One fresh interpreter runs the fast commands in turn and, after each, names the heavy
    modules loaded so far: a command is light if nothing heavy is loaded once it (and every
    light command before it) ran."""
    code = ("import json, sys; from fabriclab.cli import main\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    main(argv)\n"
            "    print('heavy:' + ','.join(m for m in ('numpy', 'matplotlib', 'yaml', 'fabriclab.model.catalog') "
            "if m in sys.modules), file=sys.stderr)")
    import json
    p = subprocess.run([sys.executable, "-c", code, json.dumps(FAST_COMMANDS)], capture_output=True, text=True,
                       timeout=60)
    lines = [ln[len("heavy:"):] for ln in p.stderr.splitlines() if ln.startswith("heavy:")]
    assert p.returncode == 0 and len(lines) == len(FAST_COMMANDS), p.stderr
    return dict(zip(map(tuple, FAST_COMMANDS), lines))


@pytest.mark.parametrize("argv", FAST_COMMANDS)
def test_fast_commands_load_nothing_heavy(argv, heavy_after):
    assert heavy_after[tuple(argv)] == "", heavy_after


# The fields from which a point's figures are derived; only its record does the arithmetic.
OP_FIELDS = {"legs_per_op", "bytes_per_op", "messages_per_op"}
OWNER = PKG / "schema" / "records.py"


def _op_field(node) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr in OP_FIELDS:
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in OP_FIELDS:
        return node.slice.value
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in OP_FIELDS:
        return node.args[0].value
    return None


def test_derived_figures_are_computed_by_the_point_record_only():
    """Latency (t / legs), bandwidth (bytes / t) and message rate are the point
    record's (schema/records.py): no reader divides or scales by these fields itself."""
    bad = []
    for path in PKG.rglob("*.py"):
        if path == OWNER or "model" in path.relative_to(PKG).parts[:1]:
            continue
        for node in _of(path, ast.BinOp):
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mult)):
                name = _op_field(node.left) or _op_field(node.right)
                if name:
                    bad.append(f"{path.relative_to(PKG)}:{node.lineno} computes with {name}")
    assert not bad, bad


# ---- small functions -------------------------------------------------------------------------
# A function reads as one step of its module when it fits on a screen: at most 50 lines
# (docs and signature included). The front ends are held to it without exception. The longer
# functions below are algorithms that predate the rule, each with its length today as a
# ceiling: they may shrink, never grow, and no other function may join them.
MAX_LINES = 50
KNOWN_LONG = {
    "report/raster.py:render_png": 61,
    "model/routing.py:alltoall_by_destination": 61,
}


def _function_lengths() -> dict[str, int]:
    """'path:name' -> lines, for every function and method of the package (nested ones too)."""
    out = {}
    for path in PKG.rglob("*.py"):
        for node in _of(path, ast.FunctionDef, ast.AsyncFunctionDef):
            key = f"{path.relative_to(PKG).as_posix()}:{node.name}"
            out[key] = max(out.get(key, 0), node.end_lineno - node.lineno + 1)
    return out


def test_functions_are_small():
    long = {k: n for k, n in _function_lengths().items() if n > MAX_LINES}
    cli = [f"{k} ({n} lines)" for k, n in long.items() if k.startswith("cli/")]
    assert not cli, f"front-end functions over {MAX_LINES} lines: {cli}"
    grown = [f"{k} ({n} lines)" for k, n in long.items() if n > KNOWN_LONG.get(k, MAX_LINES)]
    assert not grown, f"functions over {MAX_LINES} lines (or longer than their ceiling): {grown}"


# ---- one table of option letters -------------------------------------------------------------
def _short_literals(path: Path) -> list[str]:
    """Short options written out in add_argument calls of a module."""
    found = []
    for node in _of(path, ast.Call):
        if getattr(node.func, "attr", None) == "add_argument":
            found += [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                      and len(a.value) == 2 and a.value[0] == "-" and a.value[1] != "-"]
    return found


def test_short_options_come_from_the_letters_table():
    written = {p.name: _short_literals(p) for p in (PKG / "cli").glob("*.py") if p.name != "letters.py"}
    assert not {k: v for k, v in written.items() if v}, written


def _parsers(p, command="fabriclab"):
    """(command, parser) for the top-level parser and every subcommand's, nested ones too."""
    import argparse
    yield command, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _parsers(sub, name if command == "fabriclab" else f"{command} {name}")


def test_a_letter_means_one_long_option_everywhere():
    import argparse
    from fabriclab.cli.letters import LETTERS, RETIRED
    from fabriclab.cli.main import parser
    used, retired = set(), set()
    for command, p in _parsers(parser()):
        for a in p._actions:
            letters = [s for s in a.option_strings if len(s) == 2 and s != "-h"]
            longs = [s for s in a.option_strings if s.startswith("--")]
            for letter in letters:
                if a.help == argparse.SUPPRESS:           # a retired spelling, hidden from --help
                    long = next(b.option_strings[-1] for b in p._actions if b.dest == a.dest and b is not a)
                    assert RETIRED.get((command, long)) == letter, (command, letter)
                    retired.add((command, long))
                else:
                    assert longs == [LETTERS.get(letter)], (command, letter, longs)
                    used.add(letter)
    assert used == set(LETTERS) and retired == set(RETIRED)


def test_test_modules_have_unique_names():
    """pytest imports test files by basename (no packages under tests/): two of one name collide."""
    names = [p.name for p in (PKG.parents[1] / "tests").rglob("test_*.py")]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


# ---- one run entry point, one document type ------------------------------------------------------
def _calls(path: Path):
    return _of(path, ast.Call)


def _dotted(node) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def test_the_front_ends_build_no_namespace_and_start_no_fabriclab_process():
    """A run is reached in-process through measure/session.py: cli/ makes no argparse
    Namespace of its own (only its parsers do) nor reads a parser's private actions,
    and no module starts fabriclab's own command line as a process."""
    bad = []
    for path in PKG.rglob("*.py"):
        text = path.read_text()
        rel = path.relative_to(PKG).as_posix()
        for call in _calls(path):
            if _dotted(call.func).endswith("Namespace"):
                bad.append(f"{rel}:{call.lineno} builds a Namespace")
            if _dotted(call.func).startswith("subprocess.") and any(
                    isinstance(c, ast.Constant) and str(c.value).startswith(("fabriclab.cli", "fabriclab"))
                    and c.value != "fabriclab-core" for c in ast.walk(call)):
                bad.append(f"{rel}:{call.lineno} starts fabriclab's own command line")
        if rel.startswith("cli/") and "._actions" in text and rel != "cli/letters.py":
            bad.append(f"{rel} reads a parser's private actions")
    assert not bad, bad


def _reads_the_json_form(node) -> str | None:
    """'header' or 'kind' where a node indexes a document's JSON form: x["header"],
    x.get("kind"), x["records"]."""
    keys = ("header", "kind", "records", "footer", "merged")
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in keys:
        return node.slice.value
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in keys:
        return node.args[0].value
    return None


def test_only_the_schema_reads_a_document_s_json():
    """Readers take the typed document (schema/document.py): none but the schema
    indexes ["header"] or filters records by their ["kind"]."""
    bad = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith("schema/"):
            continue
        for node in _of(path, ast.Subscript, ast.Call):
            key = _reads_the_json_form(node)
            if key:
                bad.append(f"{rel}:{node.lineno} reads [{key!r}]")
    # not run documents: tc's own JSON (the testbed's shapers) and the catalog's technologies
    assert [b.split(":")[0] for b in bad] == ["model/catalog.py", "testbed/cables.py"], bad


def test_one_validator_and_no_module_global_caches():
    """The schema is read by one set of typed readers (fields.py's Fields, used by
    the records' modules and document.py); nothing remembers a result between calls at module level."""
    assert sorted(p.name for p in (PKG / "schema").glob("*.py")) == ["__init__.py", "document.py", "fields.py",
                                                                     "point_fields.py", "records.py",
                                                                     "run_records.py", "summaries.py"]
    bad = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        tree = _parsed(path)
        for node in _of(path, ast.FunctionDef, ast.AsyncFunctionDef, ast.Global):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bad += [f"{rel}:{node.lineno} {node.name} is memoised" for d in node.decorator_list
                        if "cache" in ast.unparse(d)]
            if isinstance(node, ast.Global):
                bad.append(f"{rel}:{node.lineno} rebinds a module global")
        mutable = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                   for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)
                   and isinstance(n.value, (ast.List, ast.Dict, ast.Set)) and not _literal(n.value)}
        for node in _of(path, ast.Call, ast.Subscript):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in mutable \
                    and node.func.attr in ("append", "extend", "update", "setdefault", "add", "insert"):
                bad.append(f"{rel}:{node.lineno} grows module-level {node.func.value.id}")
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id in mutable:
                bad.append(f"{rel}:{node.lineno} stores into module-level {node.value.id}")
    assert not bad, bad


def _literal(node) -> bool:
    """A container written out whole (a table of facts), not an empty one to fill."""
    return bool(getattr(node, "elts", None) or getattr(node, "keys", None))


# ---- the map stays true ----------------------------------------------------------------------
def test_the_architecture_page_names_every_module_and_every_wing_in_its_layer():
    """docs/architecture.md names every module of the package, and its table of layers gives
    each wing exactly the imports ALLOWED gives it."""
    page = (PKG.parents[1] / "docs" / "architecture.md").read_text()
    missing = [p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py")
               if p.name != "__init__.py" and f"`{p.name}`" not in page]
    assert not missing, f"modules docs/architecture.md does not name: {missing}"
    table = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 3 and "`" in cells[1]:
            for wing in (w.strip("`") for w in cells[1].replace(",", " ").split() if w.startswith("`")):
                table[wing] = cells[2]
    assert set(ALLOWED) <= set(table), sorted(set(ALLOWED) - set(table))
    for wing, allowed in ALLOWED.items():
        named = {w.strip("`") for w in table[wing].replace(",", " ").split() if w.startswith("`")}
        every = table[wing] == "every wing" and allowed == set(ALLOWED) - {wing}
        assert every or named == allowed, (wing, named ^ allowed)
