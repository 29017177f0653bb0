"""The command line a result file records: the arguments the tcsmt command
was given (by the shell, by ``tcsmt.cli.main(argv)`` or by a test runner),
never the Python process's own ``sys.argv``. Outside the command line (a
call from Python) there is none: ""."""

from __future__ import annotations

import shlex

ARGS: list[str] | None = None


def command_line() -> str:
    if ARGS is None:
        return ""
    return shlex.join(["tcsmt", *ARGS])
