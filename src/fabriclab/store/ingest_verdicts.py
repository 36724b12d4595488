"""The judged figures of a document as store rows (ingest.py's other half): a
run's pair matrices (verdicts/pair_matrix.py) and congestion impacts
(verdicts/congestion.py), check.json's tests and failing items
(acceptance/check.py to_dict), and tune.json's choices (tuning/tuner.py).
Each is computed by the code that judges it; nothing here judges again."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Optional

from ..errors import UsageError

# What a failing item of check.json names, as acceptance/check.py and cabling.py write it:
# "cable LABEL: ...", "host NAME: ...", and a collective's "(its bottleneck, LABEL, is a cable
# named above)".
CABLE_ITEM = re.compile(r"^cable (?P<cable>.+?): ")
HOST_ITEM = re.compile(r"^host (?P<host>\S+?): ")
BOTTLENECK_ITEM = re.compile(r"\(its bottleneck, (?P<cable>.+), is a cable named above\)$")


def _finite(x) -> Optional[float]:
    return float(x) if x is not None and math.isfinite(x) else None


# ---- a run's verdicts ----------------------------------------------------------------------

def pair_rows(doc, merged: list, hosts: list) -> tuple[list, list]:
    """(pairs, findings): one row per ordered pair of each size's N x N matrix of message.shift
    (`hosts`: every rank's): its bandwidth (bytes/s), and on the run's network the model's rate
    and the cables limiting the pair (pair_matrix's `limits`: where max-min fills a cable and no
    flow across it runs faster); and a findings row (test "pairs") for each cable or host the
    matrix names, so that the history can say which cable a step in the pairs came from."""
    from ..verdicts import pair_matrix
    if not hosts or not any(m.bench == pair_matrix.BENCH for m in merged):
        return [], []
    try:
        ms = pair_matrix.matrices(merged, hosts, doc.header.network)
    except UsageError:          # the network file is gone: the matrix alone, as the report draws it
        ms = pair_matrix.matrices(merged, hosts)
    out = []
    for m in ms:
        n = len(m.hosts)
        for r in range(n):
            for c in range(n):
                bw = m.bandwidth[r, c]
                if r == c or not math.isfinite(bw):
                    continue
                limits = m.limits.get((r, c))
                out.append({"size": m.size, "src": r, "dst": c, "src_host": m.hosts[r], "dst_host": m.hosts[c],
                            "bandwidth": float(bw),
                            "expected": _finite(m.predicted[r, c]) if m.predicted is not None else None,
                            "cable": ",".join(sorted(limits)) if limits else None})
    named = [{"test": "pairs", "item": f"{label} at {m.size} B: {low} of its {of} pairs low", "cable": label,
              "host": None} for m in ms for label, low, of in m.cables]
    named += [{"test": "pairs", "item": f"host {h} {way} at {m.size} B: {low} of {of} pairs low", "cable": None,
               "host": h} for m in ms for h, way, low, of in m.hosts_named]
    return out, named


def impact_rows(doc, hosts: list) -> list:
    """One row per victim test, size and aggressor: the impact factor (congested over isolated
    time per op, its median) with its interval, the model's on a known network, and the cables
    the victims' flows share with the aggressors' (comma-joined)."""
    from ..suite.congestion import BENCHES
    from ..verdicts import congestion
    if not any(p.bench in BENCHES for p in doc.points):
        return []
    try:
        found = congestion.impacts(doc.points, hosts, doc.header.network)
    except UsageError:          # the network file is gone: the measured factors alone
        found = congestion.impacts(doc.points)
    return [{"victim": m.test, "aggressor": m.aggressor, "size": m.size, "impact": float(m.median[0]),
             "ci_low": _finite(m.median[1]), "ci_high": _finite(m.median[2]),
             "predicted": _finite(m.predicted.impact) if m.predicted else None,
             "cables": ",".join(m.predicted.shared) if m.predicted and m.predicted.shared else None}
            for m in found]


# ---- check.json and tune.json --------------------------------------------------------------

def kind_of(data) -> Optional[str]:
    """"check" for check.json, "tune" for tune.json, None for anything else."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("tests"), list) and "passed" in data:
        return "check"
    if isinstance(data.get("choices"), list) and "op" in data:
        return "tune"
    return None


def check_status(data: dict) -> str:
    """passed, failed, or stopped (check.json's `ended`: interrupted, terminated or a run failed)."""
    return "passed" if data.get("passed") is True else "stopped" if data.get("ended") else "failed"


def check_rows(data: dict) -> tuple[list, list]:
    """(one checks row per test: its verdict and attempts; one findings row per failing item of
    its last attempt, with the cable or host the item names)."""
    checks, findings = [], []
    for t in data["tests"]:
        attempts = t.get("attempts") or []
        checks.append({"test": str(t["test"]), "verdict": str(t["verdict"]), "attempts": len(attempts)})
        last = attempts[-1] if attempts else {}
        named = [str(x) for x in last.get("named") or []]
        for item in last.get("items") or []:
            item = str(item)
            cable, host = item_names(item, named)
            findings.append({"test": str(t["test"]), "item": item, "cable": cable, "host": host})
    return checks, findings


def item_names(item: str, named: list) -> tuple:
    """(the cable, the host) a failing item names, or None: the cables the attempt's pair matrix
    named (check.py Attempt.named) first, then the item's own words."""
    for label in sorted(named, key=len, reverse=True):      # the longest: one label may begin another
        if item.startswith(f"cable {label}: "):
            return label, None
    m = CABLE_ITEM.match(item) or BOTTLENECK_ITEM.search(item)
    if m:
        return m.group("cable"), None
    m = HOST_ITEM.match(item)
    return None, (m.group("host") if m else None)


def check_documents(data: dict, path: Path) -> list:
    """The run documents check.json's attempts name, where they are now (as written, else
    beside check.json)."""
    return _beside([a.get("document") for t in data["tests"] for a in t.get("attempts") or []], path)


def tune_rows(data: dict) -> list:
    """One findings row per size of the tuning: test the collective (coll.OP), item what the
    selection file chooses at that size ("SIZE: ALGORITHM", or the library's own choice)."""
    test = f"coll.{data['op']}"
    return [{"test": test, "item": f"{c['size']}: {c.get('algorithm') or 'the library choice'}", "cable": None,
             "host": None} for c in data["choices"]]


def tune_documents(data: dict, path: Path) -> list:
    """The tuning's measuring run and its check's runs, where they are now."""
    return _beside([data.get("measure"), *(data.get("check_runs") or [])], path)


def _beside(names: list, path: Path) -> list:
    out = []
    for name in names:
        if not isinstance(name, str) or not name.endswith((".json", ".ndjson")):
            continue                  # the cabling test's saved fabric is not a run
        p = Path(name)
        out.append(p if p.is_file() else path.parent / p.name)
    return out
