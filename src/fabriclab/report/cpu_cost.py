"""The socket benchmarks' CPU cost as rows and tables read it (report/rows.py,
report/tables.py); the view "cpu" draws it (report/cpu_views.py).

Which benchmarks: those whose facts name view "cpu", every benchmark of the
socket levels (suite/facts.py, SOCKET_LEVELS). A request/response
benchmark (facts' metric "latency") costs per transaction, netperf's us/Tr;
the rest per KB moved, netperf's us/KB (analysis/cpu.py: the formulas,
KB = 1024 bytes). Local is rank 0, remote rank 1, as netperf names its two
ends."""

from __future__ import annotations

from dataclasses import asdict
from typing import Optional

from ..analysis import cpu
from ..suite.benchmarks import REGISTRY

VIEW = "cpu"
# The columns a socket benchmark's table adds (report/tables.py), {per}: KB or Tr.
HEAD = ("cpu0%", "cpu1%", "us/{per} local", "us/{per} remote")
NOTE = ("cpu0%, cpu1%: rank 0's and rank 1's CPU (user + system, every thread of the process) over the samples' "
        "span, 100 = one CPU busy; us/{per}: netperf's service demand, CPU microseconds per {what}, local = "
        "rank 0, remote = rank 1; ~: over fewer than {ticks} clock ticks, coarse")
WHAT = {"KB": "KB moved (1024 payload bytes)", "Tr": "transaction (one op)"}


def cost_unit(bench: str) -> Optional[str]:
    """What a benchmark's CPU cost is per: "Tr" (request/response), "KB", or None (not a socket benchmark)."""
    b = REGISTRY.get(bench)
    if b is None or VIEW not in b.views:
        return None
    return "Tr" if b.metric == "latency" else "KB"


def note(per: str) -> str:
    return NOTE.format(per=per, what=WHAT[per], ticks=cpu.COARSE_TICKS)


# The fields report/rows.py's Row takes from row_figures, in its order.
FIELDS = ("cpu_local_util", "cpu_remote_util", "cpu_local_demand_us", "cpu_remote_demand_us", "cpu_demand_per",
          "cpu_coarse")


def row_figures(p, tick_s: float = cpu.TICK_S) -> dict:
    """A point's CPU figures for its row: rank 0's and rank 1's utilisation and service
    demand, what the demand is per, and whether either interval was coarse (all None
    outside the socket benchmarks or without rank_cpu)."""
    per = cost_unit(p.bench)
    rs = cpu.ranks(p, per, tick_s) if per else []
    if not rs:
        return dict.fromkeys(FIELDS)
    local, remote = cpu.local_remote(rs)
    return {"cpu_local_util": local.utilisation, "cpu_remote_util": remote and remote.utilisation,
            "cpu_local_demand_us": local.demand_us, "cpu_remote_demand_us": remote and remote.demand_us,
            "cpu_demand_per": per, "cpu_coarse": local.coarse or bool(remote and remote.coarse)}


def cells(r) -> list[str]:
    """The table's four CPU cells of a row (report/tables.py)."""
    mark = "~" if r.cpu_coarse else ""
    pct = lambda u: "-" if u is None else f"{u * 100:.1f}{mark}"  # noqa: E731
    sd = lambda d: "-" if d is None else f"{d:.3g}{mark}"  # noqa: E731
    return [pct(r.cpu_local_util), pct(r.cpu_remote_util), sd(r.cpu_local_demand_us), sd(r.cpu_remote_demand_us)]


def per_rank(rs: list, timer: Optional[dict]) -> list:
    """Every rank's CPU figures of each socket row (the JSON format's "cpu"; a pattern's ranks
    each with its own bytes): bench, variant, axes, what demand is per, and per rank its
    seconds, utilisation, demand_us and coarse."""
    tick = cpu.tick_of(timer)
    return [{"bench": r.bench, "variant": r.variant, **r.axes, "per": r.cpu_demand_per,
             "ranks": [asdict(x) for x in cpu.ranks(r.point, r.cpu_demand_per, tick)]}
            for r in rs if r.cpu_demand_per]
