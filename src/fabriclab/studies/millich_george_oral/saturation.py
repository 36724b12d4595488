"""Seed 001's measured part: saturate one cable with one sender more at a time
(Fig. 5-8, 11-12), calibrate the model with the plateau, and set the
calibrated model's prediction beside a measured all-to-all (§5); its
findings mgo-1 .. mgo-4 are judged on the measurements.

The saturation and the all-to-all need several hosts and the network file
that joins them: a testbed's own file (the run header's `network`, recorded
by `fabriclab run --testbed`), or `--network FILE` on real hosts."""

from __future__ import annotations

from typing import Optional

from ...errors import FabriclabError
from ...report.figure import Axis, Series
from ...units import fmt_bytes
from .. import draw
from ..recipe import Finding, Runs, Step

# Fig. 6 sweeps 0-64 KiB, Fig. 12 0-256 KiB; windows of 16 messages keep the
# cable busy between waits, as `testbed validate` saturates it. The
# all-to-all is validate's: every message in flight at once, at least 256 KiB
# per flow per wait (docs/testbed.md). Seconds: the two-switches testbed of
# 20 MB/s, 8 hosts, measured on this 2-core machine (the whole study: 94 s).
QUICK = ("--launches", "3", "--point-time", "1")
STEPS = (
    Step("saturation", ("message.saturation", "-s", "4K:256K:x4", "-p", "window=16", *QUICK),
         "Fig. 5-8, 11-12: 1 to N/2 senders (rank i to rank i + N/2), all messages across one cable; "
         "its plateau calibrates the model", ranks=8, hosts=4, scales=True, seconds=70),
    Step("alltoall", ("message.alltoall", "-s", "16K,64K,256K", "-p", "variant=concurrent", "-p", "fill=256K",
                      *QUICK),
         "§5: the all-to-all the calibrated model predicts, every message in flight at once, one rank per node",
         ranks=8, hosts=4, scales=True, seconds=20),
)
ON_ONE_MACHINE = ("on one machine: `fabriclab testbed up examples/testbeds/two-switches.yaml --name tb` (root), "
                  "then `fabriclab study run millich-george-oral --testbed tb -n 8`")


# ---- the saturation test and the calibrated model, from the runs -------------------------------

def _top(rows: list) -> list:
    """The rows at the largest size, by active senders."""
    top = max((r.size for r in rows), default=None)
    return sorted((r for r in rows if r.size == top and r.aggregate_bandwidth_Bps), key=lambda r: r.active or 0)


def _senders(runs: Runs) -> list:
    """Aggregate throughput at the largest size by senders: [(senders, row)]."""
    return [(r.active, r) for r in _top(runs.rows("saturation", "message.saturation"))]


def _network(runs: Runs, step: str):
    """(the network file's model (CustomNetwork), its path, the run's rank hosts), or a reason string."""
    doc = runs.docs.get(step)
    if doc is None:
        return f"{runs.missing(step)}; {ON_ONE_MACHINE}"
    path, hosts = doc.header.network, doc.header.hosts or []
    if not path:
        return "the run names no network file: run it on a testbed (--testbed) or give --network FILE"
    from ...model.topologies.custom import load_network_file
    try:
        net = load_network_file(path)
    except (OSError, ValueError, FabriclabError) as e:
        return f"the network file {path} cannot be read ({e})"
    missing = [h for h in hosts if h not in net.node_names]
    if missing or not hosts:
        return f"the ranks' host {missing[0] if missing else '?'!r} is not a node of {path}"
    return net, path, hosts


def _cable(net, hosts: list, active: int) -> Optional[int]:
    """The link that every active pair's route crosses (pair k: the hosts of
    ranks k and k + N/2), the slowest where several are; None when none is shared."""
    from ...model import validate as v
    idx = [list(net.node_names).index(h) for h in hosts]
    half = len(idx) // 2
    shared = None
    for k in range(active):
        if idx[k] == idx[k + half]:
            return None
        links = {net.channel_cable[c][0] for c in net.router.route(idx[k], idx[k + half])}
        shared = links if shared is None else shared & links
    return min(shared, key=lambda i: (v.link_rate_MBps(net, i), i)) if shared else None


def _saturated(runs: Runs):
    """(the plateau row, its cable's link index, nominal B/s, the network, path), or a reason string."""
    from ...model.resources import MB
    from ...model import validate as v
    pts = _senders(runs)
    if not pts:
        return f"{runs.missing('saturation')}; {ON_ONE_MACHINE}"
    found = _network(runs, "saturation")
    if isinstance(found, str):
        return found
    net, path, hosts = found
    plateau = max((r for _, r in pts), key=lambda r: r.aggregate_bandwidth_Bps)
    link = _cable(net, hosts, plateau.active)
    if link is None:
        return (f"the {plateau.active} pairs' routes share no cable in {path}, so no cable saturated: use hosts "
                "whose first and second halves sit on either side of one cable (-n 8 on two-switches.yaml)")
    return plateau, link, v.link_rate_MBps(net, link) * MB, net, path


def _predicted(runs: Runs):
    """(measured per-node all-to-all B/s at the largest size and that size, the calibrated and the
    nominal prediction (B/s, bottleneck), the saturation plateau B/s), or a reason string."""
    from ...model import validate as v
    sat = _saturated(runs)
    if isinstance(sat, str):
        return sat
    plateau, link, _, net, path = sat
    found = _network(runs, "alltoall")
    if isinstance(found, str):
        return found
    _, a2a_path, hosts = found
    measured = v.per_node(runs.rows("alltoall", "message.alltoall"), len(hosts))
    if not measured:
        return runs.missing("alltoall")
    if a2a_path != path or sorted(hosts) != sorted(net.node_names):
        return (f"the all-to-all ran on {len(hosts)} hosts of {a2a_path}; the prediction is for one rank on "
                f"each of the {net.n_nodes} nodes of {path}: give -n {net.n_nodes}")
    rate = plateau.aggregate_bandwidth_Bps
    size = max(measured)
    return (measured[size], size, v.predict(net, path, v.cable_class(net, link), rate), v.predict(net, path),
            rate)


# ---- figures -----------------------------------------------------------------------------------

SENDERS = Axis("senders", log=False, kind="count")
PER_NODE = Axis("bandwidth per node (MB/s)", log=False)
SHARE = Axis("share of the cable's nominal rate (%)", log=False)


def figures(runs: Runs, ref) -> list:
    return [_saturation_figure(runs, ref), _senders_figure(runs, ref), _alltoall_figure(runs, ref)]


def _nominal_level(runs: Runs, xs: list) -> list:
    sat = _saturated(runs)
    if isinstance(sat, str) or not xs:
        return []
    return [Series("the saturated cable's nominal rate (network file)", [min(xs), max(xs)],
                   [sat[2] / draw.MBPS] * 2, dashed=True, markers=False, color=6)]


def _saturation_figure(runs: Runs, ref):
    rows = runs.rows("saturation", "message.saturation")
    counts = sorted({r.active for r in rows if r.active})
    series = [draw.measured(f"{k} sender{'s' if k > 1 else ''}", [r for r in rows if r.active == k], "aggregate",
                            color=k - 1) for k in counts]
    xs = [r.size for r in rows]
    series += _nominal_level(runs, xs)
    series += [draw.level(f"{what} (seed's {where})", ref.get(key), xs, color=c)
               for what, key, where, c in (("SCI link saturated", "sci-link-saturation", "Fig. 6", 4),
                                           ("Myrinet cable saturated", "myrinet-link-saturation", "Fig. 12", 5))]
    return draw.figure("mgo-saturation", "Saturation: aggregate throughput across one cable (Fig. 6, 12)",
                       draw.SIZE, draw.BANDWIDTH, series,
                       "pair k sends from rank k to rank k + N/2, every pair's messages across the same cable; "
                       "the seed's B-Link test (Fig. 7-8) needs hosts that forward, which a testbed cannot emulate")


def _senders_figure(runs: Runs, ref):
    """The plateau as a share of the cable's nominal rate: the seed's 84-90% and this fabric's on one scale."""
    pts, sat = _senders(runs), _saturated(runs)
    nominal = sat[2] if not isinstance(sat, str) else None
    ks = [k for k, _ in pts]
    series = [Series("measured, largest size", ks if nominal else [],
                     [r.aggregate_bandwidth_Bps / nominal * 100 for _, r in pts] if nominal else [],
                     hollow=[r.stop != "converged" for _, r in pts], color=0)]
    series += [draw.level(f"{what} (seed's {where})", ref.get(key), ks, scale=0.01, color=c)
               for what, key, where, c in (("SCI link", "sci-link-saturation-share", "Fig. 6", 4),
                                           ("SCI B-Link", "sci-blink-saturation-share", "Fig. 8", 2),
                                           ("Myrinet cable", "myrinet-link-saturation-share", "Fig. 12", 5))]
    return draw.figure("mgo-senders", "Saturation: share of the cable's rate against senders (Fig. 6, 8, 12)",
                       SENDERS, SHARE, series,
                       "aggregate throughput at the largest size over the saturated cable's nominal rate (the "
                       "network file's); the seed: two senders give twice one, a third saturates the link, a "
                       "fourth adds almost nothing, at 84-90% of the effective rate")


def _alltoall_figure(runs: Runs, ref):
    from ...model import validate as v
    found = _network(runs, "alltoall")
    n = len(found[2]) if not isinstance(found, str) else 1
    per = v.per_node(runs.rows("alltoall", "message.alltoall"), n) if n > 1 else {}
    xs = sorted(per)
    series = [Series("measured all-to-all", xs, [per[s] / draw.MBPS for s in xs], color=0)]
    got = _predicted(runs)
    if not isinstance(got, str) and xs:
        (cal, label), (nominal, nlabel) = got[2], got[3]
        series += [Series(f"model calibrated by the saturation ({label})", [xs[0], xs[-1]], [cal / draw.MBPS] * 2,
                          dashed=True, markers=False, color=1),
                   Series(f"model, nominal rates ({nlabel})", [xs[0], xs[-1]], [nominal / draw.MBPS] * 2,
                          dashed=True, markers=False, color=6)]
    return draw.figure("mgo-alltoall", "All-to-all per node: measured and predicted (§5)", draw.SIZE, PER_NODE,
                       series, "every message of the exchange in flight at once; the model calibrated with the "
                       "saturated cable's plateau for every cable of its class, as the seed substitutes its "
                       "measured rates for B_eff")


# ---- findings ----------------------------------------------------------------------------------

def findings(runs: Runs, ref) -> list:
    return [_two_senders(runs, ref), _levels_off(runs, ref), _share(runs, ref), _prediction(runs, ref)]


def _two_senders(runs: Runs, ref) -> Finding:
    f = Finding("mgo-1", "One sender cannot saturate the link: two senders give twice the throughput of one",
                "§3.2, Fig. 6", draw.quoted(ref.get("sci-link-two-senders")))
    pts = dict(_senders(runs))
    if 1 not in pts or 2 not in pts:
        return f.unmeasured(f"{runs.missing('saturation')}; {ON_ONE_MACHINE}" if not pts
                            else "the saturation ran fewer than 2 pairs: give -n 4 or more")
    one, two = pts[1].aggregate_bandwidth_Bps, pts[2].aggregate_bandwidth_Bps
    top = max(r.aggregate_bandwidth_Bps for r in pts.values())
    ratio = two / one
    # "twice": within 10% of 2, the tolerance fabriclab gives a prediction (model.validate.TOLERANCE)
    return f.judged(f"at {fmt_bytes(pts[1].size)}: one sender {one / draw.MBPS:.1f} MB/s, two "
                    f"{two / draw.MBPS:.1f} MB/s ({ratio:.2f}x)", ratio >= 1.8,
                    f"two senders give only {ratio:.2f}x one: one sender alone reaches {one / top:.0%} of the "
                    "plateau, so the shared cable, not the sender, limits it already")


def _levels_off(runs: Runs, ref) -> Finding:
    f = Finding("mgo-2", "Once the link is saturated, another sender makes almost no difference to the aggregate",
                "§3.2, Fig. 6; §4.2, Fig. 12",
                f"SCI: {draw.quoted(ref.get('sci-link-saturation'))} with 4 senders; Myrinet: "
                f"{draw.quoted(ref.get('myrinet-link-saturation'))} with 4")
    pts = _senders(runs)
    if len(pts) < 3:
        return f.unmeasured(f"{runs.missing('saturation')}; {ON_ONE_MACHINE}" if not pts
                            else "the saturation ran fewer than 3 pairs: give -n 6 or more")
    (k1, a), (k2, b) = pts[-2], pts[-1]
    gain = b.aggregate_bandwidth_Bps / a.aggregate_bandwidth_Bps - 1
    # "almost no difference": the last sender adds at most 10%, where a sender below saturation adds 1/k
    return f.judged(f"{k1} senders {a.aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s, {k2} senders "
                    f"{b.aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s ({gain:+.0%})", abs(gain) <= 0.10,
                    f"sender {k2} changed the aggregate by {gain:+.0%}: the cable was not saturated by {k1}"
                    if gain > 0 else f"sender {k2} lowered the aggregate by {-gain:.0%}")


def _share(runs: Runs, ref) -> Finding:
    shares = [ref.get(k) for k in ("sci-link-saturation-share", "sci-blink-saturation-share",
                                   "myrinet-link-saturation-share")]
    f = Finding("mgo-3", "A saturated link carries 84-90% of its theoretical effective rate", "§3.2, §4.2",
                "; ".join(draw.quoted(s) for s in shares))
    sat = _saturated(runs)
    if isinstance(sat, str):
        return f.unmeasured(sat)
    plateau, link, nominal, net, path = sat
    share = plateau.aggregate_bandwidth_Bps / nominal
    # the seed's three shares span 84-90%; within 5 points of that span holds
    lo, hi = min(s.value for s in shares) / 100 - 0.05, max(s.value for s in shares) / 100 + 0.05
    return f.judged(f"{plateau.active} senders: {plateau.aggregate_bandwidth_Bps / draw.MBPS:.1f} MB/s across "
                    f"links[{link}] of {path}, {share:.0%} of its nominal {nominal / draw.MBPS:g} MB/s",
                    lo <= share <= hi, f"the cable carried {share:.0%} of its nominal rate, outside "
                    f"{lo:.0%}-{hi:.0%}")


def _prediction(runs: Runs, ref) -> Finding:
    from ...model import validate as v
    f = Finding("mgo-4", "Calibrated with the measured saturation throughput, the model represents the "
                "throughput a real system sees", "§5",
                "the measured " + ", ".join(draw.stated(ref.get(k)) for k in
                                            ("sci-link-saturation", "sci-blink-saturation",
                                             "myrinet-link-saturation"))
                + " replace the effective rates (84-90% of them)")
    got = _predicted(runs)
    if isinstance(got, str):
        return f.unmeasured(got)
    measured, size, (cal, label), (nominal, _), rate = got
    ratio = measured / cal
    # the seed's calibration corrects the nominal model by 10-16% (its links' measured 84-90%): a calibrated
    # prediction must come closer than that, within model.validate.TOLERANCE (10%), as `testbed validate` asks
    return f.judged(f"all-to-all at {fmt_bytes(size)}: {measured / draw.MBPS:.2f} MB/s per node; calibrated "
                    f"with {rate / draw.MBPS:.2f} MB/s the model predicts {cal / draw.MBPS:.2f} ({label}), ratio "
                    f"{ratio:.2f}; nominal {nominal / draw.MBPS:.2f}, ratio {measured / nominal:.2f}",
                    abs(ratio - 1) <= v.TOLERANCE,
                    f"the measured all-to-all is {ratio:.2f}x the calibrated prediction, outside "
                    f"{v.TOLERANCE:.0%}")
