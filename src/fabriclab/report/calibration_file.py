"""`fabriclab calibrate`: a run's measured saturation throughput as the
model's calibration file (model/calibration.py reads it with `-C`).

Seed 001 §3.2 and §5: force all traffic through one resource, measure the
throughput at which it saturates, and substitute it for the nominal B_eff.
The saturation plateau (analysis/ranks.py) of message.saturation at the
largest size measured is that throughput; with `stream`, the peak of
message.stream stands for it where no saturation was run (one path's
throughput: a lower bound when one stream cannot fill the resource). With
`bidirectional`, message.bibw between pairs placed across the resource
loads it both ways at once, the traffic of an all-to-all exchange (each
direction's data sharing it with the other's acknowledgements): half the
highest aggregate bandwidth is the rate per direction.

With `collectives`, the two costs the model adds to a collective's flows
(docs/model.md §10) instead: alpha, the time to start one message, is
message.pingpong's one-way time at its smallest size (half the round trip,
Hockney's t0); gamma, the time to reduce one byte, is one over
coll.reduce_local's bandwidth at its largest size on the fewest ranks
(MPI_Reduce_local, the library's own reduction, out of cache)."""

from __future__ import annotations

import re

from ..errors import UsageError
from ..verdicts.coll_prediction import cost_sources
from ..units import fmt_bytes
from .tables import derived, group_name, rows

MB = 1e6
RESOURCE_NAME = re.compile(r"(?=.{1,128}$)[A-Za-z0-9_][A-Za-z0-9_.:\-]*(\[[0-9]{1,9}\])?")


def _interval(r, rate: float) -> list[float]:
    """The rate's 95% interval (MB/s) from its point's interval of the time per op."""
    return [round(x / MB, 3) for x in r.point.interval(rate)]


def _bidirectional(rs: list) -> tuple:
    """(row, rate per direction, how) from message.bibw's best point."""
    both = [r for r in rs if r.bench == "message.bibw" and r.bandwidth_Bps]
    if not both:
        raise UsageError("the run has no message.bibw points to calibrate both directions from (run "
                         "`fabriclab run message.bibw` with pairs placed across the resource)")
    r = max(both, key=lambda x: x.bandwidth_Bps)
    how = (f"message.bibw at {fmt_bytes(r.size)}{f' [{r.variant}]' if r.variant else ''}: half the aggregate "
           f"of {r.active} pair{'s' if r.active != 1 else ''} loading it both ways")
    return r, r.bandwidth_Bps / 2, how


def measurement(doc, stream: bool = False, bidirectional: bool = False) -> dict:
    """{value, ci_MBps, source, date} in MB/s from a run's saturation (or stream, or bibw) points."""
    h = doc.header
    rs = rows(doc)
    hosts = ",".join(dict.fromkeys(h.hosts or [])) or h.host.get("hostname", "?")
    date = str(h.start_time or "")[:10]
    sat = [r for r in rs if r.bench == "message.saturation" and r.aggregate_bandwidth_Bps]
    if bidirectional:
        r, rate, how = _bidirectional(rs)
    elif sat:
        size = max(r.size for r in sat)
        name = group_name("message.saturation", sat[0].variant)
        p = derived(doc, rs).get(name, {}).get("saturation", {}).get(size)
        if not p:
            raise UsageError("the run's message.saturation points have no plateau to calibrate from")
        r = next(x for x in sat if x.size == size and x.active == p["active"])
        rate = p["rate_Bps"]
        how = (f"message.saturation at {fmt_bytes(size)}: plateau from {p['active']} active pairs"
               if p["reached"] else f"message.saturation at {fmt_bytes(size)}: not saturated, highest at "
                                    f"{p['active']} active pairs (a lower bound)")
    elif stream:
        st = [r for r in rs if r.bench == "message.stream" and r.bandwidth_Bps]
        if not st:
            raise UsageError("the run has neither message.saturation nor message.stream points to calibrate from")
        r = max(st, key=lambda x: x.bandwidth_Bps)
        rate = r.bandwidth_Bps
        how = f"message.stream peak at {fmt_bytes(r.size)} (one stream)"
    else:
        raise UsageError("the run has no message.saturation points (run `fabriclab run message.saturation` "
                         "across the resource, or give --stream to use message.stream's peak)")
    return {"value": round(rate / MB, 3), "ci_MBps": _interval(r, rate),
            "source": f"fabriclab run {h.run_id or '?'}, {how}, hosts {hosts}", "date": date}


def _seconds(r, value: float, how: str, source: str, date: str) -> dict:
    """A measured time (seconds) with its 95% interval, from a time per op proportional to it."""
    lo, hi = (value * x / r.median_s for x in (r.ci_low_s or r.median_s, r.ci_high_s or r.median_s))
    return {"value": float(f"{value:.4g}"), "ci_s": [float(f"{lo:.4g}"), float(f"{hi:.4g}")],
            "source": f"{source}, {how}", "date": date}


def collective_costs(doc) -> dict:
    """{alpha_s, gamma_s_per_byte} as measured by the run (either one where the other is
    missing); UsageError where neither is."""
    h = doc.header
    rs = rows(doc)
    hosts = ",".join(dict.fromkeys(h.hosts or [])) or h.host.get("hostname", "?")
    source, date, out = f"fabriclab run {h.run_id or '?'}, hosts {hosts}", str(h.start_time or "")[:10], {}
    a, g = cost_sources(rs)
    if a:
        out["alpha_s"] = _seconds(a, a.latency_s, f"message.pingpong at {fmt_bytes(a.size)}: half the round trip",
                                  source, date)
    if g:
        out["gamma_s_per_byte"] = _seconds(
            g, 1 / g.bandwidth_Bps, f"coll.reduce_local{f' [{g.variant}]' if g.variant else ''} at "
            f"{fmt_bytes(g.size)} on {g.active or 1} rank{'s' if (g.active or 1) > 1 else ''}: one over its bandwidth",
            source, date)
    if not out:
        raise UsageError("the run has neither message.pingpong nor coll.reduce_local points to take alpha and "
                         "gamma from (run `fabriclab run message.pingpong coll.reduce_local`)")
    return out


def calibration(doc, resource: str = "link", tech: str | None = None, stream: bool = False,
                bidirectional: bool = False) -> dict:
    """The calibration file's content: {resource: measurement} or {tech: {resource: measurement}};
    `resource` may name several, comma-separated (the cables of one class), each given the rate.
    Names of a form no resource has are refused (the caller checks them against `tech`'s)."""
    names = [name.strip() for name in resource.split(",") if name.strip()]
    if not names:
        raise UsageError("--resource names no resource")
    for name in names:      # a catalog resource, a network file's link name or links[I]
        if not RESOURCE_NAME.fullmatch(name):
            raise UsageError(f"--resource {name[:60]!r} is no resource name (letters, digits, '_', '-', '.', "
                             "':' and an index [I], at most 128 characters)")
    one = measurement(doc, stream, bidirectional)
    m = {name: one for name in names}
    return {tech: m} if tech else m
