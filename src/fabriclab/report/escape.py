"""Escaping of what a document holds before a text format prints it.

A run document is input like any other: a host name, a run id, an MPI
library string or a benchmark name may hold a `<script>`, Markdown that
renders as a link, a `|` that breaks a table, or terminal control sequences.
The HTML report and SVG escape with `xml` (html.escape, control characters
made visible); these do the same for the text formats: `terminal` makes control characters visible (a terminal would obey
them), `markdown` also turns HTML into entities and neutralises the
characters Markdown gives a meaning (CommonMark 0.31, §2.4: any ASCII
punctuation may be backslash-escaped)."""

from __future__ import annotations

import html
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# what XML 1.0 forbids (C0 but tab, line feed and carriage return) and the C1 controls a
# terminal obeys when the page's text is copied or printed
_XML_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")


def terminal(text) -> str:
    """One line: control characters (escape sequences, line breaks, NUL) as visible \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def xml(text, quote: bool = True) -> str:
    """html.escape, with control characters visible as \\xNN: HTML and SVG (XML) may not
    hold them, and a page's text may reach a terminal."""
    return html.escape(_XML_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text)), quote)


def markdown(text) -> str:
    """One line of text that renders as itself in Markdown, inside a table cell too."""
    s = terminal(str(text).replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(r"\\\1", s)
