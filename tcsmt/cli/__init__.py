"""The command line: one thin module per group of commands. Each command
parses its options, calls one library function and prints what it returns."""

from tcsmt.cli.main import cli, main

__all__ = ["cli", "main"]
