"""Exceptions that the CLI turns into one line and an exit code.

UsageError: bad input (exit 2). RunError: a run that failed (exit 1).
Terminated: SIGTERM (exit 143), raised where Ctrl-C raises KeyboardInterrupt (130)."""


class FabriclabError(Exception):
    exit_code = 1


class UsageError(FabriclabError):
    """Bad input: a malformed size range, an unknown benchmark, a broken file."""

    exit_code = 2


class RunError(FabriclabError):
    """A run that started but failed (a dead rank, a timeout, a build error)."""

    exit_code = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM (`timeout`, a batch system's time limit or preemption): whatever runs ends as
    it does on Ctrl-C, what it completed kept, and says so."""


def _terminated(signum, frame):
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)   # a second one must not cut the cleanup short
    raise Terminated()


def catch_sigterm():
    """Turn SIGTERM into Terminated (in the main thread only, where Python runs handlers);
    returns the handler to restore, or None where none was installed."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _terminated)
