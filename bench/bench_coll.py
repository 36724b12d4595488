"""fabriclab's coll level against a bare loop of the same MPI calls.

The reference, bench/reference/coll_loop.c, runs MPI_Allreduce, MPI_Bcast,
MPI_Allgather and MPI_Reduce_scatter as fabriclab's defaults do (blocking,
float, MPI_SUM, root 0, one barrier before each op outside its time, the
slowest rank's time), built with the mpicc fabriclab uses and launched with
fabriclab's own launcher command line. It measures each point as fabriclab's
first run did (a launch per operation with its sizes in order, a
communicator per point, fabriclab's batch and sample count), so that the two
differ only in the timing harness (docs/collectives.md, "Against a bare
loop", says what each of these moved). At 8 B, 64 KiB and 4 MiB on the
run's ranks (2 by default), the time per op of each is compared round by
round, the contenders alternating; the target is every ratio within 3%
(median over the rounds). Each round also launches the reference a second
time: how far the reference is from itself (the A/A floor, _common.aa_floor)
is the smallest difference this machine can tell at that point, and a
verdict says so where the floor is wider than the target.

Across a testbed (fabriclab testbed up ...), `--testbed NAME --hosts
h0,h1,h4,h5 --ranks 4` runs both there, the reference with fabriclab's own
launch line and environment (TCP over the emulated cables); the target there
is 5%.

Usage: python bench/bench_coll.py [--rounds N] [--ranks N] [--ops LIST] [--save FILE] [--mpi-home DIR]
       [--testbed NAME --hosts LIST]"""

from __future__ import annotations

import argparse
import json
import shlex
import tempfile
from pathlib import Path

import _common as c
from fabriclab import schema
from fabriclab.errors import UsageError

REF = Path(__file__).resolve().parent / "reference" / "coll_loop.c"
OPS = ("allreduce", "bcast", "allgather", "reduce_scatter")
SIZES = (8, 64 << 10, 4 << 20)
# Across a testbed's 60 MB/s cables an op of 4 MiB takes a fifth of a second: 1 MiB there.
TESTBED_SIZES = (8, 64 << 10, 1 << 20)
TOLERANCE = 0.03
TESTBED_TOLERANCE = 0.05
# The reference's repetitions: as many as fabriclab's samples at the point
# (Reference.follow), and never fewer than fabriclab's --min-samples.
REPS_MIN = 10


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--ranks", type=int, default=2, help="ranks (default 2)")
    ap.add_argument("--mpi-home", help="the MPI to measure (default: fabriclab's own choice)")
    ap.add_argument("--testbed", help="run both on this testbed (fabriclab testbed up ...; its hosts from --hosts)")
    ap.add_argument("--hosts", help="the hosts of the ranks (with --testbed, e.g. h0,h1,h4,h5)")
    ap.add_argument("--save", metavar="FILE", help="also write every round's time per op of each contender (JSON)")
    ap.add_argument("--ops", default=",".join(OPS), help=f"the operations, of {', '.join(OPS)} (default all)")
    opts = ap.parse_args(argv)
    if opts.rounds < 1 or opts.ranks < 2:
        ap.error("--rounds must be at least 1 and --ranks at least 2")
    opts.ops = tuple(o.strip() for o in opts.ops.split(",") if o.strip())
    if not opts.ops or set(opts.ops) - set(OPS):
        ap.error(f"--ops takes some of {', '.join(OPS)}")
    opts.sizes = TESTBED_SIZES if opts.testbed else SIZES
    opts.points = tuple((op, s) for op in opts.ops for s in opts.sizes)
    return opts


def fl_args(opts) -> list[str]:
    return ([*(f"coll.{op}" for op in opts.ops), "-n", str(opts.ranks), "--active", str(opts.ranks),
             "-s", ",".join(map(str, opts.sizes)), "--launches", "1"]
            + (["--mpi-home", opts.mpi_home] if opts.mpi_home else [])
            + (["--testbed", opts.testbed] if opts.testbed else []) + (["--hosts", opts.hosts] if opts.hosts else []))


def fl_measure(opts, work: str) -> dict:
    r = c.fabriclab_run(fl_args(opts), work)
    if r.error is not None:
        raise c.BenchError(f"fabriclab exit code {r.returncode}: {r.error}\n  command: {shlex.join(r.argv)}")
    try:
        doc = schema.load(r.path)
    except UsageError as e:
        raise c.BenchError(str(e)) from None
    return {(p.bench[5:], p.size): p.summary.median for p in doc.points}


class Reference:
    """The bare loop as fabriclab's run measures: a launch per operation (fabriclab
    launches each benchmark on its own), its sizes ascending in that launch, so a
    point follows the same points in both."""

    def __init__(self, exe: str, prefix: list[str], env: dict, points: tuple):
        self.exe, self.prefix, self.env, self.points = exe, prefix, env, points
        self.plan = {pt: (3, 3) for pt in points}  # (ops per repetition, repetitions)

    def launch(self) -> dict:
        got = {}
        for op in dict.fromkeys(op for op, _ in self.points):
            specs = [f"{o}:{size}:{i}:{r}" for (o, size), (i, r) in self.plan.items() if o == op]
            out = c.run([*self.prefix, self.exe, *specs], env=self.env, timeout=600)
            try:
                rows = [json.loads(ln) for ln in out.strip().splitlines() if ln.startswith("{")]
                got.update({(r["op"], r["size"]): r["time_s"] for r in rows})
            except (ValueError, KeyError):
                raise c.BenchError(f"unexpected reference output: {out.strip()[:300]}") from None
        missing = [pt for pt in self.points if pt not in got]
        if missing:
            raise c.BenchError(f"the reference gave no figure for {missing}")
        return got

    def follow(self, points) -> None:
        """Each point as fabriclab's first run measured it: a repetition of as many ops
        as its batch (the slowest rank's time of a batch is the largest of the ranks'
        sums, below the sum of each op's slowest rank wherever the slowest rank
        changes from op to op), and as many repetitions as it took samples, so the
        point lasts as long: a point's ops slow as it runs (MPICH's 4 MiB allgather
        read 0.8-1.6% faster over 31 repetitions than over 276, in 6 launches of 6)."""
        for p in points:
            pt = (p.bench[5:], p.size)
            if pt in self.plan:
                self.plan[pt] = (max(1, p.batch or 1), max(REPS_MIN, p.summary.n))

    def measure(self) -> dict:
        return self.launch()


def setup(opts, work: str):
    """A first fabriclab run builds the core and gives the mpicc and launch line it uses."""
    r = c.fabriclab_run(fl_args(opts), work)
    if r.error is not None:
        raise c.BenchError(f"fabriclab: {r.error}")
    loaded = schema.load(r.path)
    doc = loaded.to_dict(derived=False)
    prefix, env = c.launch_prefix(doc)
    exe = str(Path(work) / "coll_loop")
    build = [doc["header"]["mpi"]["mpicc"], "-O2", "-o", exe, str(REF)]
    c.run(build)
    ref = Reference(exe, prefix, env, opts.points)
    ref.follow(loaded.points)
    return ref, build, c.mpi_library(doc)


def body() -> None:
    opts = parse_args()
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        ref, build, library = setup(opts, work)
        c.header("fabriclab coll level vs a bare loop of the same MPI calls",
                 mpi=[f"{library} ({opts.ranks} ranks; launches both contenders)"],
                 commands=[f"build:     {shlex.join(build)}",
                           f"reference: {shlex.join([*ref.prefix, 'coll_loop'])} OP:SIZE:ITERS:REPS ...",
                           f"fabriclab: fabriclab run {shlex.join(fl_args(opts))} -o RUN.json -q"],
                 method=f"{opts.rounds} rounds, contenders alternated; time per op = the slowest rank's, a "
                        f"barrier before each op outside its time; reference = a launch per op as fabriclab's, the "
                        f"median of as many repetitions as fabriclab's samples at the point, each of as many ops as "
                        f"its batch; fabriclab = the point's median; target on the median of "
                        "per-round ratios; A/A floor = the reference's second launch of each round against "
                        "its first")
        print("  reference plan (ops per repetition x repetitions): " + ", ".join(
            f"{op} {c.fmt_size(size)} {i}x{r}" for (op, size), (i, r) in ref.plan.items()))
        res = c.alternate([("reference", ref.measure), ("fabriclab", lambda: fl_measure(opts, work)),
                           ("reference again", ref.measure)], opts.rounds, show=lambda name, r: f"{len(r)} points")
        report(opts, res)
        if opts.save:
            rows = {name: [{f"{op} {size}": t for (op, size), t in r.items()} for r in rounds]
                    for name, rounds in res.items()}
            Path(opts.save).write_text(json.dumps(rows, indent=1))


def report(opts, res: dict) -> None:
    """The table (fabriclab and the reference, their ratio, the reference against itself)
    and a verdict per point."""
    print(f"\n  {'point':<22}{'fabriclab':>12}{'reference':>12}   ratio (per-round range)   A/A floor")
    verdicts = []
    for pt in opts.points:
        fl, ref, again = ([x[pt] for x in res[k]] for k in ("fabriclab", "reference", "reference again"))
        ratio, each = c.paired_ratio(fl, ref)
        floor = c.aa_floor(c.paired_ratio(again, ref)[1])
        print(f"  {pt[0] + ' ' + c.fmt_size(pt[1]):<22}{c.fmt_time(c.median(fl)):>12}{c.fmt_time(c.median(ref)):>12}"
              f"   {ratio:.3f} ({c.spread(each)}){'':<4}{floor:.1%}")
        verdicts.append((pt, ratio, floor))
    print()
    tolerance = TESTBED_TOLERANCE if opts.testbed else TOLERANCE
    for pt, r, floor in verdicts:
        c.floor_verdict(r, floor, tolerance, f"{pt[0]} {c.fmt_size(pt[1])} within {tolerance:.0%} of the reference")


if __name__ == "__main__":
    c.main(body)
