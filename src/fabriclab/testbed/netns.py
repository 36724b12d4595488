"""Applies a plan to the kernel and keeps its state: `up`, `down`, `list`,
`exec`, the ssh stand-in MPI launches through, interface counters and
link states.

Everything a testbed creates is named PREFIX-NAME-...: its namespaces (veths
live and die with them) and its state directory, so `down` finds all of it
even when `up` was killed half-way, and never touches anything else. Commands
go to the kernel in batches (`ip -batch`, `tc -batch`): a 16-host testbed
comes up in seconds."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from ..errors import UsageError
from .wiring import PREFIX, Plan, check_name

STATE = Path(os.environ.get("FABRICLAB_TESTBED_STATE", "/run/fabriclab/testbeds"))
TIMEOUT = 60          # seconds any one kernel command may take
# Frames as short as a cable's rate asks, and no shorter. The model is a fluid
# one (flows sharing a cable share it evenly and end together), and a fabric's
# packets take a small share of a message's time; a testbed's cables run a
# thousand times slower than a fabric's, so a 9000-byte frame on a 3 MB/s cable
# takes 3 ms, a third of a 32 KiB message. Two such messages crossing it ended
# 17 and 22 ms after they began, not together at 22, and a collective whose
# pairs then run ahead (Rabenseifner's allreduce) read 0.89 of the prediction on
# the dragonfly; with frames of 1.5 ms of the cable, 0.93. Shorter frames cost
# the cores that forward and shape every packet: with 1500-byte frames the
# 16-host fat tree's packet work waited for a CPU 11% of the time and the same
# allreduce read 1.11 (docs/testbed.md, Frames). So each testbed's MTU is what
# its slowest cable sends in FRAME_S, from 1500 (Ethernet's) to 9000 (jumbo
# frames, as cluster Ethernet commonly runs them: every example whose cables
# all run at 6 MB/s or more). GSO off above the MTU: packets no larger reach
# the shaper.
FRAME_S = 0.0015
MTU_MIN, MTU_MAX = 1500, 9000
# What a shaper counts of a frame beyond its IP packet: the MAC header. A veth frame has no
# FCS, preamble or gap (model/sockets.py wire_bytes takes it as `frame`).
FRAME_BYTES = 14


def plan_mtu(plan: Plan) -> int:
    return frame_mtu(c.rate_Bps for c in plan.cables)


def frame_mtu(rates_Bps) -> int:
    """A testbed's MTU: what its slowest cable sends in FRAME_S, in hundreds of
    bytes, from MTU_MIN to MTU_MAX."""
    slowest = min(rates_Bps, default=float("inf"))
    return int(min(MTU_MAX, max(MTU_MIN, slowest * FRAME_S // 100 * 100)))
SWITCH_SYSCTLS = ("net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=1")
# Policy routes send replies along other paths than requests: no reverse-path filter.
COMMON_SYSCTLS = ("net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
# Hosts use CUBIC, Linux's default congestion control, whatever this machine's
# default is: a testbed's figures must not depend on it. With BBR (this
# machine's default) a 512 KiB exchange both ways over a 20 MB/s cable took
# 1.28x its time at the cable's rate, with CUBIC 1.08x (docs/testbed.md).
HOST_CC = "cubic"
CC = Path("/proc/sys/net/ipv4")
# A connection keeps its congestion window across idle time (RFC 2861's restart
# after idle, on by default, is off), as clusters tune TCP for MPI and as the
# lossless fabrics the testbed stands for have no window at all. In a pairwise
# exchange each connection idles between its steps; restarted from 10 segments,
# its acknowledgements queue behind the partner's data in the reverse direction's
# deep queue, every doubling waits a queued round trip, and MPICH's MPI_Alltoall
# over the fat tree took 1.22-1.33x its prediction, against 1.03-1.04 without
# the restart (docs/testbed.md).
# Receive buffers of 8 MiB from the start (Linux: 128 KiB, grown once per round
# trip), so that windows grow with the data. Pure acknowledgements overtake
# data queued in the same direction (acknowledgements first, below), and a
# data segment arriving with an acknowledgement older than the largest window
# its receiver was offered is dropped (RFC 5961 5.2, Linux's TCP_TOO_OLD_ACK):
# with windows of 96-500 KiB, 512 KiB blocks both ways over the ring lost
# segments no counter showed, a retransmission timeout cost a step 200 ms, and
# the ring's pairwise sort read 1.26 of its prediction (docs/testbed.md).
HOST_TCP = ("net.ipv4.tcp_slow_start_after_idle=0", "net.ipv4.tcp_rmem=4096 8388608 33554432")


def _host_sysctls() -> tuple:
    """The hosts' TCP settings: congestion control, allowed in the namespaces
    first (a namespace may choose only an algorithm the machine allows), no
    restart after idle, and large receive buffers."""
    try:
        if HOST_CC not in (CC / "tcp_available_congestion_control").read_text().split():
            return HOST_TCP
        allowed = (CC / "tcp_allowed_congestion_control").read_text().split()
        if HOST_CC not in allowed:
            (CC / "tcp_allowed_congestion_control").write_text(" ".join(allowed + [HOST_CC]))
    except OSError:
        return HOST_TCP
    return (f"net.ipv4.tcp_congestion_control={HOST_CC}", *HOST_TCP)


class TestbedError(UsageError):
    pass


def require_root() -> None:
    if os.geteuid() != 0:
        raise TestbedError("a testbed needs root (network namespaces, veths, tc): run as root")


def _run(argv: list[str], stdin: str | None = None, phase: str = "") -> str:
    try:
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise TestbedError(f"testbed: {phase or argv[0]} took more than {TIMEOUT} s") from None
    except OSError as e:
        raise TestbedError(f"testbed: cannot run {argv[0]}: {e.strerror}") from None
    if p.returncode != 0:
        err = (p.stderr or p.stdout).strip().splitlines()
        raise TestbedError(f"testbed: {phase or ' '.join(argv[:3])} failed: {err[0] if err else p.returncode}")
    return p.stdout


# What a line of `ip -batch` / `tc -batch` input may hold: the plan's names,
# addresses and numbers. A quote, '#', a backslash or a control character would let
# a name change what the line says (a newline would start a command of its own).
BATCH_LINE = re.compile(r"[A-Za-z0-9 ./:_-]+")


def batch(argv: list[str], lines: list[str], phase: str) -> str:
    """Send commands to `ip -batch -` or `tc -batch -`, each line checked whole first."""
    bad = next((ln for ln in lines if not BATCH_LINE.fullmatch(ln)), None)
    if bad is not None:
        raise TestbedError(f"testbed: {phase}: refusing to send {bad!r} to {argv[0]}")
    return _run([*argv, "-batch", "-"], "".join(ln + "\n" for ln in lines), phase)


def namespaces(name: str | None = None) -> list[str]:
    """This machine's testbed namespaces (of one testbed, or all)."""
    out = _run(["ip", "netns", "list"], phase="listing namespaces")
    want = f"{PREFIX}-{name}-" if name else f"{PREFIX}-"
    return [ln.split()[0] for ln in out.splitlines() if ln.split() and ln.split()[0].startswith(want)]


def state_dir(name: str) -> Path:
    return STATE / name


def save(state: dict) -> None:
    """Write a testbed's state back (a cable degraded or restored)."""
    (state_dir(state["name"]) / "state.json").write_text(json.dumps(state, indent=1))


def load(name: str) -> dict:
    """The state of a testbed that is up."""
    check_name(name)
    f = state_dir(name) / "state.json"
    if not f.is_file():
        raise TestbedError(f"no testbed {name!r} is up (`fabriclab testbed list` shows them)")
    return json.loads(f.read_text())


def up(plan: Plan, progress=None) -> dict:
    """Create the testbed; on any failure, remove what was created."""
    require_root()
    plan.check()
    if namespaces(plan.name) or state_dir(plan.name).exists():
        raise TestbedError(f"a testbed named {plan.name!r} is already up: `fabriclab testbed down {plan.name}`")
    say = progress or (lambda msg: None)
    t0 = time.monotonic()
    vertices = plan.hosts + plan.switches
    d = state_dir(plan.name)
    d.mkdir(parents=True)
    try:
        say(f"{len(vertices)} namespaces")
        batch(["ip"], [f"netns add {plan.namespace(v)}" for v in vertices], "netns add")
        hosts_cc = _host_sysctls()
        for v in vertices:
            sysctls = COMMON_SYSCTLS + (SWITCH_SYSCTLS if v in plan.switches else hosts_cc)
            _run(["ip", "netns", "exec", plan.namespace(v), "sysctl", "-qw", *sysctls], phase=f"sysctl in {v}")
        say(f"{len(plan.cables)} cables")
        batch(["ip"], cable_lines(plan), "veth add")
        say("addresses, routes, shaping")
        for v in vertices:
            addresses, shaping = vertex_lines(plan, v)
            batch(["ip", "-n", plan.namespace(v)], addresses, f"addresses of {v}")
            if shaping:
                batch(["tc", "-n", plan.namespace(v)], shaping, f"shaping in {v}")
        _wait_up(plan, vertices)
        state = {**plan.to_dict(), "namespaces": {v: plan.namespace(v) for v in vertices}, "mtu": plan_mtu(plan),
                 "agent": str(d / "agent"), "created": time.time(), "up_s": None}
        (d / "agent").write_text(agent_script(plan))
        (d / "agent").chmod(0o755)
        state["up_s"] = round(time.monotonic() - t0, 3)
        (d / "state.json").write_text(json.dumps(state, indent=1))
        return state
    except BaseException:
        down(plan.name)
        raise


def cable_lines(plan: Plan) -> list[str]:
    """`ip` commands that make every cable: a veth pair, one end in each namespace."""
    return [f"link add {c.a_if} netns {plan.namespace(c.a)} type veth peer name {c.b_if} netns {plan.namespace(c.b)}"
            for c in plan.cables]


def vertex_lines(plan: Plan, v: str) -> tuple[list[str], list[str]]:
    """`ip` commands (addresses, links up, rules, routes) and `tc` commands
    (shaping) inside one vertex's namespace."""
    lines, mtu = ["link set lo up"], plan_mtu(plan)
    for c in plan.cables:
        if v in (c.a, c.b):
            dev, addr = c.end(v)
            if addr:
                lines.append(f"addr add {addr} dev {dev}")
            # No GSO super-packets: tbf then shapes wire-sized packets with a small bucket.
            lines.append(f"link set {dev} mtu {mtu} gso_max_size {mtu} up")
    lines += [f"rule add {r}" for r in plan.rules.get(v, [])]
    lines += [f"route add {r}" for r in plan.routes.get(v, [])]
    return lines, [ln for k, c in enumerate(plan.cables) if v in (c.a, c.b)
                   for ln in _shaper(c.end(v)[0], c.rate_Bps, cable_flows(plan, k), mtu)]


def _wait_up(plan: Plan, vertices: list, limit: float = 10.0) -> None:
    """Until every cable reports carrier (operstate UP): a launch right after
    `up` would otherwise find some cables still coming up and fail to connect."""
    deadline = time.monotonic() + limit
    pending = list(vertices)
    while pending:
        v = pending[0]
        links = json.loads(_run(["ip", "-n", plan.namespace(v), "-j", "link", "show"], phase=f"links of {v}"))
        if all(x.get("operstate") == "UP" for x in links if x.get("ifname") != "lo"):
            pending.pop(0)
            continue
        if time.monotonic() > deadline:
            raise TestbedError(f"testbed: the cables of {v} did not come up within {limit:g} s")
        time.sleep(0.02)


# Deep queues: the links of the seeds' fabrics (Myrinet, SCI, QsNet, and
# InfiniBand today) never drop a packet, their credit-based flow control
# holds the sender back, and a queue that holds every byte an exchange has in
# flight does the same for TCP. With 50 ms queues an 8-host all-to-all over the
# fat tree lost about 500 packets a launch at the trunks and measured 0.89-0.93
# of the calibrated prediction; with these, none, and 0.94-0.96 (docs/testbed.md).
QUEUE_BYTES = 4 << 20
QUEUE_S = 0.5


# Pure acknowledgements first: under the token bucket a two-class htb whose
# classes never hold a packet back (so the bucket alone sets the rate) sends
# TCP segments without payload ahead of the data queue. A credit-based
# fabric never holds an acknowledgement behind the reverse direction's data;
# a FIFO of 0.5 s does, and a sender whose window is open then idles
# (docs/testbed.md, Shaping). Only segments without payload: letting every
# small packet ahead (MPI's headers among them) reordered data within a
# connection, and its spurious retransmissions cost a saturated cable 4-14%.
def _pure_acks(dev: str) -> list[str]:
    """u32 filters matching IPv4 (no options) TCP segments whose total
    length is the headers' alone: 20 + 4 x data offset, offsets 5-15."""
    return [f"filter add dev {dev} parent 10: protocol ip prio 1 u32 match u8 0x45 0xff at 0 "
            f"match u8 6 0xff at 9 match u16 {20 + 4 * doff} 0xffff at 2 match u8 0x{doff << 4:02x} 0xf0 at 32 "
            f"flowid 10:10" for doff in range(5, 16)]


# A cable never runs faster than its rate by more than PEAK: the bucket that
# a cable fills while it idles (1 ms of the rate, so that a late timer costs
# no rate) drains at PEAK x the rate, two frames at a time (fewer made every
# frame wait for its own timer, and the ring allreduce's 32 KiB steps on the
# linear array read 1.10 of the prediction). Without this second bucket a
# step after an idle cable got 1 ms free: Rabenseifner's allreduce and the
# binomial bcast, whose cables idle between their steps, read 0.89 and 0.95
# of the prediction on the linear array, 0.94-0.95 and 0.97 with it.
PEAK = 1.05


def tbf(rate_Bps: float, mtu: int = MTU_MAX) -> str:
    """The token bucket of a cable end at rate_Bps (its bucket and queue as _shaper
    says), drained at most at PEAK x rate_Bps, two frames of `mtu` at a time."""
    burst = max(16 * 1024, int(rate_Bps * 0.001))
    return (f"tbf rate {int(rate_Bps * 8)}bit burst {burst} peakrate {int(rate_Bps * 8 * PEAK)}bit "
            f"mtu {2 * (mtu + 100)} limit {_queue(rate_Bps)}")


def _queue(rate_Bps: float) -> int:
    """A cable end's queue in bytes: QUEUE_S of its rate, at least QUEUE_BYTES."""
    return max(QUEUE_BYTES, int(rate_Bps * QUEUE_S))


# One queue per flow, served in turn (htb's deficit round robin, a packet per
# turn): a switch's arbiter interleaves its inputs packet by packet, so a
# message never waits behind another flow's whole window, as it does in one
# deep FIFO. With one FIFO, MPI's small messages (a rendezvous' reply, a
# step's header) queued behind a neighbour's 256 KiB: the linear array's ring
# allgather over 8 hosts read 1.37x its prediction, and 1.01x with them ahead.
# A flow is an ordered pair of hosts whose route crosses the cable (one rank
# a host, one connection a pair), so its own packets keep their order.
# At most 64 x 63 pairs (wiring.MAX_HOSTS) fit htb's 16-bit class numbers.
FLOW_CLASS0 = 0x100


def _shaper(dev: str, rate_Bps: float, flows: tuple = (), mtu: int = MTU_MAX) -> list[str]:
    """`tc` lines shaping one cable end: a token bucket at the cable's rate.
    Veths hand tbf GSO super-packets of up to 64 KiB unless told otherwise,
    and a bucket that holds one lets a 64 KiB ping-pong message through at
    twice the shaped rate; with GSO off (packets of at most the MTU) a bucket
    of 16 KiB or 1 ms of the rate keeps every message at the rate (a 20 MB/s
    cable: 19.1 MB/s streaming, 18.8 MB/s ping-pong at 1 MiB, measured here).
    Below it, pure acknowledgements go ahead of the data, and each of `flows`
    ((source, destination) addresses) has a data queue of its own, served
    round robin; anything else shares the default queue."""
    bits = int(rate_Bps * 8)
    # htb's default burst (1600 bytes) would let its timer, not the bucket, pace the cable.
    fast = f"rate {max(10 ** 10, 4 * bits)}bit burst 1mb cburst 1mb"
    lines = [f"qdisc add dev {dev} root handle 1: {tbf(rate_Bps, mtu)}",
             f"qdisc add dev {dev} parent 1:1 handle 10: htb default 20",
             f"class add dev {dev} parent 10: classid 10:10 htb {fast} prio 0 quantum {mtu + 100}",
             f"class add dev {dev} parent 10: classid 10:20 htb {fast} prio 1 quantum {mtu + 100}",
             f"qdisc add dev {dev} parent 10:10 pfifo limit 10000",
             f"qdisc add dev {dev} parent 10:20 bfifo limit {_queue(rate_Bps)}", *_pure_acks(dev)]
    for i, (src, dst) in enumerate(flows):
        cls = f"10:{FLOW_CLASS0 + i:x}"
        lines += [f"class add dev {dev} parent 10: classid {cls} htb {fast} prio 1 quantum {mtu + 100}",
                  f"qdisc add dev {dev} parent {cls} bfifo limit {_queue(rate_Bps)}",
                  f"filter add dev {dev} parent 10: protocol ip prio 2 u32 match ip src {src}/32 "
                  f"match ip dst {dst}/32 flowid {cls}"]
    return lines


def cable_flows(plan: Plan, k: int) -> tuple:
    """(source, destination) addresses of the ordered host pairs whose routes cross cable k."""
    addr = plan.addresses
    return tuple((addr[s], addr[d]) for s in plan.hosts for d in plan.hosts
                 if k in plan.crossing.get(s, {}).get(d, ()))


# What a launch leaves in the namespaces if it dies: ranks and MPI's daemons.
LAUNCHED = ("fabriclab-core", "hydra_pmi_proxy", "orted", "prted", "/agent")


def kill_processes(name: str, only: tuple | None = None) -> int:
    """Kill the processes inside the testbed's namespaces (those whose command
    line holds one of `only`, or all); how many there were."""
    pids = set()
    for ns in namespaces(name):
        out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        pids |= {int(p) for p in out.split() if p.isdigit()}
    if only:
        pids = {p for p in pids if any(w in _cmdline(p) for w in only)}
    n = len(pids)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 3
    while pids and time.monotonic() < deadline:     # until the kernel has reaped them
        pids = {p for p in pids if _alive(p)}
        time.sleep(0.05)
    return n


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def down(name: str) -> int:
    """Remove a testbed: its processes, namespaces (and with them every veth and
    qdisc) and state. Idempotent; returns how many namespaces it removed."""
    require_root()
    check_name(name)
    kill_processes(name)
    found = namespaces(name)
    if found:
        batch(["ip", "-force"], [f"netns del {ns}" for ns in found], "netns del")
    d = state_dir(name)
    if d.exists():
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    return len(found)


def names() -> list[str]:
    """Testbeds that are up or half up (state or namespaces)."""
    found = {ns.split("-")[1] for ns in namespaces() if ns.count("-") >= 2}
    if STATE.is_dir():
        found |= {p.name for p in STATE.iterdir() if p.is_dir()}
    return sorted(found)


def agent_script(plan: Plan) -> str:
    """An ssh stand-in: `agent [ssh options] HOST COMMAND...` runs COMMAND in
    HOST's namespace under its own UTS host name, so MPI sees distinct hosts."""
    cases = []
    for i, h in enumerate(plan.hosts):
        ip = plan.addresses[h]
        cases.append(f"  {h}|{ip}) ns={plan.namespace(h)}; name={h};;")
    return f"""#!/bin/sh
# fabriclab testbed {plan.name}: ssh-like [options] HOST COMMAND... into the host's namespace
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-l|-p|-i|-F|-E|-b|-c|-J|-L|-R|-D|-S|-W) shift 2;;
    -*) shift;;
    *) break;;
  esac
done
host=$1; shift
case "$host" in
{chr(10).join(cases)}
  *) echo "fabriclab testbed {plan.name}: unknown host $host" >&2; exit 255;;
esac
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$name" "$*"
"""


def exec_argv(state: dict, host: str, argv: list[str]) -> list[str]:
    """The command line that runs argv inside HOST of a testbed."""
    if host not in state["namespaces"] or host not in state["hosts"]:
        raise TestbedError(f"testbed {state['name']} has no host {host!r} (hosts: {', '.join(state['hosts'])})")
    return ["ip", "netns", "exec", state["namespaces"][host], "unshare", "--uts", "sh", "-c",
            'hostname "$0" && exec "$@"', host, *argv]


def counters(state: dict) -> dict:
    """Bytes and packets each host sent and received on its cables: {host: {tx_bytes, rx_bytes, ...}}."""
    out = {}
    for h in state["hosts"]:
        text = _run(["ip", "-n", state["namespaces"][h], "-s", "-j", "link", "show"], phase=f"counters of {h}")
        tot = {"tx_bytes": 0, "rx_bytes": 0, "tx_packets": 0, "rx_packets": 0}
        for link in json.loads(text):
            if link.get("ifname", "").startswith("eth"):
                st = link.get("stats64", {})
                for k, key in (("tx", "tx_"), ("rx", "rx_")):
                    tot[key + "bytes"] += int(st.get(k, {}).get("bytes", 0))
                    tot[key + "packets"] += int(st.get(k, {}).get("packets", 0))
        out[h] = tot
    return out


def cables_down(state: dict) -> list[int]:
    """Indices (in state["cables"]) of the cables cut at either end: an end
    that is not up, or up without carrier (its peer was set down), in any
    namespace, hosts' and switches' alike."""
    up = set()
    for v, ns in state["namespaces"].items():
        for x in json.loads(_run(["ip", "-n", ns, "-j", "link", "show"], phase=f"links of {v}")):
            if x.get("operstate") == "UP" and "LOWER_UP" in x.get("flags", ()):
                up.add((v, x.get("ifname", "").split("@")[0]))
    return [k for k, c in enumerate(state["cables"])
            if (c["a"], c["a_if"]) not in up or (c["b"], c["b_if"]) not in up]


def describe(state: dict) -> str:
    lines = [f"testbed {state['name']} from {state.get('source') or '?'}: {len(state['hosts'])} hosts, "
             f"{len(state['switches'])} switches, {len(state['cables'])} cables (up in {state.get('up_s')} s)",
             "hosts:"]
    lines += [f"  {h}  {state['addresses'][h]}  namespace {state['namespaces'][h]}" for h in state["hosts"]]
    lines.append("cables:")
    lines += [f"  {c['label'].removeprefix('link ')}{'#%d' % c['index'] if c.get('index') else ''}: "
              f"{c['a']}:{c['a_if']} <-> {c['b']}:{c['b_if']}  {c['rate_MBps']:g} MB/s each way"
              + (f", degraded to {c['shaped_MBps']:g} MB/s" if c.get("shaped_MBps") is not None else "")
              for c in state["cables"]]
    lines.append(f"agent: {state['agent']}   exec: fabriclab testbed exec {state['name']} HOST -- CMD")
    return "\n".join(lines)

