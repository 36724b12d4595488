"""fabriclab's windowed kernels against minimal hand-written MPI loops
(bench/window_ref.c, with fabriclab's warm layout) in both of OSU's layouts:
`shared`, a window's ops sharing the rotation (from 64 KiB up one buffer per
side: osu_bw's and osu_bibw's default, and fabriclab's two-sided default),
and `per-op`, a buffer per op of a window (osu_bw -b multiple, osu_put_bw's
offsets, and fabriclab's one-sided default); fabriclab runs its default and
`-p window_buffers=per-op` against the reference's layout of the same name.

Each round also runs the reference a second time: the ratio of its two runs is
this machine's A/A floor at each size (_common.aa_floor), and a size whose
ratio misses the target but stays within that floor reads "floor", not "MISS":
two runs of the same loop differ by that much here (the per-op layout rotates
64 buffers through DRAM, whose bandwidth a shared VM varies by 20-30%).

(a) message.bibw (2 ranks, --cache warm) against `window_ref bibw`: the same
    bidirectional window loop (window 64, W receives, W sends, one wait, a
    zero-byte ack each way), in each layout. Target: fabriclab's bandwidth
    within 3% of the reference's at every size from 8 B to 4 MiB.
(b) deposit.put_bibw (--cache warm) against `window_ref put_bibw`: both ranks
    put a window of 64 into each other, then flush (per-op). Target: within
    3%, 8 B to 4 MiB.
(c) message.stream (--cache warm) against `window_ref stream`: the same
    one-way window loop (osu_bw style: window 64, zero-byte ack per window),
    in each layout. Target: fabriclab >= 0.97 x the reference at every size
    from 64 KiB to 4 MiB.

Each reference is compiled with the mpicc fabriclab uses and launched with
fabriclab's own launcher command line (same mpiexec, options, environment and
placement). Both report bytes per second over the same bytes: for bibw both
directions (fabriclab's bytes_per_op sums what every rank sends), for stream
one. The reference runs a fixed number of windows per size, chosen to last
about --ref-seconds, and reports the bandwidth of the whole loop (mean time
per op, the figure the targets use by default) and of its median window;
fabriclab samples as it does by default (one window per sample at most
sizes, reduced to the median). On a loaded host the mean suffers from every
preemption and the median hardly: where the two reference figures differ by
more than 10%, a note says so, and --ref-figure median compares like with
like. An Open MPI variant runs too when $FABRICLAB_OPENMPI_HOME (or
.mpi/openmpi) holds one.

--osu DIR (or $FABRICLAB_OSU_DIR: OSU Micro-Benchmarks' libexec/.../mpi
folder, built with fabriclab's mpicc) takes OSU's own binaries as the
reference instead, in their default mode (osu_bw and osu_bibw with `-b
single`, or `-b multiple` for the per-op layout, and osu_put_bibw), launched
with the same command line; OSU prints one figure (MB/s over its loop), used
as both figures, and the A/A floor is OSU against itself. The Open MPI
variant needs an OSU built for it, so it is left out.

--only NAME runs the contests of that benchmark (repeatable) and --sizes
LIST replaces every contest's sizes.

Usage: python bench/bench_patterns.py [--rounds N] [--ref-seconds S]
                                      [--ref-figure mean|median] [--no-openmpi]
                                      [--only BENCH] [--sizes LIST] [--osu DIR]"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import _common as c

HERE = Path(__file__).resolve().parent
BIBW_SIZES = [8, 32, 128, 512, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20, 4 << 20]
STREAM_SIZES = [64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20]


@dataclass(frozen=True)
class Contest:
    bench: str          # the fabriclab benchmark
    ref: str            # the mode of bench/window_ref.c
    sizes: list
    target: str         # "within" (|ratio - 1| <= tol) or "at_least" (ratio >= tol)
    tol: float
    layout: str = "shared"    # window_ref's layout, and fabriclab's window_buffers
    default: bool = True      # fabriclab runs with its default window_buffers (else -p)

    def ok(self, ratio: float, floor: float = 0.0) -> bool:
        """Within the tolerance, or within the A/A floor where that is wider (the reference
        against itself in the same rounds differs by that much on this machine)."""
        if self.target == "within":
            return abs(ratio - 1) <= max(self.tol, floor)
        return ratio >= min(self.tol, 1 - floor)

    @property
    def label(self) -> str:
        return f"{self.bench} ({'default, ' if self.default else ''}window_buffers={self.layout})"

    def describe(self) -> str:
        span = f"{c.fmt_size(self.sizes[0])}..{c.fmt_size(self.sizes[-1])}"
        ref = f"{self.ref} {self.layout}"
        if self.target == "within":
            return f"{self.label} bandwidth within {self.tol:.0%} of {ref} at every size {span}"
        return f"{self.label} bandwidth >= {self.tol:.2f} x {ref} at every size {span}"


CONTESTS = [Contest("message.bibw", "bibw", BIBW_SIZES, "within", 0.03),
            Contest("message.bibw", "bibw", BIBW_SIZES, "within", 0.03, "per-op", False),
            Contest("deposit.put_bibw", "put_bibw", BIBW_SIZES, "within", 0.03, "per-op"),
            Contest("message.stream", "stream", STREAM_SIZES, "at_least", 0.97),
            Contest("message.stream", "stream", STREAM_SIZES, "at_least", 0.97, "per-op", False)]
REF_SRC = HERE / "window_ref.c"
# OSU's binary for each window_ref mode (osu_put_bibw puts op j of a window at j x size, the per-op layout).
OSU = {"bibw": ("pt2pt", "osu_bibw"), "stream": ("pt2pt", "osu_bw"), "put_bibw": ("one-sided", "osu_put_bibw")}


def csv(sizes) -> str:
    return ",".join(str(s) for s in sizes)


class Variant:
    """One MPI: the fabriclab arguments that select it, and the references built for it."""

    def __init__(self, label: str, home: str | None, workdir: str, ref_seconds: float, osu: Path | None = None):
        self.label, self.home, self.workdir, self.ref_seconds, self.osu = label, home, workdir, ref_seconds, osu
        self.mpi_args = ["--mpi-home", home] if home else []
        # A first run builds the core and tells which mpicc and launch line fabriclab uses.
        doc, _, _ = c.fabriclab(["message.stream", "-s", "64K", "--point-time", "0.1",
                                 *self.mpi_args], workdir)
        mpi = doc["header"]["mpi"]
        self.mpicc, self.flavour, self.library = mpi["mpicc"], mpi["flavour"], c.mpi_library(doc)
        prefix, env = c.launch_prefix(doc)
        self.prefix, self.env = prefix, env
        self.exe = str(Path(tempfile.mkdtemp(prefix="ref-", dir=workdir)) / "window_ref")
        self.cc_argv = [self.mpicc, "-O3", "-o", self.exe, str(REF_SRC)]
        c.run(self.cc_argv)

    def ref_argv(self, ct: Contest) -> list[str]:
        if self.osu:
            folder, name = OSU[ct.ref]
            layout = ["-b", "multiple"] if ct.layout == "per-op" and ct.ref != "put_bibw" else []
            return [*self.prefix, str(self.osu / folder / name), "-m", f"{min(ct.sizes)}:{max(ct.sizes)}", *layout]
        return [*self.prefix, self.exe, ct.ref, csv(ct.sizes), f"{self.ref_seconds:g}", ct.layout]

    def osu_reference(self, ct: Contest, out: str) -> dict:
        """OSU's table (size, MB/s over its loop) as both figures, bytes per second."""
        got = {}
        for ln in out.splitlines():
            cells = ln.split()
            if len(cells) == 2 and cells[0].isdigit():
                got[int(cells[0])] = float(cells[1]) * 1e6
        return {"mean": got, "median": got}

    def fl_args(self, ct: Contest) -> list[str]:
        layout = [] if ct.default else ["-p", f"window_buffers={ct.layout}"]
        return [ct.bench, "-s", csv(ct.sizes), "--cache", "warm", *layout, *self.mpi_args]

    def reference(self, ct: Contest) -> dict:
        """Bytes per second by figure ("mean": whole loop, "median": median window) and size."""
        timeout = 60 + 10 * self.ref_seconds * len(ct.sizes)
        out = c.run(self.ref_argv(ct), env=self.env, timeout=timeout)
        got = self.osu_reference(ct, out) if self.osu else {"mean": {}, "median": {}}
        for ln in out.splitlines():
            if ln.startswith("{") and not self.osu:
                d = json.loads(ln)
                got["mean"][d["size"]] = d["mb_per_s"] * 1e6
                got["median"][d["size"]] = d["median_window_mb_per_s"] * 1e6
        missing = [s for s in ct.sizes if s not in got["mean"]]
        if missing:
            raise c.BenchError(f"{ct.ref} printed no figure for sizes {missing}: {out.strip()[:300]}")
        return got

    def fabriclab(self, ct: Contest) -> dict:
        doc, _, _ = c.fabriclab(self.fl_args(ct), self.workdir, timeout=600)
        return {s: c.point(doc, ct.bench, s)["bandwidth_Bps"] for s in ct.sizes}

    def commands(self, contests: list[Contest]) -> list[str]:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        lines = [f"[{self.label}] build:     {shlex.join(self.cc_argv)}"]
        for ct in contests:
            lines += [f"[{self.label}] reference: {(env + ' ') if env else ''}{shlex.join(self.ref_argv(ct))}",
                      f"[{self.label}] fabriclab: fabriclab run {shlex.join(self.fl_args(ct))}"]
        return lines


def peak(res: dict) -> str:
    """A one-cell summary of a run over sizes: its largest bandwidth."""
    return f"peak {c.fmt_bw(max(res.values()))}"


def judge(v: Variant, ct: Contest, rounds: int, figure: str) -> bool:
    """Alternates reference and fabriclab; per size the medians over rounds,
    the median of per-round ratios against the reference's `figure` (the
    target) and against its other figure, and PASS/MISS."""
    other = "median" if figure == "mean" else "mean"
    print(f"\n[{v.label}] {ct.label} vs {ct.ref} {ct.layout} (target against the reference's {figure} figure)")
    res = c.alternate([("reference", lambda: v.reference(ct)), ("fabriclab", lambda: v.fabriclab(ct)),
                       ("reference again", lambda: v.reference(ct))],     # the A/A floor (_common.aa_floor)
                      rounds, show=lambda name, r: peak(r[figure] if name.startswith("reference") else r))
    print(f"  {'size':>8}  {'ref ' + figure:>12}  {'ref ' + other:>12}  {'fabriclab':>12}  "
          f"{'ratio':>6}  {'rounds':>13}  {'vs ' + other:>9}  {'A/A':>6}")
    all_ok, worst, noisy, floored = True, None, [], []
    for s in ct.sizes:
        ref = [r[figure][s] for r in res["reference"]]
        alt = [r[other][s] for r in res["reference"]]
        fl = [r[s] for r in res["fabriclab"]]
        ratio, per_round = c.paired_ratio(fl, ref)
        alt_ratio, _ = c.paired_ratio(fl, alt)
        floor = c.aa_floor(c.paired_ratio([r[figure][s] for r in res["reference again"]], ref)[1])
        ok = ct.ok(ratio, floor)
        if ok and not ct.ok(ratio):
            floored.append(f"{c.fmt_size(s)} (ratio {ratio:.3f}, A/A floor {floor:.1%})")
        all_ok &= ok
        if worst is None or (abs(ratio - 1) > abs(worst[1] - 1) if ct.target == "within" else ratio < worst[1]):
            worst = (s, ratio)
        if abs(c.median(ref) / c.median(alt) - 1) > 0.10:
            noisy.append(c.fmt_size(s))
        print(f"  {c.fmt_size(s):>8}  {c.fmt_bw(c.median(ref)):>12}  {c.fmt_bw(c.median(alt)):>12}  "
              f"{c.fmt_bw(c.median(fl)):>12}  {ratio:6.3f}  {c.spread(per_round):>13}  {alt_ratio:9.3f}  "
              f"{floor:6.1%}  {'PASS' if ct.ok(ratio) else 'floor' if ok else 'MISS'}", flush=True)
    if noisy:
        print(f"  note: the reference's mean and median-window figures differ by more than 10% at "
              f"{', '.join(noisy)}: preemptions or other work on the host; rerun on an idle machine "
              f"before trusting the ratios")
    if floored:
        print(f"  within the reference's own A/A floor, beyond the {ct.tol:g} target (the target is not "
              f"resolvable on this machine there): {', '.join(floored)}")
    c.verdict(all_ok, f"[{v.label}] {ct.describe()} (or within the A/A floor)",
              f"worst size {c.fmt_size(worst[0])}, ratio {worst[1]:.4f}")
    return all_ok


def sizes(text: str) -> list[int]:
    """64K,1M -> bytes, as window_ref.c reads them."""
    scale = {"K": 1 << 10, "M": 1 << 20}
    try:
        return [int(t[:-1]) * scale[t[-1].upper()] if t[-1].upper() in scale else int(t) for t in text.split(",")]
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"sizes are comma-separated bytes with K or M, not {text!r}") from None


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds per MPI and contest (default 5)")
    ap.add_argument("--ref-seconds", type=float, default=0.3,
                    help="timed seconds per size of the references (default 0.3)")
    ap.add_argument("--ref-figure", choices=("mean", "median"), default="mean",
                    help="the reference's figure the targets use: the whole loop's mean time per op "
                         "(default) or the median window's")
    ap.add_argument("--no-openmpi", action="store_true", help="skip the Open MPI variant")
    ap.add_argument("--only", action="append", metavar="BENCH",
                    help="run only the contests of this benchmark (repeatable; default: all)")
    ap.add_argument("--sizes", type=sizes, help="comma-separated sizes (K/M suffixes) for every contest "
                                                "(default: each contest's own)")
    ap.add_argument("--osu", type=Path, default=os.environ.get("FABRICLAB_OSU_DIR"),
                    help="OSU Micro-Benchmarks' mpi folder (pt2pt/, one-sided/): its binaries are the reference "
                         "(default $FABRICLAB_OSU_DIR; without it, bench/window_ref.c)")
    opts = ap.parse_args()
    if opts.osu and not (opts.osu / "pt2pt" / "osu_bw").is_file():
        raise c.BenchError(f"--osu {opts.osu}: no pt2pt/osu_bw there")
    contests = [replace(ct, sizes=opts.sizes or ct.sizes) for ct in CONTESTS
                if not opts.only or ct.bench in opts.only]

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        variants = [Variant("default MPI", None, work, opts.ref_seconds, opts.osu)]
        ompi = None if opts.no_openmpi or opts.osu else c.openmpi_home()
        if ompi:
            variants.append(Variant("Open MPI", ompi, work, opts.ref_seconds))

        against = f"OSU's binaries in {opts.osu}" if opts.osu else "minimal MPI window loops"
        c.header(f"fabriclab message.bibw, deposit.put_bibw and message.stream vs {against} (bandwidth)",
                 mpi=[f"[{v.label}] {v.library} ({v.flavour}; mpicc {v.mpicc})" for v in variants],
                 commands=[ln for v in variants for ln in v.commands(contests)],
                 method=f"{opts.rounds} rounds per MPI and benchmark, reference and fabriclab alternated "
                        f"(A B, B A, ...); reference = bytes / time per op of a fixed window count lasting "
                        f"about {opts.ref_seconds:g} s per size (mean over the loop, and median window); "
                        f"fabriclab = bandwidth_Bps (bytes_per_op / median per op, default sampling); "
                        f"targets judged per size on the median of per-round ratios fabriclab / "
                        f"reference ({opts.ref_figure} figure)")
        if not ompi and not opts.no_openmpi and not opts.osu:
            print("(no Open MPI found: set FABRICLAB_OPENMPI_HOME or run `make openmpi` for that variant)")

        for v in variants:
            for ct in contests:
                judge(v, ct, opts.rounds, opts.ref_figure)


if __name__ == "__main__":
    c.main(body)
