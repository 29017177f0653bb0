"""Start a command and write down its own peak memory (used by tests/hostile.py).

``python -I -S tests/launch.py REPORT COMMAND...`` forks, execs COMMAND in
the child, waits for it and writes "WAIT_STATUS MAXRSS_KIB" to REPORT.

Why a process between the test and the command: a process's peak resident
size (ru_maxrss) keeps, across exec, the resident size of the process that
forked it (posix_spawn and vfork are the same), so a command forked straight
from a test worker that has grown to 2 GB "peaks" at 2 GB. Forked from this
small interpreter instead, the command starts from a few MiB and its peak
is its own (and that of the children it waited for).

SIGTERM sent to this process is passed on to the command; SIGINT is at its
default in the command.
"""

import os
import signal
import sys


def main() -> None:
    report, argv = sys.argv[1], sys.argv[2:]
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = os.fork()
    if pid == 0:
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    _, status, usage = os.wait4(pid, 0)
    with open(report, "w") as f:
        f.write(f"{status} {usage.ru_maxrss}\n")


if __name__ == "__main__":
    main()
