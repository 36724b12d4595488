"""`testbed validate`'s collectives: ring, recursive doubling and Rabenseifner
allreduce, binomial bcast and ring allgather at the validation's largest
size, one rank on each host, each against the time of its schedule on the
calibrated network (verdicts/coll_prediction.py, model/schedule_time.py)
with alpha and gamma measured there too (an 8-byte ping-pong, coll.reduce_local
on every rank at once), and, on a testbed, the cable direction the model keeps busy longest over the
whole op against the one the testbed measured busiest over the point
(cables.py's spans); the bottleneck of the costliest step is named beside."""

from __future__ import annotations

from statistics import median

from ..analysis import merge
from ..verdicts import coll_prediction
from ..model.calibration import Calibration
from ..model.collective import ALPHA, GAMMA
from ..model.netfile import NetworkFile

# The operations and the library's names of the algorithms checked, by MPI flavour.
ALGORITHMS = (
    ("coll.allreduce", {"mpich": "ring,recursive_doubling,reduce_scatter_allgather",
                        "openmpi": "ring,recursive_doubling,rabenseifner"}),
    ("coll.bcast", {"mpich": "binomial", "openmpi": "binomial"}),
    ("coll.allgather", {"mpich": "ring", "openmpi": "ring"}),
)
TIE = 0.95        # the model's busiest measured at this share of the busiest direction or more: as busy


def costs(docs: list) -> dict:
    """alpha and gamma as the runs measured them (coll_prediction.cost_sources, the rule
    `fabriclab calibrate --collectives` follows), else the model's assumed ones."""
    a, g = coll_prediction.cost_sources([p for doc in docs for p in merge.merged(doc)])
    return {"alpha_s": a.latency_s if a else ALPHA, "gamma_s_per_byte": 1 / g.bandwidth_Bps if g else GAMMA,
            "from": {"alpha": "measured" if a else "assumed", "gamma": "measured" if g else "assumed"}}


def rows(site, docs: list, links: list, rate_Bps: float, testbed: bool, measured: dict) -> list[dict]:
    """Each collective point of the runs, predicted with the calibrated links and the
    `measured` costs (costs()); on a testbed, with the busiest measured cable direction
    beside the model's bottleneck."""
    from . import netns
    net = site.net
    system = NetworkFile(site.file, topo=net)
    cal = Calibration(common={f"links[{i}]": rate_Bps for i in links}, capped=False)
    cables = netns.load(site.name)["cables"] if testbed else None
    alpha, gamma = measured["alpha_s"], measured["gamma_s_per_byte"]
    out = []
    for doc in docs:
        for r in coll_prediction.rows(merge.merged(doc), list(net.node_names), system, alpha, gamma, cal):
            if cables is not None:
                r.update(busiest(doc, r, cables))
            out.append(r)
    return out


def _direction(cables: list, c: dict) -> str:
    """A cable direction as the model labels its resource: 'link trunk (s0→s1)'; the cables
    of one link ('link s0-s1, cable 1 of 2') are one resource class of the model, one name."""
    return f"{cables[c['cable']].get('label', '').split(', cable ')[0]} ({c['from']}→{c['to']})"


def busiest(doc, row: dict, cables: list) -> dict:
    """The cable direction the testbed measured busiest over the row's point (the median
    utilization over its launches), and whether the one the model gives the most busy
    seconds over the whole op (row["busiest"]) was as busy: a tie within TIE counts; and
    that cable's busiest 100 ms windows (their 90th percentile, a share of its rate). Unlike
    the all-to-all's, a collective's windows also hold its steps' starts and the barrier
    between ops, so they are a figure to read beside the ratio, not a test of the emulation."""
    util: dict = {}
    p90: dict = {}
    for e in doc.launch_ends:
        if e.bench != row["bench"] or (e.variant or "") != row["variant"]:
            continue
        for s in e.spans:
            if s.get("size") == row["size"]:
                per: dict = {}
                for c in s["cables"]:      # a link's busiest cable stands for the link
                    k = _direction(cables, c)
                    u, w = per.get(k, (0.0, 0.0))
                    per[k] = (max(u, c["util"]), max(w, c.get("p90_util", 0.0)))
                for k, (u, w) in per.items():
                    util.setdefault(k, []).append(u)
                    p90.setdefault(k, []).append(w)
    if not util:
        return {}
    med = {k: median(v) for k, v in util.items()}
    top = max(med, key=med.get)
    named = med.get(row["busiest"], 0.0)
    windows = median(p90[row["busiest"]]) if row["busiest"] in p90 else None
    return {"busiest_cable": top, "busiest_util": med[top], "model_busiest_util": named,
            "busiest_agrees": named >= TIE * med[top], "model_busiest_p90": windows}
