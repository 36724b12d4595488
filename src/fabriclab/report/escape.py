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

# The invisible format characters that reorder or hide text (bidirectional overrides and
# isolates, zero-width spaces and joiners, the byte-order mark): a name holding U+202E prints
# its tail reversed, in a terminal and in a browser alike (the "Trojan Source" spoof, CVE-2021-42574).
_FORMAT = "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_FORMAT}]")
# what XML 1.0 forbids (C0 but tab, line feed and carriage return) and the C1 controls a
# terminal obeys when the page's text is copied or printed
_XML_CONTROL = re.compile(f"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f{_FORMAT}]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")


def _shown(m) -> str:
    """A character made visible: \\xNN, or \\uNNNN beyond Latin-1."""
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def terminal(text) -> str:
    """One line: control characters (escape sequences, line breaks, NUL) and the invisible format
    characters as visible \\xNN or \\uNNNN."""
    return _CONTROL.sub(_shown, str(text))


def xml(text, quote: bool = True) -> str:
    """html.escape, with control characters visible as \\xNN: HTML and SVG (XML) may not
    hold them, and a page's text may reach a terminal."""
    return html.escape(_XML_CONTROL.sub(_shown, str(text)), quote)


def markdown(text) -> str:
    """One line of text that renders as itself in Markdown, inside a table cell too."""
    s = terminal(str(text).replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(r"\\\1", s)
