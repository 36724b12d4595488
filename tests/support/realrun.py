"""Real runs as the integration tests make them: one set of sampling options
(FAST: small, quick points in one launch, a silence of two minutes before a
launch counts as hung), what each level's shared run measures (LEVELS, read
by tests/integration/conftest.py's level_runs), and one helper that runs
`fabriclab run` in this process and returns the run's document, checked
complete."""
from pathlib import Path

import docs
from mpihome import mpi_home

FAST = ["--point-time", "0.05", "--min-samples", "5", "--warmup", "2", "-t", "120", "-L", "1", "-q"]

MPIS = ("mpich", "openmpi")

# Each level's run: every benchmark of the level at 2 ranks, small sizes, validated.
LEVELS = {"memory": ["-s", "16K,64K", "--strides", "1,4"],
          "deposit": ["-s", "8,4K,64K", "--strides", "1,4"],
          "message": ["-s", "8,4K,64K", "--conns", "1,4"],
          "tcp": ["-s", "8,4K,64K", "--conns", "1,4"],
          # providers take at most 4 iovec entries here (shm, tcp): scatter 4 segments
          "fabric": ["-s", "8,4K,64K", "--conns", "1,4", "-p", "segments=4"],
          "ucx": ["-s", "8,4K,64K"],
          # every app at a problem that does not divide by 2 ranks
          "app": ["-s", "97"],
          # every collective in every form, in place and not, at one element and at 4 KiB
          "coll": ["-s", "4,4K", "-p", "form=blocking,nonblocking,persistent", "-p", "in_place=no,yes"],
          # the noise benchmarks' records short: 500 quanta (35 ms), 0.1 s of detours
          "noise": ["-p", "quanta=500", "-p", "record_ms=100"],
          # every UDP benchmark at a small datagram and a 4 KiB one (a datagram carries 65,507 bytes at most)
          "udp": ["-s", "64,4K"]}
# The levels below MPI run on providers and transports by name, from the smallest size each
# benchmark takes to 1 MiB: both of them under MPICH, UCX's TCP under Open MPI. Their runs are
# read by test_fabric_level.py and test_ucx_level.py as well. (fabric.scatter's size is a
# segment's, at least 1 byte: the fabric level starts at 1, its 0-byte points run apart.)
FABRIC_SIZES, UCX_SIZES = "1,8,4K,64K,1M", "0,1,8,4K,64K,1M"
SHM_TLS, TCP_TLS = "posix+cma+self", "tcp"
BELOW = {("mpich", "fabric"): ["-s", FABRIC_SIZES, "--conns", "1,4", "-p", "segments=4", "-p", "provider=shm,tcp"],
         ("mpich", "ucx"): ["-s", UCX_SIZES, "-p", f"tls={SHM_TLS},{TCP_TLS}"],
         ("openmpi", "ucx"): ["-s", UCX_SIZES, "-p", f"tls={TCP_TLS}"],
         # every form, not in place (test_collectives.py adds in place on three ranks): a
         # variant is a launch, 0.3 s under Open MPI here against MPICH's 0.1 s
         ("openmpi", "coll"): ["-s", "4,4K", "-p", "form=blocking,nonblocking,persistent"]}

def level_argv(mpi: str, level: str) -> list[str]:
    """What the run of `level` under `mpi` measures."""
    return BELOW.get((mpi, level), LEVELS[level])

def run(out: Path, *argv: str, mpi: str = "mpich", validate: bool = True, after: tuple = ()) -> dict:
    """`fabriclab run ARGV` under `mpi` (mpich or openmpi) with FAST and --validate, into `out`;
    `after` holds options that override FAST's. The document, its run complete."""
    from fabriclab.cli import main
    argv = ["run", *argv, *(["--validate"] if validate else []), "--mpi-home", mpi_home(mpi), "-o", str(out),
            *FAST, *after]
    assert main(argv) == 0, argv
    doc = docs.read(out)
    assert doc["footer"]["status"] == "complete", doc["footer"]
    return doc
