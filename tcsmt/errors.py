"""Errors that end a command with a one-line message and exit code 2."""


class UserError(Exception):
    """Bad input: unknown architecture, bad hex, malformed model file, a
    format mismatch, a missing solver. The CLI prints ``error: <message>``
    and exits with code 2; nothing already written is touched."""

    exit_code = 2


class ModelFileError(UserError):
    """A model file that is malformed or incomplete; names the file and key."""


class SolverError(Exception):
    """A solver that crashed or could not be used for a query."""
