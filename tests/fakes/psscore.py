#!/usr/bin/env python3
"""A stand-in for fabriclab-core that runs the real one (PSS_CORE) as a child
with this rank's environment and descriptors (the launcher's PMI socket
stays open) and samples the child's proportional set size every few
milliseconds (/proc/PID/smaps_rollup: a page that several ranks map counts
a share in each, so the ranks' figures at one instant add up to what the
host holds). The samples go to PSS_DIR/rank<N> as "monotonic-seconds bytes"
lines, for checking the memory estimate against what the ranks held."""
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


def main() -> int:
    child = subprocess.Popen([os.environ["PSS_CORE"], *sys.argv[1:]], close_fds=False)
    samples = []
    while child.poll() is None:
        x = pss(child.pid)
        if x is not None:
            samples.append(f"{time.monotonic():.4f} {x}")
        time.sleep(0.003)
    rank = os.environ.get("PMI_RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or "0"
    with open(os.path.join(os.environ["PSS_DIR"], f"rank{rank}"), "w") as f:
        f.write("\n".join(samples) + "\n")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
