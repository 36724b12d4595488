"""fabriclab's message-rate benchmarks against the anchors they follow
(docs/message-rate.md), each on the same ranks and launch line:

(a) message.mbw_mr against OSU's osu_mbw_mr (`-W W -m 8:1048576`), at two
    windows or more (--windows, default 8 and 64, OSU's default): both print
    messages per second, every pair's messages over the senders' mean time;
(b) message.uniband and message.biband against IMB-MPI1's Uniband and
    Biband (`-msglog 3:20`, window 256): Msg/sec over the slowest rank's time.
    IMB's buffers start on a page, as fabriclab's and OSU's do: the bench
    preloads bench/imb_aligned.c, whose MPI_Alloc_mem returns page-aligned
    memory where MPICH's returns malloc's, 16 bytes past a cache line
    (--imb-buffers as-is runs IMB bare; docs/message-rate.md).

Sizes 8 B to 1 MiB by x2. Contenders alternate over rounds (anchor,
fabriclab, anchor again; the order flips every round) and each is taken as
its median over the rounds; the ratio printed is the median of the per-round
ratios fabriclab / anchor (and, as `ratio (mean)`, with fabriclab's rate taken
at the mean of its samples, the statistic the anchors print), and the A/A
floor (_common.aa_floor) the anchor's second run against its first in the
same rounds: a ratio within that floor is a difference this machine cannot
tell. A size is marked beyond where its ratio is off by more than 5% and by
more than that floor. fabriclab runs one launch per round (-L 1) with
--point-time (0.2 s by default), its figure the median of its samples;
the anchors print means over their loops. Figures are messages per second
(fabriclab's message_rate_per_s; OSU's Messages/s, read by fabriclab's own
importer, imports/rate.py; IMB's Msg/sec).

The anchors are found through options or environment variables:
--osu DIR or $FABRICLAB_OSU_DIR (OSU Micro-Benchmarks' libexec/.../mpi
folder) and --imb PATH or $FABRICLAB_IMB_MPI1 (Intel MPI Benchmarks'
IMB-MPI1). Both
must be built with the mpicc fabriclab uses (the MPICH of its venv); they are
launched with fabriclab's own launcher command line (same mpiexec, options,
environment and placement).

--only BENCH runs that benchmark's contests alone (repeatable).

Usage: python bench/bench_rate.py [--rounds N] [--ranks N] [--windows LIST]
                                  [--point-time S] [--osu DIR] [--imb PATH]
                                  [--only BENCH]"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import tempfile
from pathlib import Path

import _common as c
from fabriclab.imports import imb, osu

SIZES = [8 << k for k in range(18)]                 # 8 B .. 1 MiB
TOLERANCE = 0.05                                    # the targets: within 5%, or the A/A floor where wider


def rates(parsed, bench: str, variant: str = "") -> dict:
    """size -> messages per second of one benchmark (and variant) an importer read."""
    return {f.size: f.value for f in parsed.figures if f.bench == bench and f.variant == variant}


class Contest:
    def __init__(self, label: str, bench: str, anchor_argv: list, parse, variant: str, params: list,
                 env: dict | None = None):
        self.label, self.bench, self.anchor_argv = label, bench, anchor_argv
        self.parse, self.variant, self.params = parse, variant, params
        self.env = env or {}        # the anchor's own additions (IMB's preloaded shim)


def build_contests(a, prefix: list, env: dict, shim: str | None, openmpi: bool) -> list:
    osu_exe = str(Path(a.osu) / "pt2pt" / "osu_mbw_mr")
    out = []
    for w in a.windows:
        variant = "" if w == 64 else f"window={w}"
        out.append(Contest(f"message.mbw_mr window {w} vs osu_mbw_mr -W {w}", "message.mbw_mr",
                           [*prefix, osu_exe, "-W", str(w), "-m", f"{SIZES[0]}:{SIZES[-1]}"],
                           lambda text, v=variant: rates(osu.parse(text), "message.mbw_mr", v), variant,
                           ["-p", f"window={w}"]))
    # hydra passes the environment on; Open MPI's mpirun only what -x names
    preload = ["-x", "LD_PRELOAD"] if shim and openmpi else []
    imb_argv = [*prefix, *preload, a.imb, "-msglog", f"{SIZES[0].bit_length() - 1}:{SIZES[-1].bit_length() - 1}",
                "-npmin", str(a.ranks)]
    for name, bench in (("Uniband", "message.uniband"), ("Biband", "message.biband")):
        out.append(Contest(f"{bench} vs IMB-MPI1 {name}", bench, [*imb_argv, name],
                           lambda text, b=bench: rates(imb.parse(text), b), "", [],
                           {"LD_PRELOAD": shim} if shim else None))
    return out


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--windows", default="8,64", help="osu_mbw_mr windows, comma-separated (64 is OSU's default)")
    ap.add_argument("--point-time", type=float, default=0.2)
    ap.add_argument("--osu", default=os.environ.get("FABRICLAB_OSU_DIR", ""))
    ap.add_argument("--imb", default=os.environ.get("FABRICLAB_IMB_MPI1", ""))
    ap.add_argument("--only", action="append", help="run the contests of this benchmark only (repeatable)")
    ap.add_argument("--imb-buffers", choices=("aligned", "as-is"), default="aligned",
                    help="IMB's buffers on a page (bench/imb_aligned.c preloaded, as fabriclab's and OSU's start) "
                         "or where MPI_Alloc_mem puts them (MPICH: 16 bytes past a cache line). Default: aligned.")
    a = ap.parse_args()
    a.windows = [int(w) for w in a.windows.split(",")]
    if a.rounds < 3 or a.ranks < 2 or a.ranks % 2 or 64 not in a.windows or len(a.windows) < 2:
        raise c.BenchError("need --rounds >= 3, an even --ranks >= 2 and at least two windows, 64 among them")
    for path in (Path(a.osu) / "pt2pt" / "osu_mbw_mr", Path(a.imb)):
        if not path.is_file():
            raise c.BenchError(f"anchor not found: {path} (--osu, --imb or their environment variables)")
    work = tempfile.mkdtemp(prefix="bench-rate-")
    # a first run builds the core and gives fabriclab's launch line for the anchors
    doc, _, _ = c.fabriclab(["message.uniband", "-s", "8", "-n", str(a.ranks), "--point-time", "0.05", "-L", "1"], work)
    prefix, env = c.launch_prefix(doc)
    shim = c.preload_lib("imb_aligned.c", work) if a.imb_buffers == "aligned" else None
    contests = [ct for ct in build_contests(a, prefix, env, shim, doc["header"]["mpi"]["flavour"] == "openmpi")
                if not a.only or ct.bench in a.only]
    fl_common = ["-s", ",".join(map(str, SIZES)), "-n", str(a.ranks), "-L", "1", "--point-time", str(a.point_time)]
    envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    c.header("fabriclab message rate vs osu_mbw_mr and IMB-MPI1 Uniband/Biband (messages/s)",
             [c.mpi_library(doc)],
             [f"anchor:    {(envs + ' ') if envs else ''}"
              f"{''.join(f'{k}={Path(v).name} ' for k, v in ct.env.items())}{shlex.join(ct.anchor_argv)}\n"
              f"  fabriclab: fabriclab run {ct.bench} {shlex.join(fl_common + ct.params)}" for ct in contests],
             f"{a.rounds} rounds alternating anchor, fabriclab, anchor again; medians over rounds")
    for ct in contests:
        def anchor(ct=ct) -> dict:
            got = ct.parse(c.run(ct.anchor_argv, env={**env, **ct.env}, timeout=600))
            missing = [s for s in SIZES if s not in got]
            if missing:
                raise c.BenchError(f"{ct.anchor_argv[len(prefix)]} printed no rate for sizes {missing}")
            return got

        def fabriclab(ct=ct) -> dict:
            """size -> (messages/s at the median sample, at the mean of the samples)."""
            d, _, _ = c.fabriclab([ct.bench, *fl_common, *ct.params], work, timeout=900)
            return {p["size"]: (p["message_rate_per_s"], p["messages_per_op"] / p["summary"]["mean"])
                    for p in c.points(d, ct.bench) if p["variant"] == ct.variant}

        print(f"\n{ct.label}")
        res = c.alternate([("anchor", anchor), ("fabriclab", fabriclab), ("anchor again", anchor)], a.rounds,
                          show=lambda name, r: f"{max(v[0] if isinstance(v, tuple) else v for v in r.values()) / 1e6:.3f} "
                                               "M msg/s peak")
        print(f"  {'size':>8}  {'anchor msg/s':>14}  {'fabriclab msg/s':>16}  {'ratio':>6}  {'ratio (mean)':>12}  "
              f"{'A/A floor':>9}")
        beyond = 0
        for s in SIZES:
            anc = [r[s] for r in res["anchor"]]
            fl, fl_mean = [r[s][0] for r in res["fabriclab"]], [r[s][1] for r in res["fabriclab"]]
            ratio, _ = c.paired_ratio(fl, anc)
            ratio_mean, _ = c.paired_ratio(fl_mean, anc)
            floor = c.aa_floor([b / x for b, x in zip((r[s] for r in res["anchor again"]), anc)])
            miss = c.beyond(ratio, floor, TOLERANCE)
            beyond += miss
            print(f"  {c.fmt_size(s):>8}  {statistics.median(anc):>14,.0f}  {statistics.median(fl):>16,.0f}  "
                  f"{ratio:>6.3f}  {ratio_mean:>12.3f}  {floor:>9.1%}"
                  f"{'  beyond 5% and the floor' if miss else ''}")
        print(f"  {beyond} of {len(SIZES)} sizes differ by more than 5% and the anchor's A/A floor")


if __name__ == "__main__":
    c.main(body)
