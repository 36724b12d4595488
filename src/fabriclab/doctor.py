"""`fabriclab doctor`: which MPI, launcher and core build a run would use, and a test launch."""

from __future__ import annotations

import json
import shlex
import time

from . import stats
from .errors import FabriclabError
from .launch import command
from .runner import Launch
from .units import fmt_time


def _line(ok: bool, what: str, detail: str) -> None:
    print(f"{'ok  ' if ok else 'FAIL'}  {what:<10} {detail}")


def doctor(args) -> int:
    from .commands import core_for, resolve_launch
    try:
        m, spec = resolve_launch(args)
    except FabriclabError as e:
        _line(False, "mpi", str(e))
        return 1
    if m.mpicc:
        _line(True, "mpicc", f"{m.mpicc} ({m.header_version})")
    _line(True, "mpiexec", f"{m.mpiexec} (flavour {m.flavour})")
    _line(True, "launcher", f"{spec.launcher} {spec.path}, {spec.nranks} ranks")
    t0 = time.monotonic()
    try:
        core = core_for(args, m)
    except FabriclabError as e:
        _line(False, "core", str(e))
        return 1
    how = f"built in {time.monotonic() - t0:.1f} s" if core.built_now else "cached"
    _line(True, "core", f"{core.path} ({how}; sources {core.source_hash[:12]})")
    argv, env = command(spec, [core.path, "message.pingpong", "--sizes", "0,4096", "--min-samples", "5",
                               "--point-time", "0.2", "--validate"])
    msgs, launch = [], Launch(argv, env)
    try:
        for line in launch.lines(args.timeout):
            if line is None:
                _line(False, "launch", f"no answer within {args.timeout:g} s: {shlex.join(argv)}")
                return 1
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(msg, dict):
                msgs.append(msg)
        rc = launch.finish(grace=30)
        stderr = launch.stderr_tail(1)
    finally:
        launch.close()
    hello = next((x for x in msgs if x.get("type") == "hello"), None)
    points = [x for x in msgs if x.get("type") == "point"]
    if rc != 0 or not hello or len(points) != 2:
        err = next((x.get("message") for x in msgs if x.get("type") == "error"), None)
        _line(False, "launch", f"{shlex.join(argv)} -> exit {rc}: {err or stderr or 'no output'}")
        return 1
    lib = " ".join(hello["mpi_library"].splitlines()[0].split()) if hello.get("mpi_library") else "?"
    hosts = sorted(set(hello.get("hosts", [])))
    _line(True, "launch", f"{hello.get('ranks')} ranks on {', '.join(hosts)}; {lib}")
    med = stats.summarize(points[0]["samples"]).median / max(1, points[0].get("legs_per_op", 1))
    vals = [x.get("validation") or {} for x in points]
    errors = sum(v.get("errors", 1) for v in vals)
    checked = sum(v.get("checked_bytes", 0) for v in vals)
    ok = errors == 0 and checked > 0
    _line(ok, "pingpong", f"0-byte one-way latency {fmt_time(med)}; 4 KiB round trips validated: "
          f"{errors} errors in {checked} bytes")
    return 0 if ok else 1
