"""Running the tcsmt command line from tests: in this process through
tcsmt.cli.main, or as the installed entry point."""

import shutil
import sys
from pathlib import Path

from tcsmt.cli.main import main


def tcsmt(argv, capsys=None) -> tuple[int, str, str]:
    """The CLI in this process: (exit code, stdout, stderr); without capsys
    the output is not captured and comes back empty."""
    if capsys is not None:
        capsys.readouterr()
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if capsys is None:
        return code, "", ""
    out, err = capsys.readouterr()
    return code, out, err


def script() -> str:
    """The installed tcsmt entry point."""
    exe = Path(sys.executable).parent / "tcsmt"
    found = str(exe) if exe.exists() else shutil.which("tcsmt")
    assert found, "the tcsmt entry point is not installed"
    return found


class Ran:
    """What a command did: its exit code and its stdout and stderr together."""

    def __init__(self, exit_code: int, output: str):
        self.exit_code, self.output = exit_code, output


def run(argv) -> Ran:
    """The CLI in this process through tcsmt.cli.main (so its one-line error
    handling applies), with stdout and stderr captured together."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code, _, _ = tcsmt(argv)
    return Ran(code, buf.getvalue())
