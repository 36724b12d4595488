"""A disturbance of known period and length pinned to one CPU, for the noise
benchmarks' tests: `python disturb.py CPU PERIOD_MS BUSY_MS SECONDS` wakes
every PERIOD_MS milliseconds at an absolute deadline (clock_nanosleep with
TIMER_ABSTIME on CLOCK_MONOTONIC, so its period does not drift with how late
each wake-up was) and spins for BUSY_MS from that deadline, on CPU alone
(sched_setaffinity), for SECONDS, in the real-time class where it may
(SCHED_FIFO: a deadline is kept whatever else the CPU runs). `started(...)` runs it as a child process."""
import contextlib
import ctypes
import os
import subprocess
import sys
import time

CLOCK_MONOTONIC, TIMER_ABSTIME = 1, 1
PRIORITY = 2    # real-time: above a measurement run at 1 (ahead(), the tests' ranks)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def disturb(cpu: int, period_ms: float, busy_ms: float, seconds: float) -> None:
    os.sched_setaffinity(0, {cpu})
    try:    # on time at every deadline whatever else runs on the CPU (as a kernel thread or an interrupt)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    except PermissionError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    period, busy = int(period_ms * 1e6), int(busy_ms * 1e6)
    t = time.monotonic_ns()          # CLOCK_MONOTONIC on Linux
    end = t + int(seconds * 1e9)
    while t < end:
        t += period
        libc.clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ctypes.byref(_Timespec(t // 10**9, t % 10**9)), None)
        while time.monotonic_ns() < t + busy:
            pass


@contextlib.contextmanager
def ahead(priority: int = PRIORITY - 1):
    """This process, and the processes it starts meanwhile, in the real-time class below
    the disturbance, where it may (root): ahead of whatever else the machine runs. The
    scheduler groups other work by session (autogroup), so a nice value alone does not
    put a run ahead of another session's load."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except PermissionError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def started(cpu: int, period_ms: float, busy_ms: float, seconds: float) -> subprocess.Popen:
    """The disturbance as a child process; the caller ends it (terminate, wait)."""
    return subprocess.Popen([sys.executable, __file__, str(cpu), str(period_ms), str(busy_ms), str(seconds)])


if __name__ == "__main__":
    disturb(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
