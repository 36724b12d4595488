"""fabriclab's atomics (deposit.fop, deposit.cas, deposit.acc) against OSU's own
osu_fop_latency, osu_cas_latency and osu_acc_latency, in OSU's default sync
(flush) and in lock and fence (or --syncs), alternating contenders over
rounds (fabriclab, OSU, OSU again: A B C, C B A, ...).

Both time the same loop on the origin (osu_fop_latency.c and its siblings;
csrc/families/deposit_atomic.c): flush: one lock, then op + MPI_Win_flush per
iteration; lock: lock, op, unlock per op; fence: a round of an op each way,
halved; and both read the clock around every iteration (OSU's t_graph_start
and t_graph_end, fabriclab's `-p clock=per-op`), which at tens of nanoseconds
per op is a good part of the figure. OSU prints the mean over its loop (10,000 iterations after 100 skipped,
osu_util.h LAT_LOOP_SMALL); fabriclab the median of its samples (and, as
`ratio (mean)`, the mean of its samples: OSU's statistic). Per contest:
the medians over rounds, the median of the per-round ratios fabriclab / OSU,
and the A/A floor: OSU's second run against its first in the same rounds
(_common.aa_floor), the difference two runs of the same binary show here.
The verdicts at the end judge `ratio (mean)`, the statistic both print as
OSU does: within 5%, or within the A/A floor where that is wider.

What differs on purpose: OSU's fop and cas move one MPI_CHAR (its -T offers
MPI_INT and MPI_FLOAT, no 8-byte type), fabriclab's one int64 (8 bytes, the
width of the NICs' atomics); acc runs both on MPI_CHAR / int8 at SIZE bytes.
OSU's get_acc test creates its window with MPI_Win_create, so it is left out
(fabriclab's windows come from MPI_Win_allocate).

The anchor: --osu DIR or $FABRICLAB_OSU_DIR, OSU Micro-Benchmarks' mpi folder
(with one-sided/osu_fop_latency ...), built with the mpicc fabriclab uses;
both run with fabriclab's launch line (same mpiexec, options and binding).

Usage: python bench/bench_atomics.py --osu DIR [--rounds N] [--syncs flush,lock,fence]
                                     [--tests fop,cas,acc] [--acc-sizes 8,4K]"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402

PROGRAMS = {"fop": "osu_fop_latency", "cas": "osu_cas_latency", "acc": "osu_acc_latency"}


class Contest:
    def __init__(self, test: str, sync: str, sizes: list[int]):
        self.test, self.sync, self.sizes = test, sync, sizes
        self.bench = f"deposit.{test}"

    @property
    def label(self) -> str:
        return f"{self.bench} sync={self.sync}"


class Anchors:
    def __init__(self, osu: Path, workdir: str, point_time: float):
        self.osu, self.workdir, self.point_time = osu, workdir, point_time
        doc, _, _ = c.fabriclab(["deposit.fop", "-s", "8", "--point-time", "0.05", "-L", "1"], workdir)
        self.prefix, self.env = c.launch_prefix(doc)
        self.library = c.mpi_library(doc)

    def osu_argv(self, ct: Contest) -> list[str]:
        sizes = ["-m", f"{min(ct.sizes)}:{max(ct.sizes)}"] if ct.test == "acc" else []
        return [*self.prefix, str(self.osu / "one-sided" / PROGRAMS[ct.test]), "-s", ct.sync, *sizes]

    def fl_args(self, ct: Contest) -> list[str]:
        kind = ["-p", "type=int8"] if ct.test == "acc" else []
        return [ct.bench, "-s", ",".join(map(str, ct.sizes)), "-p", f"sync={ct.sync}", "-p", "clock=per-op", *kind,
                "--point-time", f"{self.point_time:g}", "-L", "1"]

    def osu_run(self, ct: Contest) -> dict:
        """Seconds per op by size, as OSU prints them (its mean; fence halved by OSU)."""
        out = c.run(self.osu_argv(ct), env=self.env, timeout=120)
        got = {}
        for ln in out.splitlines():
            cells = ln.split()
            if len(cells) >= 2 and cells[0].isdigit():
                got[int(cells[0])] = float(cells[1]) * 1e-6
        if ct.test != "acc":   # one element: OSU's size is its type's, fabriclab's 8
            got = {s: got[min(got)] for s in ct.sizes} if got else {}
        missing = [s for s in ct.sizes if s not in got]
        if missing:
            raise c.BenchError(f"{PROGRAMS[ct.test]} printed no figure for sizes {missing}: {out.strip()[:300]}")
        return got

    def fabriclab(self, ct: Contest) -> dict:
        doc, _, _ = c.fabriclab(self.fl_args(ct), self.workdir, timeout=300)
        for p in c.points(doc, ct.bench):
            if p["validation"] is not None and p["validation"].get("errors"):
                raise c.BenchError(f"{ct.label}: validation failed at {p['size']}")
        out = {}
        for s in ct.sizes:  # (median, mean): the mean of the samples as the median scales to latency
            p = c.point(doc, ct.bench, s)
            out[s] = (p["latency_s"], p["latency_s"] * p["summary"]["mean"] / p["summary"]["median"])
        return out


TOLERANCE = 0.05


def judge(a: Anchors, ct: Contest, rounds: int) -> list[tuple[str, float, float]]:
    """One contest's table; (what, the mean's ratio, OSU's A/A floor) per size."""
    print(f"\n{ct.label} vs {PROGRAMS[ct.test]} -s {ct.sync}")
    res = c.alternate([("fabriclab", lambda: a.fabriclab(ct)), ("osu", lambda: a.osu_run(ct)),
                       ("osu again", lambda: a.osu_run(ct))], rounds,
                      show=lambda name, r: c.fmt_time(r[min(r)][0] if name == "fabriclab" else r[min(r)]))
    print(f"  {'size':>8}  {'fabriclab':>12}  {'osu':>12}  {'ratio':>6}  {'rounds':>13}  {'A/A':>6}  "
          f"{'ratio (mean)':>12}")
    out = []
    for s in ct.sizes:
        fl = [r[s][0] for r in res["fabriclab"]]
        fl_mean = [r[s][1] for r in res["fabriclab"]]
        osu = [r[s] for r in res["osu"]]
        again = [r[s] for r in res["osu again"]]
        ratio, ratios = c.paired_ratio(fl, osu)
        floor = c.aa_floor(c.paired_ratio(again, osu)[1])
        mean_ratio = c.paired_ratio(fl_mean, osu)[0]
        print(f"  {c.fmt_size(s):>8}  {c.fmt_time(c.median(fl)):>12}  {c.fmt_time(c.median(osu)):>12}  "
              f"{ratio:6.3f}  {c.spread(ratios):>13}  {floor:6.1%}  {mean_ratio:12.3f}", flush=True)
        out.append((f"{ct.label} {c.fmt_size(s)}", mean_ratio, floor))
    return out


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--osu", type=Path, default=os.environ.get("FABRICLAB_OSU_DIR"),
                    help="OSU Micro-Benchmarks' mpi folder (one-sided/osu_fop_latency ...); "
                         "default $FABRICLAB_OSU_DIR")
    ap.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"rounds of alternation (default {c.ROUNDS})")
    ap.add_argument("--syncs", default="flush,lock,fence", help="OSU sync modes (default flush,lock,fence)")
    ap.add_argument("--tests", default="fop,cas,acc", help="tests among fop, cas, acc (default all three)")
    ap.add_argument("--acc-sizes", default="8,4096", help="acc's sizes in bytes (default 8,4096)")
    ap.add_argument("--point-time", type=float, default=0.3, help="fabriclab's --point-time (default 0.3)")
    opts = ap.parse_args()
    if not opts.osu or not (opts.osu / "one-sided" / "osu_fop_latency").is_file():
        raise c.BenchError(f"--osu {opts.osu}: no one-sided/osu_fop_latency there (or set $FABRICLAB_OSU_DIR)")
    if opts.rounds < 3:
        raise c.BenchError("--rounds must be at least 3 (medians of at least three runs)")
    tests = [t for t in opts.tests.split(",") if t]
    if set(tests) - set(PROGRAMS):
        raise c.BenchError(f"--tests takes {', '.join(PROGRAMS)}")
    acc_sizes = [int(s) for s in opts.acc_sizes.split(",")]
    contests = [Contest(t, s, acc_sizes if t == "acc" else [8]) for t in tests for s in opts.syncs.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-atomics-") as work:
        a = Anchors(opts.osu, work, opts.point_time)
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in a.env.items())
        cmds = [line for ct in contests for line in
                (f"osu:       {(env + ' ') if env else ''}{shlex.join(a.osu_argv(ct))}",
                 f"fabriclab: fabriclab run {shlex.join(a.fl_args(ct))}")]
        c.header("fabriclab atomics vs OSU's osu_fop/cas/acc_latency", [a.library], cmds,
                 f"alternating fabriclab, OSU, OSU again over {opts.rounds} rounds; medians over rounds, "
                 "median of per-round ratios fabriclab/OSU, A/A floor = OSU again vs OSU")
        found = [row for ct in contests for row in judge(a, ct, opts.rounds)]
        print()
        for what, ratio, floor in found:
            c.floor_verdict(ratio, floor, TOLERANCE, f"{what}: mean latency within {TOLERANCE:.0%} of OSU's")
        print("\nfigures are provisional on a shared or loaded host (the header gives the load)")


if __name__ == "__main__":
    c.main(body)
