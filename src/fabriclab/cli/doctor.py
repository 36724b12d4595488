"""`fabriclab doctor`: which MPI, launcher and core build a run would use, and a test launch;
with --machine, --tune, --reset or --aa, the machine check (cli/doctor_machine.py) or the A/A test (cli/doctor_aa.py)."""

from __future__ import annotations

import shlex
import time

from ..errors import FabriclabError
from .letters import adder
from ..measure.session import TIMEOUT_S, core_for, resolve
from .options import add_mpi_options, launch_options, number, site


def _say(line: str) -> None:
    """One line of the doctor's, with control characters from the environment or a library's
    answer visible (a FABRICLAB_* path or a provider name may hold an escape sequence)."""
    from ..report.escape import terminal
    print(terminal(line))


def _line(ok: bool, what: str, detail: str) -> None:
    _say(f"{'ok  ' if ok else 'FAIL'}  {what:<10} {detail}")


def doctor(args) -> int:
    """Each check one line, in order; the first failure ends it (exit 1). The
    machine check, its tuning and the A/A test are their own modules."""
    if args.check:
        from . import doctor_aa, doctor_machine as machine
        return {"machine": machine.show, "tune": machine.apply, "reset": machine.undo, "aa": doctor_aa.aa}[args.check](args)
    try:
        m, spec = resolve(launch_options(args), site(args))
    except FabriclabError as e:
        _line(False, "mpi", str(e))
        return 1
    if m.mpicc:
        _line(True, "mpicc", f"{m.mpicc} ({m.header_version})")
    _line(True, "mpiexec", f"{m.mpiexec} (flavour {m.flavour})")
    plugin = f", --mpi={spec.mpi_plugin} ({spec.mpi_plugin_from})" if spec.mpi_plugin else ""
    _line(True, "launcher", f"{spec.launcher} {spec.path}, {spec.nranks} ranks{plugin}")
    core = _core(args, m)
    if core is None:
        return 1
    _levels(core)
    launched = _test_launch(args, spec, core)
    if launched is None:
        return 1
    points = _check_launch(spec, *launched)
    return 1 if points is None else _pingpong(points)


def _core(args, m):
    """The core to launch, built now or cached; None (said) when it cannot be had."""
    t0 = time.monotonic()
    try:
        core = core_for(launch_options(args), m)
    except FabriclabError as e:
        _line(False, "core", str(e))
        return None
    how = f"built in {time.monotonic() - t0:.1f} s" if core.built_now else "cached"
    _line(True, "core", f"{core.path} ({how}; sources {core.source_hash[:12]})")
    return core


def _levels(core) -> None:
    """The fabric and ucx levels: the library, and its providers or transports, or
    what is missing to build them. Informational: the rest of fabriclab works without them."""
    from ..measure import build, fabrics
    from ..suite.benchmarks import LIBRARY_LEVELS
    built = build.levels(core.path)
    for level, lib in sorted((lv, built[lv]) for lv in LIBRARY_LEVELS if lv in built):
        if not lib.get("available"):
            _say(f"--    {level:<10} unavailable: {lib.get('reason')}; `{lib.get('enable')}` enables it")
            continue
        try:
            offer = fabrics.probe(core.path, level)
        except FabriclabError as e:
            _line(False, level, str(e))
            continue
        _line(True, level, f"{offer.describe()}, found by {lib.get('source')}; headers {lib.get('header_version')}")
        for row in _offer_rows(offer):
            _say(f"      {'':<10} {row}")
    _blas(built.get("blas"))


def _blas(lib: dict | None) -> None:
    """The BLAS app.matmul multiplies with, or why it uses its blocked loop."""
    if lib is None:
        return
    if lib.get("available"):
        _line(True, "blas", f"{lib.get('name')} {lib.get('header_version') or ''} from {lib.get('libdir')}, "
                            f"found by {lib.get('source')}")
    else:
        _say(f"--    {'blas':<10} none: {lib.get('reason')}; app.matmul multiplies by a blocked loop; "
             f"`{lib.get('enable')}` enables it")


def _offer_rows(offer) -> list:
    """One row per provider (its endpoint types and capabilities) or per transport."""
    if offer.level == "ucx":
        by_tl = {}
        for t in offer.transports:
            by_tl.setdefault(t.tl, []).append(t.device)
        return [f"{tl:<12} {', '.join(devs)}" for tl, devs in by_tl.items()]
    rows = {}
    for a in offer.answers:
        rows.setdefault((a.provider, a.ep), a)
    return [f"{p:<14} {ep:<5} {','.join(sorted(a.caps & {'msg', 'tagged', 'rma', 'atomic'}))}; inject {a.inject_size} B,"
            f" iov {a.iov_limit}, mr_mode {','.join(a.mr_mode) or '-'}" for (p, ep), a in rows.items()]


def _test_launch(args, spec, core):
    """(argv, core messages, exit code, stderr's last line) of the test launch, or
    None (said) when it did not answer within --timeout."""
    from ..measure import protocol
    from ..measure.launch import command
    from ..measure.runner import Launch
    argv, env = command(spec, protocol.doctor_argv(core.path))
    msgs, launch = [], Launch(argv, env)
    try:
        for line in launch.lines(args.timeout):
            if line is None:
                _line(False, "launch", f"no answer within {args.timeout:g} s: {shlex.join(argv)}")
                return None
            msg = protocol.parse_line(line)
            if msg is not None:
                msgs.append(msg)
        rc = launch.finish(grace=30)
        stderr = launch.stderr_tail(1)
    finally:
        launch.close()
    return argv, msgs, rc, stderr


def _check_launch(spec, argv, msgs, rc, stderr):
    """The test launch's points, or None (said) when it ran the wrong world or failed."""
    from ..measure import protocol
    from ..measure.launch import wrong_world
    hello = next((x.data for x in msgs if isinstance(x, protocol.Hello)), None)
    points = [x.data for x in msgs if isinstance(x, protocol.PointLine)]
    worlds = [x.data.get("ranks") if isinstance(x, protocol.Hello) else x.ranks for x in msgs
              if isinstance(x, (protocol.Hello, protocol.CoreError))]
    wrong = next((n for n in worlds if isinstance(n, int) and n != spec.nranks), None)
    if wrong is not None:
        _line(False, "launch", wrong_world(spec, wrong))
        return None
    if rc != 0 or not hello or len(points) != len(protocol.DOCTOR_SIZES):
        err = next((x.message for x in msgs if isinstance(x, protocol.CoreError)), None)
        _line(False, "launch", f"{shlex.join(argv)} -> exit {rc}: {err or stderr or 'no output'}")
        return None
    lib = " ".join(hello["mpi_library"].splitlines()[0].split()) if hello.get("mpi_library") else "?"
    hosts = sorted(set(hello.get("hosts", [])))
    _line(True, "launch", f"{hello.get('ranks')} ranks on {', '.join(hosts)}; {lib}")
    return points


def _pingpong(points) -> int:
    """The 0-byte latency and the validated round trips of the test launch."""
    from ..measure.runner import derive
    from ..units import fmt_time
    med = derive(points[0]).latency_s
    vals = [x.get("validation") or {} for x in points]
    errors = sum(v.get("errors", 1) for v in vals)
    checked = sum(v.get("checked_bytes", 0) for v in vals)
    ok = errors == 0 and checked > 0
    _line(ok, "pingpong", f"0-byte one-way latency {fmt_time(med)}; 4 KiB round trips validated: "
          f"{errors} errors in {checked} bytes")
    return 0 if ok else 1


def register(sub) -> None:
    p = sub.add_parser("doctor", help="Check which MPI, launcher and core build fabriclab will use, and that they "
                                      "work; with --machine, what on this machine disturbs timings.")
    add_mpi_options(p, "doctor")
    adder(p, "doctor")("--timeout", type=number(*TIMEOUT_S), default=60, metavar="SECONDS",
                       help="Give up on the test launch (with --machine, the noise run) after this many "
                            "seconds. Default: 60.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--machine", dest="check", action="store_const", const="machine",
                   help="Instead: report what on this machine is known to disturb fabric benchmarks (virtual "
                        "machine and steal, frequency, SMT, isolated cores, NIC interrupts, huge pages, NUMA, "
                        "the memory lock limit, busy processes), each with its effect and fix, and the noise "
                        "measured per core (noise.detour, about 2 s). Default: off.")
    g.add_argument("--tune", dest="check", action="store_const", const="tune",
                   help="Instead: apply the machine check's safe, reversible fixes (governor, turbo, huge pages; "
                        "root only) and keep the previous values for --reset. Default: off.")
    g.add_argument("--reset", dest="check", action="store_const", const="reset",
                   help="Instead: restore the values --tune replaced (root only). Default: off.")
    g.add_argument("--aa", dest="check", action="store_const", const="aa",
                   help="Instead: run a short ping-pong and stream configuration twice and compare the runs, "
                        "reporting the share of false verdicts and the between-launch spread (under a minute "
                        "on two cores). Default: off.")
    p.set_defaults(func=doctor, check=None)
