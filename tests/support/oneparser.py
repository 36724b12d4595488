"""main() with one parser for a loop of calls.

fabriclab's main() builds its whole argparse parser on every call, as a
process does once. A test that calls the command line hundreds of times in
its own process (a fuzzer) would spend most of its time building that same
parser again: inside `one_parser()` every main() call parses with one parser
built on entry. Parsing, dispatch, exit codes and every line main() prints
stay main()'s own."""
import contextlib
import importlib

import pytest


@contextlib.contextmanager
def one_parser():
    cli = importlib.import_module("fabriclab.cli.main")
    built = cli.parser()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "parser", lambda command=None: built)
        yield
