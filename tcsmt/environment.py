"""The environment variables tcsmt reads, each checked where it is read:
a value that is not taken is a BadOption naming the variable, never
ignored and never a traceback. The command line checks them all before a
command starts (``check_all``), so a bad value ends any command at once.

    TCSMT_WORKERS       local worker processes (1 .. 8 per core)
    TCSMT_SCHEDULER     a Dask scheduler's address (tcsmt.runner), or "local"
    TCSMT_MEMORY        bytes of memory work may plan to use (4G, 512M,
                        1e9); default: MemAvailable (tcsmt.budget)
    TCSMT_PIPE_WAIT     seconds a read from a pipe or device waits for data
    TCSMT_KERNEL_CACHE  the folder of compiled kernels (tcsmt.sim.kernels)
    TCSMT_DEBUG         any value: an internal error shows its traceback
"""

from __future__ import annotations

import math
import os
import re

from tcsmt.errors import BadOption

WORKERS_PER_CORE = 8
MAX_WORKERS = min(1024, WORKERS_PER_CORE * (os.cpu_count() or 1))
"""The most local worker processes: each is a Python process of a hundred
MB or more working on one core, so more than a few per core only fills
memory."""

VARIABLES = ("TCSMT_WORKERS", "TCSMT_SCHEDULER", "TCSMT_MEMORY", "TCSMT_PIPE_WAIT",
             "TCSMT_KERNEL_CACHE", "TCSMT_DEBUG")

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def raw(name: str) -> str | None:
    """The variable's value, stripped; None when it is unset or empty."""
    value = os.environ.get(name, "").strip()
    return value or None


def number(text: str, what: str, lo: float, hi: float, integer: bool = False) -> float | int:
    """``text`` as a finite number in [lo, hi] (a whole one, written as
    one, when ``integer``); BadOption naming ``what`` otherwise."""
    try:
        x = int(text) if integer else float(text)
    except ValueError:
        raise BadOption(f"{what} {text!r}: not a {'whole ' if integer else ''}number") from None
    if not integer and not math.isfinite(x):
        raise BadOption(f"{what} {text!r}: not a finite number")
    if not lo <= x <= hi:
        show = (lambda v: str(int(v))) if integer else (lambda v: f"{v:g}")  # noqa: E731
        raise BadOption(f"{what} {text!r}: must lie between {show(lo)} and {show(hi)}")
    return int(x) if integer else x


def whole(text: str, what: str, lo: int, hi: int) -> int:
    """``text`` as a whole number in [lo, hi]; BadOption naming ``what`` otherwise."""
    return int(number(text, what, lo, hi, integer=True))


def workers() -> int | None:
    """TCSMT_WORKERS, or None when unset."""
    value = raw("TCSMT_WORKERS")
    if value is None:
        return None
    return whole(value, "TCSMT_WORKERS", 1, MAX_WORKERS)


def size(text: str, what: str) -> int:
    """Bytes written as 4G, 512M, 1.5GiB, 1e9 or 1000000 (at least 1 MiB)."""
    m = _SIZE.match(text)
    if not m:
        raise BadOption(f"{what} {text!r}: expected bytes such as 4G, 512M or 1e9")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not math.isfinite(value) or value > 1 << 60:
        raise BadOption(f"{what} {text!r}: more bytes than any machine has")
    if value < 1 << 20:
        raise BadOption(f"{what} {text!r}: less than 1 MiB")
    return int(value)


def memory() -> int | None:
    """TCSMT_MEMORY in bytes, or None when unset."""
    value = raw("TCSMT_MEMORY")
    return None if value is None else size(value, "TCSMT_MEMORY")


def pipe_wait(default: float = 30.0) -> float:
    """TCSMT_PIPE_WAIT: seconds a read from a pipe or device waits for
    data before it gives up (0.1 .. 86400)."""
    value = raw("TCSMT_PIPE_WAIT")
    return default if value is None else number(value, "TCSMT_PIPE_WAIT", 0.1, 86400)


LOCAL = "local"
_ADDRESS = re.compile(r"^(tcp|tls|ucx|ws|wss)://(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+)(:\d{1,5})/?$"
                      r"|^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+)(:\d{1,5})$")


def scheduler_address(text: str, what: str = "--scheduler") -> str:
    """A scheduler's address as Dask takes it (tcp://HOST:PORT, HOST:PORT,
    tls://...), or "local"; BadOption naming ``what`` otherwise."""
    address = text.strip()
    if address == LOCAL:
        return address
    m = _ADDRESS.match(address)
    port = m and (m.group(3) or m.group(5))
    if not m or (port and not 0 < int(port[1:]) < 65536):
        raise BadOption(f"{what} {text!r}: expected an address such as tcp://HOST:PORT of a "
                        "Dask scheduler (or 'local')")
    return address


def scheduler() -> str | None:
    """TCSMT_SCHEDULER, checked, or None when unset."""
    value = raw("TCSMT_SCHEDULER")
    return None if value is None else scheduler_address(value, "TCSMT_SCHEDULER")


def kernel_cache() -> str | None:
    """TCSMT_KERNEL_CACHE, or None when unset (tcsmt.sim.kernels checks
    that it is a folder it can write when it compiles a kernel)."""
    return raw("TCSMT_KERNEL_CACHE")


def check_all() -> None:
    """Every variable's value checked: BadOption at the first that is not
    taken (the kernel cache is checked when a kernel is compiled)."""
    workers()
    memory()
    pipe_wait()
    scheduler()
