"""What a launch leaves in /dev/shm and /tmp, removed once its processes are gone.

MPI libraries and the fabric libraries below them share memory between the
ranks of one host through files in /dev/shm (MPICH's `mpich_shm_*`, Open
MPI's `sm_segment.*`, UCX's `ucx_shm_posix_*`, libfabric's shm provider's
own) and remove them when the job ends in order. A rank that is killed, a
job that is stopped, or a launcher ended by a signal leaves them behind: a
few MiB to tens of MiB each, in memory, until the host reboots. So every
launch notes what /dev/shm holds before it starts and, once its processes
have ended, removes what appeared since that no process holds open or
mapped: a file another job on the host made in that time and still uses is
mapped by that job, and stays. Only this host's /dev/shm is seen; the
other hosts' launchers and schedulers keep theirs.

MPICH's launcher leaves one more file when a rank is killed: Hydra's proxy
writes the host's topology for the ranks to /tmp/hydra_hwloc_xmlfile_ and six random characters
(a path fixed in its source) and removes it only when the job ends in
order. Of /tmp, only files of that name are looked at, by the same rule."""

from __future__ import annotations

import os
from pathlib import Path

SHM = Path("/dev/shm")
# (folder, the start of the names a launch may leave there); "" for every file
LEFT = ((SHM, ""), (Path("/tmp"), "hydra_hwloc_xmlfile_"))


def entries(folder: Path = SHM, prefix: str = "") -> dict[str, int]:
    """{name: inode} of the regular files in FOLDER whose names start with PREFIX and that this
    user owns; {} where it cannot be read."""
    uid, out = os.geteuid(), {}
    try:
        with os.scandir(folder) as it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if e.name.startswith(prefix) and e.is_file(follow_symlinks=False) and st.st_uid == uid:
                    out[e.name] = st.st_ino
    except OSError:
        pass
    return out


def in_use(paths: set[str], proc: Path = Path("/proc")) -> set[str]:
    """Those of PATHS that a live process has open or mapped (/proc/PID/fd and /proc/PID/maps)."""
    used: set[str] = set()
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return set(paths)                     # nothing known: everything may be in use
    for pid in pids:
        try:
            for fd in os.listdir(proc / pid / "fd"):
                try:
                    target = os.readlink(proc / pid / "fd" / fd)
                except OSError:
                    continue
                if target in paths:
                    used.add(target)
            with open(proc / pid / "maps", "rb") as f:
                for line in f:
                    name = line.rstrip(b"\n").split(b" ", 5)[-1].strip().decode(errors="replace")
                    if name.endswith(" (deleted)"):
                        continue
                    if name in paths:
                        used.add(name)
        except OSError:
            continue                          # gone, or not ours to read: it holds nothing we may remove
    return used


def noted() -> list[dict[str, int]]:
    """entries() of every folder of LEFT, before a launch."""
    return [entries(folder, prefix) for folder, prefix in LEFT]


def sweep_all(before: list[dict[str, int]]) -> list[str]:
    """sweep() of every folder of LEFT against what noted() found there."""
    return [n for (folder, prefix), seen in zip(LEFT, before) for n in sweep(seen, folder, prefix)]


def sweep(before: dict[str, int], folder: Path = SHM, prefix: str = "") -> list[str]:
    """Remove the files that appeared in FOLDER (of names starting with PREFIX) since `before`
    (entries()) and that no process uses; the names removed."""
    new = {n for n, ino in entries(folder, prefix).items() if before.get(n) != ino}
    if not new:
        return []
    paths = {str(folder / n) for n in new}
    removed = []
    for path in sorted(paths - in_use(paths)):
        try:
            os.unlink(path)
            removed.append(os.path.basename(path))
        except OSError:
            continue
    return removed
