"""fabriclab's fabric and ucx levels against minimal hand-written loops.

The references, bench/reference/fi_loop.c (libfabric: RDM endpoint, tagged
send/receive, fi_tinject up to the inject size) and bench/reference/ucp_loop.c
(UCP tagged send/receive), are built with the mpicc fabriclab uses, against
the copy of each library that fabriclab's core links
(fabriclab.measure.libraries.find), and launched with fabriclab's own
launcher command line, so the two differ only in the timing harness.

For each pair (fabric/shm, fabric/tcp, ucx/default, ucx/tls=tcp): 0- and
8-byte ping-pong one-way latency ({bench}.pingpong), and stream bandwidth at
64 KiB, 1 MiB and 4 MiB with a window of 64 ({bench}.stream). Targets: every
point within 5% of the reference (median over rounds of the ratio within each
round). Layer order: fabric.pingpong on shm at 8 bytes not slower than
message.pingpong, measured in the same rounds.

Usage: python bench/bench_fabric.py [--rounds N] [--pairs NAME,...] [--reference-only]"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

import _common as c
from fabriclab import schema
from fabriclab.errors import UsageError
from fabriclab.measure import libraries

REF_DIR = Path(__file__).resolve().parent / "reference"
LOOPS = {"fabric": "fi_loop", "ucx": "ucp_loop"}
LAT_SIZES = (0, 8)
BW_SIZES = (64 << 10, 1 << 20, 4 << 20)
POINTS = tuple([("latency", s) for s in LAT_SIZES] + [("bandwidth", s) for s in BW_SIZES])
WINDOW = 64
TOLERANCE = 0.05
LAYER_SIZE = 8
# The reference's timed repetitions: REPS[kind] of about REP_S[kind] seconds
# each, the median kept (iterations calibrated once per point before the
# rounds). Short repetitions, as fabriclab's samples (--sample-time 20 us, a
# window at least), so that both statistics are medians of short samples that
# an interruption of the machine spoils one at a time; a mean over 30 ms
# carries every interruption into the figure.
REPS = {"latency": 301, "bandwidth": 31}
REP_S = {"latency": 2e-5, "bandwidth": 0.0}


@dataclass(frozen=True)
class Pair:
    """One provider or transport choice, as fabriclab's -p and as the reference's argv/env."""
    name: str
    level: str                # "fabric" or "ucx"
    params: tuple = ()        # fabriclab -p KEY=VALUE
    loop_args: tuple = ()     # reference arguments before the mode (fi_loop: the provider)
    env: tuple = ()           # (KEY, VALUE) for the reference


PAIRS = (
    Pair("fabric/shm", "fabric", ("provider=shm",), ("shm",)),
    Pair("fabric/tcp", "fabric", ("provider=tcp",), ("tcp",)),
    Pair("ucx/default", "ucx"),
    Pair("ucx/tls=tcp", "ucx", ("tls=tcp",), (), (("UCX_TLS", "tcp"),)),
)
LAYER_PAIR = "fabric/shm"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds per pair (default 3)")
    ap.add_argument("--pairs", default=",".join(p.name for p in PAIRS),
                    help="comma-separated pairs to measure (default: all of "
                         + ", ".join(p.name for p in PAIRS) + ")")
    ap.add_argument("--reference-only", action="store_true",
                    help="measure the reference loops alone (default: off)")
    opts = ap.parse_args(argv)
    if opts.rounds < 1:
        ap.error("--rounds must be at least 1")
    names = [n.strip() for n in opts.pairs.split(",") if n.strip()]
    known = {p.name: p for p in PAIRS}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        ap.error(f"unknown pair {', '.join(unknown) or '(none given)'}; known: {', '.join(known)}")
    opts.pairs = [known[n] for n in names]
    return opts


# ---- statistics and verdicts ----

def point_label(point: tuple) -> str:
    kind, size = point
    return f"{kind} {c.fmt_size(size)}"


def fmt_value(point: tuple, x: float) -> str:
    return c.fmt_time(x) if point[0] == "latency" else c.fmt_bw(x)


def compare(fl: list[dict], ref: list[dict], points=POINTS) -> dict:
    """Per point: (median of per-round ratios fabriclab / reference, the ratios).
    Rounds missing a point on either side are left out of that point."""
    out = {}
    for pt in points:
        rounds = [(a[pt], b[pt]) for a, b in zip(fl, ref) if a.get(pt) and b.get(pt)]
        if rounds:
            out[pt] = c.paired_ratio([a for a, _ in rounds], [b for _, b in rounds])
    return out


def within(ratio: float, tolerance: float = TOLERANCE) -> bool:
    """Within the tolerance either way: a harness much faster than the
    reference measures something else, as much as one much slower."""
    return abs(ratio - 1) <= tolerance


# ---- the reference loops ----

def build(level: str, mpicc: str, workdir: str) -> tuple[str, list[str]]:
    """Compile the level's reference loop: (executable, compiler argv)."""
    lib = libraries.find(level, mpicc)
    if not lib.available:
        raise c.BenchError(f"{lib.name} unavailable: {lib.reason}; {lib.enable}")
    exe = str(Path(tempfile.mkdtemp(prefix="ref-", dir=workdir)) / LOOPS[level])
    argv = [mpicc, "-O2", "-o", exe, str(REF_DIR / f"{LOOPS[level]}.c"), *lib.cflags, *lib.ldflags]
    c.run(argv)
    return exe, argv


class Reference:
    """One pair's reference loop, launched as fabriclab launches its core."""

    def __init__(self, pair: Pair, exe: str, prefix: list[str], env: dict):
        self.pair, self.exe, self.prefix = pair, exe, prefix
        self.env = {**env, **dict(pair.env)}
        self.iters: dict = {}

    def argv(self, point: tuple, iters: int, reps: int) -> list[str]:
        kind, size = point
        mode = (["pingpong", str(size)] if kind == "latency" else ["stream", str(size), str(WINDOW)])
        return [*self.prefix, self.exe, *self.pair.loop_args, *mode, str(iters), str(reps)]

    def once(self, point: tuple, iters: int, reps: int) -> tuple[float, dict]:
        out = c.run(self.argv(point, iters, reps), env=self.env, timeout=120)
        try:
            rec = json.loads(out.strip().splitlines()[-1])
            return rec["latency_s" if point[0] == "latency" else "bandwidth_Bps"], rec
        except (ValueError, KeyError, IndexError):
            raise c.BenchError(f"[{self.pair.name}] unexpected reference output: {out.strip()[:300]}") from None

    def calibrate(self) -> dict:
        """Iterations per point for REP_S seconds per repetition, from one short run
        (which also warms up the page cache and the provider's set-up paths)."""
        rec = {}
        for pt in POINTS:
            kind, size = pt
            probe = 500 if kind == "latency" else 2
            x, rec = self.once(pt, probe, 1)
            per_iter = 2 * x if kind == "latency" else size * WINDOW / x
            self.iters[pt] = max(1, min(10 ** 6, round(REP_S[kind] / per_iter)))
        return rec

    def measure(self) -> dict:
        return {pt: self.once(pt, self.iters[pt], REPS[pt[0]])[0] for pt in POINTS}


# ---- fabriclab ----

def fl_doc(args: list[str], work: str) -> dict:
    """One fabriclab run (one launch), read back and checked by fabriclab.schema.load."""
    r = c.fabriclab_run([*args, "--launches", "1"], work)
    if r.error is not None:
        raise c.BenchError(f"fabriclab exit code {r.returncode}, status {r.status}: {r.error}\n"
                           f"  command: {shlex.join(r.argv)}")
    try:
        return schema.load(r.path)
    except UsageError as e:
        raise c.BenchError(str(e)) from None


def fl_value(doc, bench: str, point: tuple) -> float:
    key = "latency_s" if point[0] == "latency" else "bandwidth_Bps"
    for p in doc.points:
        if p.bench == bench and p.size == point[1] and getattr(p, key):
            return getattr(p, key)
    raise c.BenchError(f"no {key} for {bench} at size {point[1]} in the result")


def fl_args(pair: Pair, bench: str) -> list[str]:
    params = [a for kv in pair.params for a in ("-p", kv)]
    if bench == "stream":   # the loops put each op of a window at its own offset
        params += ["-p", f"window={WINDOW}", "-p", "window_buffers=per-op"]
    sizes = LAT_SIZES if bench == "pingpong" else BW_SIZES
    return [f"{pair.level}.{bench}", *params, "-s", ",".join(map(str, sizes))]


def fl_measure(pair: Pair, work: str) -> dict:
    pp = fl_doc(fl_args(pair, "pingpong"), work)
    st = fl_doc(fl_args(pair, "stream"), work)
    vals = {pt: fl_value(pp, f"{pair.level}.pingpong", pt) for pt in POINTS if pt[0] == "latency"}
    vals.update({pt: fl_value(st, f"{pair.level}.stream", pt) for pt in POINTS if pt[0] == "bandwidth"})
    return vals


def message_latency(work: str) -> float:
    doc = fl_doc(["message.pingpong", "-s", str(LAYER_SIZE)], work)
    return fl_value(doc, "message.pingpong", ("latency", LAYER_SIZE))


# ---- one pair ----

def show(name: str, res) -> str:
    if isinstance(res, float):
        return c.fmt_time(res)
    return ", ".join(f"{c.fmt_size(pt[1])} {fmt_value(pt, x)}" for pt, x in res.items())


def run_pair(pair: Pair, ref: Reference, work: str, rounds: int, with_fl: bool) -> dict:
    """Alternate reference and fabriclab (and message.pingpong for the layer
    order) over the rounds; returns the results by contender."""
    contenders = [("reference", ref.measure)]
    if with_fl:
        contenders.append(("fabriclab", lambda: fl_measure(pair, work)))
        if pair.name == LAYER_PAIR:
            contenders.append(("message", lambda: message_latency(work)))
        contenders.append(("reference again", ref.measure))    # the A/A floor (_common.aa_floor)
    return c.alternate(contenders, rounds, show=show)


def print_table(res: dict) -> dict:
    """The per-point table of one pair; returns compare()'s ratios with each point's
    A/A floor: {point: (ratio, per-round ratios, floor)}."""
    ref, fl, again = res["reference"], res.get("fabriclab"), res.get("reference again")
    ratios = compare(fl, ref) if fl else {}
    floors = {pt: c.aa_floor(r) for pt, (_, r) in compare(again, ref).items()} if again else {}
    print(f"  {'point':<18}{'fabriclab':>14}{'reference':>14}   ratio (per-round range)   A/A floor")
    for pt in POINTS:
        r = c.median([x[pt] for x in ref])
        f = fmt_value(pt, c.median([x[pt] for x in fl])) if fl else "-"
        rt = (f"{ratios[pt][0]:.3f} ({c.spread(ratios[pt][1])})  "
              f"{'PASS' if within(ratios[pt][0]) else 'FAIL'}") if pt in ratios else "-"
        print(f"  {point_label(pt):<18}{f:>14}{fmt_value(pt, r):>14}   {rt}"
              + (f"   {floors[pt]:.1%}" if pt in floors else ""))
    return {pt: (*v, floors.get(pt, 0.0)) for pt, v in ratios.items()}


def setup(work: str) -> tuple[str, list[str], dict, str]:
    """A first fabriclab run builds the core and tells which mpicc and launch line it uses."""
    doc = fl_doc(["message.pingpong", "-s", str(LAYER_SIZE)], work).to_dict(derived=False)
    prefix, env = c.launch_prefix(doc)
    return doc["header"]["mpi"]["mpicc"], prefix, env, c.mpi_library(doc)


def print_header(opts, mpicc: str, prefix: list[str], library: str, exes: dict) -> None:
    refs = [f"reference: {shlex.join([*prefix, Path(exes[p.level][0]).name, *p.loop_args])} "
            f"pingpong SIZE ITERS {REPS['latency']} | stream SIZE {WINDOW} ITERS {REPS['bandwidth']}"
            + "".join(f"  ({k}={v})" for k, v in p.env) for p in opts.pairs]
    fls = [f"fabriclab: fabriclab run {shlex.join(fl_args(p, b))} --launches 1 -o RUN.json -q"
           for p in opts.pairs for b in ("pingpong", "stream")]
    c.header("fabriclab fabric and ucx levels vs minimal libfabric and UCP loops",
             mpi=[f"{library} (mpicc {mpicc}; launches both contenders)"],
             commands=[f"build:     {shlex.join(argv)}" for _, argv in exes.values()] + refs + fls,
             method=f"{opts.rounds} rounds per pair, contenders alternated (A B, B A, ...); reference = "
                    f"median of {REPS['latency']} timed repetitions of ~{REP_S['latency'] * 1e6:g} us for "
                    f"latency, {REPS['bandwidth']} of one window for bandwidth (after a warm-up) of round trip / 2 "
                    f"or bytes / time; fabriclab = the point's latency_s or bandwidth_Bps; targets on the "
                    f"median of per-round ratios; GB/s = 10^9 bytes/s")


def measure_pair(pair: Pair, ref: Reference, work: str, opts, errors: list):
    """One pair's rounds and table: (verdicts, layer-order ratio or None)."""
    print(f"\n{pair.name}")
    try:
        rec = ref.calibrate()
        with_fl = not opts.reference_only and probe_fabriclab(pair, work, errors)
    except c.BenchError as e:
        print(f"  ERROR  {e}")
        errors.append(pair.name)
        return [], None
    print(f"  reference runs on {describe(rec)}")
    res = run_pair(pair, ref, work, opts.rounds, with_fl)
    ratios = print_table(res)
    layer = None
    if "message" in res:
        fab = [x[("latency", LAYER_SIZE)] for x in res["fabriclab"]]
        layer = c.paired_ratio(fab, res["message"])
        print(f"  layer order at {LAYER_SIZE} B: fabric.pingpong {c.fmt_time(c.median(fab))}, "
              f"message.pingpong {c.fmt_time(c.median(res['message']))}; ratio {layer[0]:.3f} "
              f"(rounds {c.spread(layer[1])})")
    return [(pair.name, pt, r, floor) for pt, (r, _, floor) in ratios.items()], layer


def body() -> None:
    opts = parse_args()
    os.environ.pop("UCX_TLS", None)  # each pair sets its own transports
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        mpicc, prefix, env, library = setup(work)
        exes = {lv: build(lv, mpicc, work) for lv in sorted({p.level for p in opts.pairs})}
        print_header(opts, mpicc, prefix, library, exes)
        verdicts, errors, layer = [], [], None
        for pair in opts.pairs:
            ref = Reference(pair, exes[pair.level][0], prefix, env)
            vs, lay = measure_pair(pair, ref, work, opts, errors)
            verdicts += vs
            layer = lay or layer
        conclude(verdicts, layer, errors)


def probe_fabriclab(pair: Pair, work: str, errors: list) -> bool:
    """A first fabriclab ping-pong of the pair (a warm-up); False, with the reason
    printed, when the level cannot run here: the reference is measured alone."""
    try:
        fl_doc(fl_args(pair, "pingpong"), work)
        return True
    except c.BenchError as e:
        print(f"  ERROR  fabriclab cannot run {pair.name}; the reference alone: {c.last_lines(str(e), 2)}")
        errors.append(pair.name)
        return False


def describe(rec: dict) -> str:
    keys = ("loop", "version", "provider", "fabric", "tls", "inject_size")
    return ", ".join(f"{k} {rec[k]}" for k in keys if rec.get(k) not in (None, ""))


def conclude(verdicts: list, layer, errors: list) -> None:
    print()
    for name, pt, r, floor in verdicts:
        c.floor_verdict(r, floor, TOLERANCE, f"[{name}] {point_label(pt)} within {TOLERANCE:.0%} of the reference")
    if layer:
        c.verdict(layer[0] <= 1, f"layer order: fabric.pingpong ({LAYER_PAIR}) {LAYER_SIZE} B latency "
                                 f"not above message.pingpong's", f"ratio {layer[0]:.3f}")
    if errors:
        raise c.BenchError(f"not measured against fabriclab: {', '.join(errors)}")


if __name__ == "__main__":
    c.main(body)
