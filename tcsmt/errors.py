"""The errors tcsmt raises, under one root. A caller catches a kind; the
command line prints one line and exits with the root's code.

    TcsmtError
      UserError              bad input: the CLI prints ``error: <message>`` and
        ModelFileError       exits with 2; nothing already written is touched
        UnknownModel         no model, architecture or reference of that name
        FormatMismatch       formats of rows, arrays or models that do not fit
        ShapeError           operands of the wrong shape or length
        BadFile              a file that cannot be read as what it claims to be
        BadOption            an option or environment value out of range
        SolverMissing        a solver that is not installed or will not start
        DeviceMissing        no compiler, driver or GPU for a probe
        SolverTimeout        no answer within the time given
        OutputRefused        an output path tcsmt will not write
        BudgetExceeded       work whose memory would pass what is available
        WidthError    (tcsmt.interp.words: a model too wide for 64-bit words)
      InternalError          a bug in tcsmt or in a solver: ``internal error: ...``,
        WitnessError         exit 3, nothing written
        DataBranchError (tcsmt.interp.ints: the datapath branched on data)
      AnswersLost            a new result would leave unknown an answer of the
                             file it replaces: the file is kept; one line
                             ``lost: ...`` saying how to force, exit 1
"""

__all__ = ["AnswersLost", "BadFile", "BadOption", "BudgetExceeded", "DeviceMissing", "FormatMismatch",
           "InternalError", "ModelFileError", "OutputRefused", "ShapeError", "SolverMissing", "SolverTimeout",
           "TcsmtError", "UnknownModel", "UserError", "WitnessError"]


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


class UnknownModel(UserError):
    """No shipped model, architecture, reference model or model file of that
    name (the message lists what there is)."""


class FormatMismatch(UserError):
    """Formats that do not fit together: rows, arrays or a second model in
    other formats than the model reads, or a format a model has no variant for."""


class ShapeError(UserError):
    """Operands of the wrong shape or length: a and b of different lengths,
    matrices whose inner dimensions differ, scales that do not cover K."""


class BadFile(UserError):
    """A file that cannot be read as what it claims to be (missing, not
    UTF-8, not JSON, wrong schema, too large to be one)."""


class BadOption(UserError):
    """An option or environment variable whose value is not taken: not a
    number, not finite, out of range."""


class SolverMissing(UserError):
    """A solver that is not installed, or whose process will not start."""


class DeviceMissing(UserError):
    """What a probe needs to run that is not there: no compiler (nvcc,
    hipcc) on PATH, no driver, no GPU of that index, or a GPU that cannot
    run the instruction; the message names which."""


class SolverTimeout(UserError):
    """No solver answered within the time given; the message says how to
    give more."""


class OutputRefused(UserError):
    """An output path tcsmt will not write: a file the command reads, a
    device, pipe or socket it would replace, an existing file without
    --force."""


class BudgetExceeded(UserError):
    """Work whose estimated peak memory passes what the machine has free;
    the message names the estimate and what is available."""


class AnswersLost(TcsmtError):
    """A result document that would replace a file holding answers (a
    proof, a separating vector, a verdict, at any level) by unknowns: the
    file is kept as it was; the message (``lost: ...``) names what would
    be lost and how to force. Exit 1: the run itself went as asked."""

    exit_code = 1

    def __init__(self, message: str, lost: list[str]):
        super().__init__(message)
        self.lost = lost


class InternalError(TcsmtError):
    """Something that cannot happen if tcsmt and the solvers are right. The
    CLI prints ``internal error: <message>`` and exits with code 3."""


class WitnessError(InternalError):
    """A satisfying assignment that does not replay on the concrete model
    (or solvers that disagree): never written, never printed as a result."""
