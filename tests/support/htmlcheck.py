"""Structural checks of a report page: every tag closed and nested, nothing
fetched from elsewhere, every figure an SVG with a title and labelled axes
that state their units (a bar chart's x axis names categories; a diagram, the
network's drawing, has none)."""
from html.parser import HTMLParser

from fabriclab.report.figure import unit_of

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}


class _Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.figures = [], [], []
        self._text_class = None
        self._fig = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            v = a.get(key) or ""
            if key == "href" and v.startswith("#"):
                continue
            if v:
                self.problems.append(f"<{tag} {key}={v!r}> refers outside the page")
        if tag in ("script", "link", "iframe", "object", "embed"):
            self.problems.append(f"<{tag}> in a page that must run and fetch nothing")
        if tag == "figure":
            self._fig = {"id": a.get("id"), "svg": False, "title": "", "xlabel": "", "ylabel": "", "drawn": 0,
                         "diagram": "diagram" in (a.get("class") or "").split()}
            self.figures.append(self._fig)
        if self._fig is not None:
            if tag == "svg":
                self._fig["svg"] = True
            if tag in ("polyline", "rect", "circle", "polygon", "line"):
                self._fig["drawn"] += 1
            if tag == "rect" and a.get("class") == "bar":
                self._fig["bars"] = True
            if tag in ("title", "text"):
                self._text_class = "title" if tag == "title" else a.get("class")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()
        if tag == "figure":
            self._fig = None
        if tag in ("title", "text"):
            self._text_class = None

    def handle_data(self, data):
        if self._fig is not None and self._text_class in ("title", "xlabel", "ylabel"):
            self._fig[self._text_class] += data


def check_html(text: str) -> tuple[list[str], list[dict]]:
    """(problems, figures) of a report page."""
    c = _Checker()
    c.feed(text)
    c.close()
    problems = list(c.problems)
    if c.stack:
        problems.append(f"unclosed tags: {c.stack}")
    for f in c.figures:
        what = f"figure {f['id']}"
        if not f["svg"] or f["drawn"] < 3:
            problems.append(f"{what} has no drawing")
        if not f["title"].strip():
            problems.append(f"{what} has no title")
        for axis in ("xlabel", "ylabel") if not f["diagram"] else ():    # a diagram (the network) has no axes
            label = f[axis].strip()
            if not label:
                problems.append(f"{what} has no {axis}")
            elif (axis == "ylabel" or not f.get("bars")) and not unit_of(label):  # bars: x is categories
                problems.append(f"{what}'s {axis} {label!r} states no unit")
    return problems, c.figures
