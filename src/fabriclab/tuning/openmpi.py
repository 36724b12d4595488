"""Open MPI's coll_tuned dynamic rules file (docs/tuning-apps/coll-tuned.rst,
"Dynamic Decisions and the Rules File"), in the classic format every Open MPI
5 reads: per collective, per communicator size, rules of (message size,
algorithm, topology, segment size), the rule with the largest message size
not above the call's taken. Algorithm 0 ("ignore") is the library's own
fixed decision, which is what a size the tuner did not change gets.

A communicator size's rules hold for every larger communicator, so the file
adds one at the tuned size plus one whose only rule is 0: communicators of
other sizes keep the library's choice. The algorithm's number is its place
in the values the control lists (MPI_T's enumeration, from 0)."""

from __future__ import annotations

from pathlib import Path

from .. import outputs
from ..errors import UsageError

FILE = "openmpi-coll-tuned.rules"
ENV = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}
RULES_ENV = "OMPI_MCA_coll_tuned_dynamic_rules_filename"
# op -> (the collective's id in the rules file, whether its message size is SIZE x ranks)
OPS = {
    "allgather": (0, True), "allreduce": (2, False), "alltoall": (3, True), "bcast": (7, False),
    "reduce": (11, False), "reduce_scatter": (12, False), "reduce_scatter_block": (13, False),
}
NOT_ONE = {"ignore": "the library's own choice"}


def selectable(core_path: str, op: str, names) -> tuple[list, dict]:
    """(the names a file can select, {name: why not} for the others)."""
    if op not in OPS:
        raise UsageError(f"fabriclab cannot write Open MPI's rules file for {op}: it tunes {', '.join(OPS)}")
    ok = [n for n in names if n not in NOT_ONE]
    return ok, {n: NOT_ONE[n] for n in names if n in NOT_ONE}


def rules(op: str, nranks: int, ranges: list, names) -> str:
    """The file's text."""
    ident, times_ranks = OPS[op]
    number = {n: i for i, n in enumerate(names)}
    lines = [f"{low * (nranks if times_ranks else 1)} {number[name] if name else 0} 0 0"
             for low, _, name in ranges] or ["0 0 0 0"]
    return "\n".join([
        "1  # collectives", f"{ident}  # {op}", "2  # communicator sizes",
        f"{nranks}  # ranks", f"{len(lines)}  # message sizes", *lines,
        f"{nranks + 1}  # ranks: above the tuned size, the library's own choice", "1", "0 0 0 0", ""])


def write(path: Path, core_path: str, op: str, nranks: int, ranges: list, names) -> None:
    outputs.write(path, rules(op, nranks, ranges, list(names)))


def environment(path: Path) -> dict:
    return {**ENV, RULES_ENV: str(path.resolve())}
