"""Progress bars with an estimate of the time left, on stderr.

A long library call takes ``progress(name, done, total)`` (the callback
tcsmt.regen and the job runner call: ``name`` is the step just finished,
``done`` of ``total``); ``progress_bar`` gives one that draws a rich bar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tcsmt.report.terminal import console, terminal_width

Callback = Callable[[str, int, int], None]


def _quiet(name: str, done: int, total: int) -> None:
    return None


@contextmanager
def progress_bar(what: str, show: bool = True) -> Iterator[Callback]:
    """A ``progress(name, done, total)`` callback drawing a bar on stderr:
    what, the step last finished, done/total, time spent and an estimate
    of the time left. The bar appears at the first call (so a command that
    stops on bad input before its work prints no bar). ``show=False``
    gives a callback that draws nothing."""
    if not show:
        yield _quiet
        return
    width = min(terminal_width(), 120)
    room = max(10, width - 60)
    columns = [TextColumn("{task.description}", table_column=None), BarColumn(bar_width=20),
               MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn()]
    bar = Progress(*columns, console=console(width, err=True), transient=False)
    task = None

    def progress(name: str, done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(what, total=None)
        label = f"{what} {name}" if name else what
        if len(label) > room:
            label = label[:room - 1] + "…"
        bar.update(task, total=total, completed=done, description=label)

    try:
        yield progress
    finally:
        if task is not None:
            bar.stop()
