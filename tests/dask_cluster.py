"""A real Dask cluster on this machine for the tests: a scheduler and
worker processes on localhost, started as a user starts them
(``python -m distributed.cli.dask_scheduler`` / ``dask_worker``, each worker
under its nanny, one thread), and stopped by the process ids started here.
The workers find the jobs of the tests below in this module (tests/ is on
their path)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

START_TIMEOUT = 120.0
TESTS = Path(__file__).resolve().parent


def slow_square(x: int, seconds: float = 0.5) -> tuple[int, str]:
    time.sleep(seconds)
    return x * x, str(os.getpid())


def wait_to_be_killed(marker: str, value: int) -> int:
    """The first run writes its pid and waits (to be killed); a rerun answers."""
    if not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        time.sleep(120)
    return value


class LocalCluster:
    def __init__(self, folder: Path, workers: int = 2):
        self.folder, self.count = Path(folder), workers
        self.procs: list[subprocess.Popen] = []
        self.address = ""
        self.client = None

    def _start(self, module: str, *args: str, log: str) -> subprocess.Popen:
        out = open(self.folder / log, "w")          # noqa: SIM115 - kept open for the process
        # Started in the cluster's own folder, with no empty PYTHONPATH entry: ``python -m``
        # puts its working folder first on sys.path, and from the checkout's root that
        # would import the source tree's tcsmt/ (which has no tcsmt.models) in place
        # of the installed package.
        paths = [str(TESTS), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        p = subprocess.Popen([sys.executable, "-m", f"distributed.cli.{module}", *args, "--no-dashboard"],
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env,
                             cwd=self.folder)
        self.procs.append(p)
        return p

    def start(self) -> LocalCluster:
        info = self.folder / "scheduler.json"
        self._start("dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(info),
                    log="scheduler.log")
        deadline = time.monotonic() + START_TIMEOUT
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.address = json.loads(info.read_text())["address"]
        for i in range(self.count):
            self.add_worker(f"w{i}")
        from distributed import Client
        self.client = Client(self.address, set_as_default=False, timeout=30)
        self.client.wait_for_workers(self.count, timeout=START_TIMEOUT)
        return self

    def add_worker(self, name: str) -> None:
        self._start("dask_worker", self.address, "--nthreads", "1", "--nworkers", "1", "--name", name,
                    "--death-timeout", "60", log=f"{name}.log")

    def worker_pids(self) -> dict[str, int]:
        """Worker address -> the pid of its worker process (under its nanny)."""
        return self.client.run(os.getpid)

    def log(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.folder.glob("*.log")))

    def stop(self) -> None:
        from tcsmt.runner.cluster import disconnect
        disconnect()
        if self.client is not None:
            self.client.close()
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
