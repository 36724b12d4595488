"""Hostile network files against `fabriclab model --topology-file FILE`: time and
peak memory of each, measured as a user sees them (a fresh process, max RSS of
the whole process), and a sweep of every hostile case and random mutations of
the shipped examples in one process.

Targets: every hostile file ends with exit 2 and one line, within 1 s of CPU
and 200 MiB; the fuzz sweep ends every case with exit 0 or 2 within 2 s and
200 MiB. Files at the size limits and the large leaf-spine networks are
reported beside them (docs/model.md, "Limits on network files" and §10).

CPU time is judged, wall time shown: on a loaded machine (see the load
average in the header) wall time measures the other processes too.

Usage: python bench/bench_hostile_networks.py [--skip-large] [--mutations N]"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _common as c

sys.path.insert(0, str(c.REPO / "tests" / "support"))
import hostile_networks as hn  # noqa: E402  (the cases the tests use)

HOSTILE_CPU_S, FUZZ_CPU_S, MIB = 1.0, 2.0, 200
FRESH = [k for k in hn.hostile_cases() if k.startswith(("alias bomb", "anchor", "JSON", "YAML"))] + [
    "default_rate_MBps: 1.0e+308", "default_rate_MBps: 1.0e-320", "default_rate_MBps: 1e-320 (JSON)",
    "default_rate_MBps: 1e400 (JSON)", "efficiency: 1.0e-320", "price: 1.0e+308", "count: 1.0e+30",
    "count of 5,000 digits", "name name #0: 'a\\nb'", "name name #1: '\\x1b[2J\\x1b[H'",
    "node name #0: 'a\\nb'", "link name name #2: '\\u202eevil'", "node name #6: 'xxxxxxxxxxxx'",
    "endpoint is list #2", "keys of mixed types (YAML)", "Python object tag"]


def leaf_spine(hosts: int, routing: str = "d-mod-k", per_leaf: int = 32, spines: int = 16) -> str:
    """bench_model.py's leaf-spine network as YAML text (written by hand: no yaml import needed)."""
    leaves = -(-hosts // per_leaf)
    links = [f"- [h{i}, leaf{i // per_leaf}]" for i in range(hosts)]
    links += [f"- [leaf{l}, spine{s}]" for l in range(leaves) for s in range(spines)]
    names = lambda xs: "[" + ", ".join(xs) + "]"
    return (f"name: leaf-spine of {hosts} hosts\nrouting: {routing}\ndefault_rate_MBps: 12500\n"
            f"nodes: {names(f'h{i}' for i in range(hosts))}\n"
            f"switches: {names([f'leaf{l}' for l in range(leaves)] + [f'spine{s}' for s in range(spines)])}\n"
            "links:\n" + "\n".join(links) + "\n")


def large_cases(work: Path) -> list:
    """(label, file, extra options, expected exit) of the files at the limits and the large networks."""
    out = []
    big = work / "over-64MiB.yaml"
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)
    out.append(("file of 64 MiB + 1 byte", big, [], 2))
    out.append(("/dev/zero (no size: read up to the limit)", Path("/dev/zero"), [], 2))
    ints = work / "30M-numbers.json"
    ints.write_text("[" + ",".join(["1"] * 30_000_000) + "]")
    out.append(("JSON of 30,000,000 numbers (60 MB)", ints, [], 2))
    many = work / "8M-values.yaml"
    many.write_text("- a\n" * 8_000_001)
    out.append(("YAML of 8,000,001 values (32 MB)", many, [], 2))
    for hosts, routing in ((10_000, "d-mod-k"), (10_000, "ecmp"), (50_000, "d-mod-k")):
        f = work / f"leaf-spine-{hosts}-{routing}.yaml"
        f.write_text(leaf_spine(hosts, routing))
        for extra in ([], ["--no-plot"]) if hosts == 10_000 else ([],):
            out.append((f"leaf-spine {hosts:,} hosts {routing} {'(plot)' if not extra else '(--no-plot)'}", f,
                        extra, 0 if hosts == 10_000 else 2))
    ring = hn.EXAMPLES / "ring.yaml"
    out += [("examples/testbeds/ring.yaml (plot)", ring, [], 0), ("examples/testbeds/ring.yaml (--no-plot)", ring,
                                                                   ["--no-plot"], 0)]
    return out


def run_one(label: str, path: Path, extra: list, plots: Path) -> c.Measured:
    m = c.measured([c.fabriclab_exe(), "model", "--topology-file", str(path), "--output", str(plots), *extra],
                   timeout=300)
    line = (m.err.strip().splitlines() or [""])[-1].replace(str(path), "FILE")
    print(f"{label[:44]:44s} {m.rc:4d} {m.wall_s:7.2f} {m.cpu_s:7.2f} {m.maxrss_MiB:8.0f}  {line[18:90]}", flush=True)
    return m


def fresh(work: Path) -> list:
    print(f"{'case (fresh process, --no-plot)':44s} {'exit':>4s} {'wall s':>7s} {'CPU s':>7s} {'MaxRSS':>8s}  message")
    cases, out = hn.hostile_cases(), []
    for i, k in enumerate(FRESH):
        suffix, text = cases[k]
        f = work / f"case{i}{suffix}"
        f.write_bytes(text if isinstance(text, bytes) else text.encode())
        m = run_one(k, f, ["--no-plot"], work / "plots")
        out.append((k, m, m.rc == 2 and m.err.count("\n") == 1 and "Traceback" not in m.err))
    return out


def sweep(mutations: int, work: Path) -> list:
    """Every hostile case and `mutations` mutations, in this process (the fuzz test's loop):
    (case, exit code, problem, CPU s, MiB above the resident set before) of each."""
    cases = [(k, s, t) for k, (s, t) in hn.hostile_cases().items()]
    cases += [(f"mutation {i}", s, t) for i, (s, t) in enumerate(hn.mutations(hn.FUZZ_SEED, mutations))]
    return [(k, *hn.run_in_process(hn.write(work / f"sweep{i}{s}", t))) for i, (k, s, t) in enumerate(cases)]


def body() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-large", action="store_true", help="skip the files at the limits and the large networks")
    ap.add_argument("--mutations", type=int, default=500, help="mutations in the sweep (default 500)")
    opts = ap.parse_args()
    c.header("fabriclab model: hostile network files", commands=[
        "fabriclab model --topology-file FILE --no-plot   (each in a fresh process; max RSS of that process)"])
    ok = True
    with tempfile.TemporaryDirectory(prefix="fabriclab-bench-") as tmp:
        work = Path(tmp)
        rows = fresh(work)
        worst_cpu = max(m.cpu_s for _, m, _ in rows)
        worst_mib = max(m.maxrss_MiB for _, m, _ in rows)
        ok &= c.verdict(all(good for _, _, good in rows), "every hostile file: exit 2, one line, no traceback",
                        f"{sum(g for _, _, g in rows)} of {len(rows)}")
        ok &= c.verdict(worst_cpu < HOSTILE_CPU_S and worst_mib < MIB,
                        f"each within {HOSTILE_CPU_S:g} s of CPU and {MIB} MiB",
                        f"at most {worst_cpu:.2f} s and {worst_mib:.0f} MiB")
        if not opts.skip_large:
            print(f"\n{'file at the limits / large network':44s} {'exit':>4s} {'wall s':>7s} {'CPU s':>7s} "
                  f"{'MaxRSS':>8s}  message")
            ends = [(run_one(label, f, extra, work / "plots"), want) for label, f, extra, want in large_cases(work)]
            ok &= c.verdict(all(m.rc == want and "Traceback" not in m.err for m, want in ends),
                            "files at the limits refused in one line, large networks solved",
                            f"{sum(m.rc == want for m, want in ends)} of {len(ends)} as expected")
        rows = sweep(opts.mutations, work)
    bad = [r for r in rows if r[1] not in (0, 2) or r[2] or r[3] > FUZZ_CPU_S or r[4] > MIB - 40]
    print(f"\nsweep of {len(rows)} cases in one process: {sum(r[1] == 0 for r in rows)} exit 0, "
          f"{sum(r[1] == 2 for r in rows)} exit 2; slowest {max(r[3] for r in rows):.3f} s of CPU "
          f"({max(rows, key=lambda r: r[3])[0]}), most memory {max(r[4] for r in rows):.1f} MiB above the "
          "resident set before the case")
    for r in bad:
        print(f"   {r}")
    ok &= c.verdict(not bad, f"every case: exit 0 or 2, clean output, {FUZZ_CPU_S:g} s, {MIB - 40} MiB in process",
                    f"{len(bad)} outside")
    print("all targets met" if ok else "SOME TARGETS MISSED")


if __name__ == "__main__":
    c.main(body)
