"""Child processes that do not outlive the process that started them."""

from __future__ import annotations

import signal


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child process: be sent ``sig`` when its parent dies (Linux
    prctl PR_SET_PDEATHSIG; elsewhere nothing), so killing tcsmt's main
    process leaves no worker or solver behind."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, int(sig))
    except (OSError, AttributeError):
        pass
