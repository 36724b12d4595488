"""A series of nightly runs on the emulated testbed, one cable degraded from a night on, read back
by `fabriclab history` (docs/history.md, "Sixty nights").

Each night runs message.shift (every pair of 8 hosts, the N x N matrix) and coll.allreduce (2, 4
and 8 ranks), at 256 KiB (where the trunk, not the 8 ranks' 2 cores, sets the 8-rank allreduce), across the two-switch testbed (examples/testbeds/two-switches.yaml: h0-h3 on s0,
h4-h7 on s1, the trunk between), adding the night's document to a store with --store. From
night --at on, the trunk is shaped at --rate MB/s instead of its 20 (--at beyond --nights: never,
and every series is a control). Then:
- `history trend`: the series that cross the trunk (pairs from one switch to the other, every
  shift step, the 8-rank allreduce) should each show one step at night --at (+-1) named for the
  trunk; the others (pairs within a switch, the 2- and 4-rank allreduce on s0's hosts) none:
  their steps are the method's false alarms on real runs, counted;
- `history check` should exit 1;
- with --postgres, the documents rebuilt into a PostgreSQL server of the bench's own, and
  trend, check and compare printed by both back ends compared line by line.

Usage: python bench/bench_history_nights.py [--nights 60] [--at 40] [--rate 8] [--out DIR]
                                            [--postgres] [--reuse]
(--reuse reads the documents already in --out instead of running the nights again.)"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FABRICLAB = [sys.executable, "-m", "fabriclab.cli"]
NET = REPO / "examples" / "testbeds" / "two-switches.yaml"
TESTBED = "nights"
S0 = {"h0", "h1", "h2", "h3"}


def fl(*argv, check=True, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([*FABRICLAB, *map(str, argv)], capture_output=True, text=True, **kw)
    if check and p.returncode not in (0, 1):
        sys.exit(f"fabriclab {' '.join(map(str, argv))} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p


def nights(args, out: Path, store: str) -> None:
    fl("testbed", "up", NET, "--name", TESTBED)
    fl("testbed", "restore", TESTBED)
    try:
        for night in range(1, args.nights + 1):
            if night == args.at:
                fl("testbed", "degrade", TESTBED, "trunk", args.rate)
            t0 = time.monotonic()
            p = fl("run", "message.shift", "coll.allreduce", "-n", 8, "--testbed", TESTBED, "-s", "256K",
                   "-L", 3, "--point-time", 0.3, "-q", "--store", store, "--cluster", TESTBED,
                   "-o", out / f"night-{night:02d}.json", check=False)
            print(f"night {night:2d}{' (trunk degraded)' if night >= args.at else ''}: rc {p.returncode}, "
                  f"{time.monotonic() - t0:.1f} s", flush=True)
    finally:
        fl("testbed", "restore", TESTBED, check=False)
        if not args.keep:
            fl("testbed", "down", TESTBED, check=False)


def crosses(series: str) -> bool | None:
    """Whether a series' traffic crosses the trunk (None: a series this bench does not judge).
    A pair (r, r + k) is rank r's time at shift step k, which sends to r + k and receives from
    r - k at once: True when its own flow crosses, False when neither flow does, None (not
    judged) when only the flow it receives crosses, which may or may not hold its figure back."""
    parts = series.split("|")
    if parts[0] == "pair":
        src, dst = (int(h[1:]) for h in parts[2].split(">"))
        source = (2 * src - dst) % 8                 # r - k, whose flow r receives at that step
        side = lambda h: h < 4  # noqa: E731       (h0-h3 on s0)
        if side(src) != side(dst):
            return True
        return None if side(source) != side(src) else False
    if parts[0] == "message.shift":
        return True                       # every step k has a pair from one switch to the other
    if parts[0] == "coll.allreduce":
        return parts[5] == "8"            # 2 and 4 ranks: h0-h3, all on s0
    return None


def judge(store: str, args) -> dict:
    found = json.loads(fl("history", "trend", "--store", store, "--cluster", TESTBED, "-f", "json").stdout)
    everything = series_of(store)
    degraded = args.at <= args.nights          # --at beyond the last night: an unchanged series throughout
    expected = {s for s in everything if degraded and crosses(s)}
    control = {s for s in everything if crosses(s) is False or (not degraded and crosses(s) is not None)}
    by = {}
    for f in found:
        by.setdefault(f["series"], []).append(f)
    at = args.at - 1                      # the first run after the step, 0-based
    hit = {s for s in expected if len(by.get(s, [])) == 1 and abs(by[s][0]["index"] - at) <= 1}
    named = {s for s in hit if "trunk" in (by[s][0]["cause"] or "")}
    false = {s for s in control if by.get(s)}
    receiving = {s for s in everything if s.startswith("pair|") and crosses(s) is None}
    moved = {s for s in receiving if by.get(s)}
    check = fl("history", "check", "--store", store, "--cluster", TESTBED)
    return {"series": len(everything), "expected": len(expected), "found_once_at": len(hit),
            "named_trunk": len(named), "control": len(control), "control_with_a_step": len(false),
            "receiving": len(receiving), "receiving_moved": len(moved) if degraded else 0,
            "missed": sorted(expected - hit)[:10], "false": sorted(false)[:10], "check_rc": check.returncode,
            "check_lines": check.stdout.splitlines()}


def series_of(store: str) -> set:
    import sqlite3
    if store.startswith("postgres"):
        import psycopg
        with psycopg.connect(store) as conn:
            keys = {r[0] for r in conn.execute("SELECT DISTINCT series FROM points")}
            pairs = conn.execute("SELECT DISTINCT size, src_host, dst_host FROM pairs").fetchall()
    else:
        with sqlite3.connect(store) as conn:
            keys = {r[0] for r in conn.execute("SELECT DISTINCT series FROM points")}
            pairs = conn.execute("SELECT DISTINCT size, src_host, dst_host FROM pairs").fetchall()
    return keys | {f"pair|{size}|{a}>{b}" for size, a, b in pairs}


def outputs(store: str, args) -> dict:
    """What the reading commands print, for the back ends' comparison (the store's URL left out)."""
    out = {}
    for name, argv in (("trend", ["trend", "-f", "json"]), ("check", ["check"]), ("compare", [])):
        if name == "compare":
            uids = json.loads(fl("history", "list", "--store", store, "-f", "json").stdout)
            base = next(u["uid"] for u in uids if u["uid"].startswith(f"night-{args.at - 1:02d}@"))
            argv = ["compare", "--baseline", base, "-f", "json"]
        p = fl("history", *argv, "--store", store, "--cluster", TESTBED)
        out[name] = (p.returncode, p.stdout)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nights", type=int, default=60)
    ap.add_argument("--at", type=int, default=40)
    ap.add_argument("--rate", type=float, default=8.0, help="The trunk's rate from night --at on (MB/s; 20 nominal).")
    ap.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "fabriclab-nights"))
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--keep", action="store_true", help="Leave the testbed up.")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = str(out / "store.sqlite")
    t0 = time.monotonic()
    if not args.reuse:
        Path(store).unlink(missing_ok=True)
        nights(args, out, store)
    else:
        Path(store).unlink(missing_ok=True)
        fl("history", "rebuild", out, "--store", store)
    print(f"{args.nights} nights in {time.monotonic() - t0:.0f} s; store {store}")
    r = judge(store, args)
    print(f"series: {r['series']}; crossing the trunk: {r['expected']}, of which {r['found_once_at']} show one "
          f"step at night {args.at} +-1 and {r['named_trunk']} name the trunk")
    print(f"not crossing it: {r['control']}, of which {r['control_with_a_step']} show a step (false alarms: "
          f"{r['control_with_a_step'] / max(r['control'], 1):.1%})")
    if r["receiving"] and args.at <= args.nights:
        print(f"pairs whose own flow stays within a switch but whose rank receives across the trunk: "
              f"{r['receiving']}, of which {r['receiving_moved']} show a step (not judged)")
    if r["missed"]:
        print("missed: " + ", ".join(r["missed"]))
    if r["false"]:
        print("false: " + ", ".join(r["false"]))
    print(f"history check: exit {r['check_rc']}, {len(r['check_lines'])} lines; first: "
          + (r["check_lines"][0] if r["check_lines"] else "-"))
    if args.postgres and args.at <= args.nights:
        sys.path.insert(0, str(REPO / "tests" / "support"))
        from postgres import Server
        root = Path(tempfile.mkdtemp(prefix="fl-pg-bench-"))
        server = Server(root).start()
        try:
            url = server.create_database()
            fl("history", "rebuild", out, "--store", url)
            a, b = outputs(store, args), outputs(url, args)
            for name in a:
                same = a[name] == b[name]
                print(f"{name}: SQLite and PostgreSQL {'identical' if same else 'DIFFER'} "
                      f"(exit {a[name][0]} and {b[name][0]}, {len(a[name][1])} bytes)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
