"""Exceptions that the CLI turns into one line and an exit code.

UsageError: bad input (exit 2). RunError: a run that failed (exit 1)."""


class FabriclabError(Exception):
    exit_code = 1


class UsageError(FabriclabError):
    """Bad input: a malformed size range, an unknown benchmark, a broken file."""

    exit_code = 2


class RunError(FabriclabError):
    """A run that started but failed (a dead rank, a timeout, a build error)."""

    exit_code = 1
