"""`fabriclab testbed validate` as a procedure with a typed result: bring the
testbed up (unless it is, or real hosts stand for the file's nodes), saturate
the model's bottleneck cable and calibrate with its rate, measure the cable
loaded both ways, predict and measure all-to-all, then the collectives (the
allreduce algorithms, binomial bcast and ring allgather at the largest size,
each against its calibrated schedule time and its bottleneck against the
cable the testbed measured busiest), write one document (the all-to-all run
with a `validation` block, drawn by report/figures.py), bring down what it
brought up. The reasoning is model/validate.py's.

Each step is a run of its own (measure/session.py, in this process): the
caller's `measure(request)` returns its document, whose merged points the
step reads (one per point, launches merged)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from ..analysis import merge
from ..datafile import read_data_file
from ..errors import RunError, UsageError
from ..measure import session
from ..measure.plan import Sampling
from ..measure.session import Launch, Request
from ..model.resources import MB
from ..model.topologies.custom import CustomNetwork
from ..verdicts import placement
from . import cablecheck, coll_check
from .site import TestbedSite
from ..model import validate as v

# The saturation test streams windows of SAT_WINDOW messages of SAT_SIZE: about
# 1 MiB per sample, a few hundredths of a second on a cable of tens of MB/s.
SAT_SIZE, SAT_WINDOW = "64K", 16
FAST = Sampling(point_time=1.0)
# The calibrating rate decides every prediction: its points get longer (TCP's share of a
# cable loaded both ways swings by 10-20% over a second here).
CALIBRATE = Sampling(point_time=3.0)

# Every flow carries at least FILL bytes per wait of the all-to-all (message.alltoall
# fill=), so small sizes keep the cables as busy as 256 KiB does: with one exchange per
# wait, 16 KiB read 0.84 of the prediction where 256 KiB read 0.95-1.00 (docs/testbed.md).
FILL = "256K"

Measure = Callable[[Request], object]     # a run's request -> its document (schema.Document)


def run(request: Request, say=lambda line: None):
    """One step's run in this process; RunError when it fails (its document stays on disk)."""
    result = session.run(request, say=say)
    if result.exit_code != 0:
        raise RunError(f"validate: the run of {', '.join(request.benches)} failed ({result.error}); "
                       f"see {result.path}")
    return result.document


@dataclass
class Site:
    """Where to measure: the emulated testbed `name`, or the real hosts that the
    file's nodes stand for (`hosts`: file node -> host)."""

    file: str
    net: CustomNetwork
    name: str
    hosts: dict = field(default_factory=dict)

    @classmethod
    def of(cls, file: str, name: str, hosts: list[str]) -> "Site":
        """The hosts match the file's nodes by name, in any order; where none of them is a node
        of the file, they stand for its nodes in the file's order (a file of n0, n1, ...)."""
        net = CustomNetwork.from_dict(read_data_file(file, "network file"), where=file)
        where = placement.nodes_of(hosts, net.node_names)
        if all(i is None for i in where):
            if hosts and len(hosts) != net.n_nodes:
                raise UsageError(f"--hosts names {len(hosts)} hosts for the file's {net.n_nodes} nodes "
                                 f"({placement.some(net.node_names)}), in that order")
            return cls(file, net, name, dict(zip(net.node_names, hosts)))
        placement.require(hosts, net.node_names, file)
        left = [n for i, n in enumerate(net.node_names) if i not in where]
        if left or len(set(where)) != len(hosts):
            raise UsageError(f"--hosts must name each of the file's {net.n_nodes} nodes once "
                             + (f"({left[0]!r} is missing)" if left else "(one is named twice)"))
        return cls(file, net, name, {net.node_names[i]: h for h, i in zip(hosts, where)})

    def request(self, nodes: list[str], launch: Launch, **fields) -> Request:
        """A run with one rank on each of these file nodes: testbed hosts, or
        the real hosts they stand for (their counters read through the launcher)."""
        if self.hosts:
            return Request(launch=replace(launch, ranks=len(nodes), hosts=",".join(self.hosts[h] for h in nodes)),
                           counters=True, **fields)
        return Request(launch=replace(launch, ranks=len(nodes), hosts=",".join(nodes)),
                       site=TestbedSite(self.name), **fields)


@dataclass
class Rate:
    """A measured rate per direction with its 95% interval, and the run it comes from."""

    rate_Bps: float
    low_Bps: float
    high_Bps: float
    run: Path
    pairs: list = field(default_factory=list)
    active: Optional[int] = None              # pairs at the saturation plateau
    cable_p90: Optional[float] = None         # testbed: the cable's busiest windows at the plateau, share of its rate


@dataclass
class SizeResult:
    size: int
    measured_Bps: float                       # per node
    predicted_Bps: float

    @property
    def ratio(self) -> float:
        return self.measured_Bps / self.predicted_Bps

    @property
    def verdict(self) -> str:
        return v.verdict(self.predicted_Bps, self.measured_Bps)

    def to_dict(self) -> dict:
        return {"size": self.size, "measured_Bps": self.measured_Bps, "predicted_Bps": self.predicted_Bps,
                "ratio": self.ratio, "verdict": self.verdict}


@dataclass
class Validation:
    site: Site
    bottleneck: v.Bottleneck
    saturation: Rate                          # one way: calibrates the cable class
    bidirectional: Optional[Rate]             # both ways at once: measured, not used to calibrate
    calibrated_links: list
    nominal: tuple                            # (per-node bytes/s, bottleneck label)
    predicted: tuple                          # the same, calibrated
    predicted_both_ways_Bps: Optional[float]
    per_size: list                            # SizeResult, ascending sizes
    duration_s: float
    document: Path
    cables: list = field(default_factory=list)   # cablecheck.compare: per size, every cable direction
    interfaces: list = field(default_factory=list)  # real hosts: cablecheck.interface_links
    collectives: list = field(default_factory=list)  # coll_check.rows: each algorithm at the largest size
    collective_costs: Optional[dict] = None          # coll_check.costs: the alpha and gamma they were predicted with

    @property
    def top(self) -> SizeResult:
        """The largest size: the one the verdict rests on."""
        return self.per_size[-1]

    @property
    def top_cables(self) -> Optional[dict]:
        """The per-cable comparison at the largest size (testbeds only)."""
        return next((c for c in self.cables if c["size"] == self.top.size), None)

    @property
    def emulation(self) -> Optional[dict]:
        c = self.top_cables
        return cablecheck.emulation(c, self.saturation.cable_p90) if c else None

    @property
    def explanation(self) -> str:
        c = self.top_cables
        return cablecheck.explain(c, self.top.ratio) if c else ""

    @property
    def agrees(self) -> bool:
        return self.top.verdict == "agrees"

    def to_dict(self) -> dict:
        """The document's `validation` block (read by report/figures.py)."""
        s, bi = self.saturation, self.bidirectional
        return {
            "network": self.site.file, "testbed": None if self.site.hosts else self.site.name,
            "hosts": self.site.hosts or None, "bottleneck": self.bottleneck.label,
            "bottleneck_load": self.bottleneck.load, "pairs": [list(p) for p in s.pairs],
            "saturation": {"rate_Bps": s.rate_Bps, "ci_Bps": [s.low_Bps, s.high_Bps], "active": s.active,
                           "run": str(s.run), "cable_p90_util": s.cable_p90},
            "bidirectional": None if bi is None else {
                "pairs": [list(p) for p in bi.pairs], "rate_Bps": bi.rate_Bps, "ci_Bps": [bi.low_Bps, bi.high_Bps],
                "run": str(bi.run)},
            "calibrated_rate_Bps": s.rate_Bps, "predicted_both_ways_Bps": self.predicted_both_ways_Bps,
            "alltoall": "concurrent", "calibrated_links": self.calibrated_links,
            "nominal_Bps": self.nominal[0], "nominal_bottleneck": self.nominal[1],
            "predicted_Bps": self.predicted[0], "predicted_bottleneck": self.predicted[1],
            "per_size": [r.to_dict() for r in self.per_size], "tolerance": v.TOLERANCE,
            "verdict": self.top.verdict, "duration_s": self.duration_s,
            "cables": self.cables, "emulation": self.emulation, "explanation": self.explanation or None,
            "interfaces": self.interfaces, "collectives": self.collectives,
            "collective_costs": self.collective_costs}


def validate(site: Site, sizes: str, out: Path, measure: Measure = run, launch: Launch = Launch(),
             keep: bool = False, progress: Callable[[str], None] = lambda text: None,
             argv: tuple = (), collectives: bool = True) -> Validation:
    """The whole procedure; the document goes to `out`, each calibrating run
    beside it. `launch` holds the MPI to measure with; `argv` the command
    each run's header records; without `collectives`, the all-to-all alone."""
    import time
    from . import netns, wiring as plan
    if not site.hosts:
        netns.require_root()
        p = plan.make(site.net, site.name, source=site.file)
    b = v.bottleneck(site.net)
    out.parent.mkdir(parents=True, exist_ok=True)
    brought = not site.hosts and site.name not in netns.names()
    t0 = time.monotonic()
    if brought:
        netns.up(p)
    try:
        runs = _Runs(site, out, sizes, measure, launch, tuple(argv))
        result, alltoall = _validate(site, b, runs, progress, collectives)
        result.duration_s = round(time.monotonic() - t0, 1)
        alltoall.add_block("validation", result.to_dict())
        merge.write(alltoall, out)
    finally:
        if brought and not keep:
            netns.down(site.name)
    return result


def _validate(site: Site, b: v.Bottleneck, run: "_Runs", progress, collectives: bool = True) -> tuple:
    """(the validation but its duration, the all-to-all run's document)."""
    net, pairs = site.net, v.saturation_pairs(site.net, b.channel)
    progress(f"validate {site.name}: the model's bottleneck is {b.label} ({b.load} of the all-to-all routes cross "
             f"its busiest cable); saturating it with {len(pairs)} pairs: "
             + ", ".join(f"{s}->{d}" for s, d in pairs))
    sat = run.saturation(pairs, b)
    links = v.cable_class(net, b.link)
    bi = run.bidirectional(v.saturation_pairs(net, b.channel, both=True))
    predicted = v.predict(net, site.file, links, sat.rate_Bps)
    both_ways = v.predict(net, site.file, links, bi.rate_Bps)[0] if bi else None
    progress(f"validate {site.name}: saturation one way {sat.rate_Bps / MB:.2f} MB/s (95% {sat.low_Bps / MB:.2f}.."
             f"{sat.high_Bps / MB:.2f}) at {sat.active} pairs"
             + (f", both ways {bi.rate_Bps / MB:.2f} MB/s per direction ({len(bi.pairs)} pairs)" if bi else "")
             + f", against {b.rate_Bps / MB:g} MB/s nominal; calibrated prediction {predicted[0] / MB:.2f} MB/s per "
             f"node ({predicted[1]}); measuring all-to-all on {net.n_nodes} hosts ...")
    doc, measured = run.alltoall()
    per_size = [SizeResult(s, measured[s], predicted[0]) for s in sorted(measured)]
    colls, costs = [], None
    if collectives:
        progress(f"validate {site.name}: measuring the collectives at {max(measured)} bytes ...")
        docs = run.collectives(max(measured))
        costs = coll_check.costs(docs)
        colls = coll_check.rows(site, docs, links, sat.rate_Bps, not site.hosts, costs)
    return Validation(site, b, sat, bi, links, v.predict(net, site.file), predicted, both_ways, per_size, 0.0,
                      run.out, _cables(site, links, sat.rate_Bps, doc),
                      cablecheck.interface_links(net, site.hosts, doc) if site.hosts else [], colls, costs), doc


def _cables(site: Site, links: list, rate_Bps: float, doc) -> list:
    """The per-cable comparison of the all-to-all run (a testbed's; real hosts have no shaped cables to read)."""
    if site.hosts:
        return []
    from . import netns
    pred = cablecheck.predicted(site.net, netns.load(site.name)["cables"], {i: rate_Bps for i in links})
    return cablecheck.compare(pred, doc)


class _Runs:
    """The three runs of a validation, each a document beside `out`."""

    def __init__(self, site: Site, out: Path, sizes: str, measure: Measure, launch: Launch, argv: tuple):
        self.site, self.out, self.sizes, self.measure = site, out, sizes, measure
        self.launch, self.argv = launch, argv

    def _run(self, nodes: list[str], out: Path, **fields):
        """One run with a rank on each of `nodes` and three launches per point, into `out`: its document."""
        return self.measure(self.site.request(nodes, self.launch, output=str(out), launches=3, argv=self.argv,
                                              **{"sampling": FAST, **fields}))

    def saturation(self, pairs: list, b: v.Bottleneck) -> Rate:
        """Senders on one side of the cable, receivers on the other, 1 to all pairs active."""
        out = self.out.with_name(self.out.stem + "-saturation.json")
        doc = self._run([s for s, _ in pairs] + [d for _, d in pairs], out, benches=("message.saturation",),
                        sizes=SAT_SIZE, params=(f"window={SAT_WINDOW}",), active=f"1:{len(pairs)}",
                        sampling=CALIBRATE)
        rate, lo, hi, active = v.plateau_rate(merge.merged(doc))
        return Rate(rate, lo, hi, out, pairs, active, self._busiest(doc, b, active))

    def _busiest(self, doc, b: v.Bottleneck, active: int) -> Optional[float]:
        """The bottleneck direction's busiest windows (their 90th percentile, share of its rate) during the
        plateau point, the median over launches; None on real hosts."""
        if self.site.hosts:
            return None
        from statistics import median
        from . import netns
        net = self.site.net
        link, index = net.channel_cable[b.channel]
        k = next(i for i, c in enumerate(netns.load(self.site.name)["cables"]) if (c["link"], c["index"]) == (link, index))
        src = (list(net.node_names) + list(net.switch_names))[int(net.router.src[b.channel])]
        got = [c["p90_util"] for e in doc.launch_ends for s in e.spans if s.get("active") == active
               for c in s["cables"] if c["cable"] == k and c["from"] == src]
        return median(got) if got else None

    def bidirectional(self, pairs: list) -> Optional[Rate]:
        """The cable loaded both ways: its rate per direction (what it loses to the
        other way's acknowledgements), when pairs whose routes cross it both ways exist."""
        if not pairs:
            return None
        out = self.out.with_name(self.out.stem + "-bidirectional.json")
        doc = self._run([s for s, _ in pairs] + [d for _, d in pairs], out, benches=("message.bibw",),
                        sizes=SAT_SIZE, params=(f"window={SAT_WINDOW}",), sampling=CALIBRATE)
        return Rate(*v.bidirectional_rate(merge.merged(doc)), out, pairs)

    def collectives(self, size: int) -> list:
        """The documents of the collectives' runs at `size`, one rank on each host (every
        rank taking part), one run per operation (their algorithms' names differ), the
        allreduce's with coll.reduce_local beside it (gamma, every rank reducing at once as
        an allreduce's ranks do); first, alpha's: an 8-byte ping-pong between the first and
        the last host."""
        from ..measure import mpi
        flavour = mpi.discover(self.launch.mpicc, self.launch.mpiexec, self.launch.mpi_home,
                               need_compiler=False).flavour
        nodes = list(self.site.net.node_names)
        out = [self._run([nodes[0], nodes[-1]], self.out.with_name(f"{self.out.stem}-pingpong.json"),
                         benches=("message.pingpong",), sizes="8")]
        for bench, names in coll_check.ALGORITHMS:
            path = self.out.with_name(f"{self.out.stem}-{bench.replace('.', '-')}.json")
            also = ("coll.reduce_local",) if bench == "coll.allreduce" else ()
            out.append(self._run(nodes, path, benches=(bench, *also), sizes=str(size),
                                 params=(f"algorithm={names.get(flavour, names['mpich'])}",), active=str(len(nodes))))
        return out

    def alltoall(self) -> tuple:
        """(its document, per-node all-to-all bandwidth by size), every message in flight at once: the
        traffic the model describes (docs/model.md §1); MPI_Alltoall's own phases load
        different cables one after another."""
        net = self.site.net
        doc = self._run(list(net.node_names), self.out, benches=("message.alltoall",), sizes=self.sizes,
                        params=("variant=concurrent", f"fill={FILL}"))
        return doc, v.per_node(merge.merged(doc), net.n_nodes)
