"""The tuner: a collective's algorithms measured across sizes, the fastest
kept only where it beats the library's own choice by compare's interval,
written as the MPI library's own selection file, and the tuned library
checked against the default (docs/tuning.md)."""

# The operations the tuner writes files for (both libraries' files take each), its rounds
# of the check, and the model's pruning factor: the defaults the CLI shows, kept here so
# that parsing loads nothing heavy.
OPS = ("allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter", "reduce_scatter_block")
DEFAULT_ROUNDS = 5
FACTOR = 2.0
