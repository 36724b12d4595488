"""The validation's comparison cable by cable: what the calibrated model
says each cable direction carries under all-to-all, against what the
testbed's counters say it carried (cables.py), and whether the emulation
itself was faithful while it measured.

Predicted: every ordered pair of hosts sends one flow, routed as the model
routes it (D-mod-K's one route, or ECMP's even split at every hop); a cable
direction's work is its flows over its rate (the calibrated rate for the
calibrated class, else the file's rate x efficiency); the busiest direction
is the bottleneck, busy the whole exchange (seed 001's hot-resource bound),
and every other direction is busy its work over the bottleneck's: its
predicted utilization.

Measured: a direction's wire bytes over the point's span (from its begin to
its point line, warm-up included) over its configured rate. Wire bytes hold
headers and acknowledgements (about 1% at 9000-byte frames), the payload
rate the model uses does not: at a saturated cable the two agree within that.

Faithful emulation: every direction the model saturates reached its rate in
its busiest windows (the 90th percentile of its 100 ms windows at
FAITHFUL_RATE of its rate or more: the shaper delivers its rate when it has
packets to send), the kernel's softirq threads, which forward and shape
every packet, waited for a CPU at most MAX_SOFTIRQ_WAIT of the span, and the
kernel dropped no packet at its input backlog (a loss between cables that no
shaper made).

On real hosts no cable is shaped and no switch port is read: the links the
network file names by their host's interface (`iface`) are compared by
their share of the bytes the interfaces moved against their share of the
routed flows (`interface_links`)."""

from __future__ import annotations

from statistics import median

SATURATED = 0.99          # predicted utilization at which a direction is the model's bottleneck
FAITHFUL_RATE = 0.9       # a saturated direction's busiest windows reach this share of its rate
MAX_SOFTIRQ_WAIT = 0.10   # share of the span the softirq threads may wait for a CPU
IDLE_GAP = 0.03           # a saturated direction this far below its prediction idled


def channel_flows(net) -> dict:
    """{channel: all-to-all flows crossing it} for every ordered pair of hosts."""
    router, n = net.router, net.n_nodes
    ecmp = net.routing == "ecmp"
    flows: dict = {}
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            if not ecmp:
                for c in router.route(s, d):
                    flows[int(c)] = flows.get(int(c), 0.0) + 1.0
                continue
            share = {s: 1.0}           # ECMP: the flow splits evenly over every vertex's equal-cost channels
            while share:
                nxt: dict = {}
                for v, w in share.items():
                    if v == d:
                        continue
                    chans = router.choices(d, v)
                    for c in chans:
                        flows[int(c)] = flows.get(int(c), 0.0) + w / len(chans)
                        u = int(router.dst[c])
                        nxt[u] = nxt.get(u, 0.0) + w / len(chans)
                share = nxt
    return flows


def predicted(net, cables: list, calibrated: dict) -> list[dict]:
    """Per cable direction of the testbed (state["cables"] order, a -> b first):
    {cable, from, to, label, flows, rate_Bps, util}; `calibrated` maps a link
    index of the file to its calibrated rate (bytes/s)."""
    names = list(net.node_names) + list(net.switch_names)
    by_cable = {(c["link"], c["index"]): k for k, c in enumerate(cables)}
    load: dict = {}
    for ch, f in channel_flows(net).items():
        k = by_cable.get(tuple(net.channel_cable[ch]))
        if k is not None:
            load[(k, names[int(net.router.src[ch])])] = f
    out = []
    for k, c in enumerate(cables):
        rate = calibrated.get(c["link"], c["rate_MBps"] * 1e6)
        for src, dst in ((c["a"], c["b"]), (c["b"], c["a"])):
            f = load.get((k, src), 0.0)
            out.append({"cable": k, "from": src, "to": dst, "label": c.get("label", ""), "flows": f,
                        "rate_Bps": rate, "work": f / rate})
    top = max((d["work"] for d in out), default=0.0) or 1.0
    for d in out:
        d["util"] = d.pop("work") / top
    return out


def _ends(doc, bench: str, key: str):
    """Every item of `key` (spans, shapers) of the bench's launch_end records."""
    for e in doc.launch_ends:
        if e.bench == bench:
            yield from e.get(key) or []


def _spans(doc, bench: str) -> dict:
    """{size: [span of each launch]} from the run's launch_end records."""
    out: dict = {}
    for s in _ends(doc, bench, "spans"):
        out.setdefault(s["size"], []).append(s)
    return out


def _shapers(doc, bench: str) -> dict:
    """{(cable, from): (drops, overlimits)} summed over the run's launches."""
    out: dict = {}
    for q in _ends(doc, bench, "shapers"):
        d, o = out.get((q["cable"], q["from"]), (0, 0))
        out[(q["cable"], q["from"])] = (d + q["drops"], o + q["overlimits"])
    return out


def compare(pred: list, doc, bench: str = "message.alltoall") -> list[dict]:
    """Per size: every cable direction's predicted and measured utilization
    (the median over launches), its busiest windows, its shaper's drops, and
    the CPU the emulation had; ascending sizes."""
    spans, shapers = _spans(doc, bench), _shapers(doc, bench)
    out = []
    for size in sorted(spans):
        launches = spans[size]
        rows = []
        for d in pred:
            got = [c for s in launches for c in s["cables"] if c["cable"] == d["cable"] and c["from"] == d["from"]]
            if not got:
                continue
            util = median(c["util"] for c in got)
            drops, over = shapers.get((d["cable"], d["from"]), (0, 0))
            rows.append({"cable": d["cable"], "from": d["from"], "to": d["to"], "label": d["label"],
                         "flows": d["flows"], "predicted_util": d["util"], "measured_util": util,
                         "ratio": util / d["util"] if d["util"] > 0 else None,
                         "p90_util": median(c["p90_util"] for c in got),
                         "at_rate": median(c["at_rate"] for c in got), "drops": drops, "overlimits": over})
        cpu = {k: median(s["cpu"][k] for s in launches) for k in ("idle", "softirq", "softirq_wait")}
        cpu["backlog_drops"] = sum(s["cpu"].get("backlog_drops", 0) for s in launches)
        out.append({"size": size, "cables": rows, "cpu": cpu, "seconds": median(s["seconds"] for s in launches)})
    return out


def name(row: dict) -> str:
    """A cable direction as the model names its resource, 'link NAME (A→B)': among parallel
    cables the file's name says which (an imported cable's ports: 'leaf07 [17] -- spine02 [3]')."""
    return f"{row['label']} ({row['from']}→{row['to']})" if row.get("label") else f"{row['from']}->{row['to']}"


def emulation(size_row: dict, calibrating_p90: float | None = None) -> dict:
    """Whether the emulation was faithful at one size, and why not; with the
    busiest windows of the cable the saturation test calibrated (a share of its rate)."""
    slow = [r for r in size_row["cables"] if r["predicted_util"] >= SATURATED and r["p90_util"] < FAITHFUL_RATE]
    wait = size_row["cpu"]["softirq_wait"]
    reasons = []
    if calibrating_p90 is not None and calibrating_p90 < FAITHFUL_RATE:
        reasons.append(f"the saturation test brought the bottleneck cable to {calibrating_p90:.2f} of its rate in its "
                       f"busiest windows (at least {FAITHFUL_RATE:.0%} expected): the calibration measured the "
                       "emulation, not the cable")
    if slow:
        listed = ", ".join(f"{name(r)} {r['p90_util']:.2f}" for r in slow[:4])
        reasons.append(f"{len(slow)} saturated cable direction(s) never reached {FAITHFUL_RATE:.0%} of their rate "
                       f"in their busiest windows ({listed})")
    lost = size_row["cpu"].get("backlog_drops", 0)
    if lost:
        reasons.append(f"the kernel dropped {lost} packets at its input backlog (net.core.netdev_max_backlog), "
                       "between cables and outside every shaper: losses no emulated cable made")
    if wait > MAX_SOFTIRQ_WAIT:
        reasons.append(f"the kernel's packet work waited for a CPU {wait:.0%} of the time (at most "
                       f"{MAX_SOFTIRQ_WAIT:.0%}): this machine's CPU, not the emulated network, set the pace")
    return {"faithful": not reasons, "reasons": reasons, "softirq_wait": wait, "backlog_drops": lost,
            "softirq": size_row["cpu"]["softirq"], "idle": size_row["cpu"]["idle"],
            "slow_cables": [name(r) for r in slow]}


def explain(size_row: dict, ratio: float) -> str:
    """A sentence naming the cables whose behaviour explains the per-node
    gap (measured/predicted `ratio` of the all-to-all) at one size."""
    rows = size_row["cables"]
    hot = sorted((r for r in rows if r["predicted_util"] >= SATURATED), key=lambda r: r["measured_util"])
    if not hot:
        return "no cable direction is saturated in the model"
    mean = sum(r["measured_util"] for r in hot) / len(hot)
    drops = sum(r["drops"] for r in hot)
    text = (f"the {len(hot)} cable direction(s) the model saturates carried {mean:.2f} of their rate over the point "
            f"(lowest {name(hot[0])} {hot[0]['measured_util']:.2f}; their shapers dropped {drops} packets)")
    over = sorted((r for r in rows if r["predicted_util"] < SATURATED and r["ratio"] and
                   r["measured_util"] >= FAITHFUL_RATE and r["ratio"] > 1 + IDLE_GAP),
                  key=lambda r: -r["ratio"])
    if over:
        text += (f"; {name(over[0])} ran at {over[0]['measured_util']:.2f} of its rate where the model gives it "
                 f"{over[0]['predicted_util']:.2f}: it, not the model's bottleneck, limited the exchange")
    elif mean < 1 - IDLE_GAP and ratio < 1 - IDLE_GAP:
        text += ": they idled while their flows waited elsewhere (loss recovery, the other cables of the route, " \
                "the hosts), so the gap lies in how the transport fills them, not in the model's loads"
    return text


def _launch_seconds(doc, bench: str) -> float:
    """Seconds the bench's launches took, from each launch record's start to its launch_end."""
    started = {r.launch: r.started for r in doc.launches if r.bench == bench}
    return sum(e.get("ended") - started[e.launch] for e in doc.launch_ends
               if e.bench == bench and started.get(e.launch) and e.get("ended"))


def interface_links(net, hosts: dict, doc, bench: str = "message.alltoall") -> list[dict]:
    """On real hosts (`--counters`): every link of the file that names its host's
    interface (`iface`), both directions, with the bytes that interface sent and
    received over the bench's launches (their counters, read through the launcher)
    beside the model's flows: each direction's share of the named links' bytes over
    its share of their flows (1: the traffic went as routed; below: another path
    carried it), and its utilization over the launches (a lower bound: launches
    include start-up)."""
    names = list(net.node_names)
    flows = channel_flows(net)
    by_link: dict = {}
    for ch, f in flows.items():
        i, _ = net.channel_cable[ch]
        src = (names + list(net.switch_names))[int(net.router.src[ch])]
        by_link[(i, src)] = by_link.get((i, src), 0.0) + f
    moved: dict = {}
    for e in doc.launch_ends:
        if e.bench == bench:
            for h, c in (e.get("counters") or {}).items():
                for iface, (tx, rx) in (c.get("interfaces") or {}).items():
                    got = moved.setdefault((h, iface), [0, 0])
                    got[0], got[1] = got[0] + tx, got[1] + rx
    seconds = _launch_seconds(doc, bench)
    rows = []
    for i, ln in enumerate(net.links):
        if not isinstance(ln, dict) or "iface" not in ln:
            continue
        node = next((str(ln[k]) for k in ("a", "b") if str(ln[k]) in names), None)
        if node is None or node not in hosts:
            continue
        other = str(ln["b"]) if str(ln["a"]) == node else str(ln["a"])
        tx, rx = moved.get((hosts[node], str(ln["iface"])), (None, None))
        rate = float(ln.get("rate_MBps", net.default_rate_MBps or 0)) * float(ln.get("efficiency", 1.0)) * 1e6
        for src, dst, got in ((node, other, tx), (other, node, rx)):
            rows.append({"link": i, "from": src, "to": dst, "host": hosts[node], "iface": str(ln["iface"]),
                         "flows": by_link.get((i, src), 0.0), "bytes": got,
                         "util": got / (seconds * rate) if got is not None and seconds > 0 and rate > 0 else None})
    total_f = sum(r["flows"] for r in rows if r["bytes"] is not None)
    total_b = sum(r["bytes"] for r in rows if r["bytes"] is not None)
    for r in rows:
        r["ratio"] = ((r["bytes"] / total_b) / (r["flows"] / total_f)
                      if r["bytes"] is not None and r["flows"] and total_b and total_f else None)
    return rows
