"""fabriclab's message.latency_mt against OSU's osu_latency_mt, at 1:1 and 2:2
threads (OSU's `-t S:R`: S sender threads on rank 0, R receiver threads on
rank 1), sizes 8 B to 64 KiB.

The anchor is OSU Micro-Benchmarks' own binary, built with fabriclab's MPICH:
--osu PATH, else $FABRICLAB_OSU_DIR/pt2pt/osu_latency_mt (OSU's libexec/.../mpi
folder).
It runs with fabriclab's own launcher line (the same mpiexec, options,
environment and placement: _common.launch_prefix) as
`osu_latency_mt -t S:R -m 8:65536`, and prints per size the mean latency of
its loop: t_total / (2 x iterations / S), a sender thread's round trip over
two. fabriclab runs `message.latency_mt -p senders=S -p receivers=R -p
clock=osu -L 1 --sample-time 0.02` at the same sizes (samples of 20 ms, about
the span of OSU's loop): OSU's t_total, every sender thread's
round trip adding its end less the latest start of any sender thread (OSU's
shared t_start; --clock per-op sums sender thread 0's own round trips
instead, and `loop` times the threads' whole batch, counting the time a
thread waits for its core between round trips). Like with like: OSU's figure is a mean over its whole
loop, so the ratio compares fabriclab's mean over its samples (summary mean
/ 2); fabriclab's median (its reported latency_s) is printed beside it.

Each round runs OSU, fabriclab and OSU again, alternating the order (A B A,
A B A reversed, ...); per size the medians over rounds, the median of the
per-round ratios fabriclab / OSU, and OSU against itself in the same rounds:
the anchor's A/A floor (_common.aa_floor). Target: the ratio within 5% of
1, or within the A/A floor where that is wider ("floor").

--level-cost (on by default; --no-level-cost leaves it out) measures what
MPI_THREAD_MULTIPLE would cost the benchmarks that keep MPI_Init's level:
message.pingpong (8 B, 64 KiB) from fabriclab's core and from a copy built
from the same sources (its own build command, build.txt beside the core)
whose fl_thread_level asks every benchmark for MPI_THREAD_MULTIPLE,
alternated over the rounds, with the copy run twice for its A/A floor.

This machine has 2 cores: at 2:2 four threads share them with their ranks'
MPI progress and whatever else runs, so both contenders' means carry the
scheduler's preemptions and the A/A floor is wide; the figures are
provisional on a loaded host (the header prints the load).

Usage: python bench/bench_threads.py [--rounds N] [--osu PATH] [--sizes LIST]
                                     [--threads S:R ...]"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import tempfile
from pathlib import Path

import _common as c

SIZES = [8, 64, 512, 4 << 10, 32 << 10, 64 << 10]
THREADS = ["1:1", "2:2"]
TOLERANCE = 0.05
# fabriclab's samples span about OSU's loop of 10,000 round trips (some 20 ms at 1:1 and 64 B),
# where the kernel's own shortest sample is 2 ms: 2 ms samples read 64 B at 1:1 1.04-1.14 of
# OSU's mean, their mean carrying slow samples their median did not (docs/threads.md)
SAMPLE_S = 0.02


class Contest:
    """One thread count: OSU's command line and fabriclab's, and their figures by size (seconds)."""

    def __init__(self, threads: str, sizes: list, osu: Path, prefix: list, env: dict, workdir: str,
                 clock: str = "osu"):
        self.threads, self.sizes, self.workdir, self.env = threads, sizes, workdir, env
        s, r = threads.split(":")
        self.osu_argv = [*prefix, str(osu), "-t", threads, "-m", f"{min(sizes)}:{max(sizes)}"]
        self.fl_args = ["message.latency_mt", "-s", ",".join(map(str, sizes)), "-p", f"senders={s}",
                        "-p", f"receivers={r}", "-p", f"clock={clock}", "-L", "1",
                        "--sample-time", f"{SAMPLE_S:g}"]

    def osu(self) -> dict:
        """OSU's table: size -> mean latency in seconds (it prints microseconds)."""
        out = c.run(self.osu_argv, env=self.env, timeout=300)
        got = {}
        for ln in out.splitlines():
            cells = ln.split()
            if len(cells) >= 2 and cells[0].isdigit():
                got[int(cells[0])] = float(cells[1]) * 1e-6
        missing = [s for s in self.sizes if s not in got]
        if missing:
            raise c.BenchError(f"osu_latency_mt printed no figure for sizes {missing}: {out.strip()[-300:]}")
        return got

    def fabriclab(self) -> dict:
        """size -> (mean latency, median latency) in seconds: the samples' mean and median per op over 2 legs."""
        doc, _, _ = c.fabriclab(self.fl_args, self.workdir, timeout=600)
        out = {}
        for s in self.sizes:
            p = c.point(doc, "message.latency_mt", s)
            out[s] = (p["summary"]["mean"] / p["legs_per_op"], p["latency_s"])
        return out


def judge(ct: Contest, rounds: int) -> bool:
    print(f"\nmessage.latency_mt vs osu_latency_mt at -t {ct.threads}")
    res = c.alternate([("osu", ct.osu), ("fabriclab", ct.fabriclab), ("osu again", ct.osu)], rounds,
                      show=lambda name, r: f"{c.fmt_time(min(v[0] if isinstance(v, tuple) else v for v in r.values()))}"
                                           f" smallest")
    print(f"  {'size':>8}  {'osu mean':>10}  {'fl mean':>10}  {'fl median':>10}  {'ratio':>6}  {'rounds':>13}  "
          f"{'A/A':>6}  verdict")
    all_ok = True
    for s in ct.sizes:
        osu = [r[s] for r in res["osu"]]
        fl = [r[s][0] for r in res["fabriclab"]]
        ratio, per_round = c.paired_ratio(fl, osu)
        floor = c.aa_floor(c.paired_ratio([r[s] for r in res["osu again"]], osu)[1])
        ok = not c.beyond(ratio, floor, TOLERANCE)
        all_ok &= ok
        word = "PASS" if abs(ratio - 1) <= TOLERANCE else "floor" if ok else "MISS"
        print(f"  {c.fmt_size(s):>8}  {c.fmt_time(c.median(osu)):>10}  {c.fmt_time(c.median(fl)):>10}  "
              f"{c.fmt_time(c.median([r[s][1] for r in res['fabriclab']])):>10}  {ratio:6.3f}  "
              f"{c.spread(per_round):>13}  {floor:6.1%}  {word}", flush=True)
    c.verdict(all_ok, f"message.latency_mt's mean latency within {TOLERANCE:.0%} of osu_latency_mt's at -t "
                      f"{ct.threads}, or within OSU's own A/A floor", "every size" if all_ok else "see MISS rows")
    return all_ok


COST_SIZES = [8, 64 << 10]
# hello.c's rule, and the copy's: every benchmark asks for MPI_THREAD_MULTIPLE
LEVEL_RULE = "return f->threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;"
LEVEL_FORCED = "(void)f;\n    return MPI_THREAD_MULTIPLE;"


def multiple_core(doc: dict, work: str) -> str:
    """A copy of the run's core whose every benchmark runs under MPI_THREAD_MULTIPLE: the
    sources copied with hello.c's rule replaced, built by the core's own command (build.txt)."""
    core = Path(doc["header"]["core"]["path"])
    command = next(ln.split(" ", 1)[1] for ln in (core.parent / "build.txt").read_text().splitlines()
                   if ln.startswith("command "))
    src = c.REPO / "csrc"
    copy = Path(tempfile.mkdtemp(prefix="csrc-", dir=work)) / "csrc"
    shutil.copytree(src, copy)
    hello = copy / "hello.c"
    text = hello.read_text()
    if LEVEL_RULE not in text:
        raise c.BenchError(f"{src}/hello.c no longer holds the rule this bench replaces: {LEVEL_RULE}")
    hello.write_text(text.replace(LEVEL_RULE, LEVEL_FORCED))
    exe = str(copy.parent / "fabriclab-core-multiple")
    argv = shlex.split(command)
    argv[argv.index("-o") + 1] = exe
    c.run([a.replace(str(src), str(copy)) for a in argv], timeout=300)
    return exe


def level_cost(doc: dict, work: str, rounds: int) -> None:
    exe = multiple_core(doc, work)
    args = ["message.pingpong", "-s", ",".join(map(str, COST_SIZES)), "-L", "1"]

    def pingpong(core: list) -> dict:
        d, _, _ = c.fabriclab([*args, *core], work)
        levels = {r["hello"]["thread_level"]["provided"] for r in c.launches(d)}
        return {"level": levels, **{s: c.point(d, "message.pingpong", s)["latency_s"] for s in COST_SIZES}}

    print(f"\nmessage.pingpong at MPI_THREAD_SINGLE (fabriclab's core) and MPI_THREAD_MULTIPLE (a copy: {exe})")
    res = c.alternate([("single", lambda: pingpong([])), ("multiple", lambda: pingpong(["--core", exe])),
                       ("multiple again", lambda: pingpong(["--core", exe]))], rounds,
                      show=lambda name, r: f"{c.fmt_time(r[COST_SIZES[0]])} at 8 B ({'/'.join(r['level'])})")
    print(f"  {'size':>8}  {'SINGLE':>10}  {'MULTIPLE':>10}  {'ratio':>6}  {'rounds':>13}  {'A/A':>6}")
    for s in COST_SIZES:
        one = [r[s] for r in res["single"]]
        many = [r[s] for r in res["multiple"]]
        ratio, per_round = c.paired_ratio(many, one)
        floor = c.aa_floor(c.paired_ratio([r[s] for r in res["multiple again"]], many)[1])
        print(f"  {c.fmt_size(s):>8}  {c.fmt_time(c.median(one)):>10}  {c.fmt_time(c.median(many)):>10}  "
              f"{ratio:6.3f}  {c.spread(per_round):>13}  {floor:6.1%}", flush=True)


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=c.ROUNDS, help=f"rounds per thread count (default {c.ROUNDS})")
    ap.add_argument("--osu", type=Path,
                    default=Path(os.environ.get("FABRICLAB_OSU_DIR", "/nonexistent")) / "pt2pt" / "osu_latency_mt",
                    help="osu_latency_mt built with fabriclab's MPICH (default $FABRICLAB_OSU_DIR/pt2pt/osu_latency_mt)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="comma-separated sizes in bytes (default 8,64,512,4096,32768,65536)")
    ap.add_argument("--no-level-cost", action="store_true",
                    help="leave out message.pingpong at MPI_THREAD_SINGLE against MPI_THREAD_MULTIPLE")
    ap.add_argument("--clock", choices=("osu", "per-op", "loop"), default="osu",
                    help="message.latency_mt's clock (default osu: OSU's t_total over every sender thread)")
    ap.add_argument("--threads", action="append", metavar="S:R",
                    help="sender:receiver threads (repeatable; default 1:1 and 2:2)")
    opts = ap.parse_args()
    if not opts.osu.is_file():
        raise c.BenchError(f"--osu {opts.osu}: no such file (build OSU Micro-Benchmarks with fabriclab's mpicc)")
    sizes = [int(x) for x in opts.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        # a first run builds the core and gives the launcher line OSU runs with
        doc, _, _ = c.fabriclab(["message.latency_mt", "-s", "8", "-L", "1", "--point-time", "0.05"], work)
        prefix, env = c.launch_prefix(doc)
        contests = [Contest(t, sizes, opts.osu, prefix, env, work, opts.clock) for t in opts.threads or THREADS]
        envtext = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        c.header("fabriclab message.latency_mt vs OSU's osu_latency_mt (latency, threads per rank)",
                 mpi=[f"{c.mpi_library(doc)} (thread level {doc['header']['mpi'].get('thread_level')})"],
                 commands=[ln for ct in contests for ln in
                           (f"osu:       {(envtext + ' ') if envtext else ''}{shlex.join(ct.osu_argv)}",
                            f"fabriclab: fabriclab run {shlex.join(ct.fl_args)}")],
                 method=f"{opts.rounds} rounds per thread count, OSU, fabriclab and OSU again alternated; OSU's "
                        f"mean latency per size against fabriclab's samples' mean per op over 2 legs; per size "
                        f"the median of per-round ratios, and OSU against itself (A/A floor)")
        for ct in contests:
            judge(ct, opts.rounds)
        if not opts.no_level_cost:
            level_cost(doc, work, opts.rounds)


if __name__ == "__main__":
    c.main(body)
