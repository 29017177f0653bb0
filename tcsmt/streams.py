"""Pipes, devices and this process's own streams, read and written with
bounded waits: what tcsmt.fileio uses where a path is not a regular file.

Reading waits at most TCSMT_PIPE_WAIT seconds for each chunk (a named pipe
is waited on until a writer comes, so one that starts a moment after the
reader is still read) and stops at a limit. Writing goes through a
character device or a pipe's reader, never replacing it: a pipe no process
reads is refused at once, a reader that takes nothing for TCSMT_PIPE_WAIT
seconds ends the copy, and a name of one of this process's descriptors
(/dev/stdout, /proc/self/fd/N) is written through that descriptor itself,
so the bytes land where the process's own output goes.
"""

from __future__ import annotations

import errno
import os
import re
import select
import stat
import sys
from pathlib import Path
from typing import IO

from tcsmt import environment
from tcsmt.errors import OutputRefused, UserError

CHUNK = 1 << 16
_STREAMS = re.compile(r"^/(proc/[^/]+/fd/\d+|dev/fd/\d+|dev/stdout|dev/stderr)$")


def too_large(path, limit: int, error):
    return error(f"{path}: more than the {limit / (1 << 20):.1f} MiB tcsmt reads for a file of this kind")


def read_stream(fd: int, limit: int, path, error, regular: bool, pipe: bool) -> bytes:
    """Up to ``limit`` bytes from fd. A pipe or device is read without
    blocking, waiting at most TCSMT_PIPE_WAIT seconds for each chunk; a
    named pipe is waited on before it is read (until a writer comes and
    writes or leaves), so a writer that starts a moment after the reader
    is still read."""
    wait = None if regular else environment.pipe_wait()
    chunks: list[bytes] = []
    total = 0
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    ready = not pipe
    while True:
        if not ready and not poller.poll(None if wait is None else wait * 1000):
            what = "no process writes the named pipe" if pipe and not total else "a pipe or device"
            raise error(f"{path}: nothing came for {wait:g} s ({what}; TCSMT_PIPE_WAIT sets "
                        "the wait)")
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            ready = False
            continue
        ready = not pipe
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise too_large(path, limit, error)
        chunks.append(chunk)


def names_a_stream(path: Path) -> bool:
    """Whether ``path``, or a link on its way, names an open file of a
    process (/dev/stdout, /dev/fd/N, /proc/PID/fd/N)."""
    return _stream_of(path) is not None


def _stream_of(path: Path) -> str | None:
    """The /dev or /proc name of an open file that ``path`` reaches by its
    links, or None."""
    p = os.path.abspath(path)
    for _ in range(40):
        if _STREAMS.match(p):
            return p
        try:
            target = os.readlink(p)
        except OSError:
            return None
        p = os.path.normpath(os.path.join(os.path.dirname(p), target))
    return None


def _own_fd(path: Path) -> int | None:
    """The descriptor of this process that ``path`` names (/dev/stdout is
    1, /proc/self/fd/N and /dev/fd/N are N), or None: written through that
    very descriptor, the bytes land where the process's own output goes."""
    name = _stream_of(path)
    if name is None:
        return None
    if name in ("/dev/stdout", "/dev/stderr"):
        return 1 if name.endswith("out") else 2
    m = re.match(r"^/(?:dev/fd|proc/(?:self|thread-self|(\d+))/fd)/(\d+)$", name)
    if m and (m.group(1) is None or int(m.group(1)) == os.getpid()):
        return int(m.group(2))
    return None


def copy_to(src: IO[bytes], path: Path) -> None:
    """src's bytes written to ``path`` opened without blocking: a pipe no
    process reads is refused at once, and a reader that takes nothing for
    TCSMT_PIPE_WAIT seconds ends the copy."""
    own = _own_fd(path)
    if own is not None:
        _copy_to_own(src, own)
        return
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        out = os.open(path, flags | (os.O_APPEND if names_a_stream(path) else 0))
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OutputRefused(f"{path}: a named pipe that no process reads (start its reader "
                                "first)") from None
        raise
    try:
        mode = os.fstat(out).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
            raise OutputRefused(f"{path}: not a device, pipe or file tcsmt writes through")
        wait = environment.pipe_wait()
        poller = select.poll()
        poller.register(out, select.POLLOUT)
        while chunk := src.read(CHUNK):
            view = memoryview(chunk)
            while view:
                try:
                    view = view[os.write(out, view):]
                except BlockingIOError:
                    if not poller.poll(wait * 1000):
                        raise UserError(f"{path}: the reader took nothing for {wait:g} s "
                                        "(TCSMT_PIPE_WAIT sets the wait)") from None
    finally:
        os.close(out)


def _copy_to_own(src: IO[bytes], fd: int) -> None:
    """src's bytes written to this process's descriptor ``fd`` (after what
    Python's own streams hold), as the process's own output is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    while chunk := src.read(CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]
