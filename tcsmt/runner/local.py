"""Tasks in worker processes on this machine (no set-up).

At most ``workers`` tasks are in flight at once, each in its own worker
process of a ``ProcessPoolExecutor``. The workers die with this process
(tcsmt.processes.die_with_parent) and leave Ctrl-C to it. A worker that dies
(killed, out of memory) breaks the pool: the tasks it was running are run
again in a fresh pool, up to ``MAX_ATTEMPTS`` times each, as a Dask
scheduler reruns the tasks of a lost worker elsewhere. When this process
stops early (Ctrl-C, an exception in a callback), every worker is killed at
once; their solver processes die with them.

Workers are forked (they start at once and inherit what this process has
loaded), except once torch is loaded here: a lock of its thread pools
held by another thread at the fork would hang the forked worker (the
agreement runs against MMA-Sim), so those pools spawn fresh interpreters.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from tcsmt.processes import STOPPING, die_with_parent
from tcsmt.runner.tasks import NOTHING, Done, Task, execute, lost

MAX_ATTEMPTS = 3
"""Runs of one task whose worker died before it is given up (Dask's
distributed.scheduler.allowed-failures is 3 as well)."""

_SHARED: Any = NOTHING


def _worker_start(shared: Any, parent: int | None = None) -> None:
    """In a worker: die with the process that started it; Ctrl-C is that
    process's to handle; SIGTERM ends the worker at once (not the handler
    the command line gives its own process); keep the run's shared data."""
    global _SHARED
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(STOPPING))    # held since the fork (_submit)
    die_with_parent(parent=parent)
    _SHARED = shared


def _execute_here(task: Task) -> Done:
    return execute(task, _SHARED)


def run_inline(tasks: Sequence[Task], shared: Any = NOTHING) -> Iterator[tuple[int, Done]]:
    """Every task in this process, one after another."""
    for i, t in enumerate(tasks):
        yield i, execute(t, shared)


class LocalPool:
    """``workers`` processes; ``run`` yields (task index, Done) as tasks finish."""

    def __init__(self, workers: int, shared: Any = NOTHING):
        self.workers, self.shared = max(1, workers), shared
        self.pool: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=start_method(),
                                        initializer=_worker_start, initargs=(self.shared, os.getpid()))
        return self.pool

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Done]]:
        pending, attempts = deque(range(len(tasks))), [0] * len(tasks)
        inflight: dict = {}
        pool = self._start()
        while pending or inflight:
            while pending and len(inflight) < self.workers:
                i = pending.popleft()
                attempts[i] += 1
                inflight[_submit(pool, tasks[i])] = i
            finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
            broken = any(isinstance(f.exception(), BrokenProcessPool) for f in finished)
            for f in list(inflight) if broken else finished:
                i = inflight.pop(f)
                if not broken or (f.done() and f.exception() is None):
                    yield i, _record(f.result(), attempts[i])
                elif attempts[i] >= MAX_ATTEMPTS:
                    yield i, lost(tasks[i], attempts[i], "a local worker process ended")
                else:
                    pending.appendleft(i)
            if broken:
                self.kill()
                pool = self._start()
        self.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def kill(self) -> None:
        """Stop every worker now (their solver processes die with them)."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        procs = getattr(pool, "_processes", None) or {}
        for p in list(procs.values()):
            _kill_process(p)
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        if manager is not None:
            manager.join(MANAGER_GRACE)


MANAGER_GRACE = 10.0
"""Seconds kill() waits for the pool's manager thread to see its workers
gone and close its wake-up pipe. Left running, it could close that pipe
while the interpreter's exit writes to it (Python 3.11's
concurrent.futures does not lock the two against each other): an
interrupted command then ended with an 'OSError: Bad file descriptor'
traceback under its one error line."""


def _submit(pool: ProcessPoolExecutor, task: Task):
    """pool.submit with Ctrl-C held back while it runs: the first submit
    forks the workers, and a SIGINT reaching a worker before _worker_start
    ignores it killed that worker mid-start (a traceback on stderr, and the
    command hung instead of ending "interrupted"), and a SIGTERM (a job
    stopped) before it takes the default action ran the inherited handler
    (a traceback). A worker starts with both blocked and unblocks them
    once set; here one that came meanwhile is delivered as the mask is
    restored."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, set(STOPPING))
    try:
        return pool.submit(_execute_here, task)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def start_method():
    """fork, or spawn once a library with thread pools of its own is loaded."""
    return multiprocessing.get_context("spawn" if "torch" in sys.modules else "fork")


def _kill_process(p) -> None:
    try:
        os.kill(p.pid, signal.SIGKILL)
    except (ProcessLookupError, OSError, TypeError):
        pass


def _record(done: Done, attempts: int) -> Done:
    done.attempts = attempts
    return done


def run_local(tasks: Sequence[Task], workers: int, shared: Any,
              handle: Callable[[int, Done], None]) -> None:
    """Every task in local worker processes; ``handle(index, done)`` in this
    process as each finishes. Whatever stops this early kills the workers."""
    pool = LocalPool(workers, shared)
    try:
        for i, done in pool.run(tasks):
            handle(i, done)
    except BaseException:
        pool.kill()
        raise
    finally:
        pool.close()
