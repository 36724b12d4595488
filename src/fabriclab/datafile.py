"""Reading every JSON or YAML file fabriclab takes in: the model's data files
(catalog, calibration, price lists, networks), published values of a study,
the check's thresholds, the tune state.

JSON when the name ends in .json, YAML otherwise (or as the caller says);
every failure is one UsageError line naming the file. A data file is input
like any other and may be hostile, so reading it is bounded before anything
is built from it:

* at most MAX_FILE_BYTES bytes, MAX_VALUES values (scalars and collections)
  and MAX_DEPTH levels of nesting;
* no YAML anchors or aliases: an alias repeats a subtree without the file
  repeating it, so nine levels of nine aliases, about 430 bytes, stand for
  9^9 (387 million) values (the "billion laughs" expansion); no data file
  needs them;
* only the scalar types of YAML's core and PyYAML's safe schema (strings,
  numbers, booleans, null, dates and binary); no other tags.

YAML is read event by event (libyaml's parser where PyYAML was built with
it), each value built as its event arrives: the first anchor, the value past
the limit or the level past the depth stops the reading at once, and no node
graph is kept beside the values (yaml.load keeps both, and takes four to six
times as long). JSON is parsed by the json module, then measured.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import UsageError
from .inputs import read_text

# 500,000 links (the most cables a network may have) of seven keys each (a, b, count, rate_MBps,
# efficiency, duplex, name) are a 50 MB file of 7.5 million values; read, about 200 MiB of values.
MAX_FILE_BYTES = 64 << 20
MAX_VALUES = 8_000_000
MAX_DEPTH = 32                   # network files nest 3 levels, the catalog 6, a run document 5

_Y = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_Y + t for t in ("str", "int", "float", "bool", "null", "timestamp", "binary")}
_COLLECTION_TAGS = {None, "!", _Y + "seq", _Y + "map"}
_STR = _Y + "str"
_NO_KEY, _SEQ = object(), object()


def read_data_file(path, what: str, kind: str | None = None, limit: int | None = None):
    """The parsed content of a JSON or YAML file (`kind`, else by its name), at most
    `limit` bytes (MAX_FILE_BYTES); `what` names it in errors."""
    text = read_text(path, what, limit or MAX_FILE_BYTES)     # a regular file, bounded (inputs.py)
    return parse(text, path, kind or ("JSON" if Path(path).suffix.lower() == ".json" else "YAML"))


def parse(text: str, path, kind: str):
    """read_data_file's parsing of text already read, kind "JSON" or "YAML"; None for
    YAML without a document."""
    errors = (ValueError,) if kind == "JSON" else (ValueError, _pyyaml().YAMLError)
    try:
        return _json(text, path) if kind == "JSON" else _yaml(text, path)
    except errors as e:
        raise UsageError(f"{path}: not valid {kind}: {_problem(e)}") from None


def _problem(e: Exception) -> str:
    """A parser's complaint on one line: where, what, and while doing what."""
    if getattr(e, "problem", None) and hasattr(e, "problem_mark"):     # PyYAML's MarkedYAMLError
        mark = e.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        return where + e.problem + (f" ({e.context})" if e.context else "")
    text = str(e).strip()
    if "integer string conversion" in text:      # sys.get_int_max_str_digits(), against CVE-2020-10735
        return "an integer of more than 4,300 digits"
    return text.splitlines()[0] if text else type(e).__name__


def shown(value, limit: int = 40) -> str:
    """A value for an error line: a scalar as repr (control characters escaped),
    cut to `limit` characters; a collection by its kind and size, never its content."""
    if isinstance(value, (list, dict)):
        n = len(value)
        return f"a {'list' if isinstance(value, list) else 'mapping'} of {n:,} {'entry' if n == 1 else 'entries'}"
    try:
        text = repr(value)
    except ValueError:               # an integer of more digits than Python converts (sys.set_int_max_str_digits)
        return "a number of thousands of digits"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _json(text: str, path):
    # Every value but the first follows one of these separators (or more, inside strings): refuse
    # an oversized file before the json module builds it (64 MiB of short strings: about 1.4 GB).
    if sum(text.count(c) for c in ",:[{") >= MAX_VALUES:
        raise _too_many(path)
    try:
        data = json.loads(text, object_pairs_hook=_unique)
    except RecursionError:           # the json module recurses once per level
        raise _too_deep(path) from None
    _measure(data, path)
    return data


def _unique(pairs: list) -> dict:
    """A JSON object whose keys are unique (RFC 8259 4: they SHOULD be; the json module keeps the
    last silently, so a repeated rate would be read as the other)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {shown(twice)} appears twice in one object")
    return out


def _measure(data, path) -> None:
    """Refuse parsed data with more than MAX_VALUES values (keys count) or nested more than
    MAX_DEPTH deep; without recursion, keeping only the containers to visit."""
    if not isinstance(data, (list, dict)):
        return
    stack, values = [(data, 1)], 1
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(path)
        values += len(value) * (2 if isinstance(value, dict) else 1)
        if values > MAX_VALUES:
            raise _too_many(path)
        stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)
                     if isinstance(v, (list, dict)))


def _too_many(path) -> UsageError:
    return UsageError(f"{path}: more than {MAX_VALUES:,} values, the most a data file may hold")


def _too_deep(path) -> UsageError:
    return UsageError(f"{path}: nested more than {MAX_DEPTH} levels deep")


def _pyyaml():
    """PyYAML, imported with the first YAML file: the commands that must start fast read none."""
    import yaml
    import yaml.events
    import yaml.nodes
    return yaml


def _yaml(text: str, path):
    yaml = _pyyaml()
    # libyaml's parser where PyYAML was built with it: the same events, read ~10 times faster
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        return _build(loader, path)
    finally:
        loader.dispose()


def _build(loader, path):
    """The document's value, built from the parser's events (module docstring)."""
    e, node = _pyyaml().events, _pyyaml().nodes.ScalarNode
    ScalarEvent, AliasEvent, StreamEndEvent, DocumentStartEvent = (e.ScalarEvent, e.AliasEvent, e.StreamEndEvent,
                                                                   e.DocumentStartEvent)
    SequenceStartEvent, SequenceEndEvent = e.SequenceStartEvent, e.SequenceEndEvent
    MappingStartEvent, MappingEndEvent = e.MappingStartEvent, e.MappingEndEvent
    stack, root, values, documents = [], None, 0, 0     # open collections: [value, pending key or _SEQ]
    while True:
        ev = loader.get_event()
        kind = type(ev)
        if kind is ScalarEvent:
            value = _scalar(loader, ev, path, node)
        elif kind is SequenceEndEvent or kind is MappingEndEvent:
            value = stack.pop()[0]
        elif kind is SequenceStartEvent or kind is MappingStartEvent:
            _check_collection(ev, len(stack), path)
            stack.append([[], _SEQ] if kind is SequenceStartEvent else [{}, _NO_KEY])
            values += 1
            continue
        elif kind is AliasEvent:
            raise _anchor(ev, path)
        elif kind is StreamEndEvent:
            return root
        else:                                           # the stream's start, documents' start and end
            documents += kind is DocumentStartEvent
            if documents > 1:
                raise UsageError(f"{path}: {_line(ev)}more than one YAML document")
            continue
        if kind is ScalarEvent:
            values += 1
        if values > MAX_VALUES:
            raise _too_many(path)
        if not stack:
            root = value
        elif stack[-1][1] is _SEQ:
            stack[-1][0].append(value)
        else:
            _place(stack[-1], value, ev, path)


def _check_collection(ev, depth: int, path) -> None:
    if ev.anchor:
        raise _anchor(ev, path)
    if ev.tag not in _COLLECTION_TAGS:
        raise UsageError(f"{path}: {_line(ev)}YAML tag {ev.tag!r} is not accepted")
    if depth >= MAX_DEPTH:
        raise _too_deep(path)


def _anchor(ev, path) -> UsageError:
    return UsageError(f"{path}: {_line(ev)}YAML anchors and aliases (&{ev.anchor}, *{ev.anchor}) are not "
                      "accepted; write the value out")


def _place(top: list, value, ev, path) -> None:
    """A mapping's key, then its value."""
    if top[1] is _NO_KEY:
        if isinstance(value, (list, dict)):
            raise UsageError(f"{path}: {_line(ev)}a mapping key must be a scalar, got {shown(value)}")
        if value in top[0]:               # YAML 1.2: keys are unique; PyYAML would keep the last silently
            raise UsageError(f"{path}: {_line(ev)}the key {shown(value)} appears twice in one mapping")
        top[1] = value
    else:
        top[0][top[1]] = value
        top[1] = _NO_KEY


def _scalar(loader, ev, path, node):
    """The scalar's value, as PyYAML's safe loader resolves and constructs it."""
    if ev.anchor:
        raise _anchor(ev, path)
    tag = ev.tag
    if tag is None or tag == "!":
        tag = loader.resolve(node, ev.value, ev.implicit)
    if tag == _STR:
        return ev.value
    if tag not in _SCALAR_TAGS:
        raise UsageError(f"{path}: {_line(ev)}YAML tag {tag!r} is not accepted")
    return loader.yaml_constructors[tag](loader, node(tag, ev.value, ev.start_mark, ev.end_mark))


def _line(ev) -> str:
    mark = getattr(ev, "start_mark", None)
    return f"line {mark.line + 1}: " if mark is not None else ""
