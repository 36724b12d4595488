"""Documents a user hands in, broken or hostile: every reader (show in each
format, compare, report, plot, calibrate) answers with exit 0 or one line and
exit 2, never a traceback; what a document holds is escaped in every format."""
import copy
import json
import random

import pytest

from fabriclab.cli import main
from oneparser import one_parser  # noqa: E402  (tests/support)

FORMATS = ("table", "md", "csv", "json")


@pytest.fixture(scope="module")
def real(fake_core_module, tmp_path_factory):
    """A real document of the fake core: a two-rank benchmark and a pattern, two launches."""
    out = tmp_path_factory.mktemp("doc") / "r.json"
    assert main(["run", "message.pingpong", "message.hotspot", "-n", "4", "-s", "8,1K", "-L", "2", "--seed", "3",
                 "--core", fake_core_module["core"], "--mpiexec", fake_core_module["mpiexec"], "-q",
                 "-o", str(out)]) == 0
    return json.loads(out.read_text())


def _readers(path, other, out):
    yield ["show", str(path)]
    for fmt in FORMATS[1:]:
        yield ["show", str(path), "-f", fmt]
    yield ["compare", str(other), str(path)]
    yield ["report", str(path), "-o", str(out / "r.html")]


def _answers_cleanly(argv, capsys) -> int:
    """Runs one command in-process: any exception but the CLI's own is a failure."""
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc in (0, 2), (argv, rc, err)
    assert "Traceback" not in err
    if rc == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("fabriclab: error: "), err
    return rc


def _write(doc, path, nan=False):
    path.write_text(json.dumps(doc, allow_nan=nan))
    return path


@pytest.mark.parametrize("mutate,words", [
    (lambda d: d["merged"][0]["summary"].__setitem__("median", "fast"), "median must be a finite number"),
    (lambda d: d["records"][[r["kind"] for r in d["records"]].index("point")].__setitem__("size", "8"),
     "size must be an integer"),
    (lambda d: d["header"].__setitem__("hosts", 5), "hosts must be a list"),
    (lambda d: d["merged"][0].pop("summary"), "summary is missing"),
    (lambda d: d["header"].__setitem__("nranks", 10 ** 30), "nranks must be between"),
    (lambda d: d["merged"][1].__setitem__("bytes_per_op", 1e32), "bytes_per_op must be"),
    (lambda d: d["merged"][1]["summary"].__setitem__("median", 2e302), "median must be between"),
    (lambda d: d["header"]["host"].__setitem__("cpu_count", "two"), "cpu_count must be an integer"),
    (lambda d: d["footer"].__setitem__("status", ["complete"]), "status must be text"),
    (lambda d: d.__setitem__("schema_version", 0), "schema_version 0 is not supported"),
])
def test_wrong_types_and_impossible_values_are_one_line(real, tmp_path, capsys, mutate, words):
    doc = copy.deepcopy(real)
    mutate(doc)
    path = _write(doc, tmp_path / "bad.json")
    good = _write(real, tmp_path / "good.json")
    with one_parser():
        for argv in _readers(path, good, tmp_path):
            assert _answers_cleanly(argv, capsys) == 2, argv
    main(["show", str(path)])
    assert words in capsys.readouterr().err


def test_an_integer_of_thousands_of_digits(real, tmp_path, capsys):
    text = json.dumps(real).replace('"nranks": 4', '"nranks": ' + "9" * 5000, 1)
    path = tmp_path / "huge.json"
    path.write_text(text)
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "more than 4300 digits" in err and len(err.splitlines()) == 1
    stream = tmp_path / "huge.ndjson"
    stream.write_text('{"kind": "header", "schema": "fabriclab.run", "schema_version": 5}\n'
                      '{"kind": "point", "size": ' + "7" * 5000 + "}\n")
    assert main(["show", str(stream)]) == 2
    assert "line 2" in capsys.readouterr().err


HOSTILE = "<script>alert(1)</script> | [x](javascript:alert(2)) \x1b[2J\x1b]0;owned\x07"


def test_markdown_and_text_escape_what_the_document_holds(real, tmp_path, capsys):
    doc = copy.deepcopy(real)
    doc["header"]["host"]["hostname"] = HOSTILE
    doc["header"]["run_id"] = HOSTILE
    path = _write(doc, tmp_path / "h.json")
    assert main(["show", str(path), "-f", "md"]) == 0
    md = capsys.readouterr().out
    assert "<script>" not in md and "&lt;script\\>" in md
    assert "](javascript" not in md and "\\| \\[x\\]\\(javascript" in md
    assert "\x1b" not in md and "\\x1b" in md
    assert main(["show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text
    assert main(["compare", str(path), str(path), "-f", "md"]) == 0
    assert "\x1b" not in capsys.readouterr().out


def _paths(obj, at=()):
    """The key path of every field a mutation may hit: every record and every
    field of it, but of a list of numbers (samples) only a few elements, so
    that mutations spread over the fields."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield at + (k,)
            yield from _paths(v, at + (k,))
    elif isinstance(obj, list):
        numbers = all(isinstance(v, (int, float)) for v in obj)
        for i, v in enumerate(obj[:3] if numbers else obj):
            yield at + (i,)
            yield from _paths(v, at + (i,))


@pytest.mark.bounds
def test_an_integer_beyond_every_double_or_a_deep_nesting_in_any_number_field_is_one_line(real, tmp_path, capsys):
    """10^400 has fewer digits than Python refuses to convert, yet no double holds it, and a
    list 900 deep is below the JSON parser's recursion limit: each, in every number field
    (of the first two elements of a list), is refused in one line or left unread."""
    doc = json.loads(json.dumps(real))
    numbers = [p for p in _paths(real) if isinstance(_at(real, p), (int, float)) and not isinstance(_at(real, p), bool)
               and not any(isinstance(k, int) and k > 1 for k in p)]
    # one of each field (its keys without the list positions): every reader of it is reached
    numbers = list({tuple(k for k in p if not isinstance(k, int)): p for p in numbers}.values())
    assert len(numbers) > 40
    path = tmp_path / "n.json"
    for where in numbers:
        for value in ("9" * 400, "[" * 900 + "]" * 900):
            *way, key = where
            _at(doc, way)[key] = "VALUE"
            path.write_text(json.dumps(doc).replace('"VALUE"', value))
            _at(doc, way)[key] = _at(real, where)
            _answers_cleanly(["show", str(path)], capsys)


def _at(doc, path):
    for k in path:
        doc = doc[k]
    return doc


WEIRD = [None, True, False, 0, -1, -1e-300, 1e-320, 2 ** 63, 10 ** 25, 1e308, float("nan"), float("inf"), "",
         "8", "fast", "<b>", [], [1], [None], {}, {"a": 1}, "\n", "x" * 300]


def _mutant(real, paths, rng):
    """A copy of the document with one to three fields (of `paths`, the real one's) replaced
    or deleted; a path that an earlier mutation took away is left alone."""
    doc = json.loads(json.dumps(real))      # a copy (the document is JSON data)
    for _ in range(rng.randint(1, 3)):
        *way, key = rng.choice(paths)
        box = doc
        try:
            for k in way:
                box = box[k]
            box[key]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(box, dict) and rng.random() < 0.2:
            del box[key]
        else:
            box[key] = copy.deepcopy(rng.choice(WEIRD))
    return doc


@pytest.mark.bounds
def test_fuzz_of_run_documents(real, tmp_path, capsys):
    """Random type and value mutations of a real document: every reader
    answers with exit 0 or 2 and one line, never a traceback."""
    rng = random.Random(19)
    good = _write(real, tmp_path / "good.json")
    outcomes = {0: 0, 2: 0}
    with one_parser():
        paths = list(_paths(real))
        for i in range(60):
            doc = _mutant(real, paths, rng)
            if i % 2:
                doc.pop("merged", None)  # a stream's records, merged when read
            path = _write(doc, tmp_path / f"m{i}.json", nan=True)
            readers = list(_readers(path, good, tmp_path))
            for argv in (readers if i % 4 == 0 else readers[:1]):  # each loads and checks it; all on every 4th
                outcomes[_answers_cleanly(argv, capsys)] += 1
    assert outcomes[0] and outcomes[2]  # the mutations both pass and fail validation


def test_the_typed_reader_refuses_what_its_fast_path_would_let_slip(real):
    """Each field reader tests the plain case first (schema/fields.py): a bool
    is not an integer, NaN and infinity are not numbers, a record's name is
    formatted only when it is wrong."""
    from fabriclab.schema.fields import RecordError
    from fabriclab.schema.records import Point
    point = next(r for r in real["records"] if r["kind"] == "point")
    Point.from_dict(point)
    for key, value in (("size", True), ("stride", 1.5), ("legs_per_op", 0), ("concurrent", "yes")):
        with pytest.raises(RecordError, match=f"{key} must"):
            Point.from_dict({**point, key: value})
    for value in (float("nan"), float("inf"), -1.0, True):
        with pytest.raises(RecordError, match="median must be"):
            Point.from_dict({**point, "summary": {**point["summary"], "median": value}})
    with pytest.raises(RecordError, match=r"point \(message\.\w+ size \d+\): peers\[0\] must be"):
        Point.from_dict({**point, "roles": "sr", "peers": [7, 0], "rank_samples": [[1e-6], None]})

def test_every_format_and_figure_keeps_control_characters_visible(real, tmp_path, capsys):
    """A variant, a host and a run id that hold escape sequences: CSV and the comparison's CSV
    show them as \\xNN, the SVG plot is well-formed XML, the HTML report holds no raw control
    character, and the PNG plot is drawn without a warning."""
    import warnings
    import xml.etree.ElementTree as ET
    doc = copy.deepcopy(real)
    doc.pop("merged", None), doc.pop("findings", None)
    doc["header"]["host"]["hostname"] = doc["header"]["run_id"] = HOSTILE
    point = next(r for r in doc["records"] if r["kind"] == "point")
    for r in doc["records"]:
        if r["kind"] == "point" and r["bench"] == point["bench"]:
            r["variant"] = "\x1b[2J\x07 " + HOSTILE      # first: a legend shortens what is long
    path = _write(doc, tmp_path / "h.json")
    for argv in (["show", str(path), "-f", "csv"], ["compare", str(path), str(path), "-f", "csv"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\\x1b[2J" in out, argv
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert not any(c in page for c in "\x1b\x07\x00") and "\\x1b" in page
    capsys.readouterr()
    svg, png = tmp_path / "p.svg", tmp_path / "p.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a glyph matplotlib lacks is a warning: none may come
        for out in (svg, png):
            assert main(["plot", str(path), point["bench"], "-o", str(out)]) == 0, capsys.readouterr().err
    ET.parse(svg)                                # well-formed
    assert "\\x1b" in svg.read_text() and capsys.readouterr().err == ""
