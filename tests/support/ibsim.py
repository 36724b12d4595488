"""A network file's hosts, switches and cables as an ibsim fabric, and ibsim run for a test.

ibsim (ibsim-utils) reads ibnetdiscover's own format, one record per node, with
per-port options of what the port *enables* (ibsim/sim_net.c, parse_port_opt):
`w=` a LinkWidthEnabled mask (1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x), `s=` a
LinkSpeedEnabled mask (1 = SDR, 2 = DDR, 4 = QDR) and `e=` a LinkSpeedExtEnabled
mask (1 = FDR, 2 = EDR, 4 = HDR; ibsim 0.10 knows no NDR). A cable runs the widest
width and the fastest speed both ends enable (sim_net.c, link_ports). Every port
here enables 1x and SDR as well, so that a port set to `w=1 s=1 e=0` (a degraded
cable) still trains with its peer, at 1x SDR.

The example networks' rates (a few MB/s, for the emulated testbed) are no
InfiniBand rates; `plan` scales them all by one factor so that each is a width x
speed, which keeps every ratio, and so the model's prediction scales by the same
factor. Hosts are Hca records, one port per cable; switches Switch records.

`IbSim` runs `ibsim -s` in the background on a socket name of its own
(IBSIM_SOCKNAME, read by ibsim and by libumad2sim) and runs the real
ibnetdiscover with libumad2sim preloaded, as ibsim-run does.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid

from fabriclab.topology import ibrates

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
WIDTH_MASK = {"1X": 1, "4X": 2, "8X": 4, "12X": 8, "2X": 16}
SPEED_MASKS = {"SDR": (1, 0), "DDR": (3, 0), "QDR": (7, 0), "FDR": (7, 1), "EDR": (7, 3), "HDR": (7, 7)}
DEGRADED = "w=1 s=1 e=0"


def fat_tree(leaves=32, per_leaf=32, spines=8, parallel=2) -> dict:
    """A two-level fat tree: 4x EDR host cables, `parallel` 4x HDR cables from every leaf to
    every spine; hosts h0.., leaves leaf0.., spines spine0.."""
    hosts = [f"h{i}" for i in range(leaves * per_leaf)]
    leaf, spine = [f"leaf{i}" for i in range(leaves)], [f"spine{i}" for i in range(spines)]
    links = [[h, leaf[i // per_leaf]] for i, h in enumerate(hosts)]
    links += [{"a": lf, "b": sp, "count": parallel, "rate_MBps": ibrates.rate_MBps("4X", "HDR")}
              for lf in leaf for sp in spine]
    return {"name": "fat tree", "nodes": hosts, "switches": leaf + spine, "routing": "d-mod-k",
            "default_rate_MBps": ibrates.rate_MBps("4X", "EDR"), "links": links}


def expand(net: dict) -> tuple[list, list, list]:
    """(hosts, switches, cables): cables as (a, b, rate MB/s), parallel ones one by one."""
    names = lambda v, p: [f"{p}{i}" for i in range(v)] if isinstance(v, int) else list(v or [])
    hosts, switches = names(net["nodes"], "n"), names(net.get("switches"), "s")
    cables = []
    for ln in net["links"]:
        ln = {"a": ln[0], "b": ln[1]} if isinstance(ln, list) else ln
        rate = ln.get("rate_MBps", net.get("default_rate_MBps"))
        cables += [(ln["a"], ln["b"], float(rate))] * ln.get("count", 1)
    return hosts, switches, cables


def plan(rates) -> tuple[float, dict]:
    """(k, {rate: (width, speed)}) with rate x k = rate_MBps(width, speed) for every rate: k = 1
    where every rate is one already, else the largest k (the fastest links) that fits."""
    choices = [(w, s) for w in WIDTH_MASK for s in SPEED_MASKS]
    value = {c: ibrates.rate_MBps(*c) for c in choices}
    rates = sorted(set(rates))
    for k in [1.0] + [value[c] / rates[0] for c in sorted(choices, key=lambda c: -value[c])]:
        found = {}
        for r in rates:
            fit = [c for c in choices if abs(value[c] - r * k) <= 1e-9 * r * k]
            if not fit:
                break
            found[r] = max(fit, key=lambda c: ibrates.WIDTHS[c[0]])     # the widest of equal rates
        else:
            return k, found
    raise ValueError(f"no InfiniBand widths and speeds in the ratios of {rates}")


def net_text(net: dict, degrade: tuple = ()) -> tuple[str, float, list]:
    """(ibsim net file, scale k, cables as (a, a_port, b, b_port, width, speed)); the cables
    whose index is in `degrade` get `w=1 s=1 e=0` at their a end."""
    hosts, switches, cables = expand(net)
    k, rate_of = plan([c[2] for c in cables])
    ports: dict = {}
    lines: dict = {n: [] for n in switches + hosts}
    out = []
    for i, (a, b, rate) in enumerate(cables):
        pa, pb = _next(ports, a, b)
        width, speed = rate_of[rate]
        sm, em = SPEED_MASKS[speed]
        opts = f"w={WIDTH_MASK[width] | 1} s={sm} e={em}"
        lines[a].append(f'[{pa}]\t"{b}"[{pb}]\t{DEGRADED if i in degrade else opts}')
        lines[b].append(f'[{pb}]\t"{a}"[{pa}]\t{opts}')
        out.append((a, pa, b, pb, "1X" if i in degrade else width, "SDR" if i in degrade else speed))
    text = []
    for n in switches + hosts:
        kind = "Switch" if n in switches else "Hca"
        text += [f'{kind}\t{max(ports.get(n, 1), 1)}\t"{n}"', *lines[n], ""]
    return "\n".join(text) + "\n", k, out


def _next(ports: dict, a: str, b: str) -> tuple[int, int]:
    for x in (a, b):
        ports[x] = ports.get(x, 0) + 1
    return ports[a], ports[b]


class IbSim:
    """`with IbSim(netfile) as sim: sim.discover("-p")`: ibsim serving the fabric, killed on exit."""

    def __init__(self, netfile, timeout: float = 60):
        self.netfile, self.timeout = str(netfile), timeout
        self.env = dict(os.environ, IBSIM_SOCKNAME=f"fl{uuid.uuid4().hex[:10]}")
        self.proc = self.log = None

    def __enter__(self):
        self.log = open(f"{self.netfile}.log", "w+")
        n = sum(1 for line in open(self.netfile) if line.startswith(("Hca", "Switch")))
        self.proc = subprocess.Popen(["ibsim", "-s", "-n", "-N", str(n + 16), "-S", str(n + 16),
                                      "-P", str(300 * (n + 16)), self.netfile], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
        self.proc.wait(timeout=10)
        self.log.close()

    def discover(self, *args: str) -> str:
        """ibnetdiscover's output, retried until ibsim listens (it parses the file first)."""
        env = dict(self.env, LD_PRELOAD=UMAD2SIM)
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"ibsim ended ({self.proc.returncode}): {self.log.read()[-2000:]!r}")
            p = subprocess.run(["ibnetdiscover", *args], env=env, capture_output=True, text=True,
                               timeout=max(1.0, deadline - time.monotonic()))
            if p.returncode == 0 and p.stdout.strip():
                return p.stdout
            if time.monotonic() > deadline:
                raise RuntimeError(f"ibnetdiscover {' '.join(args)} failed: {p.stderr[-2000:]}")
            time.sleep(0.2)


def topology_text(net: dict, ports_report: bool = False) -> str:
    """ibnetdiscover's own output for a network (its topology, or with `ports_report` its -p
    report), written directly as the real tool prints it under ibsim (no simulator): node
    GUIDs from 0x100000 (adapters, port GUIDs node + port) and 0x200000 (switches), lid 0.
    For large fabrics, where running ibsim would be the slow part."""
    hosts, switches, cables = expand(net)
    k, rate_of = plan([c[2] for c in cables])
    gid = {s: 0x200000 + i for i, s in enumerate(switches)}
    gid.update({h: 0x100000 + 0x10 * i for i, h in enumerate(hosts)})
    ports: dict = {}
    recs: dict = {n: [] for n in switches + hosts}
    for a, b, rate in cables:
        pa, pb = _next(ports, a, b)
        w, s = rate_of[rate]
        recs[a].append((pa, b, pb, w, s))
        recs[b].append((pb, a, pa, w, s))
    is_sw = set(switches)
    pg = lambda n, p: gid[n] if n in is_sw else gid[n] + p
    if ports_report:
        kind = lambda n: "SW" if n in is_sw else "CA"
        return "".join(f"{kind(n)}     0 {p:2d} 0x{pg(n, p):016x} {w[:-1].lower()}x {s} - {kind(r)}     0 {rp:2d} "
                       f"0x{pg(r, rp):016x} ( '{n}' - '{r}' )\n"
                       for n in switches + hosts for p, r, rp, w, s in recs[n])
    out = ["#\n# Topology file: generated by fabriclab's tests\n#\n"]
    for n in switches + hosts:
        g = gid[n]
        if n in is_sw:
            out.append(f"\nvendid=0x0\ndevid=0x0\nsysimgguid=0x{g:x}\nswitchguid=0x{g:x}({g:x})\n"
                       f'Switch\t{max(ports.get(n, 1), 1)} "S-{g:016x}"\t\t# "{n}" base port 0 lid 0 lmc 0\n')
            for p, r, rp, w, s in recs[n]:
                far = f'"S-{gid[r]:016x}"[{rp}]\t' if r in is_sw else f'"H-{gid[r]:016x}"[{rp}]({pg(r, rp):x}) \t'
                out.append(f'[{p}]\t{far}\t# "{r}" lid 0 {w[:-1]}x{s}\n')
        else:
            out.append(f'\nvendid=0x0\ndevid=0x0\nsysimgguid=0x{g:x}\ncaguid=0x{g:x}\n'
                       f'Ca\t{max(ports.get(n, 1), 1)} "H-{g:016x}"\t\t# "{n}"\n')
            for p, r, rp, w, s in recs[n]:
                far = f'"S-{gid[r]:016x}"[{rp}]' if r in is_sw else f'"H-{gid[r]:016x}"[{rp}]({pg(r, rp):x})'
                out.append(f'[{p}]({pg(n, p):x}) \t{far}\t\t# lid 0 lmc 0 "{r}" lid 0 {w[:-1]}x{s}\n')
    return "".join(out)
