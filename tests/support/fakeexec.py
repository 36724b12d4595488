"""The fake core without a process, as hyperfine's MockExecutor stands in for a shell.

The runner starts every launch through its executor (measure/runner.py: `Launch`
unless a caller passes one); `install` puts `executor` in that place for the
unit tests. A launch of a fake core made by fakebuild.fake_core (in process, the
default) is read from tests/fakes/fakecore.py's `script` in this process: the
same lines, stderr and exit code as the program prints, without a shell or an
interpreter per launch. The launcher's options are read as tests/fakes/mpiexec
reads them. Anything else (a real core, a fake made to run as a process) starts
as the runner would start it. The core's `--probe LEVEL` answers come through
the same place (measure/fabrics.py's `probe`)."""
from __future__ import annotations

import io
import os
from collections import deque
from pathlib import Path

import fakebuild
from fabriclab.measure import fabrics, runner

FAKES = fakebuild.FAKES
IN_PROCESS: set = set()           # the fake cores (paths) that run in this process
_LAUNCH, _PROBE = runner.Launch, fabrics.probe
# tests/fakes/mpiexec's options that take a value; the program follows them
_LAUNCHER_OPTS = ("-n", "-np", "-hosts", "-f", "-ppn", "-bind-to")


def _fakecore():
    import fakecore   # tests/fakes, on the path from fakebuild
    return fakecore


class FakeLaunch(_LAUNCH):
    """One launch of the fake core in this process, with runner.Launch's interface:
    its stdout lines, a silence where the fake hangs, stderr, the exit code."""

    def __init__(self, argv: list[str], env: dict):
        self.argv, self.env = argv, env
        self.err = io.StringIO()
        self.stray: deque = deque(maxlen=40)
        self.rc: int | None = None
        self.stopped = False

    def lines(self, silence: float):
        events = _fakecore().script(self.argv, self.env)
        while True:
            try:
                kind, text = next(events)
            except StopIteration as end:
                self.rc = end.value
                return
            if kind == "hang":       # a silent launch: the runner hears nothing from here on
                while True:
                    yield None
            if kind == "err":
                self.err.write(text)
            else:
                yield text

    def stop(self) -> None:
        self.stopped = True

    def finish(self, grace: float) -> int:
        if self.rc is None:          # stopped before its end: as a process ended by SIGTERM
            self.stop()
            return -15
        return self.rc

    def close(self) -> None:
        self.stop()

    def sweep(self) -> None:
        """No process ran: nothing is left in /dev/shm."""


def _program(argv: list[str]) -> tuple[list[str], dict]:
    """The program's argv behind the fake launcher, and the ranks it was asked for."""
    if Path(argv[0]) != FAKES / "mpiexec":
        return argv, {}
    i, ranks = 1, {}
    while i < len(argv) and argv[i] in _LAUNCHER_OPTS:
        if argv[i] in ("-n", "-np"):
            ranks = {"FAKECORE_RANKS": argv[i + 1]}
        i += 2
    return argv[i:], ranks


def executor(argv: list[str], env: dict):
    """The runner's executor: the fake core in this process, anything else as a process."""
    program, ranks = _program(argv)
    if program and os.path.abspath(program[0]) in IN_PROCESS:
        full = {**ranks, **os.environ, **env}     # the launcher keeps FAKECORE_RANKS when it is set
        return FakeLaunch(program[1:], full)
    return _LAUNCH(argv, env)


def probe(core_path: str, level: str, timeout: float = fabrics.PROBE_TIMEOUT):
    """measure/fabrics.py's probe: the recorded answers for a fake core in this process."""
    if os.path.abspath(core_path) in IN_PROCESS:
        return fabrics.parse(level, _fakecore().probe(level))
    return _PROBE(core_path, level, timeout)


def install(monkeypatch) -> None:
    """Route the runner's launches and the core's probes through this module."""
    monkeypatch.setattr(runner, "Launch", executor)
    monkeypatch.setattr(fabrics, "probe", probe)
