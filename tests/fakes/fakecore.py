#!/usr/bin/env python3
"""A stand-in for fabriclab-core that speaks the same protocol with deterministic samples.

It knows nothing of its own: how a benchmark's time becomes figures (legs,
concurrency) and which values it accepts come from the registry's facts, as
the real core's do, the rank layouts of a pattern from --layouts, and the
points it skips from the benchmark's footprint (its `limit`, the real
kernel's reasons). Like the real core it refuses anything but plain decimal
integers and the values its parameter rules allow (an error line, exit code
2), and its hello records the options it received.

FAKECORE_MODE selects a behaviour: "ok" (default), "hang:N" (stop answering
after N points), "die:N" (exit 1 after N points), "error" (an error line),
"nosamples:N" (point N has no samples), "killed:N" (after N points, print
the launcher's report of a killed rank from the file FAKECORE_REPORT, on
stdout for a .stdout file, else on stderr, and exit 137), "capped" (every
point stops at its --point-time cap, as a slow host's unconverged points do). FAKECORE_THREADS is
the highest thread level its MPI grants (MULTIPLE by default): like the real
core it asks MULTIPLE for a benchmark whose facts say `threads`, SINGLE for
any other, records both in its hello and refuses a lower grant (exit 2).
FAKECORE_HOSTS names each rank's host (comma-separated; h0 for all by default).

`--probe LEVEL` prints the recorded probe answers of tests/data/probes/.

`script(argv, env)` is the whole behaviour as a generator of events, so that
the unit tests can feed the runner in this process (tests/support/fakeexec.py,
as hyperfine's MockExecutor does): ("out", line) for a stdout line, ("err",
text) for stderr, ("hang", None) where the process stops answering; it
returns the exit code. Run as a program, it prints them."""
import json
import os
import sys
import time
from pathlib import Path

import fakeapps
import fakenoise
from fabriclab.suite.benchmarks import REGISTRY
from fabriclab.suite.footprint import At

PROBES = Path(__file__).resolve().parents[1] / "data" / "probes"



def hosts(env, nranks: int) -> list:
    """Each rank's host: FAKECORE_HOSTS (comma-separated, a rank each), else h0 for all."""
    given = [h for h in env.get("FAKECORE_HOSTS", "").split(",") if h]
    return given[:nranks] + ["h0"] * (nranks - len(given[:nranks]))

def emit(obj):
    """A protocol line as a stdout event."""
    return ("out", json.dumps(obj))


def probe(level: str) -> list:
    """The recorded answers of `--probe LEVEL`, as lines."""
    return (PROBES / f"{level}.ndjson").read_text().splitlines()


def ints(text):
    return [int(x) for x in text.split(",")]


def refusal(facts, opts, params):
    """What the real core refuses (docs/core-protocol.md): numbers other than
    plain decimal integers, unknown params, values outside their rules or
    away from their default where their `only` condition fails."""
    for opt in ("--sizes", "--buffers", "--strides", "--conns"):
        if opt in opts and not all(x.isdigit() for x in opts[opt].split(",")):
            return f"{opt}: expected comma-separated integers >= 0, got '{opts[opt]}'"
    for key, value in params.items():
        rule = facts.params.get(key)
        if rule is None:
            return f"{facts.name} has no param '{key}'"
        if rule.choices and value not in rule.choices:
            return f"{facts.name}: param {key}={value} is not one of {'|'.join(rule.choices)}"
        if rule.integer and not (value.lstrip("-").isdigit() and rule.lo <= int(value) <= rule.hi):
            return f"{facts.name}: param {key}={value} is not a decimal integer in {rule.lo}..{rule.hi}"
    for key in facts.idle(params):
        other, value = facts.params[key].only
        return f"{facts.name}: param {key}={params[key]} applies only with {other}={value}"
    return None


def layouts(text):
    """[(active, roles, peers)] from "A:r0,r1,...;..." (docs/core-protocol.md)."""
    out = []
    for entry in text.split(";"):
        active, _, ranks = entry.partition(":")
        roles, peers = "", []
        for item in ranks.split(","):
            roles += item[0]
            peers.append(int(item[1:]) if item[1:] else -1)
        out.append((int(active), roles, peers))
    return out


def script(argv, env):
    """The fake core's run of argv under env: its events; returns the exit code."""
    if argv[:1] == ["--probe"]:
        for line in probe(argv[1]):
            yield "out", line
        return 0
    bench = argv[0]
    facts = REGISTRY[bench]
    opts = {"--sizes": "0", "--strides": "1", "--conns": "1"}
    params = {}
    i = 1
    while i < len(argv):
        if argv[i] == "--validate":
            opts["--validate"] = True
            i += 1
        elif argv[i] == "--param":
            key, _, value = argv[i + 1].partition("=")
            params[key] = value
            i += 2
        else:
            opts[argv[i]] = argv[i + 1]
            i += 2
    mode, _, arg = env.get("FAKECORE_MODE", "ok").partition(":")
    nranks = len(layouts(opts["--layouts"])[0][1]) if "--layouts" in opts else int(env.get("FAKECORE_RANKS", "2"))
    bad = refusal(facts, opts, params)
    if bad:
        yield emit({"type": "error", "message": bad, "ranks": nranks})
        return 2
    levels = ("SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE")
    required = "MULTIPLE" if facts.threads else "SINGLE"
    provided = min(required, env.get("FAKECORE_THREADS", "MULTIPLE"), key=levels.index)
    if provided != required:
        yield emit({"type": "error", "message": f"runs several threads per rank and needs MPI_THREAD_{required}; this MPI granted "
                    f"MPI_THREAD_{provided}", "refused": True, "ranks": nranks})
        return 2
    yield emit({"type": "hello", "core_version": "fake", "bench": bench, "mpi_library": "FakeMPI 1.0",
          "mpi_version": "3.1", "thread_level": {"required": required, "provided": provided}, "ranks": nranks, "hosts": hosts(env, nranks), "cpus": [64] * nranks,
          "node_size": nranks, "timer": {"name": "fake", "overhead_s": 2e-8, "resolution_s": 1e-9,
                                   "cpu": {"name": "fake", "step_s": 1e-6, "tick_s": 0.01}},
          "options": {"sizes": ints(opts["--sizes"]), "strides": ints(opts["--strides"]),
                      "conns": ints(opts["--conns"]), "params": {**facts.defaults, **params}}})
    if mode == "error":
        yield emit({"type": "error", "message": "fake kernel failure"})
        return 3
    n = 0
    legs = facts.legs
    sizes = ints(opts["--sizes"])
    buffers = ints(opts["--buffers"]) if "--buffers" in opts else [1] * len(sizes)
    lays = layouts(opts["--layouts"]) if "--layouts" in opts else [None]
    for lay in lays:
        for conns in ints(opts["--conns"]):
            for stride in ints(opts["--strides"]):
                for size, nbuf in zip(sizes, buffers):
                    if mode in ("hang", "die", "killed") and n == int(arg):
                        if mode == "hang":
                            yield "hang", None
                        if mode == "killed":
                            report = env["FAKECORE_REPORT"]
                            text = Path(report).read_text()
                            if report.endswith(".stdout"):
                                for line in text.splitlines():
                                    yield "out", line
                            else:
                                yield "err", text
                            return 137
                        return 1
                    where = {"bench": bench, "size": size, "stride": stride, "conns": conns}
                    if lay:
                        where["active"] = lay[0]
                    yield emit({"type": "begin", **where})
                    at = At(size, nbuf, stride, conns, nranks, params={**facts.defaults, **params})
                    reason = facts.footprint.limit(at)
                    if reason:
                        yield emit({"type": "skip", **where, "reason": reason})
                        continue
                    base = 1e-6 * legs + size / 5e9 * legs  # Hockney: 1 us + n / 5 GB/s per leg
                    jitter = [1 + 0.001 * ((k * 7) % 5) for k in range(20)]
                    samples = [base * j for j in jitter]
                    val = {"checked_bytes": size * legs, "errors": 0} if "--validate" in opts else None
                    rec = {"type": "point", **where, "buffers": nbuf, "bytes_per_op": size * legs,
                           "legs_per_op": legs, "concurrent": facts.concurrent, "warmup": 10, "batch": 4,
                           "samples": samples, "stop": "time_cap" if mode == "capped" else "converged",
                           "elapsed_s": float(opts["--point-time"]) if mode == "capped" else 0.01, "validation": val,
                           "info": {}, "rank_cpu": rank_cpu(nranks, sum(samples) * 4)}
                    if lay and facts.level == "app":
                        rec.update(roles=lay[1], peers=lay[2],
                                   **fakeapps.point(bench, size, lay[1], {**facts.defaults, **params}, jitter))
                    elif lay:
                        _, roles, peers = lay
                        # senders and both-way ranks each send SIZE bytes per op; rank q takes (1 + q/100)
                        sent = [size if r in "sb" else 0 for r in roles]
                        recv = [size * sum(1 for p, rr in zip(peers, roles) if p == q and rr in "sb")
                                if r in "rtb" else 0 for q, r in enumerate(roles)]
                        rec.update(bytes_per_op=sum(sent), messages_per_op=sum(1 for r in roles if r in "sb"),
                                   roles=roles, peers=peers, rank_sent_bytes=sent, rank_recv_bytes=recv,
                                   rank_samples=[None if r == "i" else [s * (1 + q / 100) for s in samples]
                                                 for q, r in enumerate(roles)])
                    if facts.level == "noise":
                        rec["noise"] = fakenoise.record(bench, nranks, {**facts.defaults, **params})
                    if facts.counters:
                        rec["rank_counters"] = counters(facts, {**facts.defaults, **params}, nranks, len(samples))
                    if mode == "nosamples" and n == int(arg):
                        rec.update(samples=[], phases={k: [] for k in rec.get("phases") or {}} or None)
                    yield emit({k: v for k, v in rec.items() if v is not None or k == "validation"})
                    n += 1
    yield emit({"type": "end", "bench": bench, "points": n})
    return 0


def rank_cpu(nranks: int, wall: float) -> list:
    """Plausible CPU use over the samples' span `wall` (docs/core-protocol.md): rank q spends
    (q + 1) x 10% of it in user and 40% in system time."""
    return [{"user_s": 0.1 * (q + 1) * wall, "sys_s": 0.4 * wall, "wall_s": wall} for q in range(nranks)]


def counters(facts, params: dict, nranks: int, n: int) -> list:
    """Plausible raw counters (docs/core-protocol.md): every rank every declared counter, ".K" per
    stream where the benchmark has `streams`; a "sum" grows by (q + 1) x 4 per sample on rank q, a
    "level" reads 1e-6 x (1 + i/100) after sample i; the values before the first sample are 0."""
    streams = int(params["streams"]) if "streams" in params else 0
    names = [f"{c}.{k}" for c in facts.counters for k in range(streams)] if streams else list(facts.counters)
    kind = {name: facts.counters[name.rpartition(".")[0] if streams else name] for name in names}
    return [{name: [0] + [(q + 1) * 4 * (i + 1) if kind[name] == "sum" else 1e-6 * (1 + i / 100)
                          for i in range(n)] for name in names} for q in range(nranks)]


def main(argv) -> int:
    """The fake core as a process: its events printed as they come."""
    events = script(argv, os.environ)
    while True:
        try:
            kind, text = next(events)
        except StopIteration as end:
            return end.value
        if kind == "hang":
            time.sleep(3600)
        stream = sys.stdout if kind == "out" else sys.stderr
        stream.write(text + "\n" if kind == "out" else text)
        stream.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
