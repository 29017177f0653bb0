"""Memory: what work may use, and the refusal of work that would not fit.

Before a GEMM, an error study, a plan or a batch of dot products, the code
that runs it estimates its peak (tcsmt.sim.memory holds the estimates of
the simulators) and calls ``require``: work that would pass what is
available is refused with one line (BudgetExceeded, exit 2) naming both,
before anything is allocated, never left to the kernel's out-of-memory
killer. What is available:

* TCSMT_MEMORY when set (4G, 512M, 1e9: a budget chosen by the user);
* else MemAvailable of /proc/meminfo, less what a cgroup's memory.max
  leaves (a container) and what RLIMIT_DATA or RLIMIT_AS leaves (ulimit);
* elsewhere (no /proc): nothing is refused.

An allocation that fails all the same (MemoryError) is reported by the
command line with the same words (``out_of_memory``).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from tcsmt import environment
from tcsmt.errors import BudgetExceeded


def size_text(n: float) -> str:
    """Bytes for people: 1.5 GiB, 300 MiB, 12 KiB (past 2^80 bytes, a bound)."""
    if n >= 1 << 80:
        return "more than 2^80 bytes"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} bytes"


def _meminfo() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_left() -> int | None:
    """memory.max - memory.current of this process's cgroup (v2), or None."""
    try:
        rel = next(ln.split("::", 1)[1] for ln in Path("/proc/self/cgroup").read_text().splitlines()
                   if ln.startswith("0::"))
        folder = Path("/sys/fs/cgroup") / rel.strip().lstrip("/")
        limit = (folder / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((folder / "memory.current").read_text()))
    except (OSError, ValueError, StopIteration):
        return None


def _rlimit_left() -> int | None:
    """What RLIMIT_DATA and RLIMIT_AS leave above this process's present use."""
    left = None
    try:
        fields = Path("/proc/self/statm").read_text().split()
        page = os.sysconf("SC_PAGE_SIZE")
        used = {resource.RLIMIT_AS: int(fields[0]) * page, resource.RLIMIT_DATA: int(fields[5]) * page}
    except (OSError, ValueError, IndexError):
        return None
    for which, now in used.items():
        soft = resource.getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY:
            left = max(0, soft - now) if left is None else min(left, max(0, soft - now))
    return left


def available() -> tuple[int | None, str]:
    """(bytes work may use, where that figure comes from); (None, ...) where
    nothing can be known."""
    budget = environment.memory()
    if budget is not None:
        return budget, "TCSMT_MEMORY"
    figures = [(x, why) for x, why in ((_meminfo(), "MemAvailable"),
                                       (_cgroup_left(), "the cgroup's memory.max"),
                                       (_rlimit_left(), "the process's resource limit"))
               if x is not None]
    if not figures:
        return None, "unknown"
    return min(figures)


def require(estimate: float, what: str) -> None:
    """BudgetExceeded when ``estimate`` bytes (the peak of ``what``) pass
    what is available."""
    have, source = available()
    if have is not None and estimate > have:
        raise BudgetExceeded(f"{what} needs about {size_text(estimate)} of memory at its peak; "
                             f"{size_text(have)} is available ({source}): choose smaller sizes "
                             "(or set TCSMT_MEMORY to allow more)")


def out_of_memory() -> str:
    """The line for an allocation that failed (a MemoryError)."""
    have, source = available()
    where = f"; {size_text(have)} is available ({source})" if have is not None else ""
    return (f"out of memory: an allocation failed{where}: choose smaller sizes "
            "(or set TCSMT_MEMORY to allow more)")
