"""`python -m fabriclab.cli`: the same as the `fabriclab` command."""

from .main import main_entry

main_entry()
