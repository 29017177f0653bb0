"""tcsmt.runner on this machine: local worker processes, or this process.
(The same jobs on a real Dask cluster: test_cluster.py.)"""

from __future__ import annotations

import os
import signal
import time
from functools import partial
from pathlib import Path

import pytest
from cli_run import tcsmt

from tcsmt import runner
from tcsmt.errors import InternalError, UserError
from tcsmt.runner import local


def square(x: int) -> int:
    return x * x


def add_shared(x: int, shared: int) -> tuple[int, int]:
    return x + shared, os.getpid()


def sleep_shared(seconds: float, shared: int) -> None:
    time.sleep(seconds)


def refuse(x: int) -> int:
    raise UserError(f"bad input {x}")


def crash(x: int) -> int:
    return [][x]


def die_once(marker: str, value: int) -> int:
    """Kill this worker process the first time (the marker does not exist yet)."""
    if not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return value


def die_always(value: int) -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return value


def nested(n: int) -> list[int]:
    """A task that runs tasks: they run in its own process."""
    done = runner.run([runner.Task(str(i), partial(add_shared, i, 0)) for i in range(n)], workers=2)
    return [d.result()[1] for d in done]


def tasks(fn, values):
    return [runner.Task(f"t{v}", partial(fn, v)) for v in values]


def test_values_come_back_in_task_order_with_progress():
    seen, handed = [], []
    done = runner.run(tasks(square, range(7)), workers=2, progress=lambda *a: seen.append(a),
                      on_done=lambda d: handed.append((d.name, d.value)))
    assert [d.name for d in done] == [f"t{i}" for i in range(7)]
    assert sorted(handed) == sorted((f"t{i}", i * i) for i in range(7))
    assert all(d.value is None and d.ok for d in done)          # handed on, not kept
    assert seen[0] == ("", 0, 7) and [s[1:] for s in seen[1:]] == [(i, 7) for i in range(1, 8)]
    assert {s[0] for s in seen[1:]} == {f"t{i}" for i in range(7)}
    assert [d.result() for d in runner.run(tasks(square, range(5)), workers=2)] == [0, 1, 4, 9, 16]


def test_shared_data_and_where_tasks_run():
    here = runner.run(tasks(add_shared, range(4)), shared=10, workers=0)
    assert [d.result() for d in here] == [(10 + i, os.getpid()) for i in range(4)]
    away = runner.run(tasks(add_shared, range(4)), shared=10, workers=2)
    assert [d.result()[0] for d in away] == [10, 11, 12, 13]
    assert os.getpid() not in {d.result()[1] for d in away}
    assert all(d.seconds >= 0 and d.worker for d in away)
    # a task that runs tasks runs them in its own process, not in a pool of its own
    (d,) = runner.run([runner.Task("nested", partial(nested, 3))], workers=1)
    assert set(d.result()) == {int(d.worker.rsplit(":", 1)[1])}


def test_failures_travel_back_as_records():
    done = runner.run([runner.Task("u", partial(refuse, 3)), runner.Task("c", partial(crash, 3)),
                       runner.Task("ok", partial(square, 3))], workers=2)
    u, c, ok = done
    assert u.failure == "user" and u.error == "bad input 3"
    assert c.failure == "crash" and c.error.startswith("IndexError") and "Traceback" in c.trace
    assert ok.result() == 9
    with pytest.raises(UserError, match="bad input 3"):
        u.result()
    with pytest.raises(InternalError, match="c: IndexError"):
        c.result()


def test_a_lost_local_worker_reruns_its_job(tmp_path):
    marker = tmp_path / "died"
    done = runner.run([runner.Task("dies", partial(die_once, str(marker), 7))]
                      + tasks(square, range(3)), workers=2)
    assert [d.result() for d in done] == [7, 0, 1, 4]
    assert done[0].attempts == 2 and marker.exists()
    (gone,) = runner.run([runner.Task("always", partial(die_always, 1))], workers=1)
    assert gone.failure == "lost" and gone.attempts == local.MAX_ATTEMPTS
    assert "died 3 time(s)" in gone.error


def test_an_interrupt_kills_the_workers():
    pids = []

    def stop(done):
        pids.append(done.value[1])
        raise KeyboardInterrupt

    slow = [runner.Task("first", partial(add_shared, 0))] + \
        [runner.Task(f"sleep{i}", partial(sleep_shared, 30)) for i in range(3)]
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        runner.run(slow, shared=0, workers=2, on_done=stop)
    assert time.monotonic() - t0 < 20
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)                     # the worker is gone


def test_a_killed_pool_leaves_no_manager_thread_for_the_exit_to_race():
    """kill() returns once the pool's manager thread has ended: the exit's
    wake-up of a still-running one raced its closing of the pipe (a
    traceback under 'error: interrupted' in a regen stopped by Ctrl-C)."""
    pool = local.LocalPool(2, shared=0)
    ex = pool._start()
    local._submit(ex, runner.Task("sleep", partial(sleep_shared, 30)))
    manager = ex._executor_manager_thread
    assert manager is not None and manager.is_alive()
    pool.kill()
    assert not manager.is_alive()


def test_schedulers_by_argument_choice_and_environment(monkeypatch):
    monkeypatch.delenv(runner.ENV_SCHEDULER, raising=False)
    assert runner.scheduler_address() is None
    monkeypatch.setenv(runner.ENV_SCHEDULER, "tcp://10.1.2.3:8786")
    assert runner.scheduler_address() == "tcp://10.1.2.3:8786"
    assert runner.scheduler_address("local") is None
    runner.use_scheduler("tcp://[::1]:8786")
    try:
        assert runner.scheduler_address() == "tcp://[::1]:8786"
        assert runner.scheduler_address("127.0.0.1:9000") == "127.0.0.1:9000"
    finally:
        runner.use_scheduler(None)
    monkeypatch.setenv(runner.ENV_SCHEDULER, "not an address")
    with pytest.raises(UserError, match="expected an address"):
        runner.scheduler_address()


def test_an_unreachable_scheduler_is_one_line(capsys, tmp_path):
    code, out, err = tcsmt(["regen", "volta", "--property", "align-bits", "--root", tmp_path,
                            "--scheduler", "tcp://127.0.0.1:bad"], capsys)
    assert code == 2 and err.count("\n") == 1 and "expected an address" in err
    pytest.importorskip("distributed")
    from tcsmt.runner import cluster
    cluster.CONNECT_TIMEOUT = 2.0
    try:
        with pytest.raises(UserError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
            runner.run(tasks(square, [1]), scheduler="tcp://127.0.0.1:9")
    finally:
        cluster.CONNECT_TIMEOUT = 10.0
    assert not any(tmp_path.iterdir())


def test_with_torch_loaded_workers_are_spawned_and_get_the_shared_data(monkeypatch):
    import sys
    import types
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or types.ModuleType("torch"))
    assert local.start_method().get_start_method() == "spawn"
    done = runner.run(tasks(add_shared, range(4)), shared=10, workers=2)
    assert [d.result()[0] for d in done] == [10, 11, 12, 13]
    assert [d.result() for d in runner.run(tasks(square, range(3)), workers=2)] == [0, 1, 4]


_CTRL_C_AT_START = r"""
import os, signal, sys, time
from functools import partial
# Ctrl-C as a terminal gives it: a process started with SIGINT ignored (a test
# worker that ran something which ignores it) would inherit that disposition
signal.signal(signal.SIGINT, signal.default_int_handler)
from tcsmt.runner import local
from tcsmt.runner.tasks import Task

real = local._worker_start
def slow_start(*args):              # the window between the fork and SIGINT ignored, widened
    time.sleep(1.0)
    real(*args)
local._worker_start = slow_start

def forked():
    os.killpg(0, signal.SIGINT)     # Ctrl-C to the whole group while the workers start

pool = local.LocalPool(2)
tasks = [Task(f"t{n}", partial(time.sleep, 0.2)) for n in range(4)]
real_submit = local._submit
def submit_then_ctrl_c(pool_, task):
    f = real_submit(pool_, task)
    if task.name == "t0":
        forked()
    return f
local._submit = submit_then_ctrl_c
try:
    for _ in pool.run(tasks):
        pass
except KeyboardInterrupt:
    time.sleep(2)                   # time for a worker hit mid-start to say so on stderr
    pool.kill()
    print("interrupted")
"""


def test_ctrl_c_while_workers_start_kills_no_worker_mid_start():
    """Ctrl-C reaching the local pool's workers between their fork and the
    start that ignores it (widened here to a second) leaves no worker dead
    with a traceback, and the run ends at once as interrupted."""
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", _CTRL_C_AT_START], capture_output=True, text=True,
                       timeout=60, start_new_session=True)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.stdout.strip() == "interrupted", (p.returncode, p.stdout, p.stderr)


def test_a_commands_scheduler_ends_with_the_command(capsys, tmp_path, monkeypatch):
    """--scheduler is the command's: a later run in the same process (a test,
    a notebook) goes back to the environment's choice, not to a cluster the
    earlier command named and that may be gone."""
    monkeypatch.delenv(runner.ENV_SCHEDULER, raising=False)
    code, _, err = tcsmt(["regen", "volta", "--property", "align-bits", "--root", tmp_path,
                          "--scheduler", "tcp://127.0.0.1:1"], capsys)
    assert runner.scheduler_address() is None, (code, err)
