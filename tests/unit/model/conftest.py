"""Shared helpers for the model tests (no MPI needed)."""

import argparse

import pytest

from fabriclab.cli.model import register_model, register_reproduce


@pytest.fixture
def run_cli(capsys):
    """Run a model subcommand in-process; returns (exit code, stdout)."""

    def _run(*argv):
        p = argparse.ArgumentParser()
        sp = p.add_subparsers()
        register_model(sp)
        register_reproduce(sp)
        args = p.parse_args(list(argv))
        rc = args.func(args)
        return rc, capsys.readouterr().out

    return _run
