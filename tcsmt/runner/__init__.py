"""One way to run independent jobs: worker processes on this machine by
default, the workers of a Dask cluster when a scheduler is named.

    from tcsmt import runner
    tasks = [runner.Task("ampere/rounding", partial(job, "rounding", "ampere")), ...]
    done = runner.run(tasks, on_done=write, progress=bar)

``run`` hands each finished task's ``Done`` (value, or why there is none;
the job's seconds and its worker) to ``on_done`` in THIS process, in the
order they finish, and returns every Done in the order of the tasks. The
jobs return documents or arrays; the process that asked writes the files.
Where the jobs run:

* ``scheduler`` (an address such as tcp://10.0.0.5:8786), else the one
  chosen for this process (``use_scheduler``: the CLI's --scheduler), else
  the TCSMT_SCHEDULER environment variable: a Dask cluster
  (tcsmt.runner.cluster; dask and distributed are the ``cluster`` extra).
  "local" names this machine.
* otherwise ``workers`` local processes (default: TCSMT_WORKERS, else the
  number of cores, at most 2), tcsmt.runner.local.
* ``workers=0`` runs every task here, one after another, wherever the
  scheduler is; so does a task that runs tasks of its own.

The same tasks give the same values either way. ``shared`` is data every
task of a run reads (called as ``fn(shared)``): sent once to each worker
(a local worker inherits it, a Dask worker receives it broadcast), not
once per task. A worker lost mid-job has its jobs rerun elsewhere (up to 3
runs each); ``progress(name, done, total)`` is called before the first and
after each task, as regen's progress bar expects.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcsmt import environment
from tcsmt.runner.tasks import NOTHING, Done, Task, in_worker

ENV_SCHEDULER = "TCSMT_SCHEDULER"
ENV_WORKERS = "TCSMT_WORKERS"
LOCAL = environment.LOCAL
_CHOSEN: list[str | None] = [None]

__all__ = ["Done", "Stage", "Task", "default_workers", "in_worker", "recording", "run", "scheduler_address",
           "use_scheduler"]


@dataclass
class Stage:
    """One call of ``run`` as ``recording`` saw it: its wall-clock seconds
    here, and each job's own seconds in its worker."""
    seconds: float = 0.0
    jobs: list[tuple[str, float]] = field(default_factory=list)
    where: str = ""


_RECORDS: list[list[Stage]] = []


@contextlib.contextmanager
def recording() -> Iterator[list[Stage]]:
    """Every ``run`` in this process while the block runs, as Stages (what
    benchmarks/bench_cluster.py projects to more workers)."""
    stages: list[Stage] = []
    _RECORDS.append(stages)
    try:
        yield stages
    finally:
        _RECORDS.remove(stages)


def use_scheduler(address: str | None) -> None:
    """Make ``address`` (None: the environment's, else local) the scheduler
    of every later run in this process that names none."""
    _CHOSEN[0] = check_address(address) if address else None


def check_address(address: str, what: str = "--scheduler") -> str:
    """A scheduler's address (tcp://HOST:PORT) or "local"; BadOption otherwise."""
    return environment.scheduler_address(address, what)


def scheduler_address(scheduler: str | None = None) -> str | None:
    """The Dask scheduler a run uses, or None for local processes."""
    for choice, what in ((scheduler, "scheduler"), (_CHOSEN[0], "--scheduler")):
        if choice:
            choice = check_address(choice, what)
            return None if choice == LOCAL else choice
    env = environment.scheduler()
    return None if env in (None, LOCAL) else env


def default_workers() -> int:
    """TCSMT_WORKERS (checked: a whole number from 1 to
    environment.MAX_WORKERS), else the cores, at most 2."""
    return environment.workers() or max(1, min(2, os.cpu_count() or 1))


def where(scheduler: str | None = None, workers: int | None = None) -> str:
    """Where a run would go, in words."""
    address = scheduler_address(scheduler)
    if address:
        return f"the Dask scheduler at {address}"
    n = default_workers() if workers is None else workers
    return "this process" if n == 0 or in_worker() else f"{n} local worker process(es)"


def run(tasks: Sequence[Task], *, on_done: Callable[[Done], None] | None = None,
        progress: Callable[[str, int, int], None] | None = None, shared: Any = NOTHING,
        scheduler: str | None = None, workers: int | None = None) -> list[Done]:
    """Run every task (see the module doc); the Done records in the order of
    ``tasks``. A Done handed to ``on_done`` keeps no value (it was handed
    on), so large results are not held twice."""
    tasks = list(tasks)
    out: list[Done | None] = [None] * len(tasks)
    count = [0]
    stage = Stage(where=where(scheduler, workers))
    for stages in _RECORDS:
        stages.append(stage)
    t0 = time.monotonic()
    address = scheduler_address(scheduler)
    n = default_workers() if workers is None else workers
    if address and tasks and n != 0 and not in_worker():
        from tcsmt.runner.cluster import connect
        connect(address)                  # a scheduler that is not there: one line, before any bar
    if progress:
        progress("", 0, len(tasks))

    def handle(i: int, done: Done) -> None:
        stage.jobs.append((done.name, done.seconds))
        if on_done:
            on_done(done)
            done.value = None
        out[i] = done
        count[0] += 1
        if progress:
            progress(done.name, count[0], len(tasks))

    if not tasks:
        return []
    if n == 0 or in_worker():
        from tcsmt.runner.local import run_inline
        for i, done in run_inline(tasks, shared):
            handle(i, done)
    elif address:
        from tcsmt.runner.cluster import run_cluster
        run_cluster(address, tasks, shared, handle)
    else:
        from tcsmt.runner.local import run_local
        run_local(tasks, n, shared, handle)
    stage.seconds = time.monotonic() - t0
    finished = [d for d in out if d is not None]
    assert len(finished) == len(tasks)          # every runner hands back each task once
    return finished
