"""Child processes that do not outlive the process that started them, and
Ctrl-C held back while a file is written and counted."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """In a child process: be sent ``sig`` when its parent dies (Linux
    prctl PR_SET_PDEATHSIG; elsewhere nothing), so killing tcsmt's main
    process leaves no worker or solver behind. ``parent``, the pid the
    parent had before it started this child: a parent that died before the
    prctl (a busy machine widens that moment) ends the child at once."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, int(sig))
    except (OSError, AttributeError):
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)


STOPPING = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command: Ctrl-C, and kill's default."""


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def terminate_as_interrupt() -> None:
    """SIGTERM handled as Ctrl-C is (KeyboardInterrupt in the main thread),
    so a command stopped by kill or a batch system ends as an interrupted
    one does: files whole, what was written counted, one line."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupted)


@contextlib.contextmanager
def interrupt_after():
    """Ctrl-C (and SIGTERM) held back until the block is done: a file
    written and counted is one step, so a report of what was written never
    misses a file that is on disk. A signal that comes meanwhile is acted
    on as the block ends, as the handler in place would have acted on it
    (KeyboardInterrupt by default). Python runs signal handlers in the
    main thread whichever thread the signal reached, so this holds with
    other threads running (a Dask client's); outside the main thread the
    block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    before: dict[int, Any] = {sig: signal.signal(sig, lambda signum, frame: came.append(signum))
                              for sig in STOPPING}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    if came and callable(before[came[0]]):
        before[came[0]](came[0], None)
