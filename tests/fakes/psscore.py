#!/usr/bin/env python3
"""A stand-in for fabriclab-core that runs the real one (PSS_CORE) as a child
with this rank's environment and descriptors (the launcher's PMI socket
stays open) and samples the proportional set size of every rank on the host
every few milliseconds (/proc/PID/smaps_rollup: a page that several ranks
map counts a share in each, so the ranks' figures read at one instant add up
to what the host holds).

Each wrapper announces its child as PSS_DIR/pid.<PID> and reads every
announced child in one pass: figures of different ranks read at different
instants do not add up (a window one rank touched before its peer mapped it
counts whole in the older figure and half in the newer), and on a loaded
host one rank's last figure may be tens of milliseconds old. Each pass's sum
goes to PSS_DIR/rank<N> as "monotonic-seconds bytes ranks" lines, for
checking the memory estimate against what the ranks held."""
import os
import subprocess
import sys
import time


def pss(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def announced(folder: str) -> list[int]:
    return [int(n.split(".", 1)[1]) for n in os.listdir(folder) if n.startswith("pid.")]


def main() -> int:
    folder = os.environ["PSS_DIR"]
    child = subprocess.Popen([os.environ["PSS_CORE"], *sys.argv[1:]], close_fds=False)
    open(os.path.join(folder, f"pid.{child.pid}"), "w").close()
    samples = []
    while child.poll() is None:
        t = time.monotonic()
        figures = [x for x in map(pss, announced(folder)) if x is not None]
        if figures:
            samples.append(f"{t:.4f} {sum(figures)} {len(figures)}")
        time.sleep(0.003)
    rank = os.environ.get("PMI_RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or "0"
    with open(os.path.join(folder, f"rank{rank}"), "w") as f:
        f.write("\n".join(samples) + "\n")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
