"""A study's report: its figures redrawn from the user's runs with the seed's
published values as reference series, each finding of the seed beside what
the runs show (or, judged on the model, what the model computes) with its
verdict, what was skipped and why, and how every run was obtained. One
self-contained HTML file, like `fabriclab report`."""

from __future__ import annotations

import time

from .. import __version__
from ..report.escape import xml as escape
from ..report.html import CSS, figure_html, run_facts, table
from .recipe import FAILS, HOLDS, MEASUREMENTS, MODEL, MODEL_FAILS, MODEL_HOLDS, Runs, Study

_CLASS = {HOLDS: "holds", MODEL_HOLDS: "holds", FAILS: "fails", MODEL_FAILS: "fails"}
_STYLE = (".holds{color:#00663a;font-weight:600}.fails{color:#b00020;font-weight:600}"
          ".unmeasured{color:#666;font-style:italic}")


def render(study: Study, runs: Runs, ref, commands: dict, found: list | None = None) -> str:
    """The study's page; `commands`: step name -> the `fabriclab run` command it ran;
    `found`: the study's findings on these runs when the caller has them already."""
    title = f"fabriclab study {study.name}: {study.title}"
    found = study.findings(runs, ref) if found is None else found
    tally = {v: sum(f.verdict == v for f in found) for v in {f.verdict for f in found}}
    body = [f"<h1>{escape(title)}</h1>",
            f"<p>Seed {escape(study.seed)}: {escape(ref.title)} ({escape(ref.authors)}"
            f"{', ' + str(ref.year) if ref.year else ''}). {escape(study.about)}</p>",
            f"<p>Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by fabriclab {__version__}. "
            "MB/s are 10^6 payload bytes per second; dashed series are not measured here: the seed's published "
            "values, or a model.</p>",
            "<h2 id=\"findings\">Findings</h2>",
            "<p>" + escape(", ".join(f"{n} {v}" for v, n in sorted(tally.items()))) + "</p>",
            _findings(found), "<h2 id=\"figures\">Figures</h2>",
            '<div class="figs">' + "\n".join(figure_html(f) for f in study.figures(runs, ref) if not f.empty())
            + "</div>"]
    body += _skipped(runs)
    body += _runs(study, runs, commands)
    body += ["<h2 id=\"published\">The seed's published values</h2>", _published(ref)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{escape(title)}</title>"
            f"<style>{CSS}{_STYLE}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")


# The findings in a table per basis: on this machine's runs, then on the model alone.
_BASES = ((MEASUREMENTS, "measured here", "Judged on your measurements"),
          (MODEL, "the model computes", "Judged on the model (the seed's formulas and parameters, no measurement)"))


def _findings(found: list) -> str:
    out = []
    for basis, column, heading in _BASES:
        mine = [f for f in found if f.judged_on == basis]
        if not mine:
            continue
        if any(f.judged_on != MEASUREMENTS for f in found):
            out.append(f"<h3>{escape(heading)}</h3>")
        out.append(f"<table><thead><tr><th>id</th><th>the seed found</th><th>published</th><th>{column}</th>"
                   "<th>verdict</th></tr></thead><tbody>" + "\n".join(_finding_row(f) for f in mine)
                   + "</tbody></table>")
    return "\n".join(out)


def _finding_row(f) -> str:
    verdict = f.verdict + (f", because {f.because}" if f.because else "")
    shown = f.model if f.judged_on == MODEL else f.measured
    return (f"<tr><td>{escape(f.id)}</td><td>{escape(f.claim)}<br><small>{escape(f.where)}</small></td>"
            f"<td>{escape(f.published)}</td><td>{escape(shown or '-')}</td>"
            f'<td class="{_CLASS.get(f.verdict, "unmeasured")}">{escape(verdict)}</td></tr>')


def _skipped(runs: Runs) -> list:
    if not runs.skipped:
        return []
    return ["<h2 id=\"skipped\">Skipped</h2>",
            table(["step", "why"], [[name, why] for name, why in runs.skipped.items()])]


def _runs(study: Study, runs: Runs, commands: dict) -> list:
    out = ["<h2 id=\"runs\">How each run was obtained</h2>"]
    for step in study.steps:
        doc = runs.docs.get(step.name)
        out.append(f"<h3>{escape(step.name)}</h3><p>{escape(step.feeds)}. "
                   f"<code>{escape(commands.get(step.name, '-'))}</code></p>")
        if doc is not None:
            out.append(table(["", ""], [list(kv) for kv in run_facts(step.name, doc)]))
    return out


def _published(ref) -> str:
    return table(["id", "system", "quantity", "as printed", "where", "read from"],
                 [[v.id, v.system, v.quantity, v.printed, v.where, v.read_from] for v in ref.values])
