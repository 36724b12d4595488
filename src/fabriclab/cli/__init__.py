"""Front ends: argument parsing and output of every subcommand; `main(argv) -> int`."""

from .main import main, main_entry

__all__ = ["main", "main_entry"]
