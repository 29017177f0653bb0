"""Processes a command leaves behind: every command under test starts in a
session of its own (start_new_session), so every process it starts, and
theirs, carries that session id; a /proc scan finds the live ones (the
same check as ``pgrep -s SID``, without psutil)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def _stat(pid_dir: Path) -> tuple[str, int] | None:
    """(state, session id) of a process, or None when it is gone."""
    try:
        fields = (pid_dir / "stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return fields[0].decode(), int(fields[3])


def session_processes(sid: int) -> list[str]:
    """``pid command`` of every live process of session ``sid`` (zombies,
    which run nothing, are left out)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        st = _stat(d)
        if st and st[1] == sid and st[0] != "Z":
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            out.append(f"{d.name} {cmd.strip()}")
    return out


def sigint_as_in_a_terminal() -> None:
    """In the child before it runs: SIGINT at its default, as a terminal's
    foreground command has it. A test run started in the background by a
    non-interactive shell (``cmd &``, nohup) inherits SIGINT ignored, and a
    command that inherits that rightly ignores Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(argv: list[str], cwd: str | Path | None = None) -> subprocess.Popen:
    """A command in a session of its own (its id is its pid), output kept,
    SIGINT at its default."""
    return subprocess.Popen(argv, cwd=cwd, start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=sigint_as_in_a_terminal)


def wait_until(check, seconds: float, step: float = 0.1):
    """Poll ``check()`` until it returns something true (returned) or the
    time is up (None)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(step)
    return None


def left_after(sid: int, seconds: float) -> list[str]:
    """The processes of the session still alive ``seconds`` from now at the
    latest (empty as soon as none is)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not session_processes(sid):
            return []
        time.sleep(0.05)
    return session_processes(sid)


def kill_session(sid: int) -> None:
    """Clean up after a failed test: SIGKILL every process of the session."""
    import signal
    for line in session_processes(sid):
        try:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        except OSError:
            pass
