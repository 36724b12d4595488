"""MPICH's collective-selection file: the JSON tree MPICH reads from
MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE (its "csel", doc/mpich/
tuning_parameters.md section 2.1) to pick the algorithm of a collective
whose MPIR_CVAR_<OP>_INTRA_ALGORITHM is `auto`: the same layer, and the same
algorithms, that the measured variants select by name.

The file replaces the library's whole tree, and MPICH has no fallback for a
collective the tree does not cover, so the file written is the library's own
default tree, read from the library the core runs (it carries the tree as a
JSON string), with one branch changed: the tuned operation at the tuned
communicator size. Other sizes of communicator, other operations and
non-commutative reductions keep the library's own choice.

An algorithm is written only where this library's parser knows its name (the
key "algorithm=MPIR_<Op>_intra_<name>" is a string in the library) and the
entry needs no parameters: MPICH leaves a parameter that a file omits
unset, so the k-ary and tree algorithms (their k, tree type, chunk size)
are measured but not written."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from .. import outputs
from ..errors import UsageError

ENV = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"
FILE = "mpich-selection.json"
LIBRARY_MAX_BYTES = 1 << 30
INT_MAX = (1 << 31) - 1      # the file's numbers are read with atoi

# op -> (the tree's name, its size condition, whether that size is SIZE x ranks). MPICH's
# csel defines avg_msg_size (the count argument's bytes) only for allreduce, bcast, reduce and
# alltoall (one peer's block); allgather and reduce_scatter are tuned on total_msg_size.
OPS = {
    "allreduce": ("Allreduce", "avg_msg_size", False),
    "bcast": ("Bcast", "avg_msg_size", False),
    "reduce": ("Reduce", "avg_msg_size", False),
    "alltoall": ("Alltoall", "avg_msg_size", False),
    "allgather": ("Allgather", "total_msg_size", True),
    "reduce_scatter": ("Reduce_scatter", "total_msg_size", False),
    "reduce_scatter_block": ("Reduce_scatter_block", "total_msg_size", False),
}
REDUCING = {"allreduce", "reduce", "reduce_scatter", "reduce_scatter_block"}
# Names whose entry needs parameters (csel_container.c reads k, tree_type, chunk_size ...),
# and names that are not one algorithm: the library's own choice, the non-blocking one
# waited on, the node-aware one (it needs a node hierarchy) and an external library's.
NEEDS_PARAMETERS = {"tree", "pipelined_tree", "recexch", "k_reduce_scatter_allgather", "recursive_multiplying",
                    "k_brucks", "recexch_doubling", "recexch_halving", "k_dissemination"}
NOT_ONE = {"auto": "the library's own choice", "nb": "the non-blocking algorithm waited on",
           "smp": "it needs ranks on several nodes of a node hierarchy", "ccl": "it calls an external library"}


def library(core_path: str) -> Path:
    """The MPI library the core loads (ldd's word); UsageError when it cannot be found."""
    try:
        out = subprocess.run(["ldd", core_path], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"cannot list the libraries of the core {core_path}: {e}") from None
    m = re.search(r"^\s*libmpi\.so[.\d]*\s*=>\s*(\S+)", out, re.M)
    if not m or not Path(m.group(1)).is_file():
        raise UsageError(f"the core {core_path} loads no libmpi.so that fabriclab can read")
    return Path(m.group(1))


def _bytes(lib: Path) -> bytes:
    if lib.stat().st_size > LIBRARY_MAX_BYTES:
        raise UsageError(f"{lib} is larger than {LIBRARY_MAX_BYTES >> 20} MiB: not an MPI library")
    return lib.read_bytes()


def default_tree(lib: Path) -> dict:
    """The library's own selection tree: of the JSON trees it carries, the one whose
    algorithms are MPIR_'s (the others are the device layer's compositions)."""
    data = _bytes(lib)
    best: dict = {}
    for m in re.finditer(rb'\{\s*"collective=', data):
        end = data.find(b"\0", m.start())
        try:
            tree = json.loads(data[m.start():end])
        except ValueError:
            continue
        if isinstance(tree, dict) and '"algorithm=MPIR_' in json.dumps(tree) and len(tree) > len(best):
            best = tree
    if not best:
        raise UsageError(f"{lib} carries no collective-selection tree: this MPICH cannot be tuned by a file")
    return best


def entry(op: str, name: str) -> str:
    return f"algorithm=MPIR_{OPS[op][0]}_intra_{name}"


def selectable(core_path: str, op: str, names) -> tuple[list, dict]:
    """(the names a file can select, {name: why not} for the others)."""
    if op not in OPS:
        raise UsageError(f"fabriclab cannot write MPICH's selection file for {op}: it tunes {', '.join(OPS)}")
    data = _bytes(library(core_path))
    ok, why = [], {}
    for name in names:
        if name in NOT_ONE:
            why[name] = NOT_ONE[name]
        elif name in NEEDS_PARAMETERS:
            why[name] = "its entry in the file needs parameters (k, tree type) fabriclab does not choose"
        elif entry(op, name).encode() + b"\0" not in data:
            why[name] = "this library's selection file does not know the name"
        else:
            ok.append(name)
    return ok, why


def _sized(op: str, nranks: int, ranges: list, default: dict) -> dict:
    """The tuned communicator size's branch: one condition per size range."""
    _, key, times_ranks = OPS[op]
    out = {}
    for low, high, name in ranges:
        leaf = {entry(op, name): {}} if name else default
        if high is None:
            out[f"{key}=any"] = leaf
        else:
            out[f"{key}<={min(high * (nranks if times_ranks else 1), INT_MAX)}"] = leaf
    return out


def tree(base: dict, op: str, nranks: int, ranges: list) -> dict:
    """The library's tree with op's intra-communicator branch tuned at nranks ranks
    ("comm_size<" is avoided: MPICH reads it as <=)."""
    coll = f"collective={op}"
    if coll not in base or "comm_type=intra" not in base[coll]:
        raise UsageError(f"this MPICH's selection tree has no intra-communicator branch for {op}")
    default = base[coll]["comm_type=intra"]
    if not any(name for _, _, name in ranges):
        return base          # nothing beat the library's own choice
    tuned = _sized(op, nranks, ranges, default)
    if op in REDUCING:
        tuned = {"is_commutative=yes": _guarded(op, tuned, default), "is_commutative=any": default}
    intra = {**({f"comm_size<={nranks - 1}": default} if nranks > 1 else {}),
             f"comm_size<={nranks}": tuned, "comm_size=any": default}
    return {**base, coll: {**base[coll], "comm_type=intra": intra}}


def _guarded(op: str, tuned: dict, default: dict) -> dict:
    """The tuned branch for built-in ops only, and for allreduce and reduce at counts of
    at least the ranks' power of two: MPICH calls them inside MPI_Init and MPI_Comm_split
    with one element and with ops of its own, and its reduce-scatter + allgather fails
    there with "Internal error" (a tuned file that chose it at 1 KiB on 2 ranks aborted
    the next launch); the library's own tree guards them the same way."""
    if op in ("allreduce", "reduce"):
        tuned = {"count<pow2": default, "count=any": tuned}
    return {"is_op_built_in=yes": tuned, "is_op_built_in=no": default}


def write(path: Path, core_path: str, op: str, nranks: int, ranges: list, names) -> None:
    """The file at path, and nothing else written."""
    outputs.write(path, json.dumps(tree(default_tree(library(core_path)), op, nranks, ranges), indent=1) + "\n")


def environment(path: Path) -> dict:
    return {ENV: str(path.resolve())}
