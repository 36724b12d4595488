"""Overhead of fabriclab's message.pingpong against a minimal MPI ping-pong.

The reference, bench/pingpong_ref.c, is compiled with the mpicc fabriclab uses
and launched with fabriclab's own launcher command line (same mpiexec, options,
environment and placement), so the two differ only in the timing harness.
Target: fabriclab's median 0-byte one-way latency within 5% of the reference's
(median over rounds of the ratio within each round).
An Open MPI variant runs too when $FABRICLAB_OPENMPI_HOME (or .mpi/openmpi)
holds one.

Usage: python bench/bench_overhead.py [--rounds N] [--round-trips N]"""

from __future__ import annotations

import argparse
import shlex
import tempfile
from pathlib import Path

import _common as c

REF_SRC = Path(__file__).resolve().parent / "pingpong_ref.c"
TOLERANCE = 0.05


class Variant:
    """One MPI: the fabriclab arguments that select it, and the reference built for it."""

    def __init__(self, label: str, home: str | None, workdir: str, round_trips: int):
        self.label, self.home, self.workdir = label, home, workdir
        self.fl_args = ["message.pingpong", "-s", "0", *(["--mpi-home", home] if home else [])]
        # A first run builds the core and tells which mpicc and launch line fabriclab uses.
        doc, _, self.fl_argv = c.fabriclab(self.fl_args, workdir)
        mpi = doc["header"]["mpi"]
        self.mpicc, self.flavour, self.library = mpi["mpicc"], mpi["flavour"], c.mpi_library(doc)
        prefix, env = c.launch_prefix(doc)
        exe = str(Path(tempfile.mkdtemp(prefix="ref-", dir=workdir)) / "pingpong_ref")
        self.cc_argv = [self.mpicc, "-O3", "-o", exe, str(REF_SRC)]
        c.run(self.cc_argv)
        self.ref_argv, self.ref_env = [*prefix, exe, str(round_trips)], env
        self.reference()  # warm-up: page cache, shared-memory setup paths

    def reference(self) -> float:
        out = c.run(self.ref_argv, env=self.ref_env, timeout=120)
        fields = dict(ln.split(None, 1) for ln in out.splitlines() if " " in ln)
        if "latency_s" not in fields:
            raise c.BenchError(f"no latency in the reference's output: {out.strip()[:300]}")
        return float(fields["latency_s"])

    def fabriclab(self) -> float:
        doc, _, _ = c.fabriclab(self.fl_args, self.workdir)
        return c.point(doc, "message.pingpong", 0)["latency_s"]

    def commands(self) -> list[str]:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.ref_env.items())
        fl = [Path(self.fl_argv[0]).name, *self.fl_argv[1:]]
        return [f"[{self.label}] build:     {shlex.join(self.cc_argv)}",
                f"[{self.label}] reference: {(env + ' ') if env else ''}{shlex.join(self.ref_argv)}",
                f"[{self.label}] fabriclab: {shlex.join(fl)}"]


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15, help="rounds per MPI (default 15)")
    ap.add_argument("--round-trips", type=int, default=100000,
                    help="timed round trips of the reference (default 100000)")
    opts = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as work:
        variants = [Variant("default MPI", None, work, opts.round_trips)]
        ompi = c.openmpi_home()
        if ompi:
            variants.append(Variant("Open MPI", ompi, work, opts.round_trips))

        c.header("fabriclab message.pingpong vs a minimal MPI ping-pong (0 bytes, one-way latency)",
                 mpi=[f"[{v.label}] {v.library} ({v.flavour}; mpicc {v.mpicc})" for v in variants],
                 commands=[ln for v in variants for ln in v.commands()],
                 method=f"{opts.rounds} rounds per MPI, reference and fabriclab alternated (A B, B A, ...); "
                        f"reference = total time / (2 x {opts.round_trips} round trips) after a "
                        f"warm-up and a barrier; fabriclab = latency_s (median per op / 2 legs); "
                        f"target judged on the median of per-round ratios")
        if not ompi:
            print("(no Open MPI found: set FABRICLAB_OPENMPI_HOME or run `make openmpi` for that variant)")

        verdicts = []
        for v in variants:
            print(f"\n{v.label}: {v.library}")
            res = c.alternate([("reference", v.reference), ("fabriclab", v.fabriclab)], opts.rounds,
                              show=lambda _, x: c.fmt_time(x))
            ref, fl = c.median(res["reference"]), c.median(res["fabriclab"])
            ratio, per_round = c.paired_ratio(res["fabriclab"], res["reference"])
            print(f"  median one-way latency  reference {c.fmt_time(ref)} (rounds {c.fmt_time(min(res['reference']))}"
                  f"..{c.fmt_time(max(res['reference']))})")
            print(f"                          fabriclab {c.fmt_time(fl)} (rounds {c.fmt_time(min(res['fabriclab']))}"
                  f"..{c.fmt_time(max(res['fabriclab']))})")
            print(f"  ratio fabriclab / reference: median of per-round ratios {ratio:.3f} "
                  f"({(ratio - 1) * 100:+.1f}%; rounds {c.spread(per_round)}); ratio of medians {fl / ref:.3f}")
            swing = max(res["reference"]) / min(res["reference"])
            if swing > 1.5:
                # The reference averages every round trip, interrupted ones included;
                # fabriclab's median discards interrupted samples.
                print(f"  note: the reference varied {swing:.1f}x between rounds: other work on the host "
                      f"inflates its mean; rerun on an idle machine before trusting the ratio")
            verdicts.append((v.label, ratio))

        print()
        for label, ratio in verdicts:
            c.verdict(abs(ratio - 1) <= TOLERANCE,
                      f"[{label}] fabriclab 0-byte latency within {TOLERANCE:.0%} of the reference",
                      f"ratio {ratio:.4f} ({(ratio - 1) * 100:+.2f}%)")


if __name__ == "__main__":
    c.main(body)
