"""A job and its outcome, and what a worker does with a job.

A ``Task`` is a name and a function that takes no argument (or one: the
data every task of a run shares, see ``tcsmt.runner.run``). The function
must pickle: a module-level function, or a ``functools.partial`` of one
with picklable arguments. Whatever runs it (this process, a local worker
process or a Dask worker) calls ``execute``, which times it and turns an
exception into a ``Done`` with the reason, so every backend hands the same
record back to the process that asked.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcsmt.errors import InternalError, UserError


@dataclass(frozen=True)
class Task:
    name: str
    fn: Callable[..., Any]


FAILURES = ("user", "crash", "lost")
"""Why a Done has no value: bad input (a UserError), an exception in the
job, or a job whose worker died ``MAX_ATTEMPTS`` times."""


@dataclass
class Done:
    """What became of one task. ``seconds`` is the job's own time in its
    worker; ``started`` the wall-clock time (time.time()) it started there;
    ``worker`` names the process that ran it."""
    name: str
    value: Any = None
    failure: str = ""            # "" (a value), or one of FAILURES
    error: str = ""              # one line: why there is no value
    seconds: float = 0.0
    started: float = 0.0
    worker: str = ""
    attempts: int = 1
    trace: str = ""              # the traceback of a crash

    @property
    def ok(self) -> bool:
        return not self.failure

    def result(self) -> Any:
        """The value; a UserError or InternalError naming the task when there is none."""
        if self.failure == "user":
            raise UserError(self.error)
        if self.failure:
            raise InternalError(f"{self.name}: {self.error}"
                                + (f"\n{self.trace}" if self.trace and os.environ.get("TCSMT_DEBUG") else ""))
        return self.value


_IN_WORKER = False


def in_worker() -> bool:
    """Whether this process is running a task now: a task that runs tasks
    of its own runs them one after another, here (no pool inside a pool)."""
    return _IN_WORKER


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class _Nothing:
    """No shared data; pickles as this module's one NOTHING (a spawned
    worker compares with ``is``)."""

    def __reduce__(self) -> str:
        return "NOTHING"

    def __repr__(self) -> str:
        return "NOTHING"


NOTHING = _Nothing()


def execute(task: Task, shared: Any = NOTHING) -> Done:
    """Run one task (in whatever process holds it); never raises an
    Exception: its reason travels back in the Done."""
    global _IN_WORKER
    before, _IN_WORKER = _IN_WORKER, True
    started, t0 = time.time(), time.monotonic()
    rec = Done(task.name, started=started, worker=worker_name())
    try:
        rec.value = task.fn() if shared is NOTHING else task.fn(shared)
    except UserError as e:
        rec.failure, rec.error = "user", str(e)
    except Exception as e:  # noqa: BLE001 - every failure must reach the asking process
        rec.failure, rec.error = "crash", f"{type(e).__name__}: {e}"
        rec.trace = traceback.format_exc()
    finally:
        _IN_WORKER = before
    rec.seconds = time.monotonic() - t0
    return rec


def lost(task: Task, attempts: int, why: str) -> Done:
    """The record of a task whose worker died every time it ran."""
    return Done(task.name, failure="lost", attempts=attempts,
                error=f"its worker died {attempts} time(s) while running it ({why})")
