"""The command line a result file records: the arguments the tcsmt group
was given (by the shell, by ``tcsmt.cli.main(argv)`` or by a test runner),
not the Python process's own ``sys.argv``."""

from __future__ import annotations

import shlex
import sys

ARGS: list[str] | None = None


def command_line() -> str:
    args = ARGS if ARGS is not None else sys.argv[1:]
    return " ".join(shlex.quote(a) for a in ["tcsmt", *args])
