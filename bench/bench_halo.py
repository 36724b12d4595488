"""fabriclab's halo exchanges against the anchors they follow (docs/halo.md),
each on the same ranks and launch line:

(a) message.stencil2d against IMB-P2P's Stencil2D (`-msglog 3:16 -iter N`):
    both print the message rate, every rank's sends over the slowest rank's
    time (IMB's Msg/sec; fabriclab's message_rate_per_s);
(b) coll.neighbor_allgather against OSU's osu_neighbor_allgather (`-f -m
    8:65536`, OSU's default neighbourhood: dim 1, radius 1): the time of one
    op, OSU's Max Latency (the slowest process's mean) against fabriclab's
    median op time of the slowest rank.

Sizes 8 B, 1 KiB and 64 KiB (--sizes). Contenders alternate over rounds
(anchor, fabriclab, anchor again; the order flips every round) and each is
taken as its median over the rounds; the ratio printed is the median of the
per-round ratios fabriclab / anchor, and the A/A floor (_common.aa_floor)
the anchor's second run against its first in the same rounds: a ratio
within that floor is a difference this machine cannot tell. A size is marked
beyond where its ratio is off by more than 5% and by more than that floor.
fabriclab runs one launch per round (-L 1) with --point-time (0.2 s by default); the
anchors print means over their loops, read by fabriclab's own importers
(imports/halo.py).

The anchors are found through options or environment variables:
--osu DIR or $FABRICLAB_OSU_DIR (OSU Micro-Benchmarks' libexec/.../mpi
folder) and --imb-p2p PATH or $FABRICLAB_IMB_P2P (Intel MPI Benchmarks'
IMB-P2P).
Both must be built with the mpicc fabriclab uses (the MPICH of its venv);
they are launched with fabriclab's own launcher command line (same mpiexec,
options, environment and placement).

Usage: python bench/bench_halo.py [--rounds N] [--ranks N] [--sizes LIST]
                                  [--point-time S] [--osu DIR] [--imb-p2p PATH]"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import tempfile
from pathlib import Path

import _common as c
from fabriclab.imports import imb, osu
from fabriclab.suite import halo

TOLERANCE = 0.05   # the targets: within 5%, or the A/A floor where wider


class Contest:
    """One anchor against one fabriclab benchmark: the figure each gives per size."""

    def __init__(self, label: str, bench: str, anchor_argv: list, parse, figure: str, unit: str):
        self.label, self.bench, self.anchor_argv, self.parse = label, bench, anchor_argv, parse
        self.figure, self.unit = figure, unit     # the point's field compared, and how it prints


def build_contests(a, prefix: list) -> list:
    top = max(a.sizes).bit_length() - 1
    imb_argv = [*prefix, a.imb_p2p, "Stencil2D", "-msglog", f"3:{top}", "-iter", str(a.iter)]
    osu_argv = [*prefix, str(Path(a.osu) / "collective" / "osu_neighbor_allgather"), "-f", "-m", f"8:{1 << top}",
                "-i", str(a.iter), "-x", str(max(a.iter // 10, 1))]
    return [
        Contest("message.stencil2d vs IMB-P2P Stencil2D (messages/s)", "message.stencil2d", imb_argv,
                lambda text: {f.size: f.value for f in imb.parse(text).figures if f.bench == "message.stencil2d"},
                "message_rate_per_s", "msg/s"),
        Contest("coll.neighbor_allgather vs osu_neighbor_allgather -f (us per op)", "coll.neighbor_allgather",
                osu_argv,
                lambda text: {f.size: f.median_s * 1e6 for f in osu.parse(text, nranks=a.ranks).figures
                              if f.bench == "coll.neighbor_allgather" and not f.variant},
                "time_us", "us"),
    ]


def figure_of(p: dict, figure: str) -> float:
    return p["summary"]["median"] * 1e6 if figure == "time_us" else p[figure]


def contest(ct: Contest, a, env: dict, work: str, fl_common: list) -> None:
    def anchor() -> dict:
        got = ct.parse(c.run(ct.anchor_argv, env=env, timeout=600))
        missing = [s for s in a.sizes if s not in got]
        if missing:
            raise c.BenchError(f"{ct.label}: the anchor printed no figure for sizes {missing}")
        return got

    def fabriclab() -> dict:
        d, _, _ = c.fabriclab([ct.bench, *fl_common], work, timeout=900)
        return {p["size"]: figure_of(p, ct.figure) for p in c.points(d, ct.bench) if not p["variant"]}

    print(f"\n{ct.label}")
    res = c.alternate([("anchor", anchor), ("fabriclab", fabriclab), ("anchor again", anchor)], a.rounds,
                      show=lambda name, r: f"{r[max(a.sizes)]:,.1f} {ct.unit} at {c.fmt_size(max(a.sizes))}")
    print(f"  {'size':>8}  {'anchor ' + ct.unit:>14}  {'fabriclab ' + ct.unit:>16}  {'ratio':>6}  {'A/A floor':>9}")
    beyond = 0
    for s in a.sizes:
        anc, fl = [r[s] for r in res["anchor"]], [r[s] for r in res["fabriclab"]]
        ratio, _ = c.paired_ratio(fl, anc)
        floor = c.aa_floor([b / x for b, x in zip((r[s] for r in res["anchor again"]), anc)])
        miss = c.beyond(ratio, floor, TOLERANCE)
        beyond += miss
        print(f"  {c.fmt_size(s):>8}  {statistics.median(anc):>14,.1f}  {statistics.median(fl):>16,.1f}  "
              f"{ratio:>6.3f}  {floor:>9.1%}{'  beyond 5% and the floor' if miss else ''}")
    print(f"  {beyond} of {len(a.sizes)} sizes differ by more than 5% and the anchor's A/A floor")


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--sizes", default="8,1024,65536", help="sizes in bytes, comma-separated, powers of two")
    ap.add_argument("--iter", type=int, default=200, help="the anchors' repetitions per size")
    ap.add_argument("--point-time", type=float, default=0.2)
    ap.add_argument("--osu", default=os.environ.get("FABRICLAB_OSU_DIR", ""))
    ap.add_argument("--imb-p2p", default=os.environ.get("FABRICLAB_IMB_P2P", ""))
    a = ap.parse_args()
    a.sizes = sorted(int(s) for s in a.sizes.split(","))
    if a.rounds < 3 or halo.imb_grid(a.ranks, 2) is None or any(s < 8 or s & (s - 1) for s in a.sizes):
        raise c.BenchError("need --rounds >= 3, --ranks with an IMB 2-D grid (4, 6, 8, 9 ...) and sizes that are "
                           "powers of two from 8")
    for path in (Path(a.osu) / "collective" / "osu_neighbor_allgather", Path(a.imb_p2p)):
        if not path.is_file():
            raise c.BenchError(f"anchor not found: {path} (--osu, --imb-p2p or their environment variables)")
    work = tempfile.mkdtemp(prefix="bench-halo-")
    # a first run builds the core and gives fabriclab's launch line for the anchors
    doc, _, _ = c.fabriclab(["message.stencil2d", "-s", "8", "-n", str(a.ranks), "--point-time", "0.05", "-L", "1"],
                            work)
    prefix, env = c.launch_prefix(doc)
    contests = build_contests(a, prefix)
    fl_common = ["-s", ",".join(map(str, a.sizes)), "-n", str(a.ranks), "-L", "1", "--point-time", str(a.point_time)]
    envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    c.header("fabriclab halo exchange vs IMB-P2P Stencil2D and osu_neighbor_allgather", [c.mpi_library(doc)],
             [f"anchor:    {(envs + ' ') if envs else ''}{shlex.join(ct.anchor_argv)}\n"
              f"  fabriclab: fabriclab run {ct.bench} {shlex.join(fl_common)}" for ct in contests],
             f"{a.rounds} rounds alternating anchor, fabriclab, anchor again; medians over rounds")
    for ct in contests:
        contest(ct, a, env, work, fl_common)


if __name__ == "__main__":
    c.main(body)
