"""Tasks on the workers of a Dask cluster (``--scheduler tcp://HOST:PORT``).

Every task is one Dask future; its ``Done`` record comes back to this
process, which writes whatever files there are (workers write nothing, so
an interrupted run leaves each file old or new, as a local run does). The
scheduler reruns the tasks of a worker that is lost mid-job on another
worker, up to distributed.scheduler.allowed-failures times (3 unless the
cluster says otherwise); a task lost more often is reported as "lost". On
Ctrl-C or an error here every task of the run is cancelled (a task already
running finishes on its worker; its solvers stop at their own timeouts).

Before the first task, every worker must run the same tcsmt code as this
process (a digest of the package's source, its queries and its models):
the cache keys describe this process's code, and a worker with other code
would write other answers under them.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import itertools
import logging
import os
import select
import socket
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tcsmt.errors import UserError
from tcsmt.runner.tasks import NOTHING, Done, Task, execute, lost

CONNECT_TIMEOUT = 10.0       # seconds to reach the scheduler
PROBE_WAIT = 5.0             # seconds for what answers there to greet as a scheduler
WORKER_TIMEOUT = 60.0        # seconds to wait for a first worker
_CLIENTS: dict[str, Any] = {}
_DIGEST: list[str] = []


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UserError("a Dask scheduler needs dask and distributed: pip install 'tcsmt[cluster]'") from None
    return distributed


def code_digest() -> str:
    """The sha256 of tcsmt's source, queries and models as this process
    imports them."""
    if not _DIGEST:
        h = hashlib.sha256()
        for pkg, pattern in (("tcsmt", "*.py"), ("tcsmt.queries", "*.py"), ("tcsmt.queries", "*.json"),
                             ("tcsmt.models", "*.toml")):
            spec = importlib.util.find_spec(pkg)      # located, not imported: the runner is a low room
            if spec is None or spec.origin is None:
                raise RuntimeError(f"{pkg} is not installed: the workers cannot be given it")
            root = Path(spec.origin).resolve().parent
            for f in sorted(root.rglob(pattern)):
                h.update(str(f.relative_to(root)).encode() + f.read_bytes())
        _DIGEST.append(h.hexdigest())
    return _DIGEST[0]


def connect(address: str):
    """A Client of the scheduler at ``address`` (one per address and
    process), checked: something answers there as a Dask scheduler does
    (``probe``), a worker is there, and every worker runs this code. Every
    failure is one line within CONNECT_TIMEOUT + WORKER_TIMEOUT seconds."""
    if address in _CLIENTS:
        return _CLIENTS[address]
    d = _distributed()
    probe(address)
    # the client's event loop logs its callbacks' exceptions with their
    # tracebacks (distributed's sync() cancelling a call that Ctrl-C ended
    # before it began raises NameError there): every failure of a command
    # is its one line, so those stay out of the user's terminal
    logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
    try:
        client = d.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        _abandon(e, d.Client)
        raise UserError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
    except (TimeoutError, OSError):
        client.close()
        raise UserError(f"no worker joined the Dask scheduler at {address} within "
                        f"{WORKER_TIMEOUT:g} s") from None
    check_workers(client, address)
    _CLIENTS[address] = client
    return client


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a tcp:// address (or HOST:PORT); None for another
    protocol (tls://, ucx://...), which the probe leaves to Dask."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return None
    host, _, port = rest.rstrip("/").rpartition(":")
    return host.strip("[]"), int(port)


def probe(address: str) -> None:
    """UserError unless a TCP connection to ``address`` opens within
    CONNECT_TIMEOUT and what answers greets as a Dask scheduler does (its
    handshake comes first, unasked, within PROBE_WAIT seconds): nothing
    listening, a silent port or a web server (a Dask dashboard's port) is
    refused here rather than left to hang the client."""
    where = _host_port(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=CONNECT_TIMEOUT) as conn:
            ready, _, _ = select.select([conn], [], [], PROBE_WAIT)
            head = conn.recv(512) if ready else b""
    except OSError as e:
        raise UserError(f"cannot reach the Dask scheduler at {address}: "
                        f"{e.strerror or e or 'no connection'}") from None
    if b"python" not in head:
        heard = "nothing" if not head else repr(head[:24])
        raise UserError(f"{address} is not a Dask scheduler: it answered {heard} where a scheduler "
                        f"greets within {PROBE_WAIT:g} s (a dashboard's or another service's port?)")


def _abandon(error: BaseException, client_type) -> None:
    """A Client whose constructor failed is closed when it is collected,
    waiting twice its timeout for a scheduler that never came and printing
    a traceback: mark the half-made client closed (it holds nothing)."""
    tb = error.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        if isinstance(obj, client_type):
            obj.status = "closed"
            with contextlib.suppress(Exception):
                obj._loop_runner.stop()
            return
        tb = tb.tb_next


def check_workers(client, address: str) -> None:
    mine = code_digest()
    for worker, digest in client.run(code_digest).items():
        if digest != mine:
            client.close()
            raise UserError(f"the worker {worker} of {address} runs other tcsmt code than this "
                            "process (install the same tcsmt, queries and models on every worker)")


@atexit.register
def disconnect() -> None:
    """Close this process's clients (at exit, or when a cluster goes away)."""
    for client in _CLIENTS.values():
        try:
            client.close(timeout=2)
        except Exception:  # noqa: BLE001 - closing what may already be gone: nothing to report
            pass
    _CLIENTS.clear()


def execute_on_worker(task: Task, shared: Any = NOTHING) -> Done:
    """In a Dask worker: run the task. Dask starts its worker processes
    as daemons, and a daemon process may not start children; the solver
    service runs each solver in a child process (and dies with its parent),
    so the flag is cleared for this worker process first."""
    import multiprocessing
    # BaseProcess._config is private (not in the stubs): the one way to clear the flag of a running worker
    multiprocessing.current_process()._config.pop("daemon", None)  # type: ignore[attr-defined]
    return execute(task, shared)


_RUN = itertools.count()


def run_cluster(address: str, tasks: Sequence[Task], shared: Any,
                handle: Callable[[int, Done], None]) -> None:
    """Every task on the cluster; ``handle(index, done)`` in this process as
    each finishes. Whatever stops this early cancels the run's tasks."""
    d = _distributed()
    client = connect(address)
    tag = f"tcsmt-{os.getpid()}-{next(_RUN)}-{uuid.uuid4().hex[:8]}"
    # scatter a list of one item: a tuple or a dict would be scattered item by item
    arg = NOTHING if shared is NOTHING else client.scatter([shared], broadcast=True, hash=False)[0]
    futures = {}
    try:
        for i, t in enumerate(tasks):
            args = (t,) if arg is NOTHING else (t, arg)
            futures[client.submit(execute_on_worker, *args, key=f"{tag}-{i}", pure=False)] = i
        for f in d.as_completed(list(futures), loop=client.loop):
            i = futures[f]
            handle(i, _outcome(d, f, tasks[i]))
            f.release()
    except BaseException:
        client.cancel(list(futures), force=True)
        raise
    finally:
        if arg is not NOTHING:
            arg.release()


def _outcome(d, future, task: Task) -> Done:
    if future.status == "finished":
        return future.result()
    exc = future.exception()
    if isinstance(exc, d.KilledWorker):
        return lost(task, _allowed_failures(), "a Dask worker was lost")
    return Done(task.name, failure="crash", error=f"{type(exc).__name__}: {exc}")


def _allowed_failures() -> int:
    import dask.config
    return int(dask.config.get("distributed.scheduler.allowed-failures", 3))


def compute(address: str, collection):
    """A dask collection (a dask array) computed on the cluster; its value here."""
    return connect(address).compute(collection).result()
