"""The report's section "The network": a network file given to `fabriclab report`.

What it draws is plain data (topology/facts.py, read by cli/report.py): `topology
show`'s summary as a table; the switches as boxes in rows by level (1, the leaves,
at the bottom), the hosts under each leaf as a count, the cables between two boxes
as one line per rate, its width the rate and `×N` its parallel cables, a degraded
cable red and dashed; and a table of the degraded cables with their ports and
reasons. A level of more than MAX_BOXES switches shows its first ones and one box
for the rest, so a fabric of any size draws as a bounded picture (inline SVG, no
script, as svg.py draws the other figures)."""

from __future__ import annotations

from .escape import xml as escape
from .svg import FONT

MAX_BOXES = 16             # switch boxes a level shows, the last one standing for the rest
LABELLED = 160             # lines beyond this: their counts are in the title of each line only
MAX_ROWS = 200             # degraded cables listed; the rest counted
SLOT, BOX_W, BOX_H = 104, 92, 26
ROW = 110                  # px between the rows of two levels
LEFT, TOP, BOTTOM = 112, 78, 44
FAIL, CABLE = "#b00020", "#5a5a5a"


def section(networks: list[dict]) -> list[str]:
    """The section's HTML (after its heading) for each network file's facts."""
    out = ["<p>Each network file given: what <code>fabriclab topology show</code> prints, the switches by "
           "level (1: cabled to hosts) with their cables, and the cables flagged degraded.</p>"]
    for k, net in enumerate(networks):
        if len(networks) > 1:
            out.append(f"<h3>{escape(net['name'])} ({escape(net['file'])})</h3>")
        out.append(_table(["", "network file"], net["summary"]))
        if net["switches"]:
            out.append(figure(net, f"network-{k}" if len(networks) > 1 else "network"))
        else:
            out.append(f"<p>No switches: {net['hosts']:,} hosts cabled to each other (the summary counts "
                       "the cables).</p>")
        out += _degraded(net)
    return out


def _table(head: list, body: list) -> str:
    rows = ["<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in body]
    return ("<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "\n".join(rows) + "</tbody></table>")


def rate(mbps: float) -> str:
    """As `topology show` writes a rate: MB/s, and Gb/s as links are sold."""
    return f"{mbps:g} MB/s ({mbps * 8 / 1000:g} Gb/s)"


def _degraded(net: dict) -> list[str]:
    bad = net["degraded"]
    if not bad:
        return ["<p>No cable is flagged degraded.</p>"]
    body = [[c["name"], " -- ".join(c["ends"]), " -- ".join("-" if p is None else str(p) for p in c["ports"]),
             c["count"], rate(c["rate_MBps"]), c["reason"]] for c in bad[:MAX_ROWS]]
    if len(bad) > MAX_ROWS:
        body.append([f"and {len(bad) - MAX_ROWS:,} more", "", "", "", "", ""])
    return [f"<p>{len(bad):,} cable{'s' * (len(bad) != 1)} flagged degraded: running below what both ends "
            "support (red in the drawing).</p>",
            _table(["cable", "ends", "ports", "cables", "rate", "why"], body)]


# ---- the drawing ---------------------------------------------------------------------------------

def layout(net: dict) -> tuple[list, dict]:
    """The rows to draw, bottom up: (level, [(box name, switches it stands for)]); and each switch's
    box as (row, slot). Above the leaves a switch sits by the mean slot of its neighbours below."""
    near: dict = {}
    for ln in net["links"]:
        near.setdefault(ln["a"], []).append(ln["b"])
        near.setdefault(ln["b"], []).append(ln["a"])
    rows, box = [], {}
    for r, lv in enumerate(net["levels"]):
        names = [s["name"] for s in lv["switches"]]
        if r and lv["level"] is not None:
            names.sort(key=lambda s: _below(s, near, box, r - 1))
        shown = names if len(names) <= MAX_BOXES else names[:MAX_BOXES - 1]
        boxes = [(n, [n]) for n in shown]
        if len(shown) < len(names):
            boxes.append((f"+{len(names) - len(shown):,} more", names[len(shown):]))
        for j, (_, members) in enumerate(boxes):
            for s in members:
                box[s] = (r, j)
        rows.append((lv["level"], boxes))
    return rows, box


def _below(switch: str, near: dict, box: dict, row: int) -> float:
    """The mean slot of a switch's neighbours in the row below (a switch of that row's last box at its slot)."""
    xs = [box[t][1] for t in near.get(switch, ()) if t in box and box[t][0] == row]
    return sum(xs) / len(xs) if xs else float("inf")


def _lines(net: dict, box: dict) -> dict:
    """(box, box, rate, degraded) -> cables: the links summed over the boxes they join."""
    out: dict = {}
    for ln in net["links"]:
        a, b = box[ln["a"]], box[ln["b"]]
        if a != b:                               # between two switches a box stands for: not drawn
            key = (*sorted((a, b)), ln["rate_MBps"], ln["degraded"])
            out[key] = out.get(key, 0) + ln["count"]
    return out


def figure(net: dict, fid: str) -> str:
    rows, box = layout(net)
    lines = _lines(net, box)
    switches = {s["name"]: s for lv in net["levels"] for s in lv["switches"]}
    slots = max(len(b) for _, b in rows)
    title = f"The network {net['name']}: switches by level, cables between them, hosts counted"
    width = max(LEFT + slots * SLOT + 16, 720, 24 + 7.6 * len(title))      # the title's bold 13 px fits
    height = TOP + ROW * (len(rows) - 1) + BOX_H + BOTTOM
    centre = {}
    for r, (_, boxes) in enumerate(rows):
        x0 = LEFT + (width - LEFT - 16 - len(boxes) * SLOT) / 2
        y = TOP + ROW * (len(rows) - 1 - r)
        for j in range(len(boxes)):
            centre[(r, j)] = (x0 + SLOT * (j + 0.5), y)
    tid = f"{fid}-title"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height}" width="{width:.0f}" '
           f'height="{height}" role="img" aria-labelledby="{tid}" class="figure-svg" {FONT} font-size="11">',
           f'<title id="{tid}">{escape(title)}</title>',
           f'<rect x="0" y="0" width="{width:.0f}" height="{height}" fill="#ffffff"/>',
           f'<text class="title" x="12" y="18" font-size="13" font-weight="bold">{escape(title)}</text>']
    top = max((k[2] for k in lines), default=1.0) or 1.0
    out += _legend(sorted({k[2] for k in lines}, reverse=True), top, any(k[3] for k in lines))
    out += _cables(lines, centre, top, len(lines) <= LABELLED)
    for r, (level, boxes) in enumerate(rows):
        y = TOP + ROW * (len(rows) - 1 - r)
        what = "no host reached" if level is None else f"level {level}" + (" (leaves)" if level == 1 else "")
        out.append(f'<text class="level" x="8" y="{y + BOX_H / 2 + 4:.0f}">{escape(what)}</text>')
        for j, (name, members) in enumerate(boxes):
            out += _box(centre[(r, j)], name, members, _hosts(switches, members) if level == 1 else None)
    out.append("</svg>")
    hidden = sum(len(m) for _, b in rows for _, m in b if len(m) > 1)
    return (f'<figure id="fig-{escape(fid)}" class="diagram">' + "\n".join(out)
            + f"<figcaption>{escape(_caption(net, hidden, len(lines) <= LABELLED))}</figcaption></figure>")


def _legend(rates: list, top: float, failed: bool) -> list[str]:
    out, x = [], 12
    for r in rates[:5]:
        out.append(f'<line x1="{x}" y1="36" x2="{x + 24}" y2="36" stroke="{CABLE}" stroke-width="{_width(r, top)}"/>')
        out.append(f'<text x="{x + 29}" y="40">{escape(rate(r))}</text>')
        x += 40 + 6.2 * len(rate(r))
    if failed:
        out.append(f'<line x1="{x}" y1="36" x2="{x + 24}" y2="36" stroke="{FAIL}" stroke-width="2" '
                   'stroke-dasharray="5 3"/>')
        out.append(f'<text x="{x + 29}" y="40" fill="{FAIL}">degraded</text>')
        x += 100
    out.append(f'<text x="{x}" y="40">\u00d7N: N parallel cables</text>')
    return out


def _width(r: float, top: float) -> str:
    return f"{1 + 4 * r / top:.1f}"


def _cables(lines: dict, centre: dict, top: float, labelled: bool) -> list[str]:
    out, seen = [], {}
    for (a, b, r, bad), n in sorted(lines.items(), key=lambda kv: kv[0][3]):    # degraded drawn last, on top
        k = seen[(a, b)] = seen.get((a, b), -1) + 1                              # lines of one pair side by side
        (xa, ya), (xb, yb) = centre[a], centre[b]
        dx = 5 * ((k + 1) // 2) * (1 if k % 2 else -1)
        colour = FAIL if bad else CABLE
        dash = ' stroke-dasharray="5 3"' if bad else ""
        tip = f"<title>{n} cable{'s' * (n != 1)}, {escape(rate(r))}{', degraded' if bad else ''}</title>"
        if ya == yb:                             # two switches of one level: an arc above them
            y = ya
            mx, my = (xa + xb) / 2 + dx, y - 36
            out.append(f'<path class="cable" d="M{xa + dx:.1f},{y:.1f} Q{mx:.1f},{my:.1f} {xb + dx:.1f},{y:.1f}" '
                       f'fill="none" stroke="{colour}" stroke-width="{_width(r, top)}"{dash}>{tip}</path>')
            lx, ly = mx, (y + my) / 2
        else:
            (xl, yl), (xu, yu) = sorted(((xa, ya), (xb, yb)), key=lambda p: -p[1])   # lower box first
            out.append(f'<line class="cable" x1="{xl + dx:.1f}" y1="{yl:.1f}" x2="{xu + dx:.1f}" '
                       f'y2="{yu + BOX_H:.1f}" stroke="{colour}" stroke-width="{_width(r, top)}"{dash}>{tip}</line>')
            lx, ly = (xl + xu) / 2 + dx, (yl + yu + BOX_H) / 2
        if labelled and n > 1:
            out.append(f'<text class="count" x="{lx:.1f}" y="{ly + 4:.1f}" text-anchor="middle" font-size="10" '
                       f'fill="{colour}" stroke="#ffffff" stroke-width="3" paint-order="stroke">\u00d7{n}</text>')
    return out


def _box(at: tuple, name: str, members: list, hosts: tuple | None) -> list[str]:
    """A switch's box, or the box of the rest of a level; under a leaf, its hosts (hosts, degraded cables)."""
    x, y = at
    one = len(members) == 1
    shown = name if len(name) <= 14 else name[:13] + "\u2026"
    tip = name if one else f"{len(members):,} more switches: " + ", ".join(members[:12]) + (
        f" and {len(members) - 12:,} more" if len(members) > 12 else "")
    dash = "" if one else ' stroke-dasharray="4 2"'
    out = [f'<g class="switch"><title>{escape(tip)}</title>'
           f'<rect x="{x - BOX_W / 2:.1f}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="3" fill="#eef3f8" '
           f'stroke="#0072B2"{dash}/>'
           f'<text x="{x:.1f}" y="{y + BOX_H / 2 + 4:.1f}" text-anchor="middle">{escape(shown)}</text></g>']
    if hosts is not None:
        n, slow = hosts
        out.append(f'<line x1="{x:.1f}" y1="{y + BOX_H:.1f}" x2="{x:.1f}" y2="{y + BOX_H + 8:.1f}" stroke="{CABLE}"/>')
        out.append(f'<text class="hosts" x="{x:.1f}" y="{y + BOX_H + 20:.1f}" text-anchor="middle">'
                   f'{n:,} host{"s" * (n != 1)}</text>')
        if slow:
            out.append(f'<text class="hosts" x="{x:.1f}" y="{y + BOX_H + 33:.1f}" text-anchor="middle" '
                       f'fill="{FAIL}">{slow:,} degraded</text>')
    return out


def _hosts(switches: dict, members: list) -> tuple[int, int]:
    """Hosts under these leaves (a host cabled to two counts twice) and their degraded cables."""
    mine = [switches[s] for s in members]
    return sum(s["hosts"] for s in mine), sum(s["degraded_to_hosts"] for s in mine)


def _caption(net: dict, hidden: int, labelled: bool) -> str:
    text = (f"{net['switches']:,} switches and {net['hosts']:,} hosts; a box is a switch (a dashed one stands for "
            f"the rest of its level), the count under a leaf its hosts; a line is the cables of one rate "
            "between two boxes, thicker the faster, " + ("\u00d7N where there are N" if labelled else
                                                           "its count of cables in its tooltip (too many to label)"))
    if hidden:
        text += f"; {hidden:,} switches drawn as the boxes of the rest"
    bad = net["degraded"]
    if bad:
        text += "; red and dashed, degraded: " + "; ".join(
            f"{c['label']} at {rate(c['rate_MBps'])} ({c['reason']})" for c in bad[:5])
        if len(bad) > 5:
            text += f" and {len(bad) - 5:,} more (the table lists every one)"
    return text
