"""The errors tcsmt raises, under one root.

    TcsmtError
      UserError            bad input: the CLI prints ``error: <message>``
        ModelFileError     and exits with 2; nothing already written is touched
        WidthError   (tcsmt.interp.words: a model too wide for 64-bit words)
      InternalError        a bug in tcsmt or in a solver: ``internal error: ...``,
        WitnessError       exit 3, nothing written
        DataBranchError (tcsmt.interp.ints: the datapath branched on data)
"""


class TcsmtError(Exception):
    """The root of every error tcsmt raises on purpose."""

    exit_code = 3


class UserError(TcsmtError):
    """Bad input: unknown architecture, bad hex, malformed model file, a
    format mismatch, a missing solver, no answer in time. The CLI prints
    ``error: <message>`` and exits with code 2; nothing already written is
    touched."""

    exit_code = 2


class ModelFileError(UserError):
    """A model file that is malformed or incomplete; names the file and key."""


class InternalError(TcsmtError):
    """Something that cannot happen if tcsmt and the solvers are right. The
    CLI prints ``internal error: <message>`` and exits with code 3."""


class WitnessError(InternalError):
    """A satisfying assignment that does not replay on the concrete model
    (or solvers that disagree): never written, never printed as a result."""
