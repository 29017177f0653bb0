"""Child processes that do not outlive the process that started them, and
Ctrl-C held back while a file is written and counted."""

from __future__ import annotations

import contextlib
import signal
import threading


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child process: be sent ``sig`` when its parent dies (Linux
    prctl PR_SET_PDEATHSIG; elsewhere nothing), so killing tcsmt's main
    process leaves no worker or solver behind."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, int(sig))
    except (OSError, AttributeError):
        pass


@contextlib.contextmanager
def interrupt_after():
    """Ctrl-C held back until the block is done: a file written and counted
    is one step, so a report of what was written never misses a file that
    is on disk. A SIGINT that comes meanwhile is acted on as the block ends,
    as the handler in place would have acted on it (KeyboardInterrupt by
    default). Python runs signal handlers in the main thread whichever
    thread the signal reached, so this holds with other threads running
    (a Dask client's); outside the main thread the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
    if came and callable(before):
        before(signal.SIGINT, None)
