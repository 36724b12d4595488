"""Option letters that mean one thing (cli/letters.py): the spellings they replaced keep
working for one release, each saying once on stderr what to type instead."""
import json

import pytest

from fabriclab.cli import main
from fabriclab.cli.letters import RETIRED
from fabriclab.cli.main import parser

VALUE = {"--system": "sci-2d", "--nodes": "4", "--prices": "p.yaml", "--topology-file": "n.yaml",
         "--output": "out"}


def _start(command: str) -> list[str]:
    return [command] + (["sci-myrinet-2002"] if command == "reproduce" else [])


@pytest.mark.parametrize("command,long", sorted(RETIRED))
def test_a_retired_letter_still_works_and_says_so_once(command, long, capsys):
    letter, value = RETIRED[(command, long)], VALUE[long]
    old = parser().parse_args(_start(command) + [letter, value, letter, value])
    assert capsys.readouterr().err == f"fabriclab: {letter} for {long} is deprecated; use {long}\n"
    new = parser().parse_args(_start(command) + [long, value, long, value])
    assert capsys.readouterr().err == "" and vars(old) == vars(new)


def test_old_model_spellings_give_the_same_answer(capsys):
    assert main(["model", "--system", "sci-2d", "--nodes", "4,9", "--no-plot", "-f", "json"]) == 0
    new = capsys.readouterr()
    assert main(["model", "--system", "sci-2d", "-n", "4,9", "--no-plot", "-f", "json"]) == 0
    old = capsys.readouterr()
    assert json.loads(old.out) == json.loads(new.out) and new.err == ""
    assert old.err.splitlines() == ["fabriclab: -n for --nodes is deprecated; use --nodes"]


def test_model_s_is_sizes_as_everywhere_since_its_retirement_ended():
    """-s stood for --system until 0.3.0; now it is the collectives' --sizes, as in run."""
    args = parser().parse_args(["model", "-s", "8,64K", "--collective", "allreduce"])
    assert args.sizes == "8,64K" and args.system is None


def test_retired_letters_are_not_offered(capsys):
    assert main(["model", "--help"]) == 0
    text = capsys.readouterr().out
    assert "-s SYSTEM" not in text and "--system SYSTEM" in text and "-T PATTERN" in text
